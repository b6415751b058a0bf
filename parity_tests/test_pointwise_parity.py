"""Pointwise ops: flowlike against torch 2.13 on values, dtypes, shapes and exception types.

The pointwise entries of the op database (opdb.py) list each op with the dtypes it is checked on and its
tolerance; the samples here cover broadcasting, non-contiguous, zero-size, zero-dim and scalar operands.
"""
import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402

from helpers import assert_raises_same, assert_same, check_both, to_flowlike  # noqa: E402

from opdb import BINARY, UNARY, tolerance  # noqa: E402
from opdb import sample as _sample  # noqa: E402


def sample(dtype, domain, shape, seed):
    return _sample(torch, dtype, domain, shape, seed)


def layouts(dtype, domain):
    """(name, torch tensor) samples: contiguous, transposed, strided, zero-size, zero-dim."""
    base = sample(dtype, domain, (6, 5), 0)
    yield "contiguous", base
    yield "transposed", base.t()
    yield "strided", base[::2, 1:]
    yield "empty", sample(dtype, domain, (0, 3), 1)
    yield "zero_dim", sample(dtype, domain, (), 2)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name):
    dtypes, domain, rtol = UNARY[name]
    for dtype in dtypes:
        for layout, t in layouts(dtype, domain):
            try:
                check_both(lambda lib, x: getattr(lib, name)(x), t, **tolerance(dtype, rtol))
            except AssertionError as e:
                raise AssertionError(f"{name} {dtype} {layout}: {e}") from None


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary(name):
    dtypes, domain = BINARY[name]
    for dtype in dtypes:
        a = sample(dtype, "any" if domain == "nonzero" else domain, (4, 1, 5), 3)
        b = sample(dtype, domain, (3, 5), 4)
        if domain == "nonzero" and dtype not in ("bool", "uint8"):
            b = b * torch.where(sample("bool", "any", (3, 5), 5), 1, -1).to(b.dtype)
        cases = [("broadcast", a, b), ("scalar", a, 2), ("float_scalar", a, 1.5), ("transposed", b.t(), b.t())]
        for case, x, y in cases:
            if name.startswith("bitwise") and case == "float_scalar":
                continue
            try:
                check_both(lambda lib, x, y: getattr(lib, name)(x, y), x, y, **tolerance(dtype, 2e-6))
            except AssertionError as e:
                raise AssertionError(f"{name} {dtype} {case}: {e}") from None


