"""Normalization functions (`torch.nn.functional`).

layer_norm and rms_norm run on one fused C++ row kernel that saves mean and rstd for backward, and
batch_norm on a fused per-channel kernel (csrc/ops/nn_norm.h); group_norm and instance_norm reuse
the row kernel on reshaped rows; local_response_norm and normalize are composites of the reductions
and pointwise ops.
"""
import numbers

import flowlike as _fl
from .. import _C
from .._tensor import int_list_arg

__all__ = ["layer_norm", "rms_norm", "batch_norm", "instance_norm", "group_norm", "local_response_norm", "normalize"]


def _shape(normalized_shape, op=None):
    """normalized_shape (an int or a sequence of ints) as a list of ints. For the function `op` a tensor is refused as
    torch's parser does (iterating a huge one would run for ever); the modules take one, as torch's."""
    if op is not None and isinstance(normalized_shape, _fl.Tensor):
        raise TypeError(f"{op}(): argument 'normalized_shape' (position 2) must be tuple of ints, not Tensor")
    if isinstance(normalized_shape, numbers.Integral):
        normalized_shape = [normalized_shape]
    return int_list_arg(normalized_shape, op or "layer_norm", "normalized_shape")


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """(x - mean) / sqrt(var + eps) * weight + bias over the last len(normalized_shape) dims."""
    return _C._native_layer_norm(input, _shape(normalized_shape, "layer_norm"), weight, bias, float(eps), False)[0]


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x^2) + eps) * weight over the last dims; eps defaults to finfo(input.dtype).eps."""
    if eps is None:
        eps = _fl.finfo(input.dtype.to_real() if input.dtype.is_complex else input.dtype).eps \
            if input.dtype.is_floating_point or input.dtype.is_complex else _fl.finfo(_fl.float32).eps
    shape = _shape(normalized_shape, "rms_norm")
    if input.dtype.is_complex:  # torch's composite (the kernel is real-valued): the square x * x, not |x|^2
        r = input * _C.rsqrt((input * input).mean(list(range(-len(shape), 0)), keepdim=True) + eps)
        return r * weight if weight is not None else r
    return _C._native_layer_norm(input, shape, weight, None, float(eps), True)[0]


def _channel_shape(input):
    return [1, input.shape[1]] + [1] * (input.dim() - 2)


def _affine(y, weight, bias, shape):
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y


def _update_running(running, value, momentum):
    with _fl.no_grad():
        running.mul_(1 - momentum).add_(value.detach().to(running.dtype) * momentum)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Normalizes each channel (dim 1) over the batch and spatial dims; in training the running
    statistics are updated with momentum (running_var with the unbiased variance). One fused C++ kernel
    (csrc/ops/nn_norm.cpp) per direction."""
    c = input.shape[1] if input.dim() >= 2 else 0
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    if training and c and input.numel() // c == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {list(input.shape)}")
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError(f"{'running_mean' if running_mean is None else 'running_var'} must be defined in "
                           "evaluation mode")
    if input.dim() == 1:  # torch reads a 1-d input's size(1): only an empty one normalizes (to an empty result)
        if input.numel():
            raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
        return input.clone()
    return _C._native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)[0]


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Normalizes each (sample, channel) plane over its spatial dims."""
    if input.dim() < 2:
        raise ValueError(f"Expected 2D or more input (got {input.dim()}D input)")
    n, c = input.shape[0], input.shape[1]
    spatial = input.numel() // (n * c) if n * c else 0
    if use_input_stats and spatial == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {list(input.shape)}")
    shape = _channel_shape(input)
    if not use_input_stats:
        return batch_norm(input, running_mean, running_var, weight, bias, False, momentum, eps)
    rows = input.reshape([n * c, spatial])
    y = _C._native_layer_norm(rows, [spatial], None, None, float(eps), False)[0].reshape(input.shape)
    if running_mean is not None or running_var is not None:
        with _fl.no_grad():
            var, mean = _fl.var_mean(rows, [1], correction=1)
            if running_mean is not None:
                _update_running(running_mean, mean.reshape([n, c]).mean(0), momentum)
            if running_var is not None:
                _update_running(running_var, var.reshape([n, c]).mean(0), momentum)
    return _affine(y, weight, bias, shape)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalizes groups of num_groups channels over their channels and spatial dims, then applies
    the per-channel affine transform."""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    n, c = input.shape[0], input.shape[1]
    if num_groups <= 0 or c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of shape "
                           f"{list(input.shape)} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, but "
                               f"got {name} of shape {list(t.shape)} and input of shape {list(input.shape)}")
    size = input.numel() // (n * num_groups) if n * num_groups else 0
    y = _C._native_layer_norm(input.reshape([n * num_groups, size]), [size], None, None, float(eps), False)[0]
    return _affine(y.reshape(input.shape), weight, bias, _channel_shape(input))


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """input / (k + alpha * mean of squares over `size` neighbouring channels) ** beta."""
    if input.dim() < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.dim()} dimensions)")
    if input.numel() == 0:
        return input
    sq = input * input
    c = input.shape[1]
    pad_shape = list(input.shape)
    before, after = size // 2, (size - 1) // 2
    pad_shape[1] = before + 1  # one extra leading zero so window sums are differences of prefix sums
    pieces = [_fl.zeros(pad_shape, dtype=input.dtype), sq]
    if after:
        pad_shape[1] = after
        pieces.append(_fl.zeros(pad_shape, dtype=input.dtype))
    prefix = _fl.cumsum(_fl.cat(pieces, 1), 1)
    window = prefix.narrow(1, size, c) - prefix.narrow(1, 0, c)
    div = (window * (alpha / size) + k) ** beta
    return input / div


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p along dim, eps)."""
    denom = _fl.clamp(_fl.norm(input, p, dim, keepdim=True), min=eps).expand_as(input)
    if out is not None:
        return _fl.div(input, denom, out=out)
    return input / denom
