"""flowlike.fft against numpy.fft: values for every kind of length (the radix-2/3/4/5 and odd factors, primes through
Bluestein), norms, n / s resizing, dims, strided inputs, dtypes and promotion, errors; gradients by closed forms
(Parseval); stft / istft; torch.signal.windows against their closed forms."""
import math

import numpy as np
import pytest

import flowlike as torch

rng = np.random.default_rng(0)
LENGTHS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16, 17, 25, 49, 60, 64, 67, 97, 100, 128, 210, 243, 257, 1000, 1024,
           4099]
NORMS = [None, "backward", "ortho", "forward"]
CTOL = {torch.complex64: 2e-5, torch.complex128: 1e-12, torch.float32: 2e-5, torch.float64: 1e-12}


def N(t):
    return t.detach().resolve_conj().numpy()


def crandn(*shape, dtype=np.complex128):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def close(got, want, dtype):
    """Errors relative to the reference's largest magnitude (FFT errors scale with the signal, not per entry)."""
    got, want = N(got), np.asarray(want)
    assert got.shape == want.shape
    scale = max(np.abs(want).max(initial=0.0), 1e-30)
    assert np.abs(got - want).max(initial=0.0) <= CTOL[dtype] * scale * max(1.0, math.log2(max(want.size, 2)))


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_fft_ifft_lengths(n, dtype):
    x = crandn(3, n)
    t = torch.tensor(x, dtype=dtype)
    r = torch.fft.fft(t)
    assert r.dtype == dtype
    close(r, np.fft.fft(x), dtype)
    close(torch.fft.ifft(t), np.fft.ifft(x), dtype)


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_rfft_irfft_lengths(n, dtype):
    x = rng.standard_normal((5, n))  # odd batch: one pair of rows runs with a missing partner
    t = torch.tensor(x, dtype=dtype)
    r = torch.fft.rfft(t)
    assert r.dtype == (torch.complex64 if dtype == torch.float32 else torch.complex128)
    close(r, np.fft.rfft(x), dtype)
    close(torch.fft.fft(t), np.fft.fft(x), dtype)  # real input, full spectrum
    close(torch.fft.irfft(r, n), x, dtype)
    close(torch.fft.ihfft(t), np.fft.ihfft(x), dtype)
    close(torch.fft.hfft(torch.fft.ihfft(t), n), x, dtype)


@pytest.mark.parametrize("norm", NORMS)
def test_norms(norm):
    x = crandn(4, 12)
    t = torch.tensor(x)
    close(torch.fft.fft(t, norm=norm), np.fft.fft(x, norm=norm), torch.complex128)
    close(torch.fft.ifft(t, norm=norm), np.fft.ifft(x, norm=norm), torch.complex128)
    close(torch.fft.fft2(t, norm=norm), np.fft.fft2(x, norm=norm), torch.complex128)
    xr = x.real
    close(torch.fft.rfft(torch.tensor(xr), norm=norm), np.fft.rfft(xr, norm=norm), torch.float64)
    close(torch.fft.irfft(t, norm=norm), np.fft.irfft(x, norm=norm), torch.float64)
    close(torch.fft.hfft(t, norm=norm), np.fft.hfft(x, norm=norm), torch.float64)
    close(torch.fft.ihfft(torch.tensor(xr), norm=norm), np.fft.ihfft(xr, norm=norm), torch.float64)


@pytest.mark.parametrize("n", [5, 8, 13, 20])
def test_n_pads_and_trims(n):
    x = crandn(2, 10)
    t = torch.tensor(x)
    close(torch.fft.fft(t, n=n), np.fft.fft(x, n=n), torch.complex128)
    close(torch.fft.ifft(t, n=n, dim=0), np.fft.ifft(x, n=n, axis=0), torch.complex128)
    close(torch.fft.rfft(torch.tensor(x.real), n=n), np.fft.rfft(x.real, n=n), torch.float64)
    close(torch.fft.irfft(t, n=n), np.fft.irfft(x, n=n), torch.float64)
    close(torch.fft.hfft(t, n=n), np.fft.hfft(x, n=n), torch.float64)