def test_division_rounding_modes_and_operators():
    x = torch.tensor([-7.5, -3.0, 2.5, 7.0])
    y = torch.tensor([2.0, -2.0, 0.75, 3.0])
    fx, fy = to_flowlike(x), to_flowlike(y)
    assert_same(fx // fy, x // y)
    assert_same(fx % fy, x % y)
    assert_same(-fx ** 2, -x ** 2)
    assert_same(3 - fx, 3 - x)
    assert_same(2 / fx, 2 / x)
    xi, yi = torch.tensor([-7, 7, 5]), torch.tensor([2, -2, 3])
    assert_same(to_flowlike(xi) // to_flowlike(yi), xi // yi)
    assert_same(to_flowlike(xi) % to_flowlike(yi), xi % yi)
    assert_same(to_flowlike(xi) << 2, xi << 2)


@pytest.mark.parametrize("case", ["shape", "bool_sub", "int_div_zero", "bitwise_float", "inplace_cast", "bad_type"])
def test_error_types_match(case):
    calls = {
        "shape": lambda m: m.ones(2) + m.ones(3),
        "bool_sub": lambda m: m.ones(2, dtype=m.bool) - m.ones(2, dtype=m.bool),
        "int_div_zero": lambda m: m.tensor([1]) // m.tensor([0]),
        "bitwise_float": lambda m: m.ones(2) & m.ones(2),
        "inplace_cast": lambda m: m.ones(2, dtype=m.int64).add_(1.5),
        "bad_type": lambda m: m.add(m.ones(2), "x"),
    }
    assert_raises_same(calls[case])


COMPOSITES = {
    "clamp": lambda m, x: m.clamp(x, min=-1, max=2),
    "clamp_tensor_bounds": lambda m, x: m.clamp(x, min=x * 0 - 0.5),
    "clip_min_only": lambda m, x: m.clip(x, min=0.25),
    "lerp": lambda m, x: m.lerp(x, x * 2 + 1, 0.3),
    "addcmul": lambda m, x: m.addcmul(x, x, x, value=0.5),
    "addcdiv": lambda m, x: m.addcdiv(x, x, x.abs() + 1, value=2),
    "round_decimals": lambda m, x: m.round(x * 100, decimals=1),
    "logit": lambda m, x: m.logit(x.sigmoid(), eps=1e-3),
    "float_power": lambda m, x: m.float_power(x.abs(), 2),
    "nan_to_num": lambda m, x: m.nan_to_num(m.log(x)),
    "isclose": lambda m, x: m.isclose(x, x + 1e-6),
    "true_divide": lambda m, x: m.true_divide(x, 3),
    "floor_divide": lambda m, x: m.floor_divide(x, 0.7),
    "div_trunc": lambda m, x: m.div(x, 0.7, rounding_mode="trunc"),
}


@pytest.mark.parametrize("name", sorted(COMPOSITES))
def test_composites(name):
    check_both(COMPOSITES[name], sample("float32", "any", (5, 4), 7), rtol=1e-5, atol=1e-5)


def test_allclose_equal():
    x = sample("float32", "any", (5,), 8)
    fx = to_flowlike(x)
    assert fl.allclose(fx, fx + 1e-9) == torch.allclose(x, x + 1e-9)
    assert fl.equal(fx, fx) and not fl.equal(fx, fx + 1)


# Values that reach every branch of the vectorized float32 kernels (csrc/ops/pointwise_dense.cpp,
# csrc/kernels/vec_math.h) and of pow's scalar-exponent fast paths: tiny, around the branch points,
# saturation, overflow/underflow of exp, signed zeros, infinities and NaN.
EDGE_VALUES = [0.0, -0.0, 1e-30, -1e-30, 1e-7, -3e-5, 0.3, -0.6, 0.624, 0.626, -0.99, 1.0, 1.01, -1.7, 3.0, -4.2,
               8.9, -9.5, 15.0, 30.0, -87.5, -88.0, -100.0, -104.0, 87.9, 88.5, 88.7, 89.0, 100.0,
               float("inf"), float("-inf"), float("nan")]


@pytest.mark.parametrize("name", ["exp", "tanh", "sigmoid", "erf"])
def test_dense_float32_kernels(name):
    import numpy as np

    grid = np.concatenate([np.array(EDGE_VALUES, dtype=np.float32),
                           np.linspace(-12, 12, 20001, dtype=np.float32),
                           np.geomspace(1e-8, 1, 2001).astype(np.float32)])
    t = torch.from_numpy(grid)
    got, want = getattr(fl, name)(fl.from_numpy(grid)), getattr(torch, name)(t)
    # 2 ulp in float32, plus the subnormal range (exp_f32 is exact to 1 ulp but flushes subnormals to 0).
    torch.testing.assert_close(torch.from_numpy(got.numpy()), want, rtol=2.5e-7, atol=1e-37, equal_nan=True)


@pytest.mark.parametrize("exponent", [2, 3, 0.5, -0.5, -1, -2, 2.0, 1.5])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
def test_pow_scalar_exponent(exponent, dtype):
    import numpy as np

    t = torch.tensor(EDGE_VALUES + [2.5, -2.5, 1e20, -1e20], dtype=getattr(torch, dtype))
    ft = to_flowlike(t)
    assert_same(fl.pow(ft, exponent), torch.pow(t, exponent))
    assert_same(ft ** exponent, t ** exponent)
    assert_same(fl.pow(ft, fl.tensor(exponent)), torch.pow(t, torch.tensor(exponent)))


@pytest.mark.parametrize("name", ["exp", "tanh", "sigmoid", "erf"])
def test_dense_float32_kernels_in_place(name):
    """The in-place forms write over their input: every element must still see its own input value."""
    import numpy as np

    grid = np.concatenate([np.array(EDGE_VALUES, dtype=np.float32), np.linspace(-100, 100, 1001, dtype=np.float32)])
    t, f = torch.from_numpy(grid.copy()), fl.from_numpy(grid.copy())
    getattr(t, name + "_")()
    getattr(f, name + "_")()
    torch.testing.assert_close(torch.from_numpy(f.numpy()), t, rtol=2.5e-7, atol=1e-37, equal_nan=True)


def test_dense_float32_signs_and_tails():
    """Signed zeros survive (tanh(-0) = -0), and sigmoid keeps torch's subnormal tail (finite log-sigmoid down to
    about -88.7, where 1 / (1 + exp(-x)) underflows to 0 in torch too)."""
    import numpy as np

    zeros = fl.tensor([0.0, -0.0])
    for name in ("tanh", "erf"):
        np.testing.assert_array_equal(np.signbit(getattr(fl, name)(zeros).numpy()), [False, True])
    x = np.linspace(-103, -85, 37, dtype=np.float32)
    got = fl.log(fl.sigmoid(fl.from_numpy(x))).numpy()
    want = torch.log(torch.sigmoid(torch.from_numpy(x))).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-3)
    assert np.isfinite(got[x > -88.5]).all()


def test_partial_overlap_refused_as_torch():
    """Writing over memory that is still to be read raises as torch does; exact aliasing (in place) is fine."""
    cases = [lambda m, y: m.exp(y[:-1], out=y[1:]), lambda m, y: y[1:].copy_(y[:-1]),
             lambda m, y: y.add_(y[0]), lambda m, y: m.add(y[:-1], 1, out=y[1:]),
             lambda m, y: y.copy_(y), lambda m, y: m.add(y, 1, out=y), lambda m, y: y.exp_(),
             lambda m, y: y.reshape(2, 2)[1].add_(y.reshape(2, 2)[0])]
    for fn in cases:
        check_both(lambda lib, y: (fn(lib, y), y)[1], torch.arange(4.0))
