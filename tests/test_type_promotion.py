"""Type promotion conformance: flowlike matches, entry for entry, a table generated from torch 2.13.

The table (tests/data/promotion_table.json, made by gen_promotion_table.py) covers every pair of
dtypes as tensor-tensor, zero-dim and Python-scalar operands for each op below.
"""
import json
import pathlib

import pytest

import flowlike as fl

TABLE = json.loads((pathlib.Path(__file__).parent / "data" / "promotion_table.json").read_text())["rows"]
SCALARS = {"True": True, "2": 2, "2.5": 2.5}

OPS = {
    "add": fl.add,
    "div": lambda a, b: a / b,
    "lt": fl.lt,
    "where": lambda a, b: fl.where(fl.ones(2, dtype=fl.bool), a, b),
    "cat": lambda a, b: fl.cat([a.reshape(-1), b.reshape(-1)]),
    "sum": lambda a: a.sum(),
    "mean": lambda a: a.mean(),
}


def _operand(name, zero_dim):
    return fl.ones((), dtype=getattr(fl, name)) if zero_dim else fl.ones(2, dtype=getattr(fl, name))


def _outcome(row):
    fn = OPS[row["op"]]
    kind = row["kind"]
    try:
        if kind == "reduce":
            out = fn(_operand(row["a"], False))
        elif kind == "scalar":
            out = fn(_operand(row["a"], False), SCALARS[row["b"]])
        else:
            out = fn(_operand(row["a"], kind == "zero_dim_left"), _operand(row["b"], kind == "zero_dim_right"))
        return str(out.dtype).split(".")[-1]
    except Exception as e:  # noqa: BLE001 - the exception type is what the table records
        return "error:" + type(e).__name__


@pytest.mark.parametrize("op", sorted(OPS))
def test_promotion_table(op):
    rows = [r for r in TABLE if r["op"] == op]
    assert rows, f"no rows for {op} in the table"
    mismatches = [(r["a"], r["b"], r["kind"], r["result"], got) for r in rows if (got := _outcome(r)) != r["result"]]
    assert not mismatches, f"{len(mismatches)} of {len(rows)} entries differ, e.g. {mismatches[:5]}"
