"""Complex numbers against torch: dtypes and promotion, creation, printing, the conjugate bit and the real/complex
views, torch.complex/polar, pointwise math, reductions and gradients (torch's conjugate Wirtinger convention), and
torch's errors for the ops that have no complex form."""
import warnings

import numpy as np
import pytest

from helpers import assert_raises_same, check_both, convert, torch

import flowlike as fl

RNG = np.random.default_rng(0)


def carray(*shape, dtype=np.complex128):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


Z = carray(3, 4)
W = carray(3, 4)
R = RNG.standard_normal((3, 4))

ALL = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64", "complex64",
       "complex128"]


# ---- dtypes and promotion ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["complex64", "complex128", "cfloat", "cdouble"])
def test_dtype_attributes(name):
    t, f = getattr(torch, name), getattr(fl, name)
    assert repr(f) == repr(t)
    assert (f.is_complex, f.is_floating_point, f.itemsize, f.is_signed) == \
        (t.is_complex, t.is_floating_point, t.itemsize, t.is_signed)
    assert repr(f.to_real()) == repr(t.to_real())
    assert repr(f.to_complex()) == repr(t.to_complex())
    assert repr(fl.finfo(f)) == repr(torch.finfo(t))


@pytest.mark.parametrize("a", ALL)
@pytest.mark.parametrize("b", ["complex64", "complex128"])
def test_promote_types(a, b):
    assert repr(fl.promote_types(getattr(fl, a), getattr(fl, b))) == \
        repr(torch.promote_types(getattr(torch, a), getattr(torch, b)))
    assert repr(fl.promote_types(getattr(fl, b), getattr(fl, a))) == \
        repr(torch.promote_types(getattr(torch, b), getattr(torch, a)))
    assert fl.can_cast(getattr(fl, a), getattr(fl, b)) == torch.can_cast(getattr(torch, a), getattr(torch, b))
    assert fl.can_cast(getattr(fl, b), getattr(fl, a)) == torch.can_cast(getattr(torch, b), getattr(torch, a))


