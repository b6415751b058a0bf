"""Pointwise ops against numpy: values, broadcasting, dtypes, out= and in-place forms."""
import numpy as np
import pytest

import flowlike as fl

UNARY_NUMPY = {
    "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos, "tanh": np.tanh,
    "abs": np.abs, "neg": np.negative, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc,
    "expm1": np.expm1, "log1p": np.log1p, "atan": np.arctan, "sign": np.sign, "square": np.square,
    "reciprocal": np.reciprocal, "exp2": np.exp2, "log2": np.log2, "log10": np.log10,
}


@pytest.mark.parametrize("name", sorted(UNARY_NUMPY))
def test_unary_matches_numpy(name):
    a = np.random.default_rng(0).uniform(0.1, 3.0, size=(4, 5)).astype(np.float32)
    got = getattr(fl, name)(fl.from_numpy(a)).numpy()
    np.testing.assert_allclose(got, UNARY_NUMPY[name](a), rtol=1e-5, atol=1e-6)


def test_binary_broadcasting_and_scalars():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.array([1.0, 2.0, 4.0], dtype=np.float32)
    ta, tb = fl.from_numpy(a), fl.from_numpy(b)
    np.testing.assert_array_equal((ta + tb).numpy(), a + b)
    np.testing.assert_array_equal((ta * 2 - tb / 2).numpy(), a * 2 - b / 2)
    np.testing.assert_array_equal((2 ** tb).numpy(), 2 ** b)
    np.testing.assert_array_equal((ta % 4).numpy(), a % 4)
    np.testing.assert_array_equal((-ta // 4).numpy(), -a // 4)


def test_type_promotion_with_python_scalars():
    i32 = fl.ones(3, dtype=fl.int32)
    assert (i32 + 1).dtype == fl.int32
    assert (i32 + 1.5).dtype == fl.float32
    assert (i32 / 2).dtype == fl.float32
    assert (fl.ones(3, dtype=fl.float16) + 1.0).dtype == fl.float16
    assert (fl.ones(3, dtype=fl.uint8) + fl.tensor(1, dtype=fl.int64)).dtype == fl.uint8
    assert (fl.ones(3, dtype=fl.bool) + 1).dtype == fl.int64


def test_integer_division_by_zero_raises():
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        fl.tensor([1, 2]) // fl.tensor([0, 1])


def test_inplace_and_out():
    a = fl.tensor([1.0, 2.0, 3.0])
    v0 = a._version
    a.add_(1, alpha=2)
    assert a.tolist() == [3.0, 4.0, 5.0]
    assert a._version > v0
    out = fl.empty(0)
    fl.mul(a, a, out=out)
    assert out.tolist() == [9.0, 16.0, 25.0]
    ints = fl.tensor([1, 2])
    with pytest.raises(RuntimeError, match="can't be cast"):
        ints.add_(1.5)


def test_shape_mismatch_names_op_and_shapes():
    with pytest.raises(RuntimeError, match=r"add.*\[2\].*\[3\]"):
        fl.ones(2) + fl.ones(3)


def test_comparisons_and_bitwise():
    a = fl.tensor([1, 5, 3])
    assert (a > 2).tolist() == [False, True, True]
    assert (a & 1).tolist() == [1, 1, 1]
    assert (~fl.tensor([True, False])).tolist() == [False, True]
    with pytest.raises(RuntimeError, match="not implemented for 'Float'"):
        fl.ones(2) & fl.ones(2)


def test_sixteen_bit_floats_round_trip():
    x = fl.tensor([1.0, 2.5, 65504.0, 1e-7], dtype=fl.float16)
    np.testing.assert_array_equal(x.numpy(), np.array([1.0, 2.5, 65504.0, 1e-7], dtype=np.float16))
    b = fl.tensor([1.0, 3.140625, -2.0], dtype=fl.bfloat16)
    assert b.float().tolist() == [1.0, 3.140625, -2.0]


@pytest.mark.parametrize("name", ["exp", "tanh", "sigmoid", "erf", "gelu", "silu", "mish"])
def test_float32_math_does_not_depend_on_layout(name):
    # a transposed, a stepped and an out= strided operand compute the bits of the dense input (the vectorized
    # float32 forms run on dense copies), forward and backward
    fn = getattr(fl, name, None) or getattr(fl.nn.functional, name)
    rng = np.random.default_rng(1)
    base = fl.from_numpy(rng.standard_normal((96, 130)).astype(np.float32) * 4)
    g = fl.from_numpy(rng.standard_normal((130, 48)).astype(np.float32))
    for view in (base.t()[:, ::2], base[::3, 1:].t()):
        dense = view.contiguous()
        np.testing.assert_array_equal(fn(view).numpy(), fn(dense).numpy())
        x, xd = view.clone().t().contiguous().t().requires_grad_(), dense.clone().requires_grad_()
        gv = g[:, : view.shape[1]] if view.shape == (130, 48) else fl.ones(view.shape)
        fn(x).backward(gv.t().contiguous().t())
        fn(xd).backward(gv.contiguous())
        np.testing.assert_array_equal(x.grad.numpy(), xd.grad.numpy())
    if hasattr(fl, name):
        out = fl.empty(96, 260)[:, ::2]
        getattr(fl, name)(base[:, :130], out=out)
        np.testing.assert_array_equal(out.numpy(), fn(base[:, :130].contiguous()).numpy())