@pytest.mark.parametrize("dims", [None, (0,), (1, 2), (0, 2), (2, 0), (-1, -3)])
def test_nd_transforms(dims):
    x = crandn(6, 5, 8)
    t = torch.tensor(x)
    close(torch.fft.fftn(t, dim=dims), np.fft.fftn(x, axes=dims), torch.complex128)
    close(torch.fft.ifftn(t, dim=dims), np.fft.ifftn(x, axes=dims), torch.complex128)
    xr = x.real
    close(torch.fft.rfftn(torch.tensor(xr), dim=dims), np.fft.rfftn(xr, axes=dims), torch.float64)
    close(torch.fft.irfftn(t, dim=dims), np.fft.irfftn(x, axes=dims), torch.float64)


def test_nd_shapes_s():
    x = crandn(6, 5, 8)
    t = torch.tensor(x)
    close(torch.fft.fft2(t, s=(4, 10)), np.fft.fft2(x, s=(4, 10)), torch.complex128)
    close(torch.fft.fftn(t, s=(3, 7)), np.fft.fftn(x, s=(3, 7), axes=(1, 2)), torch.complex128)
    close(torch.fft.rfft2(torch.tensor(x.real), s=(7, 9)), np.fft.rfft2(x.real, s=(7, 9)), torch.float64)
    close(torch.fft.irfft2(t, s=(4, 9)), np.fft.irfft2(x, s=(4, 9)), torch.float64)
    close(torch.fft.irfftn(t, s=(-1, 6), dim=(0, 1)), np.fft.irfftn(x, s=(6, 6), axes=(0, 1)), torch.float64)


def test_hfftn_ihfftn_invert_each_other():
    x = rng.standard_normal((4, 6, 10))
    t = torch.tensor(x)
    for norm in NORMS:
        h = torch.fft.ihfftn(t, norm=norm)
        assert h.shape == (4, 6, 6)
        close(torch.fft.hfftn(h, s=(4, 6, 10), norm=norm), x, torch.float64)
        close(torch.fft.hfft2(torch.fft.ihfft2(t, norm=norm), s=(6, 10), norm=norm), x, torch.float64)
    # ihfftn is the conjugated one-sided inverse transform
    close(torch.fft.ihfftn(t), np.conj(np.fft.rfftn(x)) / x.size, torch.float64)


def test_strided_and_expanded_inputs():
    x = crandn(8, 12)
    t = torch.tensor(x)
    close(torch.fft.fft(t.t()), np.fft.fft(x.T), torch.complex128)
    close(torch.fft.fft(t[::2, 1::3]), np.fft.fft(x[::2, 1::3]), torch.complex128)
    close(torch.fft.fft2(t.t()), np.fft.fft2(x.T), torch.complex128)
    row = torch.tensor(x[0]).expand(5, 12)
    close(torch.fft.fft(row), np.fft.fft(np.broadcast_to(x[0], (5, 12))), torch.complex128)
    xr = x.real
    close(torch.fft.rfft(torch.tensor(xr).t()), np.fft.rfft(xr.T), torch.float64)
    close(torch.fft.irfft(t.t()), np.fft.irfft(x.T), torch.float64)


def test_dtype_promotion():
    i = torch.arange(8)
    assert torch.fft.fft(i).dtype == torch.complex64
    assert torch.fft.rfft(i).dtype == torch.complex64
    assert torch.fft.irfft(i).dtype == torch.float32
    assert torch.fft.fftn(torch.ones(2, 2, dtype=torch.float64)).dtype == torch.complex128
    assert torch.fft.hfft(torch.ones(5, dtype=torch.bool)).dtype == torch.float32
    close(torch.fft.fft(i), np.fft.fft(np.arange(8)), torch.complex64)
    with pytest.raises(RuntimeError):
        torch.fft.fft(torch.ones(4, dtype=torch.float16))


def test_errors():
    t = torch.ones(4, dtype=torch.complex64)
    with pytest.raises(RuntimeError, match="Invalid number of data points"):
        torch.fft.fft(t, n=0)
    with pytest.raises(RuntimeError, match="Invalid number of data points"):
        torch.fft.fftn(torch.ones(0, 3))  # all dims: an empty one
    with pytest.raises(RuntimeError, match="Invalid number of data points"):
        torch.fft.irfft(torch.ones(1, dtype=torch.complex64))
    with pytest.raises(IndexError):
        torch.fft.fft(t, dim=1)
    with pytest.raises(IndexError):
        torch.fft.fft(torch.tensor(1.0))
    with pytest.raises(RuntimeError, match="normalization"):
        torch.fft.fft(t, norm="sideways")
    with pytest.raises(RuntimeError, match="real"):
        torch.fft.rfft(t)
    with pytest.raises(RuntimeError, match="unique"):
        torch.fft.fftn(torch.ones(2, 2, dtype=torch.complex64), dim=(0, 0))
    with pytest.raises(IndexError):
        torch.fft.fft2(t)  # two dims asked of a 1-D tensor


