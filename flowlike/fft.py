"""torch.fft: discrete Fourier transforms, the sample frequencies and the shifts.

Every transform is built here, as torch builds it (ATen's SpectralOps.cpp), on three primitives of the dispatcher
(csrc/ops/fft.h): `_fft_c2c`, `_fft_r2c` and `_fft_c2r`, which carry the autograd formulas. This module resolves
`n` / `s` (trimming or zero-padding the input), `dim`, the norm string, and promotes the input (integers to the
default float dtype; complex where the transform needs it). torch.stft / torch.istft live here too.
"""
import flowlike

from . import _C
from . import _dtype as _D
from ._out import write_out
from ._tensor import check_device

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
           "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

# torch's fft_norm_mode
_NONE, _BY_ROOT_N, _BY_N = 0, 1, 2


def _norm_mode(norm, forward):
    if norm is None or norm == "backward":
        return _NONE if forward else _BY_N
    if norm == "forward":
        return _BY_N if forward else _NONE
    if norm == "ortho":
        return _BY_ROOT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _promote(x, require_complex):
    """torch's promote_tensor_fft: integers (and bool) to the default float dtype, then complex where required."""
    dtype = x.dtype
    if dtype.is_complex:
        return x
    if not dtype.is_floating_point:
        dtype = _D.get_default_dtype()
    if dtype not in (_D.float32, _D.float64):
        raise RuntimeError(f"Unsupported dtype {_D.c10_name(dtype)}")
    if require_complex:
        dtype = _D.complex64 if dtype == _D.float32 else _D.complex128
    return x if dtype == x.dtype else x.to(dtype)


def _wrap(dim, ndim):
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})")
    return dim % ndim


def _resize(x, dims, sizes):
    """x with x.size(d) == n for each (d, n): trimmed from the end, or zero-padded there."""
    for d, n in zip(dims, sizes):
        have = x.shape[d]
        if have > n:
            x = x.narrow(d, 0, n)
        elif have < n:
            pad_shape = list(x.shape)
            pad_shape[d] = n - have
            x = flowlike.cat([x, x.new_zeros(pad_shape)], d)
    return x


