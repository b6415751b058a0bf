"""Vision, dropout and distance functions of torch.nn.functional.

pad, interpolate and grid_sample run C++ kernels with dedicated backward kernels
(csrc/ops/vision_*.cpp); pixel_(un)shuffle, affine_grid, the dropouts and the distances are
composites of differentiable flowlike ops, written once here.
"""
import builtins
import math
import warnings

from .. import _C
from .._tensor import int_arg, int_list_arg
from .. import _autocast

__all__ = ["pad", "interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "pixel_shuffle",
           "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle", "grid_sample", "affine_grid", "dropout",
           "dropout1d", "dropout2d", "dropout3d",
           "alpha_dropout", "feature_alpha_dropout", "cosine_similarity", "pairwise_distance", "cdist", "pdist"]


def _fl():
    import flowlike
    return flowlike


# ---- padding --------------------------------------------------------------------------------

_PAD_MODES = {"constant": 0, "reflect": 1, "replicate": 2, "circular": 3}


def pad(input, pad, mode="constant", value=None):
    """Pads input's last len(pad) // 2 dims; pad lists (left, right) pairs starting from the last dim."""
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if mode != "constant" and value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    pads = int_list_arg(pad, "pad", "pad")
    if isinstance(value, builtins.complex):
        raise TypeError("pad(): argument 'value' (position 4) must be float, not complex")
    return _C._pad(input, pads, _PAD_MODES[mode], builtins.float(value) if value is not None else 0.0)


# ---- interpolation --------------------------------------------------------------------------

_UPSAMPLE_MODES = {"nearest": 0, "nearest-exact": 1, "linear": 2, "bilinear": 2, "trilinear": 2, "bicubic": 3,
                   "area": 4}