@pytest.mark.parametrize("dtype", ["bool", "int64", "float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("scalar", [2, 1.5, 1 + 2j])
def test_scalar_promotion(dtype, scalar):
    check_both(lambda lib, x: (x + scalar, scalar * x, x - scalar), np.ones(3), dtype=dtype)


@pytest.mark.parametrize("default", ["float32", "float64"])
def test_default_complex_dtype(default):
    def body(lib):
        old = lib.get_default_dtype()
        lib.set_default_dtype(getattr(lib, default))
        try:
            return lib.tensor([1 + 2j]), lib.tensor(3j), lib.ones(2) * 1j, lib.full((2,), 1j), lib.tensor([1, 2.5j])
        finally:
            lib.set_default_dtype(old)
    check_both(body)


def test_result_type_mixes():
    check_both(lambda lib, z, x: (z + x, x * z, z / x, x - z, z == x), Z.astype(np.complex64), R)
    check_both(lambda lib, z, x: (z + x, x * z), Z.astype(np.complex64), np.float64(2.0))  # 0-dim float64


# ---- creation, conversion, printing --------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_factories(dtype):
    def body(lib):
        d = getattr(lib, dtype)
        return (lib.zeros(2, 3, dtype=d), lib.ones(2, dtype=d), lib.full((2,), 1 - 2j, dtype=d),
                lib.empty(0, dtype=d), lib.tensor([[1, 2j], [3 + 4j, -1]], dtype=d), lib.zeros_like(lib.ones(2), dtype=d))
    check_both(body)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_numpy_round_trip(dtype):
    z = carray(2, 3, dtype=dtype)
    t = fl.from_numpy(z)
    assert repr(t.dtype) == repr(torch.from_numpy(z).dtype)
    z[0, 0] = 7 + 8j  # shares memory
    assert t[0, 0].item() == 7 + 8j
    np.testing.assert_array_equal(t.numpy(), z)
    assert fl.tensor(z).tolist() == torch.tensor(z).tolist()


def test_item_and_tolist():
    check_both(lambda lib, z: (z[0, 1].item(), z.tolist(), z.conj().tolist(), z.conj()[1, 2].item(), complex(z[0, 0])),
               Z)


@pytest.mark.parametrize("to", ALL)
def test_casts(to):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's "Casting complex values to real discards the imaginary part"
        check_both(lambda lib, z: (z.to(getattr(lib, to)), z.conj().to(getattr(lib, to))), Z * 3)
        check_both(lambda lib, x: x.to(getattr(lib, "complex64")).to(getattr(lib, "complex128")), R, dtype=to)


def test_repr():
    cases = [Z[:2, :3], Z.astype(np.complex64)[:2], np.array([1 + 2j, -3.5 - 1e-5j]), np.array(1 + 1j),
             np.array([[1e10 + 1j, 1]]), np.array([1 + 2j]), np.array([np.nan + 1j, np.inf - np.inf * 1j, 0j]),
             np.zeros((0, 2), np.complex64), carray(40, 40)]
    for z in cases:
        assert repr(convert(fl, z)) == repr(convert(torch, z))
    assert repr(convert(fl, Z).conj()) == repr(convert(torch, Z).conj())
    a, b = fl.tensor([1 + 2j], requires_grad=True), torch.tensor([1 + 2j], requires_grad=True)
    assert repr(a * 2) .replace("MulBackward0", "") == repr(b * 2).replace("MulBackward0", "")


# ---- views and the conjugate bit -------------------------------------------------------------------------------------

def test_views():
    check_both(lambda lib, z: (lib.view_as_real(z), z.real, z.imag, lib.real(z), lib.imag(z),
                               lib.view_as_complex(lib.view_as_real(z)), lib.view_as_real(z.t()), z.t().imag),
               Z, strides=True)
    check_both(lambda lib, x: lib.view_as_complex(x), R.reshape(6, 2), strides=True)
    check_both(lambda lib, x: (lib.view_as_complex(x[::2]), lib.view_as_complex(x)[1:]), R.reshape(3, 2, 2),
               strides=True)


def test_views_share_memory():
    def body(lib, z):
        z = z.clone()
        z.real[0] = 5
        z.imag[1] += 2
        lib.view_as_real(z)[2, 0, 1] = -9
        v = lib.view_as_complex(lib.view_as_real(z))
        v[2, 3] = 1j
        z.real = lib.zeros(4)  # the property setter writes through
        return z, z._version > 0
    check_both(body, Z[:3])


def test_conj_bit():
    def body(lib, z):
        c = z.conj()
        v = c.t()[1:]
        return (c.is_conj(), v.is_conj(), c, v, c.resolve_conj().is_conj(), c.resolve_conj(), lib.conj_physical(z),
                lib.conj_physical(z).is_conj(), c.conj().is_conj(), c.conj(), c.clone().is_conj(), c.clone(),
                c.contiguous().is_conj(), lib.is_conj(c), c.real, c.imag, c + 1, c * z, c.sum(), c[0, 0])
    check_both(body, Z, strides=False)
    check_both(lambda lib, x: (x.conj() is x, x.conj().is_conj(), x.resolve_conj() is x, lib.conj_physical(x)), R)


def test_writes_into_conj_views():
    def body(lib, z):
        z = z.clone()
        c = z.conj()
        c[0] = 1 + 1j
        c[1].mul_(2j)
        c[2].fill_(3 - 4j)
        c.imag  # noqa: B018 - reading is fine
        return z, c
    check_both(body, Z)


def test_view_errors():
    assert_raises_same(lambda lib, z: lib.view_as_real(z.conj()), Z)
    assert_raises_same(lambda lib, x: lib.view_as_real(x), R)
    assert_raises_same(lambda lib, x: lib.view_as_complex(x), R)  # last dim 4
    assert_raises_same(lambda lib, x: lib.view_as_complex(x.t()), R.reshape(2, 6)[:, :2].copy())
    assert_raises_same(lambda lib, x: lib.view_as_complex(x.to(lib.int64)), R.reshape(6, 2))
    assert_raises_same(lambda lib, x: lib.view_as_complex(x[0, 0, 0]), R.reshape(3, 2, 2))
    assert_raises_same(lambda lib, x: x.imag, R)
    assert_raises_same(lambda lib, x: lib.imag(x), R)
    assert_raises_same(lambda lib, z: z.conj().numpy(), Z)


# ---- torch.complex and torch.polar -----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_complex_and_polar(dtype):
    a, b = RNG.standard_normal((3, 1)), RNG.standard_normal(4)
    check_both(lambda lib, x, y: (lib.complex(x, y), lib.polar(lib.abs(x), y)), a, b, dtype=dtype, grad=True)


def test_complex_and_polar_errors():
    assert_raises_same(lambda lib, x: lib.complex(x, x.double()), R, dtype="float32")
    assert_raises_same(lambda lib, x: lib.complex(x, x), R, dtype="int64")
    assert_raises_same(lambda lib, x: lib.polar(x, x.double()), R, dtype="float32")
    assert_raises_same(lambda lib, x: lib.complex(x, x), Z)


# ---- pointwise math and reductions ---------------------------------------------------------------------------------

BINARY = {"add": lambda lib, a, b: a + b, "sub": lambda lib, a, b: a - b, "mul": lambda lib, a, b: a * b,
          "div": lambda lib, a, b: a / b, "add_alpha": lambda lib, a, b: lib.add(a, b, alpha=2),
          "eq": lambda lib, a, b: (a == b, a != b, a == a), "pow": lambda lib, a, b: a ** b,
          "logical": lambda lib, a, b: (lib.logical_and(a, b * (b.real > 0)), lib.logical_or(a * 0, b * (b.real > 0)),
                                        lib.logical_xor(a, b * (b.real > 0)))}


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("op", list(BINARY))
def test_binary(op, dtype):
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == "complex64" else {}
    check_both(BINARY[op], Z, W, dtype=dtype, grad=True, **tol)
    check_both(BINARY[op], Z[:, :1], W, dtype=dtype, grad=True, **tol)  # broadcasting


@pytest.mark.parametrize("op", list(BINARY))
def test_binary_real_and_complex(op):
    # a real operand's gradient is the real part of what flows into it
    check_both(BINARY[op], R, Z, grad=True)
    check_both(BINARY[op], Z, R, grad=True)


def test_binary_division_special_values():
    a = np.array([1 + 1j, 0j, 1j, np.inf + 0j, 1e300 + 1e300j, -2 + 0j])
    b = np.array([0j, 0j, 1e-300 + 1e300j, 1 + 1j, 1e300 - 1e300j, -0.0 + 0j])
    check_both(lambda lib, x, y: x / y, a, b)


UNARY = {"neg": lambda lib, z: -z, "abs": lambda lib, z: z.abs(), "angle": lambda lib, z: lib.angle(z),
         "sgn": lambda lib, z: z.sgn(), "square": lambda lib, z: lib.square(z),
         "reciprocal": lambda lib, z: z.reciprocal(), "exp": lambda lib, z: z.exp(), "log": lambda lib, z: z.log(),
         "exp2": lambda lib, z: z.exp2(), "expm1": lambda lib, z: z.expm1(), "log1p": lambda lib, z: z.log1p(),
         "log2": lambda lib, z: z.log2(), "log10": lambda lib, z: z.log10(), "sqrt": lambda lib, z: z.sqrt(),
         "rsqrt": lambda lib, z: z.rsqrt(), "sin": lambda lib, z: z.sin(), "cos": lambda lib, z: z.cos(),
         "tan": lambda lib, z: z.tan(), "sinh": lambda lib, z: z.sinh(), "cosh": lambda lib, z: z.cosh(),
         "tanh": lambda lib, z: z.tanh(), "asin": lambda lib, z: z.asin(), "acos": lambda lib, z: z.acos(),
         "atan": lambda lib, z: z.atan(), "asinh": lambda lib, z: z.asinh(), "acosh": lambda lib, z: z.acosh(),
         "atanh": lambda lib, z: z.atanh(), "sigmoid": lambda lib, z: z.sigmoid(),
         "predicates": lambda lib, z: (z.isnan(), z.isinf(), z.isfinite(), lib.isreal(z), lib.logical_not(z)),
         "conj_physical": lambda lib, z: lib.conj_physical(z), "conj": lambda lib, z: z.conj() * 1,
         "real_imag": lambda lib, z: (z.real * 1, z.imag * 1),
         "view_as_real": lambda lib, z: lib.view_as_real(z) * 1}


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("op", list(UNARY))
def test_unary(op, dtype):
    tol = dict(rtol=2e-5, atol=2e-5) if dtype == "complex64" else dict(rtol=1e-9, atol=1e-9)
    check_both(UNARY[op], Z, dtype=dtype, grad=True, **tol)


def test_unary_special_values():
    z = np.array([0j, -0.0 + 0j, np.nan + 1j, 1 + np.nan * 1j, np.inf + 0j, -np.inf + 1j, 1e-300 + 0j])
    for op in ["neg", "abs", "angle", "sgn", "exp", "sqrt", "predicates", "reciprocal"]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            check_both(UNARY[op], z)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_reductions(dtype):
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == "complex64" else {}
    check_both(lambda lib, z: (z.sum(), z.sum(0), z.sum(-1, keepdim=True), z.mean(), z.mean((0, 1)), z.mean(1),
                               z.t().sum(0), z[0, 0].sum(), z.conj().sum(1)), Z, dtype=dtype, grad=True, **tol)
    check_both(lambda lib, x: (x.sum(dtype=lib.complex128), x.mean(dtype=lib.complex64)), R)
    check_both(lambda lib, z: z.sum(dtype=lib.float64), Z, quiet=True)
    check_both(lambda lib, z: (z.any(), z.all(1), lib.count_nonzero(z, 0)), np.array([[0j, 1j], [0j, 0j]]))


def test_backward_needs_real_scalar():
    assert_raises_same(lambda lib, z: (z * 2).sum().backward(), Z, requires_grad=True)
    check_both(lambda lib, z: (z * 2).sum().abs(), Z, grad=True)


NO_COMPLEX = {"maximum": lambda lib, z: lib.maximum(z, z), "lt": lambda lib, z: z < z,
              "atan2": lambda lib, z: lib.atan2(z, z), "remainder": lambda lib, z: z % z,
              "floor": lambda lib, z: z.floor(), "sign": lambda lib, z: z.sign(), "erf": lambda lib, z: z.erf(),
              "amax": lambda lib, z: z.amax(), "clamp": lambda lib, z: z.clamp(0, 1),
              "bitwise": lambda lib, z: z & z, "relu": lambda lib, z: lib.relu(z), "argmax": lambda lib, z: z.argmax(),
              "argmin": lambda lib, z: z.argmin(1), "max_dim": lambda lib, z: z.max(0), "min": lambda lib, z: z.min(),
              "topk": lambda lib, z: z.topk(1), "nansum": lambda lib, z: z.nansum(), "nanmean": lambda lib, z: z.nanmean(),
              "heaviside": lambda lib, z: lib.heaviside(z, z), "isposinf": lambda lib, z: lib.isposinf(z),
              "signbit": lambda lib, z: lib.signbit(z), "fmod": lambda lib, z: lib.fmod(z, z),
              "floor_divide": lambda lib, z: z // z, "lgamma": lambda lib, z: z.lgamma(), "minimum": lambda lib, z: lib.minimum(z, z),
              "bitwise_not": lambda lib, z: ~z, "cummax": lambda lib, z: z.cummax(0), "kthvalue": lambda lib, z: z.kthvalue(1),
              "median": lambda lib, z: z.median(), "unique": lambda lib, z: z.unique()}


@pytest.mark.parametrize("op", list(NO_COMPLEX))
def test_errors_for_ops_without_complex(op):
    assert_raises_same(NO_COMPLEX[op], Z)


# ---- products, more reductions, data movement ------------------------------------------------------------------------

PRODUCTS = {"mm": lambda lib, a, b: a @ b.t(), "matmul_batched": lambda lib, a, b: lib.matmul(a[None], b.t()[None, :, :2]),
            "mv": lambda lib, a, b: lib.mv(a, b[0]), "vec_mat": lambda lib, a, b: a[0] @ b.t(),
            "dot": lambda lib, a, b: lib.dot(a[0], b[1]), "vdot": lambda lib, a, b: lib.vdot(a[0], b[1]),
            "bmm": lambda lib, a, b: lib.bmm(a.reshape(2, 3, 2), b.reshape(2, 2, 3)),
            "einsum": lambda lib, a, b: lib.einsum("ij,kj->ik", a, b),
            "addmm": lambda lib, a, b: lib.addmm(a[:, :3], a, b.t()[:, :3], beta=0.5, alpha=2),
            "inner_outer": lambda lib, a, b: (lib.inner(a, b), lib.outer(a[0], b[1])),
            "vecdot": lambda lib, a, b: lib.linalg.vecdot(a, b),
            "conj_operands": lambda lib, a, b: (a.conj() @ b.t(), a @ b.conj().t(), a.t().conj() @ b),
            "strided": lambda lib, a, b: a[:, ::2] @ b[::2, ::2].t()}


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("op", list(PRODUCTS))
def test_products(op, dtype):
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == "complex64" else {}
    check_both(PRODUCTS[op], Z, W, dtype=dtype, grad=True, **tol)


def test_products_real_and_complex_errors():
    assert_raises_same(lambda lib, a, b: a @ b, Z, R.T)  # mixed dtypes
    assert_raises_same(lambda lib, a, b: lib.dot(a[0], b[0]), Z, R)


REDUCTIONS = {"prod": lambda lib, z: (z.prod(), z.prod(1), z.prod(0, keepdim=True)),
              "cumsum": lambda lib, z: (z.cumsum(0), z.cumsum(-1)), "cumprod": lambda lib, z: (z.cumprod(0), z.cumprod(1)),
              "var_std": lambda lib, z: (z.var(), z.var(0), z.std(1, keepdim=True), z.var(correction=0)),
              "var_mean": lambda lib, z: (lib.var_mean(z, 1), lib.std_mean(z, 0)), "trace": lambda lib, z: z[:, :3].trace(),
              "norm": lambda lib, z: (z.norm(), lib.linalg.vector_norm(z, 1), lib.linalg.vector_norm(z, dim=0),
                                      lib.linalg.norm(z)),
              "nonzero": lambda lib, z: (lib.nonzero(z * (z.real > 0)), lib.count_nonzero(z * (z.real > 0)))}


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("op", list(REDUCTIONS))
def test_more_reductions(op, dtype):
    tol = dict(rtol=2e-5, atol=2e-5) if dtype == "complex64" else {}
    check_both(REDUCTIONS[op], Z, dtype=dtype, grad=op != "nonzero", **tol)


def test_prod_with_zeros_gradient():
    z = Z.copy()
    z[0, 1] = 0
    z[2, 0] = z[2, 3] = 0
    check_both(lambda lib, x: (x.prod(1), x.cumprod(1)), z, grad=True)


MOVES = {"cat_stack": lambda lib, a, b: (lib.cat([a, b], 1), lib.stack([a, b])),
         "index": lambda lib, a, b: (a[[0, 2]], a[:, 1], a[a.real > 0], a[..., None]),
         "setitem": lambda lib, a, b: _setitem(a, b), "flip_roll": lambda lib, a, b: (a.flip(0), a.roll(1, 1)),
         "gather_scatter": lambda lib, a, b: (a.gather(1, lib.tensor([[0, 1], [3, 3], [2, 0]])),
                                              lib.zeros(3, 4, dtype=a.dtype).scatter_add(0, lib.tensor([[0, 1, 2, 0]]), b[:1]),
                                              a.index_add(0, lib.tensor([2, 0, 1]), b)),
         "where_masked": lambda lib, a, b: (lib.where(a.real > 0, a, b), a.masked_fill(a.imag > 0, 2j)),
         "pad": lambda lib, a, b: (lib.nn.functional.pad(a, (1, 2)), lib.nn.functional.pad(a[None], (2, 1), mode="reflect"),
                                   lib.nn.functional.pad(a[None], (1, 1, 2, 0), mode="replicate"),
                                   lib.nn.functional.pad(a, (1, 1), value=2.0)),
         "shape": lambda lib, a, b: (a.tril(), a.repeat(2, 1), a[:, :1].expand(3, 5), a.reshape(2, 6).t().contiguous(),
                                     a.unfold(1, 2, 1), a.diagonal(), lib.diag(a[0]), a.index_select(1, lib.tensor([3, 0]))),
         "copy_fill": lambda lib, a, b: (a.clone().copy_(b), a.clone().fill_(1 - 1j), a.clone().zero_(),
                                         a.clone().copy_(b.real), lib.full_like(a, 2j))}


def _setitem(a, b):
    a = a.clone()
    a[0] = b[1]
    a[1, 2] = 3 + 4j
    a[a.real < 0] = 0
    return a


@pytest.mark.parametrize("op", list(MOVES))
def test_data_movement(op):
    check_both(MOVES[op], Z, W, grad=True)


def test_sort_and_more_errors():
    for body in [lambda lib, z: z.sort(), lambda lib, z: z.argmax(), lambda lib, z: z.cummax(0),
                 lambda lib, z: lib.zeros(3, 4, dtype=z.dtype).scatter_reduce(0, lib.zeros(3, 4, dtype=lib.int64), z, "amax"),
                 lambda lib, z: lib.zeros(2).masked_fill(lib.tensor([True, False]), 1j), lambda lib, z: lib.full((2,), 1j, dtype=lib.float32)]:
        assert_raises_same(body, Z)


# ---- the ops torch runs on complex whose flowlike kernels are real-valued: composites, with autograd --------------

COMPOSITES = {
    "logsumexp": lambda lib, z: (lib.logsumexp(z, 1), lib.logsumexp(z, (0, 1), keepdim=True), z.logsumexp(0),
                                 lib.special.logsumexp(z, -1)),
    # (z * 4: imaginary parts past pi, which torch's term-by-term kernel does not reduce)
    "logcumsumexp": lambda lib, z: (lib.logcumsumexp(z, 1), z.logcumsumexp(0), lib.logcumsumexp(z * 4, -1),
                                    lib.logcumsumexp(z[0, 0], 0)),
    "logaddexp": lambda lib, z: (lib.logaddexp(z, z.flip(0)), z.logaddexp(z * 0.5)),
    "silu": lambda lib, z: lib.nn.functional.silu(z.detach()),  # (torch's silu has no complex gradient: below)
    "softsign_tanhshrink": lambda lib, z: (lib.nn.functional.softsign(z), lib.nn.functional.tanhshrink(z)),
    "sinc": lambda lib, z: lib.sinc(z * lib.tensor([[1.0], [0.0], [1.0]], dtype=z.dtype)),
    "float_power": lambda lib, z: (lib.float_power(z, 2), lib.float_power(z, z), lib.float_power(z.real, 1j)),
    "addcdiv": lambda lib, z: lib.addcdiv(z, z, z + 3, value=0.5),
    "cov_corrcoef": lambda lib, z: (lib.cov(z), lib.corrcoef(z), lib.cov(z, correction=0)),
    "renorm": lambda lib, z: lib.renorm(z, 2, 0, 1.5),
    "rms_norm": lambda lib, z: (lib.nn.functional.rms_norm(z, [4]), lib.nn.functional.rms_norm(z, [3, 4])),
    "pad": lambda lib, z: (lib.constant_pad_nd(z, [1, 2], 1 + 2j), lib.constant_pad_nd(z, [1, 0, -1, 1], -3j)),
    "mH": lambda lib, z: (z.mH, z.H, z.adjoint(), lib.adjoint(z[None]), z.mH @ z),
}


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("op", list(COMPOSITES))
def test_composites_on_complex(op, dtype):
    tol = dict(rtol=2e-5, atol=2e-5) if dtype == "complex64" else {}
    check_both(COMPOSITES[op], Z, dtype=dtype, grad=True, **tol)


def test_complex_errors_as_torch():
    assert_raises_same(lambda lib, z: lib.nn.functional.silu(z), Z, requires_grad=True)
    assert_raises_same(lambda lib, z: lib.nn.functional.pad(z, [1, 1], value=1j), Z)


def test_logaddexp_of_infinite_real_parts():
    a = np.array([complex(-np.inf, 1.0), 1 + 1j, complex(-np.inf, 0.0), complex(-np.inf, 0.5)])
    b = np.array([complex(-np.inf, 2.0), complex(-np.inf, 3.0), 2 - 1j, 1 + 0j])
    check_both(lambda lib, x, y: lib.logaddexp(x, y), a, b, dtype="complex128")


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_linspace_with_complex_ends(dtype):
    check_both(lambda lib: (lib.linspace(1 + 1j, 3 - 2j, 5, dtype=getattr(lib, dtype)),
                            lib.linspace(-2j, 2, 1, dtype=getattr(lib, dtype)),
                            lib.linspace(0, 1, 4, dtype=getattr(lib, dtype))), rtol=1e-6)
    check_both(lambda lib: lib.linspace(1 + 1j, 3 - 2j, 7))  # the default dtype's complex counterpart


@pytest.mark.parametrize("fill", ["normal_", "uniform_"])
def test_random_fills_of_complex_tensors(fill):
    # random values, not torch's: the parts are drawn on their own, normal_'s with std / sqrt(2), as torch's
    z = getattr(fl.zeros(20000, dtype=fl.complex128), fill)()
    assert z.dtype == fl.complex128
    re, im = z.real.numpy(), z.imag.numpy()
    if fill == "normal_":
        assert abs(re.std() - 0.5 ** 0.5) < 0.02 and abs(im.std() - 0.5 ** 0.5) < 0.02
        assert abs(np.mean(np.abs(z.numpy()) ** 2) - 1) < 0.05
    else:
        assert 0 <= re.min() and re.max() < 1 and 0 <= im.min() and im.max() < 1 and abs(im.mean() - 0.5) < 0.02


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_on_complex_raises_as_torch(op):
    assert_raises_same(lambda lib, z: getattr(lib, op)(z, 1), Z)
    assert_raises_same(lambda lib, z: getattr(lib.nn.functional, op)(z, 0), Z)