def _check_n(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _shape_and_dims(x, s, dim):
    """torch's canonicalize_fft_shape_and_dim_args: the wrapped dims and the signal size along each."""
    ndim = x.dim()
    if dim is not None:
        dims = [dim] if isinstance(dim, int) else list(dim)
        dims = [_wrap(d, ndim) for d in dims]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = list(s)
        if dim is not None and len(dims) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {ndim} dimensions.")
        if dim is None:
            dims = list(range(ndim - len(s), ndim))
        shape = [x.shape[d] if n == -1 else n for d, n in zip(dims, s)]
    elif dim is None:
        dims, shape = list(range(ndim)), list(x.shape)
    else:
        shape = [x.shape[d] for d in dims]
    for n in shape:
        _check_n(n)
    return shape, dims


# ---- one-dimensional transforms (torch's fft_c2c / fft_r2c / fft_c2r helpers) --------------------------------------

def _c2c(name, x, n, dim, norm, forward):
    if not x.dtype.is_complex:
        raise RuntimeError(f"{name} expects a complex input tensor, but got {_D.c10_name(x.dtype)}")
    dim = _wrap(dim, x.dim())
    if n is not None:
        _check_n(n)
        x = _resize(x, [dim], [n])
    else:
        _check_n(x.shape[dim])
    return _C._fft_c2c(x, [dim], _norm_mode(norm, forward), forward)


def _r2c(name, x, n, dim, norm, forward, onesided):
    if x.dtype.is_complex:
        raise RuntimeError(f"{name} expects a real input tensor, but got {_D.c10_name(x.dtype)}")
    x = _promote(x, False)
    dim = _wrap(dim, x.dim())
    if n is not None:
        _check_n(n)
        x = _resize(x, [dim], [n])
    else:
        _check_n(x.shape[dim])
    r = _C._fft_r2c(x, [dim], _norm_mode(norm, forward), onesided)
    # the inverse of a real signal is the conjugate of the forward transform (scaled as the inverse)
    return r if forward else r.conj()


def _c2r(name, x, n, dim, norm, forward):
    x = _promote(x, True)
    dim = _wrap(dim, x.dim())
    if n is None:
        n = 2 * (x.shape[dim] - 1)
        _check_n(n)
    else:
        _check_n(n)
        x = _resize(x, [dim], [n // 2 + 1])
    if forward:
        x = x.conj()
    return _C._fft_c2r(x, [dim], _norm_mode(norm, forward), n)


def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """The 1-D discrete Fourier transform along `dim`, of `n` points (the input trimmed or zero-padded to n)."""
    r = (_c2c("fft", input, n, dim, norm, True) if input.dtype.is_complex
         else _r2c("fft", input, n, dim, norm, True, False))
    return write_out(out, r, "fft_fft")


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """The 1-D inverse discrete Fourier transform along `dim` (norm "backward" divides by n)."""
    r = (_c2c("ifft", input, n, dim, norm, False) if input.dtype.is_complex
         else _r2c("ifft", input, n, dim, norm, False, False))
    return write_out(out, r, "fft_ifft")


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The 1-D FFT of a real signal: the n // 2 + 1 non-negative frequencies."""
    return write_out(out, _r2c("rfft", input, n, dim, norm, True, True), "fft_rfft")


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of rfft: a real signal of n points (default 2 (input.size(dim) - 1)) from its one-sided spectrum."""
    return write_out(out, _c2r("irfft", input, n, dim, norm, False), "fft_irfft")


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The FFT of a Hermitian-symmetric signal given by its one-sided half: a real spectrum of n points."""
    return write_out(out, _c2r("hfft", input, n, dim, norm, True), "fft_hfft")


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of hfft: the one-sided half of the inverse FFT of a real signal."""
    return write_out(out, _r2c("ihfft", input, n, dim, norm, False, True), "fft_ihfft")


# ---- n-dimensional transforms ------------------------------------------------------------------------------------

def _fftn_c2c(x, s, dim, norm, forward):
    shape, dims = _shape_and_dims(x, s, dim)
    x = _resize(_promote(x, True), dims, shape)
    if not dims:
        return x
    return _C._fft_c2c(x, dims, _norm_mode(norm, forward), forward)


def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """The N-D discrete Fourier transform over `dim` (all dims by default; the last len(s) when only s is given)."""
    return write_out(out, _fftn_c2c(input, s, dim, norm, True), "fft_fftn")


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    """The N-D inverse discrete Fourier transform."""
    return write_out(out, _fftn_c2c(input, s, dim, norm, False), "fft_ifftn")


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """fftn over the last two dims."""
    return write_out(out, _fftn_c2c(input, s, dim, norm, True), "fft_fft2")


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """ifftn over the last two dims."""
    return write_out(out, _fftn_c2c(input, s, dim, norm, False), "fft_ifft2")


def _rfftn(name, x, s, dim, norm):
    if x.dtype.is_complex:
        raise RuntimeError(f"{name} expects a real-valued input tensor, but got {_D.c10_name(x.dtype)}")
    shape, dims = _shape_and_dims(x, s, dim)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    x = _resize(_promote(x, False), dims, shape)
    return _C._fft_r2c(x, dims, _norm_mode(norm, True), True)


def _c2r_shape_and_dims(name, x, s, dim):
    """The dims, the input sizes (the Hermitian half in the last dim) and the output size of the last dim."""
    shape, dims = _shape_and_dims(x, s, dim)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    last = 2 * (x.shape[dims[-1]] - 1) if s is None or list(s)[-1] == -1 else shape[-1]
    _check_n(last)
    shape[-1] = last // 2 + 1
    return shape, dims, last


def _irfftn(name, x, s, dim, norm):
    shape, dims, last = _c2r_shape_and_dims(name, x, s, dim)
    x = _resize(_promote(x, True), dims, shape)
    return _C._fft_c2r(x, dims, _norm_mode(norm, False), last)


def _hfftn(name, x, s, dim, norm):
    shape, dims, last = _c2r_shape_and_dims(name, x, s, dim)
    x = _resize(_promote(x, True), dims, shape)
    mode = _norm_mode(norm, True)
    if len(dims) > 1:
        x = _C._fft_c2c(x, dims[:-1], mode, True)
    return _C._fft_c2r(x.conj(), dims[-1:], mode, last)


def _ihfftn(name, x, s, dim, norm):
    shape, dims = _shape_and_dims(x, s, dim)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    x = _resize(_promote(x, False), dims, shape)
    mode = _norm_mode(norm, False)
    r = _C._fft_r2c(x, dims[-1:], mode, True)
    if len(dims) == 1:
        return r.conj()
    return _C._fft_c2c(r.conj_physical(), dims[:-1], mode, False)


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The N-D FFT of a real signal, one-sided in the last transformed dim."""
    return write_out(out, _rfftn("rfftn", input, s, dim, norm), "fft_rfftn")


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of rfftn: a real signal (last transformed dim 2 (size - 1) points unless s says otherwise)."""
    return write_out(out, _irfftn("irfftn", input, s, dim, norm), "fft_irfftn")


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """rfftn over the last two dims."""
    return write_out(out, _rfftn("rfftn", input, s, dim, norm), "fft_rfft2")


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """irfftn over the last two dims."""
    return write_out(out, _irfftn("irfftn", input, s, dim, norm), "fft_irfft2")


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The N-D FFT of a Hermitian-symmetric signal given by its half in the last dim: a real spectrum."""
    return write_out(out, _hfftn("hfftn", input, s, dim, norm), "fft_hfftn")


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of hfftn: the one-sided half of the inverse N-D FFT of a real signal."""
    return write_out(out, _ihfftn("ihfftn", input, s, dim, norm), "fft_ihfftn")


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """hfftn over the last two dims."""
    return write_out(out, _hfftn("hfftn", input, s, dim, norm), "fft_hfft2")


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """ihfftn over the last two dims."""
    return write_out(out, _ihfftn("ihfftn", input, s, dim, norm), "fft_ihfft2")


# ---- frequencies and shifts --------------------------------------------------------------------------------------

def _freq_dtype(dtype, device, name):
    check_device(device)
    dtype = dtype or _D.get_default_dtype()
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    return dtype


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of fft(n points, spacing d): [0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d n)."""
    dtype = _freq_dtype(out.dtype if out is not None else dtype, device, "fftfreq")
    ramp = flowlike.cat([flowlike.arange((n + 1) // 2, dtype=_D.float64), flowlike.arange(-(n // 2), 0, dtype=_D.float64)])
    r = ramp.to(dtype) * (1.0 / (n * d))
    return write_out(out, r.requires_grad_(requires_grad), "fft_fftfreq")


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of rfft(n points, spacing d): [0, 1, ..., n // 2] / (d n)."""
    dtype = _freq_dtype(out.dtype if out is not None else dtype, device, "rfftfreq")
    r = flowlike.arange(n // 2 + 1, dtype=_D.float64).to(dtype) * (1.0 / (n * d))
    return write_out(out, r.requires_grad_(requires_grad), "fft_rfftfreq")


def _shift_dims(x, dim):
    if dim is None:
        return list(range(x.dim()))
    return [_wrap(d, x.dim()) for d in ([dim] if isinstance(dim, int) else dim)]


def fftshift(input, dim=None):
    """Moves the zero frequency to the middle (a roll by size // 2 along each dim, all dims by default)."""
    dims = _shift_dims(input, dim)
    return flowlike.roll(input, [input.shape[d] // 2 for d in dims], dims)


def ifftshift(input, dim=None):
    """The inverse of fftshift (a roll by -(size // 2))."""
    dims = _shift_dims(input, dim)
    return flowlike.roll(input, [(input.shape[d] + 1) // 2 for d in dims], dims)