# the input rank each interpolating mode needs
_MODE_DIM = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None,
                antialias=False):
    """Resizes input (N, C, d1, ..., dK) to `size` or by `scale_factor` (torch.nn.functional.interpolate)."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
        align_corners = False
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scale_factors = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError("Input and output must have the same number of spatial dimensions, but got input with "
                                 f"spatial dimensions of {list(input.shape[2:])} and output size of {size}. Please "
                                 "provide input tensor in (N, C, d1, d2, ...,dK) format and output size in "
                                 "(o1, o2, ...,oK) format.")
            output_size = int_list_arg(size, "interpolate", "output_size")
        else:
            output_size = int_list_arg([size], "interpolate", "output_size") * dim
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError("Input and scale_factor must have the same number of spatial dimensions, but got input "
                                 f"with spatial dimensions of {list(input.shape[2:])} and scale_factor of shape "
                                 f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                                 "scale_factor in (s1, s2, ...,sK) format.")
            scale_factors = [builtins.float(s) for s in scale_factor]
        else:
            scale_factors = [builtins.float(scale_factor)] * dim
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor is not None and recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if scale_factors is not None:
        output_size = [math.floor(builtins.float(input.shape[i + 2]) * scale_factors[i]) for i in range(dim)]
        if recompute_scale_factor:
            scale_factors = None
    if antialias:
        if not (mode in ("bilinear", "bicubic") and input.dim() == 4):
            raise ValueError("Anti-alias option is restricted to bilinear and bicubic modes and requires a 4-D tensor "
                             "as input")
        raise NotImplementedError("interpolate: antialias=True is not supported by flowlike yet")
    if mode not in _UPSAMPLE_MODES or not 3 <= input.dim() <= 5:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for "
                                  "the modes: nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact "
                                  f"(got {mode})")
    need = _MODE_DIM.get(mode)
    if need is not None and input.dim() != need:
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {need}D input")
    return _C._upsample(input, output_size, _UPSAMPLE_MODES[mode], builtins.bool(align_corners),
                        scale_factors if scale_factors is not None else [])


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of interpolate."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: interpolate(..., mode='nearest')."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: interpolate(..., mode='bilinear', align_corners=True)."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ---- pixel shuffle ----------------------------------------------------------------------------

def pixel_shuffle(input, upscale_factor):
    """(*, C * r^2, H, W) -> (*, C, H * r, W * r)."""
    r = int_arg(upscale_factor, "pixel_shuffle", "upscale_factor")
    if input.dim() < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    *batch, c, h, w = input.shape
    if c % (r * r) != 0:
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    nb = len(batch)
    x = input.reshape(*batch, c // (r * r), r, r, h, w)
    x = x.permute(*range(nb), nb, nb + 3, nb + 1, nb + 4, nb + 2)
    return x.reshape(*batch, c // (r * r), h * r, w * r)


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H * r, W * r) -> (*, C * r^2, H, W)."""
    r = int_arg(downscale_factor, "pixel_unshuffle", "downscale_factor")
    if input.dim() < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    *batch, c, h, w = input.shape
    if h % r != 0:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)={h} "
                           f"is not divisible by {r}")
    if w % r != 0:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)={w} "
                           f"is not divisible by {r}")
    nb = len(batch)
    x = input.reshape(*batch, c, h // r, r, w // r, r)
    x = x.permute(*range(nb), nb, nb + 2, nb + 4, nb + 1, nb + 3)
    return x.reshape(*batch, c * r * r, h // r, w // r)


def channel_shuffle(input, groups):
    """(N, C, *) -> (N, C, *) with the channels, seen as (groups, C / groups), transposed (ShuffleNet)."""
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes {list(input.shape)}")
    g = int_arg(groups, "channel_shuffle", "groups")
    if g <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{g}")
    n, c, *rest = input.shape
    if c % g != 0:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {g} groups.")
    return input.reshape(n, g, c // g, *rest).transpose(1, 2).reshape(input.shape)


native_channel_shuffle = channel_shuffle


# ---- grid sampling ----------------------------------------------------------------------------

_GRID_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_GRID_PADDING = {"zeros": 0, "border": 1, "reflection": 2}
_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. Please "
                  "specify align_corners=True if the old behavior is desired. See the documentation of grid_sample "
                  "for details.")


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Samples input (N, C, [D,] H, W) at the normalized locations of grid (N, [D_o,] H_o, W_o, 2 or 3)."""
    if mode not in _GRID_MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but "
                         f"got: '{mode}'")
    if padding_mode not in _GRID_PADDING:
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    return _C._grid_sampler(input, grid, _GRID_MODES[mode], _GRID_PADDING[padding_mode], builtins.bool(align_corners))


def _base_coords(n, align_corners, dtype):
    fl = _fl()
    if n <= 1:
        return fl.zeros(1, dtype=dtype)
    r = fl.linspace(-1.0, 1.0, n, dtype=dtype)
    return r if align_corners else r * ((n - 1) / n)


def affine_grid(theta, size, align_corners=None):
    """The sampling grid (N, H, W, 2) or (N, D, H, W, 3) of the affine maps theta (N, 2, 3) or (N, 3, 4)."""
    fl = _fl()
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = int_list_arg(size, "affine_grid_generator", "size")
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {fl.Size(size)}. Got "
                             f"{theta.shape}.")
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {fl.Size(size)}. Got "
                             f"{theta.shape}.")
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {fl.Size(size)}.")
    if builtins.min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {fl.Size(size)}")
    n, spatial = size[0], size[2:]
    # base[..., :] = (x, y[, z], 1) over the output grid, x varying fastest
    axes = [_base_coords(s, align_corners, theta.dtype) for s in spatial]  # (z,) y, x
    mesh = fl.meshgrid(*axes, indexing="ij")
    comps = list(reversed(mesh)) + [fl.ones(*spatial, dtype=theta.dtype)]
    base = fl.stack(comps, dim=-1).reshape(1, -1, len(comps))
    grid = _C._matmul(base.expand(n, base.shape[1], base.shape[2]), theta.transpose(1, 2))
    return grid.reshape(n, *spatial, len(spatial))


# ---- dropout --------------------------------------------------------------------------------

def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout_impl(input, p, training, inplace, feature, alpha):
    _check_p(p)
    if not training or p == 0 or input.numel() == 0:
        return input
    fl = _fl()
    if p == 1:
        zero = fl.zeros((), dtype=input.dtype)
        return input.mul_(zero) if inplace else input * zero
    shape = (input.shape[0], input.shape[1]) + (1,) * (input.dim() - 2) if feature else input.shape
    noise = fl.empty(*shape, dtype=input.dtype).bernoulli_(1 - p)
    if alpha:
        a_ = 1.7580993408473766
        a = 1.0 / math.sqrt((a_ * a_ * p + 1) * (1 - p))
        b = (noise - 1) * (a_ * a) + a_ * a * p
        noise = noise * a
        return input.mul_(noise).add_(b) if inplace else input * noise + b
    noise = noise / (1 - p)
    return input.mul_(noise) if inplace else input * noise


def dropout(input, p=0.5, training=True, inplace=False):
    """Zeroes elements with probability p and scales the rest by 1 / (1 - p) (training only)."""
    return _dropout_impl(input, p, training, inplace, False, False)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps SELU's self-normalizing mean and variance."""
    return _dropout_impl(input, p, training, inplace, False, True)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """alpha_dropout of whole channels."""
    return _dropout_impl(input, p, training, inplace, True, True)


def _feature_dropout(name, input, p, training, inplace, dims):
    _check_p(p)
    nd = input.dim()
    if name == "dropout1d" and nd not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {nd}D input. Note that dropout1d "
                           "exists to provide channel-wise dropout on inputs with 1 spatial dimension, a channel "
                           "dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    if name != "dropout1d" and nd not in (dims + 1, dims + 2):
        warnings.warn(f"{name}: Received a {nd}-D input to {name}, which is deprecated and will result in an error in "
                      f"a future release. To retain the behavior and silence this warning, please use dropout "
                      f"instead. Note that {name} exists to provide channel-wise dropout on inputs with {dims} spatial "
                      f"dimensions, a channel dimension, and an optional batch dimension (i.e. {dims + 1}D or "
                      f"{dims + 2}D inputs).", stacklevel=3)
    batched = nd != dims + 1 or (name == "dropout2d" and nd == 3)
    if name == "dropout2d" and nd == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior "
                      "is desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior "
                      "will change in a future release to interpret the input as one without a batch dimension, i.e. "
                      "shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using "
                      "dropout1d instead.", stacklevel=3)
    if batched:
        return _dropout_impl(input, p, training, inplace, True, False)
    if not training or p == 0 or input.numel() == 0:
        return input
    result = _dropout_impl(input.unsqueeze(0), p, training, inplace, True, False).squeeze(0)
    return input if inplace else result


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of (N, C, L) or (C, L) input."""
    return _feature_dropout("dropout1d", input, p, training, inplace, 1)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of (N, C, H, W) or (C, H, W) input."""
    return _feature_dropout("dropout2d", input, p, training, inplace, 2)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of (N, C, D, H, W) or (C, D, H, W) input."""
    return _feature_dropout("dropout3d", input, p, training, inplace, 3)


# ---- distances ------------------------------------------------------------------------------

def _check_float_common(x1, x2):
    dt = _C.result_type(x1, x2)
    if not dt.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is {_c10_name(dt)}")
    return dt


def _c10_name(dt):
    return {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "bool": "Bool"}.get(str(dt).split(".")[-1], str(dt))


def _norm_with_eps_floor(x, dim, eps):
    # The norm, with its value floored at eps but its gradient that of the norm (PyTorch clamps
    # the norm in place under no_grad).
    n = _fl().norm(x, 2, dim=dim, keepdim=True)
    return n + (n.clamp_min(eps) - n).detach()


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum(x1 * x2) / (max(|x1|, eps) * max(|x2|, eps)) along dim, inputs broadcast."""
    fl = _fl()
    dt = _check_float_common(x1, x2)
    x1 = x1 if x1.dtype.is_floating_point else x1.to(dt)
    x2 = x2 if x2.dtype.is_floating_point else x2.to(dt)
    x1, x2 = fl.broadcast_tensors(x1, x2)
    return ((x1 / _norm_with_eps_floor(x1, dim, eps)) * (x2 / _norm_with_eps_floor(x2, dim, eps))).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """The p-norm of x1 - x2 + eps over the last dim."""
    nd = builtins.max(x1.dim(), x2.dim())
    if nd == 0:
        return _fl().norm(x1 - x2 + eps, p, dim=None, keepdim=keepdim)
    return _fl().norm(x1 - x2 + eps, p, dim=nd - 1, keepdim=keepdim)


def pdist(input, p=2):
    """The p-norm distances between the rows of input (N, M), pairs i < j in row-major order."""
    fl = _fl()
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    ij = fl.triu_indices(n, n, 1)
    return _lp_rows(input.index_select(0, ij[0]) - input.index_select(0, ij[1]), p)


def _lp_rows(diff, p):
    # The p-norm over the last dim, with PyTorch's _cdist_backward gradients: zero where a
    # difference (or the whole distance) is zero, and for p = inf the full gradient to every tied max.
    fl = _fl()
    a = diff.abs()
    zero = fl.zeros((), dtype=diff.dtype)
    if p == 0:
        return (diff != 0).to(diff.dtype).sum(-1) + (diff * 0).sum(-1)
    if p == math.inf:
        m = a.amax(-1, keepdim=True).detach()
        ties = (a == m).to(a.dtype)
        return (a * ties).sum(-1) - (ties.sum(-1) - 1) * m.squeeze(-1)
    if p == 1:
        return a.sum(-1)
    one = fl.ones((), dtype=diff.dtype)
    if p == 2:
        s = (a * a).sum(-1)
    else:
        pos = a > 0
        s = fl.where(pos, fl.where(pos, a, one) ** p, zero).sum(-1)
    safe = fl.where(s > 0, s, one)
    return fl.where(s > 0, safe.sqrt() if p == 2 else safe ** (1.0 / p), zero)


_CDIST_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist")


@_autocast.fp32
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """p-norm distances between the rows of x1 (*, P, M) and x2 (*, R, M): (*, P, R)."""
    fl = _fl()
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    if x1.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.dim()}D")
    if x2.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 got: {x2.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if not x1.dtype.is_floating_point or not x2.dtype.is_floating_point:
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: {_c10_name(x1.dtype)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    r1, r2 = x1.shape[-2], x2.shape[-2]
    use_mm = p == 2 and (compute_mode == "use_mm_for_euclid_dist" or
                         (compute_mode == _CDIST_MODES[0] and (r1 > 25 or r2 > 25)))
    if use_mm:
        # |a - b|^2 = |a|^2 - 2 a.b + |b|^2 as one product (PyTorch's _euclidean_dist)
        n1 = (x1 * x1).sum(-1, keepdim=True)
        n2 = (x2 * x2).sum(-1, keepdim=True)
        a = fl.cat([x1 * -2, n1, fl.ones_like(n1)], -1)
        b = fl.cat([x2, fl.ones_like(n2), n2], -1)
        return _C._matmul(a, b.transpose(-2, -1)).clamp_min(0).sqrt()
    return _lp_rows(x1.unsqueeze(-2) - x2.unsqueeze(-3), p)
