"""Complex tensors on their own (numpy's complex arithmetic is the reference): dtypes and promotion, creation and
conversion, the conjugate bit and the real/complex views, pointwise math and reductions, gradients by finite
differences, and the errors of ops that have no complex form."""
import numpy as np
import pytest

import flowlike as torch

RNG = np.random.default_rng(1)


def carray(*shape, dtype=np.complex128):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def test_dtypes():
    assert torch.cfloat is torch.complex64 and torch.cdouble is torch.complex128
    assert torch.complex64.is_complex and not torch.complex64.is_floating_point
    assert (torch.complex64.itemsize, torch.complex128.itemsize) == (8, 16)
    assert torch.complex64.to_real() == torch.float32 and torch.float64.to_complex() == torch.complex128
    assert torch.promote_types(torch.float64, torch.complex64) == torch.complex128
    assert torch.promote_types(torch.int64, torch.complex64) == torch.complex64
    assert torch.finfo(torch.complex128).eps == np.finfo(np.float64).eps
    assert torch.is_complex(torch.zeros(1, dtype=torch.cfloat)) and not torch.is_complex(torch.zeros(1))


def test_scalar_promotion():
    assert (torch.ones(2) * 1j).dtype == torch.complex64
    assert (torch.ones(2, dtype=torch.float64) * 1j).dtype == torch.complex128
    assert (torch.ones(2, dtype=torch.int64) + 2j).dtype == torch.complex64
    assert (torch.ones(2, dtype=torch.cfloat) * 2.5).dtype == torch.complex64
    assert torch.tensor([1, 2j]).dtype == torch.complex64 and torch.tensor(1j).dtype == torch.complex64
    assert torch.full((2,), 1 + 1j).dtype == torch.complex64


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_numpy_round_trip_and_item(dtype):
    z = carray(3, 2, dtype=dtype)
    t = torch.from_numpy(z)
    np.testing.assert_array_equal(t.numpy(), z)
    assert t[1, 0].item() == complex(z[1, 0]) and t.tolist() == z.tolist()
    np.testing.assert_array_equal(torch.tensor(z).numpy(), z)
    np.testing.assert_array_equal(t.to(torch.float64).numpy(), z.real)
    np.testing.assert_array_equal(torch.from_numpy(z.real.copy()).to(t.dtype).numpy(), z.real + 0j)


def test_conj_bit_and_views():
    z = carray(3, 4)
    t = torch.tensor(z)
    c = t.conj()
    assert c.is_conj() and not t.is_conj() and c.data_ptr() == t.data_ptr()
    assert c.t().is_conj() and c[1:].is_conj() and not c.resolve_conj().is_conj()
    np.testing.assert_array_equal(c.resolve_conj().numpy(), z.conj())
    np.testing.assert_array_equal(torch.conj_physical(t).numpy(), z.conj())
    np.testing.assert_array_equal((c * 1).numpy(), z.conj())
    np.testing.assert_array_equal(c.imag.numpy(), -z.imag)
    with pytest.raises(RuntimeError, match="conjugate bit"):
        c.numpy()
    with pytest.raises(RuntimeError, match="resolve_conj"):
        torch.view_as_real(c)
    r = torch.view_as_real(t)
    assert r.shape == (3, 4, 2) and r.stride() == (8, 2, 1) and r.dtype == torch.float64
    np.testing.assert_array_equal(r.numpy(), np.stack([z.real, z.imag], -1))
    t.imag[0] = 5.0  # views write through
    c[2, 1] = 1 + 2j  # a conjugate view stores the conjugate
    assert t[0, 0].item().imag == 5.0 and t[2, 1].item() == 1 - 2j
    back = torch.view_as_complex(r)
    assert back.data_ptr() == t.data_ptr() and back.dtype == torch.complex128
    x = torch.ones(3)
    assert x.conj() is x and torch.real(x) is x
    with pytest.raises(RuntimeError, match="non-complex"):
        x.imag  # noqa: B018


