"""Parity tests generated from the op database (opdb.py): per op and dtype, flowlike against torch 2.13 on
output dtypes, shapes, values, gradients and exception types. Ops flowlike does not provide yet are not
generated here; `python parity_tests/coverage.py` lists them."""
import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402
from opdb import DATABASE, check  # noqa: E402

CASES = [(op, dtype) for op in DATABASE if op.resolve(fl) is not None for dtype in op.dtypes]


@pytest.mark.parametrize("op,dtype", CASES, ids=[f"{op.id}-{dtype}" for op, dtype in CASES])
def test_op(op, dtype):
    failures = check(op, dtype)
    assert not failures, "\n".join(failures)
