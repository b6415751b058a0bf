"""Convolution, pooling and fold/unfold of torch.nn.functional.

The C++ ops (`_C._convolution`, `_C._max_pool`, `_C._avg_pool`, `_C._adaptive_avg_pool`,
`_C._adaptive_max_pool`, `_C._plane_scatter`, `_C._im2col`, `_C._col2im`) work on any number of
spatial dims (1 to 3) and carry the autograd formulas; this module parses PyTorch's signatures
(ints or tuples, padding='same'/'valid', optional stride, unbatched inputs) and writes the
composites (lp_pool, max_unpool, complex convolution and fold/unfold) once in terms of them.
"""
import builtins
import operator

from .. import _C
from .._tensor import Tensor
from .. import _autocast


def _fl():
    import flowlike
    return flowlike

__all__ = [
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
    "max_pool3d_with_indices", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
    "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices",
    "lp_pool1d", "lp_pool2d", "lp_pool3d", "max_unpool1d", "max_unpool2d", "max_unpool3d", "fold", "unfold",
    "fractional_max_pool2d", "fractional_max_pool3d", "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d_with_indices",
]


def _int(v, arg):
    if isinstance(v, builtins.bool) or not hasattr(v, "__index__"):
        raise TypeError(f"argument '{arg}' must be tuple of ints, not {type(v).__name__}")
    return operator.index(v)


def _tuple(value, n, arg):
    """An int (or a 1-element sequence) repeated n times; other sequences as a list (the op checks the length).
    TypeError, as PyTorch's argument parser, for anything that is not ints (a tensor counts as an int only with one
    element: iterating a huge one would run for ever)."""
    if isinstance(value, Tensor) and value.numel() != 1:
        raise TypeError(f"argument '{arg}' must be tuple of ints, not Tensor")
    if isinstance(value, (tuple, list)):
        value = [_int(v, arg) for v in value]
        return value * n if len(value) == 1 else value
    return [_int(value, arg)] * n


def _int32(*lists):
    """torch's pooling kernels take kernel sizes, strides, paddings and dilations as int (safe_downcast): its
    RuntimeError past int32 (the kernels here looped over a kernel of 2^63 taps: a hang)."""
    for values in lists:
        if any(not -(1 << 31) <= v < (1 << 31) for v in values):
            raise RuntimeError("value cannot be converted to type int without overflow")
    return lists


# ---- convolution -------------------------------------------------------------------------------------


def _batched(input, nd, name):
    """(input as a batch, whether it was one): (C, *spatial) gets a batch dim of 1."""
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got input of "
                           f"size: {list(input.shape)}")
    return (input, True) if input.dim() == nd + 2 else (input.unsqueeze(0), False)