def test_complex_and_polar():
    re, im = RNG.standard_normal(4), RNG.standard_normal(4)
    np.testing.assert_array_equal(torch.complex(torch.tensor(re), torch.tensor(im)).numpy(), re + 1j * im)
    p = torch.polar(torch.tensor(np.abs(re)), torch.tensor(im)).numpy()
    np.testing.assert_allclose(p, np.abs(re) * np.exp(1j * im), rtol=1e-12)
    with pytest.raises(RuntimeError):
        torch.complex(torch.ones(2), torch.ones(2, dtype=torch.float64))


@pytest.mark.parametrize("name, ref", [("exp", np.exp), ("log", np.log), ("sqrt", np.sqrt), ("sin", np.sin),
                                       ("cos", np.cos), ("tanh", np.tanh), ("reciprocal", np.reciprocal),
                                       ("abs", np.abs), ("neg", np.negative), ("square", np.square)])
def test_unary_against_numpy(name, ref):
    z = carray(5, 3)
    np.testing.assert_allclose(getattr(torch, name)(torch.tensor(z)).numpy(), ref(z), rtol=1e-12, atol=1e-14)


def test_binary_and_reductions_against_numpy():
    a, b = carray(4, 3), carray(4, 3)
    ta, tb = torch.tensor(a), torch.tensor(b)
    for got, want in [(ta + tb, a + b), (ta * tb, a * b), (ta / tb, a / b), (ta - 2 * tb, a - 2 * b),
                      (ta ** tb, a ** b), (ta.sum(0), a.sum(0)), (ta.mean(), a.mean()), (torch.angle(ta), np.angle(a)),
                      (ta * torch.tensor(b.real), a * b.real)]:
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-14)
    assert (ta == ta.clone()).all() and not (ta != ta).any()


def test_gradients_by_finite_differences():
    """torch's convention: for a real loss L the gradient is dL/dRe(z) + i dL/dIm(z)."""
    z = carray(5)

    def loss(t):
        return (torch.exp(t) * t.conj() / (t + 3) + t.abs()).sum().real

    t = torch.tensor(z, requires_grad=True)
    loss(t).backward()
    eps = 1e-6
    want = np.zeros(5, complex)
    for k in range(5):
        for part in (1, 1j):
            d = np.zeros(5, complex)
            d[k] = eps * part
            slope = (loss(torch.tensor(z + d)).item() - loss(torch.tensor(z - d)).item()) / (2 * eps)
            want[k] += slope * part
    np.testing.assert_allclose(t.grad.numpy(), want, rtol=1e-6, atol=1e-7)
    with pytest.raises(RuntimeError, match="real scalar outputs"):
        (torch.tensor(z, requires_grad=True) * 2).sum().backward()


@pytest.mark.parametrize("op", [lambda z: z < z, lambda z: z.floor(), lambda z: z.sign(), lambda z: z.amax(),
                                lambda z: torch.maximum(z, z), lambda z: z.clamp(0, 1)])
def test_ops_without_complex_raise(op):
    with pytest.raises((RuntimeError, NotImplementedError)):
        op(torch.tensor(carray(3)))


def test_repr():
    assert repr(torch.tensor([1 + 2j, -3.5 - 1e-5j])) == "tensor([ 1.0000+2.0000e+00j, -3.5000-1.0000e-05j])"
    assert repr(torch.tensor([1 + 2j], dtype=torch.cdouble)) == "tensor([1.+2.j], dtype=torch.complex128)"


def test_random_complex():
    torch.manual_seed(0)
    z = torch.randn(20000, dtype=torch.cfloat)
    assert z.dtype == torch.complex64
    var = (z.abs() ** 2).mean().item()
    assert 0.95 < var < 1.05 and abs(z.real.var().item() - 0.5) < 0.03
    u = torch.rand(1000, dtype=torch.cdouble)
    assert 0 <= u.real.min().item() and u.imag.max().item() < 1
