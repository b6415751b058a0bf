"""Regenerates promotion_table.json from real PyTorch (run with torch==2.13.0 installed).

Every pair of dtypes, as tensor-tensor, tensor-zero-dim, zero-dim-tensor and tensor-Python-scalar
operands, through arithmetic (add), true division, comparison (lt), where, cat and sum.
"""
import json
import pathlib

import torch

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
SCALARS = {"True": True, "2": 2, "2.5": 2.5}


def t(name, zero_dim=False):
    dt = getattr(torch, name)
    return torch.ones((), dtype=dt) if zero_dim else torch.ones(2, dtype=dt)


def outcome(fn):
    try:
        return str(fn().dtype).split(".")[-1]
    except Exception as e:  # noqa: BLE001 - the exception type is the expected outcome
        return "error:" + type(e).__name__


def main():
    rows = []
    binary = {"add": torch.add, "div": torch.div, "lt": torch.lt,
              "where": lambda a, b: torch.where(torch.ones(2, dtype=torch.bool), a, b),
              "cat": lambda a, b: torch.cat([a.reshape(-1), b.reshape(-1)])}
    for op, fn in binary.items():
        for a in DTYPES:
            for b in DTYPES:
                for kind in ("tensor", "zero_dim_right", "zero_dim_left"):
                    if op == "cat" and kind != "tensor":
                        continue
                    x, y = t(a, kind == "zero_dim_left"), t(b, kind == "zero_dim_right")
                    rows.append({"op": op, "a": a, "b": b, "kind": kind, "result": outcome(lambda: fn(x, y))})
            if op in ("cat",):
                continue
            for s in SCALARS:
                rows.append({"op": op, "a": a, "b": s, "kind": "scalar",
                             "result": outcome(lambda: fn(t(a), SCALARS[s]))})
    for a in DTYPES:
        rows.append({"op": "sum", "a": a, "b": "", "kind": "reduce", "result": outcome(lambda: t(a).sum())})
        rows.append({"op": "mean", "a": a, "b": "", "kind": "reduce", "result": outcome(lambda: t(a).mean())})
    path = pathlib.Path(__file__).with_name("promotion_table.json")
    path.write_text(json.dumps({"torch": torch.__version__, "rows": rows}, indent=0))
    print(f"wrote {len(rows)} rows to {path}")


if __name__ == "__main__":
    main()
