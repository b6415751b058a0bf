"""flowlike.nn.init: in-place parameter initializations (`torch.nn.init`), all under no_grad."""
import math
import warnings

from ..autograd import no_grad

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_", "eye_", "dirac_",
           "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "orthogonal_", "sparse_",
           "uniform", "normal", "constant", "xavier_uniform", "xavier_normal", "kaiming_uniform", "kaiming_normal",
           "orthogonal", "sparse"]

_LINEAR_FNS = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity (as torch.nn.init.calculate_gain)."""
    if nonlinearity in _LINEAR_FNS or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif (not isinstance(param, bool) and isinstance(param, int)) or isinstance(param, float):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fills tensor with samples of U(a, b)."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fills tensor with samples of N(mean, std^2)."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fills tensor with N(mean, std^2) samples redrawn until they fall in [a, b]."""
    from .._C import where

    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                      "The distribution of values may be incorrect.", stacklevel=2)
    with no_grad():
        p = norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std)
        if p > 0.3:
            result = tensor.normal_(mean, std, generator=generator)
            while True:
                mask = (result < a) | (result > b)
                if not bool(mask.any()):
                    break
                result = where(mask, result.new_empty(result.shape).normal_(mean, std, generator=generator), result)
            if tensor is not result:
                tensor.copy_(result)
        else:
            # Narrow window: rejection sampling from U(a, b) against the normal density.
            mode = max(a, min(mean, b))
            log_peak = -0.5 * ((mode - mean) / std) ** 2

            def log_density(x):
                return ((x - mean) / std) ** 2 * -0.5 - log_peak

            tensor.uniform_(a, b, generator=generator)
            accept = tensor.new_empty(tensor.shape)
            pending = accept.uniform_(generator=generator).log() > log_density(tensor)
            result = tensor
            while bool(pending.any()):
                candidates = tensor.new_empty(tensor.shape).uniform_(a, b, generator=generator)
                result = where(pending, candidates, result)
                pending = where(pending, accept.uniform_(generator=generator).log() > log_density(candidates), pending)
            if result is not tensor:
                tensor.copy_(result)
        return tensor


def constant_(tensor, val):
    """Fills tensor with val."""
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    """Fills tensor with ones."""
    return constant_(tensor, 1.0)


def zeros_(tensor):
    """Fills tensor with zeros."""
    with no_grad():
        return tensor.zero_()


def eye_(tensor):
    """Fills a 2-D tensor with the identity matrix."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    from .._creation import eye
    with no_grad():
        tensor.copy_(eye(*tensor.shape, dtype=tensor.dtype))
    return tensor


def dirac_(tensor, groups=1):
    """Fills a 3/4/5-D conv weight with the Dirac delta (identity convolution), per group."""
    dimensions = tensor.ndimension()
    if dimensions not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.size()
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_chans_per_grp = sizes[0] // groups
    min_dim = min(out_chans_per_grp, sizes[1])
    centre = tuple(s // 2 for s in sizes[2:])
    with no_grad():
        tensor.zero_()
        for g in range(groups):
            for d in range(min_dim):
                tensor[(g * out_chans_per_grp + d, d) + centre] = 1
    return tensor


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive_field_size = 1
    for s in tensor.shape[2:]:
        receptive_field_size *= s
    return tensor.size(1) * receptive_field_size, tensor.size(0) * receptive_field_size


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """Glorot uniform: U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """Glorot normal: N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He uniform: U(-bound, bound) with bound = gain * sqrt(3 / fan_mode)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    bound = math.sqrt(3.0) * calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He normal: N(0, std^2) with std = gain / sqrt(fan_mode)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    return normal_(tensor, 0, calculate_gain(nonlinearity, a) / math.sqrt(fan), generator)


def _orthonormal_columns(a):
    """Q of the QR factorization of a (m >= n), with R's diagonal made positive.

    Uses flowlike.linalg.qr when the build has it, else modified Gram-Schmidt applied twice (which is as
    accurate as Householder for the well-conditioned Gaussian matrices initialization draws)."""
    from .. import linalg
    if hasattr(linalg, "qr"):
        q, r = linalg.qr(a)
        return q * r.diagonal().sign()
    cols = []
    for j in range(a.shape[1]):
        v = a[:, j].clone()
        for _ in range(2):
            for q in cols:
                v = v - (q * v).sum() * q
        cols.append(v / v.norm())
    from .._joining import stack
    return stack(cols, 1)


def orthogonal_(tensor, gain=1, generator=None):
    """Fills tensor (trailing dims flattened) with a (semi-)orthogonal matrix times gain."""
    if tensor.ndimension() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    with no_grad():
        flattened = tensor.new_empty((rows, cols)).normal_(0, 1, generator=generator)
        if rows < cols:
            flattened = flattened.t()
        q = _orthonormal_columns(flattened)
        if rows < cols:
            q = q.t()
        tensor.view_as(q).copy_(q)
        tensor.mul_(gain)
    return tensor


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """Fills a 2-D tensor with N(0, std^2) and zeroes a `sparsity` fraction of each column."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    from .._random import randperm
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        for col_idx in range(cols):
            zero_indices = randperm(rows, generator=generator)[:num_zeros]
            tensor[zero_indices, col_idx] = 0
    return tensor


def _deprecated(fn):
    old_name = fn.__name__[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{fn.__name__}`.",
                      FutureWarning, stacklevel=2)
        return fn(*args, **kwargs)
    deprecated_init.__name__ = old_name
    deprecated_init.__doc__ = f"Deprecated alias of {fn.__name__}."
    return deprecated_init


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
