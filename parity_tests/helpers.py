"""Shared tools of the parity suites: moving tensors between torch and flowlike and comparing them."""
import numpy as np

import flowlike as fl

torch = None  # set by the suites after importorskip


def dtype_name(d):
    return str(d).split(".")[-1]


def to_flowlike(t):
    """A flowlike copy of a torch tensor (same dtype, values, shape)."""
    name = dtype_name(t.dtype)
    if name == "bfloat16":
        return fl.from_numpy(t.float().numpy().copy()).to(fl.bfloat16)
    return fl.from_numpy(t.detach().numpy().copy())


def to_numpy(x):
    if dtype_name(x.dtype) == "bfloat16":
        x = x.float()
    return x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


def assert_same(got, expected, rtol=1.3e-6, atol=1e-5):
    """Same dtype name, shape and values (nan where torch has nan)."""
    assert dtype_name(got.dtype) == dtype_name(expected.dtype), (got.dtype, expected.dtype)
    assert tuple(got.shape) == tuple(expected.shape), (got.shape, expected.shape)
    np.testing.assert_allclose(to_numpy(got).astype(np.float64), to_numpy(expected).astype(np.float64),
                               rtol=rtol, atol=atol, equal_nan=True)


def outcome_type(fn):
    """The exception type fn raises, or None."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - comparing exception types is the point
        return type(e)
    return None
