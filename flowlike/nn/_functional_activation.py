"""Activation functions and the softmax family (`torch.nn.functional`).

Activations with a derivative of their own run on one C++ op (csrc/ops/activation.h) selected by
kind and up to three parameters; relu6, selu and celu are parameterizations of hardtanh and elu;
glu, prelu and rrelu are composites. softmax/log_softmax are C++ kernels (csrc/ops/softmax.h).
"""
import math
import warnings

import flowlike as _fl
from .. import _C
from .._out import write_inplace
from .._tensor import scalar_arg
from .. import _autocast

__all__ = ["softmax", "log_softmax", "softmin", "gumbel_softmax", "relu", "relu_", "relu6", "leaky_relu", "leaky_relu_",
           "elu", "elu_", "selu", "selu_", "celu", "celu_", "gelu", "silu", "mish", "hardswish", "hardsigmoid",
           "hardtanh", "hardtanh_", "hardshrink", "softshrink", "softplus", "softsign", "tanhshrink", "threshold",
           "threshold_", "glu", "logsigmoid", "prelu", "rrelu", "rrelu_", "sigmoid", "tanh"]

_KIND = _C._activation_kinds
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


# the activations torch also runs on complex tensors (the C++ kernels are real-valued): as composites, with autograd
_COMPLEX_ACT = {"silu": lambda x: x * _C.sigmoid(x), "softsign": lambda x: x / (x.abs() + 1),
                "tanhshrink": lambda x: x - _C.tanh(x)}


