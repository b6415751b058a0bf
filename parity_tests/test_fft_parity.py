"""flowlike.fft, stft / istft and torch.signal.windows against torch: values and dtypes for odd, even, prime and large
prime lengths (1 included), every norm, n / s padding and trimming, dims, float32 / float64 / complex64 / complex128
and integer inputs, gradients (and double backward), the stft / istft round trip, and torch's exception types.

Complex inputs travel as real arrays with a trailing dim of 2 (view_as_complex inside the body), so that the dual-run
helpers make them leaves that require grad; complex outputs come back through view_as_real."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import flowlike as fl  # noqa: E402
from helpers import assert_raises_same, check_both  # noqa: E402

rng = np.random.default_rng(5)
LENGTHS = [1, 2, 3, 5, 8, 12, 17, 45, 64, 97, 128, 257, 1031]
NORMS = [None, "backward", "ortho", "forward"]
TOL = {"float32": dict(rtol=2e-4, atol=2e-4, scale_atol=True), "float64": dict(rtol=1e-9, atol=1e-9, scale_atol=True)}
C2C = ["fft", "ifft"]
R2C = ["rfft", "ihfft"]
C2R = ["irfft", "hfft"]


def as_real(y):
    return y if not y.is_complex() else (torch.view_as_real(y) if isinstance(y, torch.Tensor) else fl.view_as_real(y))


def cplx(lib, x):
    return lib.view_as_complex(x)


def pairs(*shape):
    """A complex signal as its (..., 2) real view."""
    return rng.standard_normal(shape + (2,))


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", C2C)
def test_c2c_lengths(name, dtype, n):
    check_both(lambda m, x: as_real(getattr(m.fft, name)(cplx(m, x))), pairs(3, n), dtype=dtype, **TOL[dtype])


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", R2C + ["fft", "ifft"])
def test_real_input_lengths(name, dtype, n):
    check_both(lambda m, x: as_real(getattr(m.fft, name)(x)), rng.standard_normal((3, n)), dtype=dtype, **TOL[dtype])


@pytest.mark.parametrize("n", [m for m in LENGTHS if m > 1])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", C2R)
def test_c2r_lengths(name, dtype, n):
    # n points out of n // 2 + 1 (odd and even n), and the default 2 (size - 1)
    check_both(lambda m, x: getattr(m.fft, name)(cplx(m, x), n), pairs(3, n // 2 + 1), dtype=dtype, **TOL[dtype])
    check_both(lambda m, x: getattr(m.fft, name)(cplx(m, x)), pairs(2, n), dtype=dtype, **TOL[dtype])


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name", C2C + R2C + C2R)
def test_norms_n_and_dims_with_grads(name, norm):
    real_in = name in R2C
    x = rng.standard_normal((4, 6)) if real_in else pairs(4, 6)

    def body(m, x, n, dim):
        return as_real(getattr(m.fft, name)(x if real_in else cplx(m, x), n=n, dim=dim, norm=norm))

    for n, dim in [(None, -1), (4, -1), (9, 0), (10, 1), (1, 0)]:
        check_both(lambda m, x: body(m, x, n, dim), x, dtype="float64", grad=True, **TOL["float64"])


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("case", [dict(), dict(dim=(0, 2)), dict(s=(3, 8)), dict(s=(5, -1), dim=(2, 1)),
                                  dict(dim=(-1,)), dict(s=(4, 4, 4))])
@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn"])
def test_nd_with_grads(name, case, norm):
    real_in = name in ("rfftn", "ihfftn")
    x = rng.standard_normal((3, 4, 6)) if real_in else pairs(3, 4, 6)
    check_both(lambda m, x: as_real(getattr(m.fft, name)(x if real_in else cplx(m, x), norm=norm, **case)), x,
               dtype="float64", grad=True, **TOL["float64"])


@pytest.mark.parametrize("name", ["fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_2d(name, dtype):
    real_in = name in ("rfft2", "ihfft2")
    x = rng.standard_normal((2, 6, 7)) if real_in else pairs(2, 6, 7)
    check_both(lambda m, x: as_real(getattr(m.fft, name)(x if real_in else cplx(m, x))), x, dtype=dtype,
               grad=dtype == "float64", **TOL[dtype])


def test_real_input_to_c2c_functions_with_grads():
    # fft / fftn of a real tensor: the full spectrum, and the gradient back to the real input
    for name in ["fft", "ifft", "fftn", "ifftn", "fft2", "hfft", "irfft"]:
        check_both(lambda m, x: as_real(getattr(m.fft, name)(x)), rng.standard_normal((4, 5)), dtype="float64",
                   grad=True, **TOL["float64"])


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
def test_integer_inputs_promote(dtype):
    x = rng.integers(0, 2, (3, 8))
    for name in ["fft", "rfft", "ihfft", "fftn", "rfftn", "hfft", "irfft"]:
        check_both(lambda m, x: as_real(getattr(m.fft, name)(x)), x, dtype=dtype, rtol=1e-5, atol=1e-5)


def test_complex_dtypes_and_strided_inputs():
    for ct in ["complex64", "complex128"]:  # a real tensor cast to complex, transposed
        check_both(lambda m, x: as_real(m.fft.fft(x.to(getattr(m, ct)).t())), rng.standard_normal((6, 8)), rtol=1e-4,
                   atol=1e-4)
    x = pairs(6, 9)
    check_both(lambda m, x: as_real(m.fft.fft2(cplx(m, x)[::2, 1::2])), x, dtype="float64", **TOL["float64"])
    check_both(lambda m, x: m.fft.irfft(cplx(m, x).t(), 7), x, dtype="float64", **TOL["float64"])


def test_double_backward():
    x = rng.standard_normal((3, 8))

    def body(m, x):
        y = m.fft.rfft(x, norm="ortho")
        g, = m.autograd.grad((y.abs() ** 2).sum() + y.real.sum(), x, create_graph=True)
        return (g ** 2).sum()
    check_both(body, x, dtype="float64", grad=True, **TOL["float64"])

    def body_c2r(m, x):
        z = cplx(m, x)
        y = m.fft.irfft(z, 9)
        g, = m.autograd.grad((y ** 3).sum(), x, create_graph=True)
        return g
    check_both(body_c2r, pairs(2, 5), dtype="float64", grad=True, **TOL["float64"])


def test_freqs_and_shifts():
    for n in (1, 4, 7):
        check_both(lambda m: m.fft.fftfreq(n, 0.5), exact=False)
        check_both(lambda m: m.fft.rfftfreq(n, 2.0, dtype=m.float64), exact=False)
    x = rng.standard_normal((5, 6))
    for dim in (None, 0, (1,), (-1, 0)):
        check_both(lambda m, x: m.fft.fftshift(x, dim), x, exact=True)
        check_both(lambda m, x: m.fft.ifftshift(x, dim), x, exact=True)


def test_errors():
    c = pairs(4)
    assert_raises_same(lambda m, x: m.fft.fft(cplx(m, x), n=0), c)
    assert_raises_same(lambda m, x: m.fft.fft(cplx(m, x), n=-3), c)
    assert_raises_same(lambda m, x: m.fft.fft(cplx(m, x), dim=1), c)
    assert_raises_same(lambda m, x: m.fft.fft(cplx(m, x), norm="bad"), c)
    assert_raises_same(lambda m, x: m.fft.rfft(cplx(m, x)), c)
    assert_raises_same(lambda m, x: m.fft.rfftn(cplx(m, x)), c)
    assert_raises_same(lambda m, x: m.fft.irfft(cplx(m, x)[:1]), c)
    assert_raises_same(lambda m, x: m.fft.fftn(x, dim=(0, 0)), rng.standard_normal((2, 2)))
    assert_raises_same(lambda m, x: m.fft.fftn(x, s=(2, 2, 2)), rng.standard_normal((2, 2)))
    assert_raises_same(lambda m, x: m.fft.fftn(x, s=(2,), dim=(0, 1)), rng.standard_normal((2, 2)))
    assert_raises_same(lambda m, x: m.fft.fft(x), np.zeros((3, 0)))
    assert_raises_same(lambda m, x: m.fft.fft(x), np.float64(1.0))
    assert_raises_same(lambda m, x: m.fft.fft(x.half()), rng.standard_normal(4))
    assert_raises_same(lambda m: m.fft.fftfreq(4, dtype=m.int32))
    assert_raises_same(lambda m, x: m.fft.fftshift(x, 3), rng.standard_normal((2, 2)))


@pytest.mark.parametrize("case", [dict(n_fft=16, hop_length=4), dict(n_fft=15, hop_length=5, win_length=11),
                                  dict(n_fft=16, center=False), dict(n_fft=16, normalized=True, onesided=False),
                                  dict(n_fft=12, pad_mode="constant"), dict(n_fft=16, win_length=10, center=False,
                                                                            align_to_window=True)])
@pytest.mark.parametrize("windowed", [True, False])
def test_stft_with_grads(case, windowed):
    def body(m, x):
        w = m.hann_window(case.get("win_length", case["n_fft"]), dtype=x.dtype) if windowed else None
        return as_real(m.stft(x, window=w, return_complex=True, **case))
    check_both(body, rng.standard_normal((2, 64)), dtype="float64", grad=True, quiet=True, **TOL["float64"])
    check_both(body, rng.standard_normal(64), dtype="float32", quiet=True, **TOL["float32"])


def test_stft_complex_input_and_real_output():
    check_both(lambda m, x: as_real(m.stft(cplx(m, x), 8, window=m.hann_window(8, dtype=m.float64),
                                           return_complex=True)), pairs(40), dtype="float64", grad=True,
               **TOL["float64"])
    check_both(lambda m, x: m.stft(x, 8, return_complex=False), rng.standard_normal(40), dtype="float64", quiet=True,
               **TOL["float64"])


@pytest.mark.parametrize("case", [dict(n_fft=16, hop_length=4), dict(n_fft=16, hop_length=4, center=False),
                                  dict(n_fft=15, hop_length=5, win_length=11), dict(n_fft=16, normalized=True),
                                  dict(n_fft=16, hop_length=4, length=50), dict(n_fft=16, hop_length=4, length=90)])
def test_istft_round_trip_with_grads(case):
    def body(m, x):
        w = m.hann_window(case.get("win_length", case["n_fft"]), dtype=x.dtype)
        stft_case = {k: v for k, v in case.items() if k != "length"}
        s = m.stft(x, window=w, return_complex=True, **stft_case)
        return m.istft(s, window=w, **case)
    check_both(body, rng.standard_normal((2, 64)), dtype="float64", grad=True, quiet=True, **TOL["float64"])


def test_istft_complex_and_onesided_false():
    def body(m, x):
        w = m.hann_window(16, dtype=m.float64)
        s = m.stft(cplx(m, x), 16, 4, window=w, return_complex=True)
        return as_real(m.istft(s, 16, 4, window=w, onesided=False, return_complex=True))
    check_both(body, pairs(60), dtype="float64", grad=True, **TOL["float64"])


def test_stft_istft_errors():
    x = rng.standard_normal(40)
    assert_raises_same(lambda m, x: m.stft(x, 8), x, dtype="float64")
    assert_raises_same(lambda m, x: m.stft(x, 80, center=False, return_complex=True), x, dtype="float64")
    assert_raises_same(lambda m, x: m.stft(x, 8, hop_length=0, return_complex=True), x, dtype="float64")
    assert_raises_same(lambda m, x: m.stft(x, 8, win_length=9, return_complex=True), x, dtype="float64")
    assert_raises_same(lambda m, x: m.stft(x, 8, window=m.ones(5), return_complex=True), x, dtype="float64")
    assert_raises_same(lambda m, x: m.stft(x.long(), 8, return_complex=True), x, dtype="float64")
    assert_raises_same(lambda m, x: m.stft(x, 8, align_to_window=True, return_complex=True), x, dtype="float64")
    assert_raises_same(lambda m, x: m.istft(x.reshape(5, 8), 8), x, dtype="float64")
    assert_raises_same(lambda m, x: m.istft(cplx(m, x).reshape(5, 4), 8), x, dtype="float64")
    assert_raises_same(lambda m, x: m.istft(cplx(m, x).reshape(5, 4), 8, hop_length=3, onesided=True,
                                            window=m.zeros(8, dtype=m.float64)), rng.standard_normal((20, 2)))


WINDOWS = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_hamming", "hamming", "hann", "kaiser",
           "nuttall"]


@pytest.mark.parametrize("name", WINDOWS)
@pytest.mark.parametrize("M", [0, 1, 2, 5, 16])
@pytest.mark.parametrize("sym", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_windows(name, M, sym, dtype):
    check_both(lambda m: getattr(m.signal.windows, name)(M, sym=sym, dtype=getattr(m, dtype)), rtol=1e-6, atol=1e-6)


def test_window_arguments_and_errors():
    cases = [lambda m: m.signal.windows.general_cosine(7, a=[0.4, 0.3, 0.3]),
             lambda m: m.signal.windows.kaiser(9, beta=4.0),
             lambda m: m.signal.windows.gaussian(9, std=2.5, sym=False),
             lambda m: m.signal.windows.exponential(9, center=2.0, tau=3.0, sym=False),
             lambda m: m.signal.windows.general_hamming(8, alpha=0.6, requires_grad=True)]
    for case in cases:
        check_both(case, rtol=1e-6, atol=1e-6)
    for bad in [lambda m: m.signal.windows.hann(-1), lambda m: m.signal.windows.hann(4, dtype=m.float16),
                lambda m: m.signal.windows.kaiser(4, beta=-1.0), lambda m: m.signal.windows.gaussian(4, std=0.0),
                lambda m: m.signal.windows.exponential(4, tau=0.0), lambda m: m.signal.windows.exponential(4, center=1.0),
                lambda m: m.signal.windows.general_cosine(4, a=[]), lambda m: m.signal.windows.general_cosine(4, a=3)]:
        assert_raises_same(bad)