def _conv_padding(padding, weight, stride, dilation, nd):
    if not isinstance(padding, str):
        return _tuple(padding, nd, "padding")
    if padding == "valid":
        return [0] * nd
    if padding != "same":
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    kernel = list(weight.shape[2:]) if weight.dim() == nd + 2 else [1] * nd
    total = [d * (k - 1) for d, k in zip(dilation, kernel)]
    lo = [t // 2 for t in total]
    hi = [t - t // 2 for t in total]
    return lo if lo == hi else lo + hi  # the op takes (low sides, high sides) when they differ


def _parts(t):
    t = t.resolve_conj()
    return t.real, t.imag


def _convolution(x, weight, bias, *args):
    """_C._convolution, also for complex tensors as torch's CPU (aten's complex_convolution): Gauss's trick, three
    real convolutions a = conv(xr, wr, br), b = conv(xi, wi), c = conv(xr + xi, wr + wi, br + bi) and
    out = a - b + i (c - a - b). Written with ordinary ops, so autograd gives torch's conjugate-Wirtinger
    gradients and a graph capture records real convolutions. Mixed dtypes go to the op, which raises torch's error."""
    if not (x.is_complex() and weight.dtype == x.dtype and (bias is None or bias.dtype == x.dtype)):
        return _C._convolution(x, weight, bias, *args)
    (xr, xi), (wr, wi) = _parts(x), _parts(weight)
    br, bi = _parts(bias) if bias is not None else (None, None)
    a = _C._convolution(xr, wr, br, *args)
    b = _C._convolution(xi, wi, None, *args)
    c = _C._convolution(xr + xi, wr + wi, None if bias is None else br + bi, *args)
    return _fl().complex(a - b, c - a - b)


def _linear_complex(op, x, *args):
    """A real-linear op (im2col, col2im) on a complex x: the op on the real and imaginary parts."""
    if not x.is_complex():
        return op(x, *args)
    xr, xi = _parts(x)
    return _fl().complex(op(xr, *args), op(xi, *args))


def _conv(nd, name, input, weight, bias, stride, padding, dilation, groups):
    x, batched = _batched(input, nd, name)
    stride, dilation = _tuple(stride, nd, "stride"), _tuple(dilation, nd, "dilation")
    pad = _conv_padding(padding, weight, stride, dilation, nd)
    out = _convolution(x, weight, bias, stride, pad, dilation, False, [0] * nd, _int(groups, "groups"))
    return out if batched else out.squeeze(0)


def _conv_transpose(nd, name, input, weight, bias, stride, padding, output_padding, groups, dilation):
    x, batched = _batched(input, nd, name)
    out = _convolution(x, weight, bias, _tuple(stride, nd, "stride"), _tuple(padding, nd, "padding"),
                       _tuple(dilation, nd, "dilation"), True, _tuple(output_padding, nd, "output_padding"),
                       _int(groups, "groups"))
    return out if batched else out.squeeze(0)


@_autocast.lower_precision
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-d convolution over (N, C_in, L) or (C_in, L); padding is an int, a tuple, 'valid' or 'same'."""
    return _conv(1, "conv1d", input, weight, bias, stride, padding, dilation, groups)


@_autocast.lower_precision
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-d convolution over (N, C_in, H, W) or (C_in, H, W); padding is an int, a tuple, 'valid' or 'same'."""
    return _conv(2, "conv2d", input, weight, bias, stride, padding, dilation, groups)


@_autocast.lower_precision
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-d convolution over (N, C_in, D, H, W) or (C_in, D, H, W); padding is an int, a tuple, 'valid' or 'same'."""
    return _conv(3, "conv3d", input, weight, bias, stride, padding, dilation, groups)


@_autocast.lower_precision
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """1-d transposed convolution (the adjoint of conv1d); weight is (C_in, C_out / groups, kL)."""
    return _conv_transpose(1, "conv_transpose1d", input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


@_autocast.lower_precision
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """2-d transposed convolution (the adjoint of conv2d); weight is (C_in, C_out / groups, kH, kW)."""
    return _conv_transpose(2, "conv_transpose2d", input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


@_autocast.lower_precision
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """3-d transposed convolution (the adjoint of conv3d); weight is (C_in, C_out / groups, kD, kH, kW)."""
    return _conv_transpose(3, "conv_transpose3d", input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


# ---- pooling -----------------------------------------------------------------------------------------


def _stride(stride, nd):
    """Pooling's stride: None or empty means the kernel size (the op's default)."""
    if stride is None or (isinstance(stride, (tuple, list)) and len(stride) == 0):
        return []
    return _tuple(stride, nd, "stride")


def _stride_within_input(stride, length, padding):
    """torch's CPU max_pool1d without indices or gradient takes an int64 stride (the others go through the indices
    kernel, whose int32 limit _int32 applies): a stride past the padded input keeps the first window only, as the
    padded length + 1 does, whatever ceil_mode, so that is the stride the kernel gets."""
    s, p = _stride(stride, 1), _tuple(padding, 1, "padding")
    if len(s) == 1 and len(p) == 1 and s[0] > length + 2 * builtins.abs(p[0]) + 1:
        return [length + 2 * builtins.abs(p[0]) + 1]
    return stride


def _max_pool(nd, input, kernel_size, stride, padding, dilation, ceil_mode):
    kernel, stride, padding, dilation = _int32(_tuple(kernel_size, nd, "kernel_size"), _stride(stride, nd),
                                               _tuple(padding, nd, "padding"), _tuple(dilation, nd, "dilation"))
    return _C._max_pool(input, kernel, stride, padding, dilation, builtins.bool(ceil_mode))


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """(values, indices) of 1-d max pooling; indices are positions in the input's last dim."""
    return _max_pool(1, input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """(values, indices) of 2-d max pooling; indices are flat positions in each input plane (h * W + w)."""
    return _max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """(values, indices) of 3-d max pooling; indices are flat positions in each input volume."""
    return _max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """1-d max pooling over (N, C, L) or (C, L); stride defaults to kernel_size; NaN propagates."""
    if not return_indices and isinstance(input, Tensor) and input.dim() > 0 and not (
            input.requires_grad and _C.is_grad_enabled()):
        stride = _stride_within_input(stride, input.shape[-1], padding)
    r = _max_pool(1, input, kernel_size, stride, padding, dilation, ceil_mode)
    return r if return_indices else r[0]


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """2-d max pooling over (N, C, H, W) or (C, H, W); stride defaults to kernel_size; NaN propagates."""
    r = _max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode)
    return r if return_indices else r[0]


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """3-d max pooling over (N, C, D, H, W) or (C, D, H, W); stride defaults to kernel_size; NaN propagates."""
    r = _max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode)
    return r if return_indices else r[0]


