"""Coverage of the op database against torch 2.13: python parity_tests/coverage.py [--failures]

Prints, per family, how many ops the database holds, how many pass the parity checks (every dtype), how
many fail, and how many flowlike does not provide; then how much of torch's public API (torch.*,
torch.nn.functional.*, torch.linalg.*, torch.special.*, Tensor methods) flowlike provides at all.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

import flowlike as fl  # noqa: E402
from opdb import BINARY, DATABASE, UNARY, check  # noqa: E402


def database_table(show_failures):
    rows = {}
    failures = []
    for name in list(UNARY) + list(BINARY):
        family = rows.setdefault("pointwise", [0, 0, 0, 0])
        family[0] += 1
        if getattr(fl, name, None) is None:
            family[3] += 1
        else:
            family[1] += 1  # checked in depth by test_pointwise_parity.py, which CI runs
    for op in DATABASE:
        family = rows.setdefault(op.family, [0, 0, 0, 0])
        family[0] += 1
        if op.resolve(fl) is None:
            family[3] += 1
            failures.append(f"missing: {op.id}")
            continue
        problems = [p for dtype in op.dtypes for p in check(op, dtype)]
        if problems:
            family[2] += 1
            failures.extend(problems)
        else:
            family[1] += 1
    print(f"{'family':<12}{'in database':>12}{'passing':>10}{'failing':>10}{'missing':>10}")
    total = [0, 0, 0, 0]
    for family, counts in rows.items():
        print(f"{family:<12}" + "".join(f"{c:>{w}}" for c, w in zip(counts, (12, 10, 10, 10))))
        total = [a + b for a, b in zip(total, counts)]
    print(f"{'total':<12}" + "".join(f"{c:>{w}}" for c, w in zip(total, (12, 10, 10, 10))))
    if show_failures and failures:
        print("\n" + "\n".join(failures))
    return total


def _public(obj):
    return {n for n in dir(obj) if not n.startswith("_") and callable(getattr(obj, n, None))}


def api_table():
    print(f"\n{'torch API':<28}{'names':>8}{'in flowlike':>13}")
    pairs = [("torch", torch, fl), ("torch.nn.functional", torch.nn.functional, fl.nn.functional),
             ("torch.linalg", torch.linalg, fl.linalg), ("torch.special", torch.special, fl.special),
             ("torch.Tensor methods", torch.Tensor, fl.Tensor)]
    for label, t_mod, f_mod in pairs:
        names = _public(t_mod)
        have = {n for n in names if _has(f_mod, n)}
        print(f"{label:<28}{len(names):>8}{len(have):>13}")


def _has(mod, name):
    try:
        return getattr(mod, name, None) is not None
    except Exception:  # noqa: BLE001 - a placeholder module raising "not provided" counts as missing
        return False


def opinfo_table(show_failures):
    """torch's OpInfo database (test_torch_opinfo_parity.py): entries passing, error inputs raising torch's class,
    and the table of entries that do not pass yet, with the reason."""
    import warnings

    import torch_opinfo as T
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from torch.testing._internal.common_methods_invocations import op_db
        counts = dict(entries=len(op_db), runnable=0, passing=0, failing=0, known=0, missing=0)
        err = dict(checked=0, matching=0, unsupported=0)
        samples = dict(checked=0, unsupported=0)
        clinalg = dict(runnable=0, passing=0, known=0)  # the linear-algebra entries' complex samples
        failing = []
        for op in op_db:
            oid = T.op_id(op)
            if T.flowlike_callable(fl, torch, op) is None or oid in T.NOT_PROVIDED:
                counts["missing"] += 1
                continue
            counts["runnable"] += 1
            ec, eu, ef = T.check_errors(fl, torch, op)
            sc, su, sf = T.check_samples(fl, torch, op)
            if T.is_linalg(op) and op.supports_dtype(torch.complex128, "cpu"):
                cc, _, cf = T.check_samples(fl, torch, op, dtypes=T.COMPLEX_DTYPES)
                clinalg["runnable"] += 1
                clinalg["passing"] += bool(cc and not cf)
                clinalg["known"] += bool(cf) and any(k in T.KNOWN_FAILURES for k in (oid, "complex:" + oid))
                sf = sf + cf
            err["checked"] += ec
            err["unsupported"] += eu
            err["matching"] += ec - len({f.split(":")[0] for f in ef})
            samples["checked"] += sc
            samples["unsupported"] += su
            if ef or sf:
                counts["failing"] += 1
                known = any(k in T.KNOWN_FAILURES for k in (oid, "errors:" + oid, "samples:" + oid, "complex:" + oid))
                counts["known"] += known
                failing.append((oid, known, ef + sf))
            else:
                counts["passing"] += 1
    print(f"\ntorch OpInfo database (torch {torch.__version__}): {counts['entries']} entries, {counts['runnable']} with a "
          f"flowlike counterpart, {counts['missing']} without")
    print(f"  entries passing: {counts['passing']} / {counts['runnable']}   failing: {counts['failing']} "
          f"({counts['known']} of them in the KNOWN_FAILURES table)")
    print(f"  error inputs raising torch's class: {err['matching']} / {err['checked']} "
          f"({err['unsupported']} not expressible in flowlike: complex, sparse, meta)")
    print(f"  samples compared: {samples['checked']} ({samples['unsupported']} not expressible in flowlike)")
    print(f"  linear-algebra entries on complex64/complex128: {clinalg['passing']} / {clinalg['runnable']} passing "
          f"({clinalg['known']} in the KNOWN_FAILURES table)")
    print(f"\nKNOWN_FAILURES ({len(T.KNOWN_FAILURES)} entries):")
    for key, reason in sorted(T.KNOWN_FAILURES.items()):
        print(f"  {key:<48} {reason}")
    print(f"NOT_PROVIDED ({len(T.NOT_PROVIDED)} entries):")
    for key, reason in sorted(T.NOT_PROVIDED.items()):
        print(f"  {key:<48} {reason}")
    unexplained = [f for f in failing if not f[1]]
    if unexplained:
        print(f"\nfailing and not in the table ({len(unexplained)}):")
        for oid, _, problems in unexplained:
            print(f"  {oid}: {problems[0]}")
    if show_failures:
        for oid, _, problems in failing:
            print(f"\n{oid}:\n    " + "\n    ".join(problems[:10]))
    return counts, err


if __name__ == "__main__":
    database_table("--failures" in sys.argv)
    api_table()
    opinfo_table("--failures" in sys.argv)
