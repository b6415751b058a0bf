"""The window functions of torch.signal.windows.

Each samples a closed form on a `linspace` grid in the result dtype, in torch's order of operations, so values agree
with torch's to the last bit where the elementwise ops do. `sym=True` gives the symmetric window (filter design),
`sym=False` the periodic one (spectral analysis: one sample of the length M + 1 symmetric window dropped).
"""
import math
from collections.abc import Iterable

import flowlike as torch

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming", "hamming",
           "hann", "kaiser", "nuttall"]


def _check(name, M, dtype, layout):
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not torch.strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (torch.float32, torch.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")


def _trivial(name, M, dtype, layout, device, requires_grad, one_for_m1=True):
    """Checks the arguments; returns the window when its length (0, or 1 for most windows) decides it, else None."""
    _check(name, M, dtype, layout)
    if M == 0:
        return torch.empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    if M == 1 and one_for_m1:
        return torch.ones((1,), dtype=dtype, device=device, requires_grad=requires_grad)
    return None


def _grid(start, step, M, dtype, device, requires_grad):
    return torch.linspace(start, start + (M - 1) * step, M, dtype=dtype, device=device, requires_grad=requires_grad)


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=torch.strided, device=None,
                requires_grad=False):
    """exp(-|n - center| / tau), centered in the window unless `center` is given (periodic windows only)."""
    dtype = dtype or torch.get_default_dtype()
    _check("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return torch.empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    k = _grid(-center / tau, 1 / tau, M, dtype, device, requires_grad)
    return torch.exp(-torch.abs(k))


def cosine(M, *, sym=True, dtype=None, layout=torch.strided, device=None, requires_grad=False):
    """The sine window sin(pi (n + 1/2) / M)."""
    dtype = dtype or torch.get_default_dtype()
    _check("cosine", M, dtype, layout)
    if M == 0:
        return torch.empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    constant = math.pi / (M + 1 if not sym and M > 1 else M)
    return torch.sin(_grid(0.5 * constant, constant, M, dtype, device, requires_grad))


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=torch.strided, device=None, requires_grad=False):
    """exp(-(n - (M - 1) / 2)^2 / (2 std^2))."""
    dtype = dtype or torch.get_default_dtype()
    _check("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return torch.empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / (std * math.sqrt(2))
    k = _grid(start * constant, constant, M, dtype, device, requires_grad)
    return torch.exp(-(k ** 2))


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=torch.strided, device=None, requires_grad=False):
    """I0(sqrt(beta^2 - k^2)) / I0(beta) on k evenly spaced over [-beta, beta]."""
    dtype = dtype or torch.get_default_dtype()
    _check("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    window = _trivial("kaiser", M, dtype, layout, device, requires_grad)
    if window is not None:
        return window
    beta = torch.tensor(beta, dtype=dtype, device=device)
    constant = 2.0 * beta / (M if not sym else M - 1)
    end = torch.minimum(beta, -beta + (M - 1) * constant)
    k = torch.linspace(-beta, end, M, dtype=dtype, device=device, requires_grad=requires_grad)
    return torch.i0(torch.sqrt(beta * beta - torch.pow(k, 2))) / torch.i0(beta)


def general_cosine(M, *, a, sym=True, dtype=None, layout=torch.strided, device=None, requires_grad=False):
    """sum_i (-1)^i a_i cos(2 pi i n / (M - 1)) (M instead of M - 1 when periodic)."""
    dtype = dtype or torch.get_default_dtype()
    window = _trivial("general_cosine", M, dtype, layout, device, requires_grad)
    if window is not None:
        return window
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    k = _grid(0, 2 * math.pi / (M if not sym else M - 1), M, dtype, device, requires_grad)
    a_i = torch.tensor([(-1) ** i * w for i, w in enumerate(a)], dtype=dtype, device=device,
                       requires_grad=requires_grad)
    i = torch.arange(a_i.shape[0], dtype=a_i.dtype, device=a_i.device, requires_grad=a_i.requires_grad)
    return (a_i.unsqueeze(-1) * torch.cos(i.unsqueeze(-1) * k)).sum(0)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=torch.strided, device=None, requires_grad=False):
    """alpha - (1 - alpha) cos(2 pi n / (M - 1))."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=torch.strided, device=None, requires_grad=False):
    """general_hamming with alpha = 0.54."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=torch.strided, device=None, requires_grad=False):
    """general_hamming with alpha = 0.5."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=torch.strided, device=None, requires_grad=False):
    """general_cosine with a = (0.42, 0.5, 0.08)."""
    dtype = dtype or torch.get_default_dtype()
    _check("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=torch.strided, device=None, requires_grad=False):
    """The triangular window 1 - |2 n / (M - 1) - 1|."""
    dtype = dtype or torch.get_default_dtype()
    window = _trivial("bartlett", M, dtype, layout, device, requires_grad)
    if window is not None:
        return window
    return 1 - torch.abs(_grid(-1, 2 / (M if not sym else M - 1), M, dtype, device, requires_grad))


def nuttall(M, *, sym=True, dtype=None, layout=torch.strided, device=None, requires_grad=False):
    """The minimum 4-term Blackman-Harris window of Nuttall."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)