def _act(name, input, a=0.0, b=0.0, c=0.0, inplace=False):
    if not isinstance(input, _C.Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if input.dtype.is_complex and name in _COMPLEX_ACT:
        if name == "silu" and input.requires_grad and _fl.is_grad_enabled():  # (torch's silu is a kernel)
            raise RuntimeError("silu does not support automatic differentiation for outputs with complex dtype.")
        r = _COMPLEX_ACT[name](input)
        return input.copy_(r) if inplace else r
    return _C._activation(input, _KIND[name], float(a), float(b), float(c), bool(inplace))


def _softmax_call(kernel, input, dim, dtype):
    """kernel (_C._softmax or _C._log_softmax) along dim; an empty input at once (the kernel would visit each row
    of its other dims: 2**62 of them, say)."""
    if isinstance(input, _C.Tensor) and input.numel() == 0:
        input.size(dim)  # (the dim check)
        return kernel(input.reshape(0), 0, dtype).reshape(input.shape)
    return kernel(input, dim, dtype)


def _get_softmax_dim(name, ndim, stacklevel):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as an "
                  "argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(x)_i = exp(x_i) / sum_j exp(x_j) along dim (computed as exp(x - max) for stability)."""
    if dim is None:
        dim = _get_softmax_dim("softmax", input.dim(), _stacklevel)
    return _softmax_call(_C._softmax, input, dim, dtype)


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """Samples from the Gumbel-softmax distribution: softmax((logits + g) / tau) with g ~ Gumbel(0, 1). With hard,
    the result is the one-hot of its argmax in value but keeps the soft sample's gradient (straight-through)."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -_fl.empty_like(logits).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = _fl.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """log(softmax(input)) along dim, computed as x - max - log(sum(exp(x - max)))."""
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.dim(), _stacklevel)
    return _softmax_call(_C._log_softmax, input, dim, dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-input) along dim."""
    if dim is None:
        dim = _get_softmax_dim("softmin", input.dim(), _stacklevel)
    return _C._softmax(-input if dtype is None else -input.to(dtype), dim, None)


def relu(input, inplace=False):
    """max(input, 0); integer tensors are supported as in PyTorch."""
    if isinstance(input, _C.Tensor) and not input.dtype.is_floating_point:
        result = _fl.clamp(input, min=0)
        return write_inplace(input, result, "relu_") if inplace else result
    return _act("relu", input, inplace=inplace)


def relu_(input):
    """In-place relu."""
    return relu(input, inplace=True)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """input clamped to [min_val, max_val] (integer tensors keep their dtype)."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if isinstance(input, _C.Tensor) and not input.dtype.is_floating_point and not input.dtype.is_complex:
        # torch's integer kernel: no bool; the limits read as int64, then checked against the tensor's dtype
        if input.dtype == _fl.bool:
            raise RuntimeError("Bool inputs not supported for hardtanh")
        limits = [v if isinstance(v, int) else int(v) if math.isfinite(v) else None for v in (min_val, max_val)]
        if any(v is None or not -(1 << 63) <= v < (1 << 63) for v in limits):
            raise RuntimeError("value cannot be converted to type int64_t without overflow")
        info = _fl.iinfo(input.dtype)
        if info.min == 0 and any(v < 0 for v in limits):
            raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
        if any(not info.min <= v <= info.max for v in limits):
            raise RuntimeError(f"value cannot be converted to type {info.dtype}_t without overflow")
        result = _fl.clamp(input, min=limits[0], max=limits[1])
        return write_inplace(input, result, "hardtanh_") if inplace else result
    return _act("hardtanh", input, min_val, max_val, inplace=inplace)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """In-place hardtanh."""
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace=False):
    """min(max(input, 0), 6)."""
    return hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """input where positive, negative_slope * input elsewhere."""
    return _act("leaky_relu", input, negative_slope, inplace=inplace)


def leaky_relu_(input, negative_slope=0.01):
    """In-place leaky_relu."""
    return leaky_relu(input, negative_slope, inplace=True)


def elu(input, alpha=1.0, inplace=False):
    """input where positive, alpha * (exp(input) - 1) elsewhere."""
    return _act("elu", input, alpha, 1.0, 1.0, inplace)


def elu_(input, alpha=1.0):
    """In-place elu."""
    return elu(input, alpha, inplace=True)


def selu(input, inplace=False):
    """scale * elu(input, alpha) with the self-normalizing constants."""
    return _act("elu", input, _SELU_ALPHA, _SELU_SCALE, 1.0, inplace)


def selu_(input):
    """In-place selu."""
    return selu(input, inplace=True)


def celu(input, alpha=1.0, inplace=False):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: celu: alpha must not be 0")
    return _act("elu", input, alpha, 1.0, 1.0 / alpha, inplace)


def celu_(input, alpha=1.0):
    """In-place celu."""
    return celu(input, alpha, inplace=True)


def gelu(input, approximate="none"):
    """x * Phi(x), exactly (erf) or with the tanh approximation."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return _act("gelu" if approximate == "none" else "gelu_tanh", input)


def silu(input, inplace=False):
    """x * sigmoid(x)."""
    return _act("silu", input, inplace=inplace)


def mish(input, inplace=False):
    """x * tanh(softplus(x))."""
    return _act("mish", input, inplace=inplace)


def hardswish(input, inplace=False):
    """x * relu6(x + 3) / 6."""
    return _act("hardswish", input, inplace=inplace)


def hardsigmoid(input, inplace=False):
    """relu6(x + 3) / 6."""
    return _act("hardsigmoid", input, inplace=inplace)


def hardshrink(input, lambd=0.5):
    """x where |x| > lambd, else 0."""
    return _act("hardshrink", input, lambd)


def softshrink(input, lambd=0.5):
    """x - lambd above lambd, x + lambd below -lambd, else 0."""
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    return _act("softshrink", input, lambd)


def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta * x)) / beta, linear where beta * x > threshold."""
    return _act("softplus", input, beta, threshold)


def softsign(input):
    """x / (1 + |x|)."""
    return _act("softsign", input)


def tanhshrink(input):
    """x - tanh(x)."""
    return _act("tanhshrink", input)


def _threshold(input, th, value, inplace):
    scalar_arg(th), scalar_arg(value)
    if isinstance(input, _C.Tensor) and not input.dtype.is_floating_point:
        result = _fl.where(input > th, input, _fl.full_like(input, value))
        return write_inplace(input, result, "threshold_") if inplace else result
    return _act("threshold", input, th, value, inplace=inplace)


def threshold(input, threshold, value, inplace=False):
    """input where input > threshold, else value (integer tensors keep their dtype)."""
    return _threshold(input, threshold, value, inplace)


def threshold_(input, threshold, value):
    """In-place threshold."""
    return _threshold(input, threshold, value, True)


def logsigmoid(input):
    """log(sigmoid(x)), computed stably."""
    return _act("logsigmoid", input)


def sigmoid(input):
    """1 / (1 + exp(-x))."""
    return _C.sigmoid(input)


def tanh(input):
    """Hyperbolic tangent."""
    return _C.tanh(input)


def glu(input, dim=-1):
    """a * sigmoid(b) where a, b are the two halves of input along dim."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    n = input.shape[dim]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim % input.dim()} is size {n}")
    return input.narrow(dim, 0, n // 2) * _C.sigmoid(input.narrow(dim, n // 2, n // 2))


@_autocast.lower_precision
def prelu(input, weight):
    """input where positive, weight * input elsewhere; weight has 1 or C (= input.size(1)) elements."""
    channels = input.shape[1] if input.dim() >= 2 else 1
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}")
    if weight.numel() != 1:
        if input.dim() == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        if weight.numel() != channels:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                               f"{weight.numel()} and channel size = {channels}.")
        if input.dim() >= 2:
            weight = weight.reshape([channels] + [1] * (input.dim() - 2))
    else:
        weight = weight.reshape([])
    return _fl.where(input > 0, input, weight * input)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """leaky_relu with slope drawn from U(lower, upper) per element in training, (lower + upper) / 2 otherwise."""
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    noise = _fl.empty_like(input).uniform_(lower, upper)
    result = _fl.where(input >= 0, input, input * noise)
    return write_inplace(input, result, "rrelu_") if inplace else result


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """In-place rrelu."""
    return rrelu(input, lower, upper, training, inplace=True)
