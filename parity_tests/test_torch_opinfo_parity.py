"""torch's own OpInfo database against flowlike (parity_tests/torch_opinfo.py does the work): per OpInfo with a
flowlike counterpart, its error inputs raise torch's exception class, and its CPU float32/float64 sample inputs give
torch's values, dtypes, shapes and (float64) gradients; so do the complex64/complex128 samples (complex128 gradients)
of the linear-algebra entries. Entries of torch_opinfo.KNOWN_FAILURES are skipped with
their reason (and counted by `python parity_tests/coverage.py`); everything else must pass."""
import warnings

import pytest

torch = pytest.importorskip("torch")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from torch.testing._internal.common_methods_invocations import op_db  # noqa: E402

import flowlike as fl  # noqa: E402
import torch_opinfo as T  # noqa: E402

OPS = [op for op in op_db if T.flowlike_callable(fl, torch, op) is not None and T.op_id(op) not in T.NOT_PROVIDED]


def _judge(kind, oid, failures):
    """Fails on failures, unless the table lists the entry: then it skips with the reason, and fails if the entry
    passes now (so that the table never keeps an entry that works)."""
    for key in (oid, f"{kind}:{oid}"):
        if key in T.KNOWN_FAILURES:
            assert failures, f"{key} passes now: remove it from KNOWN_FAILURES in parity_tests/torch_opinfo.py"
            pytest.skip(f"known ({key}): {T.KNOWN_FAILURES[key]}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("op", [op for op in OPS if op.error_inputs_func is not None], ids=T.op_id)
def test_error_inputs(op):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, _, failures = T.check_errors(fl, torch, op)
    _judge("errors", T.op_id(op), failures)


@pytest.mark.parametrize("op", OPS, ids=T.op_id)
def test_samples(op):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, _, failures = T.check_samples(fl, torch, op)
    _judge("samples", T.op_id(op), failures)


@pytest.mark.parametrize("op", [op for op in OPS if T.is_linalg(op) and op.supports_dtype(torch.complex128, "cpu")],
                         ids=T.op_id)
def test_complex_linalg_samples(op):
    """The linear-algebra entries' complex64/complex128 samples: values, and complex128 gradients."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        checked, _, failures = T.check_samples(fl, torch, op, dtypes=T.COMPLEX_DTYPES)
    assert checked, "no complex sample ran"
    _judge("complex", T.op_id(op), failures)