def test_threads_agree():
    x = torch.tensor(crandn(64, 1000))
    old = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = N(torch.fft.fft2(x))
        torch.set_num_threads(2)
        two = N(torch.fft.fft2(x))
    finally:
        torch.set_num_threads(old)
    np.testing.assert_array_equal(one, two)


def test_grad_parseval():
    # sum |fft(x)|^2 = n sum |x|^2, so its gradient is 2 n x (real x: the real part of torch's conjugate gradient)
    x = torch.tensor(rng.standard_normal((3, 10)), requires_grad=True)
    (torch.fft.fft(x).abs() ** 2).sum().backward()
    np.testing.assert_allclose(N(x.grad), 20 * N(x), rtol=1e-10)
    z = torch.tensor(crandn(3, 7), requires_grad=True)
    (torch.fft.ifft(z, norm="ortho").abs() ** 2).sum().backward()
    np.testing.assert_allclose(N(z.grad), 2 * N(z), rtol=1e-10)


def test_grad_rfft_irfft_linear_maps():
    # d/dx <w, rfft(x)>_R for a real linear map: the adjoint applied to w; checked against explicit DFT matrices
    n = 9
    x = torch.tensor(rng.standard_normal(n), requires_grad=True)
    w = crandn(n // 2 + 1)
    y = torch.fft.rfft(x)
    (torch.view_as_real(y) * torch.view_as_real(torch.tensor(w))).sum().backward()
    F = np.exp(-2j * np.pi * np.outer(np.arange(n // 2 + 1), np.arange(n)) / n)
    np.testing.assert_allclose(N(x.grad), (F.real.T @ w.real + F.imag.T @ w.imag), rtol=1e-10, atol=1e-12)
    h = torch.tensor(crandn(n // 2 + 1), requires_grad=True)
    v = rng.standard_normal(n)
    (torch.fft.irfft(h, n) * torch.tensor(v)).sum().backward()
    # irfft(h) = Re(G h) with the Hermitian extension folded in: the derivative by finite differences
    eps, num = 1e-6, np.zeros(n // 2 + 1, dtype=complex)
    base = np.fft.irfft(N(h), n) @ v
    for k in range(n // 2 + 1):
        for part in (1, 1j):
            hp = N(h).copy()
            hp[k] += eps * part
            num[k] += part * (np.fft.irfft(hp, n) @ v - base) / eps
    np.testing.assert_allclose(N(h.grad), num, rtol=1e-5, atol=1e-6)


def test_fftfreq_rfftfreq():
    for n in (1, 2, 7, 8):
        for d in (1.0, 0.25):
            np.testing.assert_allclose(N(torch.fft.fftfreq(n, d)), np.fft.fftfreq(n, d), rtol=1e-6)
            np.testing.assert_allclose(N(torch.fft.rfftfreq(n, d)), np.fft.rfftfreq(n, d), rtol=1e-6)
    assert torch.fft.fftfreq(4).dtype == torch.float32
    assert torch.fft.rfftfreq(4, dtype=torch.float64).dtype == torch.float64
    assert torch.fft.fftfreq(4, requires_grad=True).requires_grad
    with pytest.raises(RuntimeError):
        torch.fft.fftfreq(4, dtype=torch.int64)


def test_fftshift_ifftshift():
    x = np.arange(30).reshape(5, 6)
    t = torch.tensor(x)
    np.testing.assert_array_equal(N(torch.fft.fftshift(t)), np.fft.fftshift(x))
    np.testing.assert_array_equal(N(torch.fft.ifftshift(t)), np.fft.ifftshift(x))
    np.testing.assert_array_equal(N(torch.fft.fftshift(t, dim=1)), np.fft.fftshift(x, axes=1))
    np.testing.assert_array_equal(N(torch.fft.ifftshift(t, dim=(0,))), np.fft.ifftshift(x, axes=(0,)))


def _frames(x, n_fft, hop, window):
    count = 1 + (len(x) - n_fft) // hop
    return np.stack([x[i * hop:i * hop + n_fft] * window for i in range(count)], axis=1)


def test_stft_matches_framed_fft():
    x = rng.standard_normal(100)
    w = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(16) / 16)  # periodic Hann
    s = torch.stft(torch.tensor(x), 16, hop_length=4, window=torch.tensor(w), center=False, return_complex=True)
    close(s, np.fft.rfft(_frames(x, 16, 4, w), axis=0), torch.float64)
    padded = np.pad(x, 8, mode="reflect")
    s = torch.stft(torch.tensor(x), 16, hop_length=4, window=torch.tensor(w), return_complex=True)
    close(s, np.fft.rfft(_frames(padded, 16, 4, w), axis=0), torch.float64)
    s = torch.tensor(x).stft(16, 4, window=torch.tensor(w), onesided=False, normalized=True, return_complex=True)
    close(s, np.fft.fft(_frames(padded, 16, 4, w), axis=0) / 4, torch.float64)


@pytest.mark.parametrize("center", [True, False])
def test_istft_inverts_stft(center):
    x = torch.tensor(rng.standard_normal((2, 200)))
    w = torch.hamming_window(32, dtype=torch.float64)  # no zeros at the ends: NOLA holds at the signal's edges
    s = torch.stft(x, 32, hop_length=8, window=w, center=center, return_complex=True)
    assert s.shape == (2, 17, (200 + (32 if center else 0) - 32) // 8 + 1)
    y = torch.istft(s, 32, hop_length=8, window=w, center=center, length=200 if center else None)
    n = y.shape[-1]
    assert n == 200 if center else n == 32 + 8 * 21
    np.testing.assert_allclose(N(y), N(x)[:, :n], atol=1e-10)


def test_stft_errors():
    x = torch.ones(40)
    with pytest.raises(RuntimeError, match="return_complex"):
        torch.stft(x, 8)
    with pytest.raises(RuntimeError):
        torch.stft(x, 64, center=False, return_complex=True)  # n_fft longer than the signal
    with pytest.raises(RuntimeError):
        torch.stft(x, 8, window=torch.ones(7), return_complex=True)
    with pytest.raises(RuntimeError):
        torch.istft(torch.ones(5, 3), 8)  # real input


@pytest.mark.parametrize("sym", [True, False])
@pytest.mark.parametrize("M", [1, 2, 7, 16])
def test_windows_closed_forms(sym, M):
    W = torch.signal.windows
    L = M if sym else M + 1  # a periodic window is the symmetric one of M + 1 points, cut
    n = np.arange(M)
    den = max(L - 1, 1)
    forms = {
        "hann": 0.5 - 0.5 * np.cos(2 * np.pi * n / den),
        "hamming": 0.54 - 0.46 * np.cos(2 * np.pi * n / den),
        "blackman": 0.42 - 0.5 * np.cos(2 * np.pi * n / den) + 0.08 * np.cos(4 * np.pi * n / den),
        "bartlett": 1 - np.abs(2 * n / den - 1),
        "cosine": np.sin(np.pi * (n + 0.5) / L),
        "gaussian": np.exp(-0.5 * ((n - (L - 1) / 2) / 1.0) ** 2),
        "exponential": np.exp(-np.abs(n - (L - 1) / 2)),
        "kaiser": np.i0(12.0 * np.sqrt(np.clip(1 - ((n - (L - 1) / 2) / ((L - 1) / 2 or 1)) ** 2, 0, None))) /
        np.i0(12.0),
    }
    for name, want in forms.items():
        if M == 1:  # every window of one point is [1], periodic or not
            want = np.ones(1)
        got = getattr(W, name)(M, sym=sym, dtype=torch.float64)
        np.testing.assert_allclose(N(got), want, rtol=1e-9, atol=1e-12, err_msg=name)
    assert W.hann(0).shape == (0,)
    assert W.nuttall(M, sym=sym).dtype == torch.float32


def test_window_errors():
    W = torch.signal.windows
    with pytest.raises(ValueError):
        W.hann(-1)
    with pytest.raises(ValueError):
        W.hann(4, dtype=torch.int64)
    with pytest.raises(ValueError):
        W.gaussian(4, std=0)
    with pytest.raises(ValueError):
        W.exponential(4, center=1.0)
    with pytest.raises(ValueError):
        W.general_cosine(4, a=[])