def _avg_pool(nd, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    divisor = 0 if divisor_override is None else _int(divisor_override, "divisor_override")
    if divisor_override is not None and divisor == 0:
        raise RuntimeError("divisor must be not zero")
    kernel, stride, padding = _int32(_tuple(kernel_size, nd, "kernel_size"), _stride(stride, nd),
                                     _tuple(padding, nd, "padding"))
    return _C._avg_pool(input, kernel, stride, padding, builtins.bool(ceil_mode), builtins.bool(count_include_pad),
                        divisor)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """1-d average pooling over (N, C, L) or (C, L); stride defaults to kernel_size."""
    return _avg_pool(1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """2-d average pooling over (N, C, H, W) or (C, H, W); stride defaults to kernel_size."""
    return _avg_pool(2, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """3-d average pooling over (N, C, D, H, W) or (C, D, H, W); stride defaults to kernel_size."""
    return _avg_pool(3, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def _output_size(input, output_size, nd, name):
    """The adaptive pools' output_size: an int or a sequence of nd entries, None keeping the input's size."""
    if nd >= 2 and isinstance(output_size, (tuple, list)) and input.dim() <= len(output_size):
        # torch's python-level check of a sequence output_size of the 2-d and 3-d adaptive pools
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    if isinstance(output_size, (tuple, list)):
        if len(output_size) != nd:
            raise RuntimeError(f"{name}: output_size must be {nd}")
        return [input.shape[input.dim() - nd + i] if o is None else _int(o, "output_size")
                for i, o in enumerate(output_size)]
    if output_size is None:
        return [input.shape[input.dim() - nd + i] for i in range(nd)] if input.dim() >= nd else [0] * nd
    return [_int(output_size, "output_size")] * nd


def adaptive_avg_pool1d(input, output_size):
    """1-d average pooling to a fixed output length over (N, C, L) or (C, L)."""
    return _C._adaptive_avg_pool(input, _output_size(input, output_size, 1, "adaptive_avg_pool1d"))


def adaptive_avg_pool2d(input, output_size):
    """2-d average pooling to a fixed output size (None entries keep the input's size)."""
    return _C._adaptive_avg_pool(input, _output_size(input, output_size, 2, "adaptive_avg_pool2d"))


def adaptive_avg_pool3d(input, output_size):
    """3-d average pooling to a fixed output size (None entries keep the input's size)."""
    return _C._adaptive_avg_pool(input, _output_size(input, output_size, 3, "adaptive_avg_pool3d"))


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """(values, indices) of 1-d adaptive max pooling."""
    return _C._adaptive_max_pool(input, _output_size(input, output_size, 1, "adaptive_max_pool1d"))


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """(values, indices) of 2-d adaptive max pooling; indices are flat positions in each input plane."""
    return _C._adaptive_max_pool(input, _output_size(input, output_size, 2, "adaptive_max_pool2d"))


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """(values, indices) of 3-d adaptive max pooling; indices are flat positions in each input volume."""
    return _C._adaptive_max_pool(input, _output_size(input, output_size, 3, "adaptive_max_pool3d"))


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """1-d max pooling to a fixed output length; with return_indices, also the argmax positions."""
    r = adaptive_max_pool1d_with_indices(input, output_size)
    return r if return_indices else r[0]


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """2-d max pooling to a fixed output size; with return_indices, also the argmax positions."""
    r = adaptive_max_pool2d_with_indices(input, output_size)
    return r if return_indices else r[0]


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """3-d max pooling to a fixed output size; with return_indices, also the argmax positions."""
    r = adaptive_max_pool3d_with_indices(input, output_size)
    return r if return_indices else r[0]


def _lp_pool(nd, input, norm_type, kernel_size, stride, ceil_mode):
    # PyTorch's formula: (sum over the window of x^p)^(1/p), via the average times the window size.
    kernel, = _int32(_tuple(kernel_size, nd, "kernel_size"))
    out = _avg_pool(nd, input.pow(norm_type), kernel, stride, 0, ceil_mode, True, None)
    size = 1
    for k in kernel:
        size *= k
    return (out.sign() * out.abs().clamp(min=0)).mul(size).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """1-d power-average pooling: (sum over each window of x^p)^(1/p)."""
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """2-d power-average pooling: (sum over each window of x^p)^(1/p)."""
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """3-d power-average pooling: (sum over each window of x^p)^(1/p)."""
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)


def _fractional_starts(samples, input_size, output_size, pool_size):
    """Window starts of fractional max pooling along one dim, one row per plane, in the input's dtype as torch's
    kernel computes them: int((i + u) * alpha) - int(u * alpha), the last window ending at the input's end."""
    fl = _fl()
    starts = fl.full((samples.shape[0], output_size), input_size - pool_size, dtype=fl.int64)
    if output_size > 1:
        alpha = fl.tensor(input_size - pool_size, dtype=samples.dtype) / fl.tensor(output_size - 1,
                                                                                  dtype=samples.dtype)
        u = samples.unsqueeze(1)
        i = fl.arange(output_size - 1, dtype=samples.dtype)
        starts[:, :-1] = ((i + u) * alpha).to(fl.int64) - (u * alpha).to(fl.int64)
    return starts


def _fractional_max_pool(nd, input, kernel_size, output_size, output_ratio, _random_samples):
    fl = _fl()
    name = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: {list(input.shape)}")
    spatial = list(input.shape[-nd:])
    if output_size is None:
        if isinstance(output_ratio, (tuple, list)) and len(output_ratio) > nd:
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple of Ints.")
        ratio = list(output_ratio) * nd if isinstance(output_ratio, (tuple, list)) and len(output_ratio) == 1 else \
            list(output_ratio) if isinstance(output_ratio, (tuple, list)) else [output_ratio] * nd
        output_size = [builtins.int(size * r) for size, r in zip(spatial, ratio)]
    kernel, out = _tuple(kernel_size, nd, "kernel_size"), _tuple(output_size, nd, "output_size")
    batched = input.dim() == nd + 2
    x = input if batched else input.unsqueeze(0)
    n, c = x.shape[0], x.shape[1]
    if _random_samples is None:
        _random_samples = fl.rand(n, c, nd, dtype=input.dtype)
    if list(_random_samples.shape) != [n, c, nd]:
        raise RuntimeError(f"{name}(): Expect _random_samples to be of shape {[n, c, nd]}, but got "
                           f"{list(_random_samples.shape)}")
    dims = ["height", "width"] if nd == 2 else ["time", "height", "width"]
    for d in range(nd):
        if out[d] + kernel[d] - 1 > spatial[d]:
            raise RuntimeError(f"{name}_out(): pool {dims[d]} {kernel[d]} too large relative to input {dims[d]} "
                               f"{spatial[d]}")
    # torch's kernel draws the width's start from sample 0 and the height's from sample 1 in 2-d, and (time,
    # height, width) from samples (0, 1, 2) in 3-d.
    order = [1, 0] if nd == 2 else [0, 1, 2]
    samples = _random_samples.detach().reshape(n * c, nd)
    # flat index of each window element in its plane: start + offset per dim, combined row-major
    index = fl.zeros((n * c,) + (1,) * (2 * nd), dtype=fl.int64)
    for d in range(nd):
        starts = _fractional_starts(samples[:, order[d]].contiguous(), spatial[d], out[d], kernel[d])
        pos = starts.reshape([n * c] + [out[d] if e == d else 1 for e in range(nd)] + [1] * nd) + \
            fl.arange(kernel[d]).reshape([1] * (nd + 1) + [kernel[d] if e == d else 1 for e in range(nd)])
        stride = 1
        for size in spatial[d + 1:]:
            stride *= size
        index = index + pos * stride
    index = index.expand(n * c, *out, *kernel).reshape(n * c, -1, _prod(kernel))
    planes = x.reshape(n * c, -1)
    # the argmax is found without autograd; the values are gathered at it, so the gradient goes to the index
    windows = planes.detach().gather(1, index.reshape(n * c, -1)).reshape(index.shape)
    maxima, arg = windows.max(-1)
    nan = windows.isnan()
    if nan.any():
        # torch's kernel takes the last NaN of a window (and the first of tied maxima, as max does)
        last_nan = (windows.shape[-1] - 1) - nan.flip(-1).to(fl.int32).argmax(-1)
        arg = fl.where(maxima.isnan(), last_nan, arg)
    indices = index.gather(-1, arg.unsqueeze(-1)).squeeze(-1)
    values = planes.gather(1, indices).reshape(n, c, *out)
    indices = indices.reshape(n, c, *out)
    return (values, indices) if batched else (values.squeeze(0), indices.squeeze(0))


def _prod(sizes):
    result = 1
    for size in sizes:
        result *= size
    return result


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    """(values, indices) of 2-d fractional max pooling: kernel windows at pseudo-random steps chosen so that the
    output has output_size (or output_ratio times the input size); indices are flat positions in each plane."""
    return _fractional_max_pool(2, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    """(values, indices) of 3-d fractional max pooling; indices are flat positions in each input volume."""
    return _fractional_max_pool(3, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """2-d fractional max pooling (Graham, 2014); (values, indices) when return_indices."""
    out = _fractional_max_pool(2, input, kernel_size, output_size, output_ratio, _random_samples)
    return out if return_indices else out[0]


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """3-d fractional max pooling; (values, indices) when return_indices."""
    out = _fractional_max_pool(3, input, kernel_size, output_size, output_ratio, _random_samples)
    return out if return_indices else out[0]


def _unpool_size(input, nd, kernel, stride, padding, output_size):
    default = [(input.shape[input.dim() - nd + d] - 1) * stride[d] + kernel[d] - 2 * padding[d] for d in range(nd)]
    if output_size is None:
        return default
    output_size = [_int(s, "output_size") for s in output_size]
    if len(output_size) == nd + 2:
        output_size = output_size[2:]
    if len(output_size) != nd:
        raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} elements, but it has a length "
                         f"of '{len(output_size)}'")
    for d in range(nd):
        lo, hi = default[d] - stride[d], default[d] + stride[d]
        if not lo < output_size[d] < hi:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {lo} and {hi})')
    return output_size


def _max_unpool(nd, input, indices, kernel_size, stride, padding, output_size):
    kernel = _tuple(kernel_size, nd, "kernel_size")
    stride = kernel if stride is None else _tuple(stride, nd, "stride")
    padding = _tuple(padding, nd, "padding")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"max_unpool{nd}d: Expected {nd + 1}D or {nd + 2}D input, but got input of size: "
                           f"{list(input.shape)}")
    return _C._plane_scatter(input, indices, _unpool_size(input, nd, kernel, stride, padding, output_size), False)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool1d: values placed at their indices, zeros elsewhere."""
    return _max_unpool(1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool2d: values placed at their indices, zeros elsewhere."""
    return _max_unpool(2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool3d: values placed at their indices, zeros elsewhere."""
    return _max_unpool(3, input, indices, kernel_size, stride, padding, output_size)


# ---- fold / unfold -----------------------------------------------------------------------------------


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding local blocks of (N, C, H, W) (or (C, H, W)) as columns: (N, C * kH * kW, L) (im2col)."""
    if input.dim() not in (3, 4):
        raise NotImplementedError(f"Input Error: Only 3D or 4D input Tensors are supported (got {input.dim()}D)")
    x = input if input.dim() == 4 else input.unsqueeze(0)
    args = (("kernel_size", kernel_size), ("dilation", dilation), ("padding", padding), ("stride", stride))
    for name, v in args:
        if isinstance(v, (tuple, list)) and len(v) != 2:  # (an int stands for both dims; a sequence must have two)
            raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(v)}")
    k, d, p, s = (_tuple(v, 2, name) for name, v in args)
    # the block counts in Python ints: past int64 the kernel's own arithmetic would overflow
    blocks = [(x.shape[2 + i] + 2 * p[i] - (d[i] * (k[i] - 1) + 1)) // s[i] + 1 if s[i] > 0 else 0 for i in range(2)]
    if any(v > (1 << 62) for v in k + d + p + s) or min(blocks) < 1:
        raise RuntimeError(f"Given input with spatial size ({x.shape[2]}, {x.shape[3]}), kernel_size=({k[0]}, {k[1]}), "
                           f"dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), calculated shape of the array of "
                           f"sliding blocks as ({blocks[0]}, {blocks[1]}), but its components must be at least one.")
    out = _linear_complex(_C._im2col, x, k, d, p, s)
    return out if input.dim() == 4 else out.squeeze(0)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sums sliding local blocks (N, C * kH * kW, L) (or unbatched) into (N, C, *output_size) (col2im)."""
    if input.dim() not in (2, 3):
        raise NotImplementedError(f"Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported (got "
                                  f"{input.dim()}D)")
    x = input if input.dim() == 3 else input.unsqueeze(0)
    out = _linear_complex(_C._col2im, x, _tuple(output_size, 2, "output_size"), _tuple(kernel_size, 2, "kernel_size"),
                          _tuple(dilation, 2, "dilation"), _tuple(padding, 2, "padding"), _tuple(stride, 2, "stride"))
    return out if input.dim() == 3 else out.squeeze(0)
