"""The generated faces of narrow (torch's narrow and narrow.Tensor overloads) and as_strided (storage_offset=None:
self's own) against real PyTorch: values, gradients, backward node names and errors."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import flowlike as fl  # noqa: E402
from helpers import assert_raises_same, check_both  # noqa: E402

X = np.arange(20.0).reshape(4, 5) / 3

FACES = {
    "narrow_fn": lambda lib, x: lib.narrow(x, 1, 1, 3),
    "narrow_method_negative": lambda lib, x: x.narrow(0, -3, 2),
    "narrow_tensor_start": lambda lib, x: x.narrow(1, lib.tensor(2), 2),
    "narrow_fn_tensor_start_kw": lambda lib, x: lib.narrow(x, dim=0, start=lib.tensor(1, dtype=lib.int32), length=3),
    "as_strided_fn": lambda lib, x: lib.as_strided(x, (2, 3), (1, 2)),
    "as_strided_method_view": lambda lib, x: (x * 1)[1:].as_strided((2, 2), (5, 1)),
    "as_strided_offset": lambda lib, x: x.as_strided((3,), (6,), 1),
    "as_strided_offset_none": lambda lib, x: lib.as_strided((x * 1)[2:], (4,), (1,), None),
}


@pytest.mark.parametrize("name", sorted(FACES))
def test_face(name):
    want, got = check_both(FACES[name], X, grad=True, dtype="float64")
    assert got.grad_fn.name() == want.grad_fn.name()


BAD = {
    "narrow_float_start": lambda lib, x: x.narrow(0, 1.5, 2),
    "narrow_float_tensor_start": lambda lib, x: x.narrow(0, lib.tensor(1.0), 2),
    "narrow_1d_tensor_start": lambda lib, x: lib.narrow(x, 0, lib.tensor([1]), 2),
    "narrow_length": lambda lib, x: x.narrow(0, 1, -1),
    "as_strided_none": lambda lib, x: lib.as_strided(None, (2,), (1,)),
    "as_strided_offset_float": lambda lib, x: x.as_strided((2,), (1,), 0.5),
    "as_strided_negative_offset": lambda lib, x: x.as_strided((2,), (1,), -1),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_arguments(name):
    assert_raises_same(BAD[name], X, match_message=True)
