"""torch.stft and torch.istft (also Tensor methods), written as torch writes them (ATen's SpectralOps.cpp) on the FFT
primitives of csrc/ops/fft.h: frames are an unfold of the signal, the inverse's overlap-add is a fold."""
import warnings

import flowlike

from . import _C
from . import _dtype as _D
from ._tensor import Tensor

__all__ = ["stft", "istft"]

_warned = set()


def _warn_once(key, message):
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, UserWarning, stacklevel=3)


def _repr(name, x, n_fft, hop, win, window, extra):
    w = "None" if window is None else f"{_D.c10_name(window.dtype)}{{{list(window.shape)}}}"
    return (f"{name}({_D.c10_name(x.dtype)}{list(x.shape)}, n_fft={n_fft}, hop_length={hop}, win_length={win}, "
            f"window={w}{extra})")


def _pad(x, pads, mode="constant"):
    """F.pad of the last dim; a complex x pads the second-to-last dim of its (..., 2) real view (pad's kernels are
    real)."""
    if x.dtype.is_complex:
        padded = flowlike.nn.functional.pad(flowlike.view_as_real(x), [0, 0] + list(pads), mode)
        return flowlike.view_as_complex(padded.contiguous())
    return flowlike.nn.functional.pad(x, pads, mode)


def _centered_window(window, win, n_fft, dtype):
    """The window zero-padded on both sides to n_fft (a rectangle of ones when window is None)."""
    if window is None:
        window = flowlike.ones(win, dtype=dtype)
    left = (n_fft - win) // 2
    return _pad(window, [left, n_fft - win - left]) if win < n_fft else window


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None, align_to_window=None):
    """The short-time Fourier transform: the FFT of frames of n_fft samples, hop_length apart, each multiplied by
    `window` (win_length points, centered in the frame), as a (batch?, n_fft // 2 + 1 (onesided) or n_fft,
    n_frames) complex tensor. `center` pads the signal by n_fft // 2 on both sides (pad_mode) so that frame t is
    centered at t * hop_length."""
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if center:
        signal_dim = input.dim()
        pad = n_fft // 2
        input = _pad(input.view([1] * (3 - signal_dim) + list(input.shape)), [pad, pad], pad_mode)
        input = input.view(input.shape[-signal_dim:])
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if window is None:
        _warn_once("stft_window", "A window was not provided. A rectangular window will be applied,which is known to "
                   "cause spectral leakage. Other windows such as torch.hann_window or torch.hamming_window are "
                   "recommended to reduce spectral leakage.To suppress this warning and use a rectangular window, "
                   "explicitly set `window=torch.ones(n_fft, device=<device>)`.")
    complex_result = input.dtype.is_complex or (window is not None and window.dtype.is_complex)
    if not (complex_result if return_complex is None else return_complex):
        if return_complex is None:
            raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will further "
                               "require that return_complex=True in a future PyTorch release.")
        _warn_once("stft_real", "stft with return_complex=False is deprecated. In a future pytorch release, stft will "
                   "return complex tensors for all inputs, and return_complex=False will raise an error.\nNote: you "
                   "can still call torch.view_as_real on the complex output to recover the old return format.")
    extra = f", normalized={normalized}, onesided={onesided}, return_complex={return_complex})"
    where = _repr("stft", input, n_fft, hop, win, window, extra)
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"{where}: expected a tensor of floating point or complex values")
    if input.dim() not in (1, 2):
        raise RuntimeError(f"{where}: expected a 1D or 2D tensor")
    x = input.unsqueeze(0) if input.dim() == 1 else input
    length = x.shape[1]
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(f"{where}: expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(f"{where}: expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise RuntimeError(f"{where}: expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise RuntimeError(f"{where}: expected a 1D window tensor of size equal to win_length={win}, but got window "
                           f"with size {list(window.shape)}")
    if align_to_window:
        # frames start where their (centered) window does: the signal is offset by the window's left margin
        left = (n_fft - win) // 2
        x = _pad(x, [left, n_fft - win - left])
    frames = _frames(x, n_fft, hop)  # (batch, n_frames, n_fft)
    if window is not None or win < n_fft:
        frames = frames * _centered_window(window, win, n_fft, x.dtype)
    complex_fft = frames.dtype.is_complex
    onesided = not complex_fft if onesided is None else onesided
    mode = 1 if normalized else 0
    if complex_fft:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        out = _C._fft_c2c(frames, [2], mode, True)
    else:
        out = _C._fft_r2c(frames, [2], mode, onesided)
    out = out.transpose(1, 2)
    if input.dim() == 1:
        out = out.squeeze(0)
    return out if (complex_result if return_complex is None else return_complex) else flowlike.view_as_real(out)


def _frames(x, n_fft, hop):
    """The frames (batch, n_frames, n_fft) of x (batch, length), hop apart; a complex x is framed through its real
    view (one use of x: its gradient then needs no complex accumulation)."""
    if x.dtype.is_complex:
        return flowlike.view_as_complex(flowlike.view_as_real(x).unfold(1, n_fft, hop).transpose(2, 3).contiguous())
    return x.unfold(-1, n_fft, hop)


def _overlap_add(frames, length, hop):
    """Sums frames (channel, n_frames, n_fft), frame f starting at f * hop, into (channel, length); a complex frame
    tensor is summed as the two channels (real, imaginary) of its real view."""
    c, count, n_fft = frames.shape
    parts = 2 if frames.dtype.is_complex else 1
    cols = (flowlike.view_as_real(frames).permute(0, 3, 2, 1) if parts == 2 else frames.transpose(1, 2))
    y = flowlike.nn.functional.fold(cols.reshape(c, parts * n_fft, count), output_size=(1, length),
                                    kernel_size=(1, n_fft), stride=(1, hop))
    if parts == 1:
        return y.reshape(c, length)
    return flowlike.view_as_complex(y.reshape(c, 2, length).transpose(1, 2).contiguous())


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    """The inverse of stft by weighted overlap-add: the signal whose stft (same arguments) is `input`, when the
    window's squared overlap-add never vanishes (NOLA)."""
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if not input.dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft with "
                           "return_complex=True.")
    extra = (f", center={center}, normalized={normalized}, onesided={onesided}, length={length}, "
             f"return_complex={return_complex})")
    where = _repr("istft", input, n_fft, hop, win, window, extra)
    if input.numel() == 0:
        raise RuntimeError(f"{where}: input tensor cannot be empty.")
    if input.dim() not in (2, 3):
        raise RuntimeError(f"{where}: expected a tensor with 3 or 4 dimensions of float values, but got "
                           f"{input.dim() + 1}")
    fft_size, n_frames = input.shape[-2], input.shape[-1]
    onesided = fft_size != n_fft if onesided is None else onesided
    if onesided and n_fft // 2 + 1 != fft_size:
        raise RuntimeError(f"{where}: expected the frequency dimension (3rd to the last) of the input tensor to match "
                           f"n_fft / 2 + 1 when onesided=True, but got {fft_size}")
    if not onesided and n_fft != fft_size:
        raise RuntimeError(f"{where}: expected the frequency dimension (3rd to the last) of the input tensor to match "
                           f"n_fft when onesided=False, but got {fft_size}")
    if not 0 < hop <= win:
        raise RuntimeError("istft(...): expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        raise RuntimeError("istft(...): expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise RuntimeError(f"{where}: expected a 1D window tensor of size equal to win_length={win}, but got window "
                           f"with size {list(window.shape)}")
    w = _centered_window(window, win, n_fft, _D.float64 if input.dtype == _D.complex128 else _D.float32)
    x = input.unsqueeze(0) if input.dim() == 2 else input
    x = x.transpose(1, 2)  # (channel, n_frames, fft_size)
    mode = 1 if normalized else 2
    if return_complex:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        frames = _C._fft_c2c(x, [2], mode, False)
    else:
        if window is not None and window.dtype.is_complex:
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not onesided:
            x = x.narrow(-1, 0, n_fft // 2 + 1)
        frames = _C._fft_c2r(x, [2], mode, n_fft)
    expected = n_fft + hop * (n_frames - 1)
    y = _overlap_add(frames * w.view(1, 1, n_fft), expected, hop)
    envelope = _overlap_add((w * w).expand(1, n_frames, n_fft), expected, hop)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (expected - n_fft // 2 if center else expected)
    y = y[:, start:end]
    envelope = envelope[:, start:end]
    if bool(envelope.abs().min() < 1e-11):
        raise RuntimeError(f"{where}window overlap add min: 1")
    y = y / envelope
    if input.dim() == 2:
        y = y.squeeze(0)
    if end > expected:
        _warn_once("istft_length", "The length of signal is shorter than the length parameter. Result is being padded "
                   "with zeros in the tail. Please check your center and hop_length settings.")
        y = _pad(y, [0, end - expected])
    return y


Tensor.stft = stft
Tensor.istft = istft
