"""The loss functions of torch.nn.functional.

cross_entropy (class indices), nll_loss, the two binary cross entropies and ctc_loss run on C++
kernels (csrc/ops/loss*.cpp); the other losses are composites of differentiable flowlike ops, written
as PyTorch's ATen composites are, so values, dtypes and gradients follow PyTorch's.
"""
import math
import warnings

import flowlike as _fl
from flowlike import _C
from flowlike._dtype import c10_name as _c10name
from ._functional_activation import logsigmoid
from ._functional_vision import pairwise_distance
from .. import _autocast

__all__ = ["cross_entropy", "nll_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
           "poisson_nll_loss", "gaussian_nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
           "margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss", "multilabel_soft_margin_loss",
           "multilabel_margin_loss", "multi_margin_loss", "cosine_embedding_loss", "triplet_margin_loss",
           "triplet_margin_with_distance_loss", "ctc_loss", "linear_cross_entropy"]

_NONE, _MEAN, _SUM = 0, 1, 2


# ---- reduction arguments (torch.nn._reduction) --------------------------------------------------

def _get_enum(reduction):
    """The reduction enum of a reduction string; ValueError for anything else, as PyTorch."""
    if reduction == "none":
        return _NONE
    if reduction == "mean":
        return _MEAN
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.",
                      stacklevel=3)
        return _MEAN
    if reduction == "sum":
        return _SUM
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _legacy_get_string(size_average, reduce):
    """Maps the deprecated size_average/reduce pair to a reduction string (with PyTorch's warning)."""
    if size_average is None:
        size_average = True
    if reduce is None:
        reduce = True
    ret = "mean" if size_average and reduce else ("sum" if reduce else "none")
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
                  stacklevel=3)
    return ret


def _reduction(size_average, reduce, reduction):
    """The reduction string, honoring the deprecated arguments when either is given."""
    if size_average is not None or reduce is not None:
        return _legacy_get_string(size_average, reduce)
    return reduction


def _apply_reduction(loss, enum):
    if enum == _MEAN:
        return loss.mean()
    if enum == _SUM:
        return loss.sum()
    return loss


def _warn_size_mismatch(input, target):
    if target.size() != input.size():
        warnings.warn(f"Using a target size ({target.size()}) that is different to the input size ({input.size()}). "
                      "This will likely lead to incorrect results due to broadcasting. "
                      "Please ensure they have the same size.", stacklevel=3)


def _require_floating(input, kernel):
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_c10name(input.dtype)}'")


# ---- classification losses with C++ kernels -----------------------------------------------------

@_autocast.fp32
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """Negative log likelihood of class indices `target` under log-probabilities `input` ((C), (N, C) or
    (N, C, d1, ...)); `weight` rescales classes, targets equal to `ignore_index` do not count."""
    reduction = _reduction(size_average, reduce, reduction)
    if isinstance(target, _C.Tensor) and (target.dtype.is_floating_point or target.dtype.is_complex):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_c10name(target.dtype)}")
    if isinstance(input, _C.Tensor) and isinstance(target, _C.Tensor) and input.dim() >= 2 and target.dim() == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")  # (a batch needs a target each)
    _check_weight_needs_no_grad(weight)
    return _C._nll_loss(input, target, weight, _get_enum(reduction), ignore_index)[0]  # (loss, total_weight)


def _check_weight_needs_no_grad(weight):
    """The class weights of nll_loss / cross_entropy (class indices) have no gradient: torch's error when they would
    need one (the op's node records a gradient for input only)."""
    if isinstance(weight, _C.Tensor) and weight.requires_grad and _fl.is_grad_enabled():
        raise RuntimeError("The function 'nll_loss_forward' is not differentiable with respect to argument 'weight'. "
                           "This input cannot have requires_grad True.")


@_autocast.fp32
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    """Cross entropy between logits `input` and class indices (or, when shaped like input, class
    probabilities) `target`, with optional class weights and label smoothing."""
    reduction = _reduction(size_average, reduce, reduction)
    enum = _get_enum(reduction)
    if input.shape == target.shape:
        return _cross_entropy_probabilities(input, target, weight, enum, ignore_index, label_smoothing)
    _check_weight_needs_no_grad(weight)
    return _C._cross_entropy_loss(input, target, weight, enum, ignore_index, float(label_smoothing))[0]


def _cross_entropy_probabilities(input, target, weight, enum, ignore_index, label_smoothing):
    """cross_entropy with class probabilities: -sum(target * log_softmax(input)) over the class dim."""
    # the checks in PyTorch's order: target, ignore_index, label_smoothing, weight, then log_softmax's
    if not target.dtype.is_floating_point:
        raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                           f"{_c10name(target.dtype)}")
    if ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    class_dim = 0 if input.dim() == 1 else 1
    n_classes = input.shape[class_dim] if input.dim() else 1
    if weight is not None and (weight.dim() != 1 or weight.numel() != n_classes):
        raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all {n_classes} classes or no "
                           f"classes but got weight tensor of shape: {list(weight.shape)}")
    if input.dim() == 0:
        raise IndexError("Dimension specified as 1 but tensor has no dimensions")
    if not input.dtype.is_floating_point:
        kernel = "log_softmax_lastdim_kernel_impl" if input.dim() <= 2 else "log_softmax_kernel_impl"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_c10name(input.dtype)}'")
    if label_smoothing > 0.0:
        target = target * (1 - label_smoothing) + label_smoothing / n_classes
    logp = input - _fl.logsumexp(input, class_dim, keepdim=True)
    terms = logp * target
    if weight is not None:
        shape = [1] * input.dim()
        shape[class_dim] = n_classes
        terms = terms * weight.reshape(shape)
    if enum == _MEAN:
        if input.numel() == 0:
            return -terms.sum() * float("nan")
        return -terms.sum() / (input.numel() / n_classes)
    if enum == _SUM:
        return -terms.sum()
    return -terms.sum(class_dim)


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None, reduction="mean",
                         ignore_index=None, label_smoothing=0.0, options=None):
    """cross_entropy of the logits input @ linear_weight^T (+ linear_bias); linear_weight (C, ..., in_features)
    gives K-dimensional logits (N, C, ...). `options` (PyTorch's chunking knobs) changes no result and is
    accepted as is: the logits are formed whole."""
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}")
    num_batches, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions (in_features), "
                           f"got {input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    num_classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got {tuple(linear_bias.shape)}")
    if out_features and not num_batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires"
                           f" batched input, (N, {in_features}), got unbatched input with shape {tuple(input.shape)}")
    logits_shape = (*num_batches, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    rows = math.prod(out_features, start=num_classes)
    logits = _C._matmul(input, linear_weight.reshape(rows, in_features).transpose(0, 1))
    if linear_bias is not None:
        logits = logits + linear_bias.reshape(rows)
    return cross_entropy(logits.reshape(logits_shape), target, weight=weight, reduction=reduction,
                         ignore_index=-100 if ignore_index is None else ignore_index, label_smoothing=label_smoothing)


@_autocast.fp32
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Binary cross entropy between probabilities `input` and `target` (logs clamped at -100)."""
    if size_average is not None or reduce is not None:
        enum = _get_enum(_legacy_get_string(size_average, reduce))
    else:
        enum = _get_enum(reduction)
    if target.size() != input.size():
        raise ValueError(f"Using a target size ({target.size()}) that is different to the input size ({input.size()}) "
                         "is deprecated. Please ensure they have the same size.")
    loss = _C._binary_cross_entropy(input, target)
    if weight is not None:
        weight = weight.expand(_fl.broadcast_shapes(target.size(), weight.size()))
        loss = loss * weight.to(loss.dtype)
    return _apply_reduction(loss, enum)


@_autocast.fp32
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    """Binary cross entropy on logits (sigmoid folded in, computed stably); `pos_weight` weighs the
    positive term, `weight` each element."""
    if size_average is not None or reduce is not None:
        enum = _get_enum(_legacy_get_string(size_average, reduce))
    else:
        enum = _get_enum(reduction)
    if not (target.size() == input.size()):
        raise ValueError(f"Target size ({target.size()}) must be the same as input size ({input.size()})")
    loss = _C._binary_cross_entropy_with_logits(input, target, pos_weight)
    if weight is not None:
        shape = _fl.broadcast_shapes(loss.shape, weight.shape)
        if tuple(shape) != tuple(loss.shape):
            raise RuntimeError(f"output with shape {list(loss.shape)} doesn't match the broadcast shape {list(shape)}")
        loss = loss * weight.to(loss.dtype)
    return _apply_reduction(loss, enum)


@_autocast.fp32
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """Connectionist Temporal Classification loss of log_probs (T, N, C) (or (T, C) unbatched) against
    targets padded (N, S) or concatenated (sum(target_lengths)); mean divides by the target lengths."""
    enum = _get_enum(reduction)
    batched = log_probs.dim() == 3
    il, tl = _lengths(input_lengths, "input_lengths"), _lengths(target_lengths, "target_lengths")
    if not batched:
        log_probs, targets = log_probs.unsqueeze(1), targets.unsqueeze(0)
    res = _C._ctc_loss(log_probs, targets, il, tl, blank, zero_infinity)[0]  # (nll, log_alpha)
    if zero_infinity:
        res = _fl.where(res == float("inf"), _fl.zeros_like(res), res)
    if enum == _MEAN:
        lengths = _fl.tensor(tl, dtype=res.dtype).clamp_min(1)
        res = (res / lengths).mean()
    elif enum == _SUM:
        res = res.sum()
    return res if batched or enum != _NONE else res.squeeze(0)


def _lengths(lengths, name):
    if isinstance(lengths, _C.Tensor):
        if lengths.dtype.is_floating_point or lengths.dtype == _fl.bool:
            raise TypeError(f"ctc_loss(): argument '{name}' must be a tuple of ints or an integral tensor, not a "
                            f"{lengths.dtype} tensor")
        return [int(v) for v in lengths.reshape(-1).tolist()]
    if isinstance(lengths, int):
        return [lengths]
    return [int(v) for v in lengths]


# ---- regression losses --------------------------------------------------------------------------

def _regression(name, input, target, size_average, reduce, reduction, weight, elementwise):
    """Shared body of mse/l1: warn on size mismatch, broadcast, optional elementwise weight."""
    _warn_size_mismatch(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    x, y = _fl.broadcast_tensors(input, target)
    if weight is not None:
        if weight.size() != input.size():
            raise ValueError("Weights and input must have the same size.")
        loss = elementwise(x, y) * weight
        if reduction == "none":
            return loss
        if reduction == "sum":
            return _fl.sum(loss)
        if reduction == "mean":
            return _fl.sum(loss) / _fl.sum(weight)
        raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")
    enum = _get_enum(reduction)
    if name is not None:
        _require_floating(x, name)
    return _apply_reduction(elementwise(x, y), enum)


@_autocast.fp32
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error, optionally weighted per element."""
    return _regression("mse_cpu", input, target, size_average, reduce, reduction, weight,
                       lambda x, y: _fl.square(x - y))


@_autocast.fp32
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error, optionally weighted per element."""
    return _regression(None, input, target, size_average, reduce, reduction, weight, lambda x, y: _fl.abs(x - y))


def _smooth_l1(x, y, beta):
    d = x - y
    z = _fl.abs(d)
    return _fl.where(z < beta, 0.5 * d * d / beta, z - 0.5 * beta)


def _huber(x, y, delta):
    d = x - y
    z = _fl.abs(d)
    return _fl.where(z < delta, 0.5 * d * d, delta * (z - 0.5 * delta))


@_autocast.fp32
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """Squared error below `beta` (scaled by 1 / beta), absolute error above it."""
    _warn_size_mismatch(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    x, y = _fl.broadcast_tensors(input, target)
    enum = _get_enum(reduction)
    if beta == 0.0:
        return _apply_reduction(_fl.abs(x - y), enum)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    _require_floating(x, "smooth_l1_cpu")
    return _apply_reduction(_smooth_l1(x, y, beta), enum)


@_autocast.fp32
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """Squared error below `delta`, delta-scaled absolute error above it; optionally weighted."""
    _warn_size_mismatch(input, target)
    x, y = _fl.broadcast_tensors(input, target)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if weight is None:
        enum = _get_enum(reduction)
        _require_floating(x, "huber_cpu")
        # PyTorch's kernel writes into a tensor like `input`: mixed dtypes compute promoted, store as input's
        return _apply_reduction(_huber(x, y, delta).to(input.dtype), enum)
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    loss = _huber(x, y, delta) * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return _fl.sum(loss)
    if reduction == "mean":
        return loss.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


# ---- probabilistic losses -----------------------------------------------------------------------

@_autocast.fp32
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Kullback-Leibler divergence of `target` from log-probabilities `input` ('batchmean' divides the
    sum by the batch size)."""
    if size_average is not None or reduce is not None:
        enum = _get_enum(_legacy_get_string(size_average, reduce))
    else:
        if reduction == "mean":
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                          "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                          "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                          stacklevel=2)
        enum = _get_enum("sum") if reduction == "batchmean" else _get_enum(reduction)
    if log_target:
        loss = _fl.exp(target) * (target - input)
    else:
        loss = _fl.xlogy(target, target) - target * input
    reduced = _apply_reduction(loss, enum)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.size()[0]
    return reduced


@_autocast.fp32
def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """Negative log likelihood of `target` under a Poisson distribution with rate `input` (or
    exp(input) when log_input), plus Stirling's term for targets > 1 when `full`."""
    reduction = _reduction(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    if log_input:
        loss = _fl.exp(input) - target * input
    else:
        loss = input - target * _fl.log(input + eps)
    if full:
        stirling = target * _fl.log(target) - target + 0.5 * _fl.log(2 * math.pi * target)
        loss = loss + _fl.where(target <= 1, _fl.zeros_like(stirling), stirling)
    return _apply_reduction(loss, _get_enum(reduction))


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """Negative log likelihood of `target` under Gaussians with mean `input` and variance `var`
    (var may have one dim fewer or one broadcast dim: the homoscedastic cases)."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * _fl.ones_like(input)
    elif _fl.any(var < 0):
        raise ValueError("var has negative entry/entries")
    if var.size() != input.size():
        if input.size()[:-1] == var.size():
            var = _fl.unsqueeze(var, -1)
        elif input.dim() == var.dim() and sum(y for x, y in zip(input.size(), var.size()) if x != y) == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction != "none" and reduction != "mean" and reduction != "sum":
        raise ValueError(reduction + " is not valid")
    # var is clamped for stability without blocking its gradient, as PyTorch's no_grad clamp_
    var = var + (_fl.clamp(var.detach(), min=eps) - var.detach())
    loss = 0.5 * (_fl.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


# ---- margin and embedding losses ----------------------------------------------------------------

def _enum_of(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        return _get_enum(_legacy_get_string(size_average, reduce))
    return _get_enum(reduction)


@_autocast.fp32
def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """max(0, -target * (input1 - input2) + margin)."""
    enum = _enum_of(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} ")
    return _apply_reduction((-target * (input1 - input2) + margin).clamp_min(0), enum)


@_autocast.fp32
def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """input where target == 1, max(0, margin - input) where target == -1."""
    enum = _enum_of(size_average, reduce, reduction)
    zeros = _fl.zeros_like(input)
    margin_clamp = (margin - input).clamp_min(0)
    output = _fl.where(target != 1, margin_clamp, zeros) + _fl.where(target != -1, input, zeros)
    return _apply_reduction(output, enum)


@_autocast.fp32
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-target * input))."""
    enum = _enum_of(size_average, reduce, reduction)
    return _apply_reduction(_fl.log1p(_fl.exp(-input * target)), enum)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """One-vs-all logistic loss averaged over the classes (last dim)."""
    reduction = _reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(dim=class_dim) / input.size(class_dim)
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(reduction + " is not valid")


@_autocast.fp32
def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """1 - cos(input1, input2) where target == 1, max(0, cos - margin) where target == -1."""
    enum = _enum_of(size_average, reduce, reduction)
    td = target.dim()
    if td not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if td == 1 and not (input1.dim() == 2 and input2.dim() == 2):
        raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    if td == 0 and not (input1.dim() == 1 and input2.dim() == 1):
        raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    eps = 1e-12
    prod_sum = (input1 * input2).sum(td)
    mag1 = (input1 * input1).sum(td) + eps
    mag2 = (input2 * input2).sum(td) + eps
    cos = prod_sum / _fl.sqrt(mag1 * mag2)
    zeros = _fl.zeros_like(cos)
    output = _fl.where(target == 1, 1 - cos, zeros) + _fl.where(target == -1, (cos - margin).clamp_min(0), zeros)
    return _apply_reduction(output, enum)


def _check_margin_input(input):
    nd = input.dim()
    if not (nd == 0 or (nd <= 2 and input.shape[-1] != 0)):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")


def _check_long_target(target):
    if target.dtype != _fl.int64:
        raise RuntimeError(f"expected scalar type Long but found {_c10name(target.dtype)}")


@_autocast.fp32
def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Multi-class hinge loss: sum over i != y of max(0, margin - x[y] + x[i])^p, times weight[y], over C."""
    enum = _enum_of(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    _check_margin_input(input)
    nframe = input.shape[0] if input.dim() == 2 else 1
    C = input.shape[-1] if input.dim() else 1
    if input.dim() == 2:
        if target.dim() != 1 or target.numel() != nframe:
            raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                               f"samples (batch size). Expected target size [{nframe}], but got {list(target.shape)}. "
                               f"Input has shape {list(input.shape)}.")
    elif target.dim() > 1 or target.numel() != nframe:
        raise RuntimeError(f"inconsistent target size, expected {nframe} but got {list(target.shape)}")
    if weight is not None and weight.numel() != C:
        raise RuntimeError(f"inconsistent weight size, expected {C} but got {list(weight.shape)}")
    _check_long_target(target)
    y = target.reshape(nframe, 1)
    if y.numel() and (int(y.min()) < 0 or int(y.max()) >= C):
        raise RuntimeError("target out of range")
    x = input.reshape(nframe, C)
    z = (margin - _fl.gather(x, 1, y) + x).clamp_min(0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight[y]
    z = _fl.where(_fl.arange(C).reshape(1, C) == y, _fl.zeros_like(z), z)
    loss = z.sum(1) / C
    if enum == _NONE:
        return loss.reshape(target.shape) if input.dim() <= 1 else loss
    return _apply_reduction(loss, enum)


@_autocast.fp32
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Multi-label hinge loss: for each target class j (the targets before the first -1) and each
    non-target class i, max(0, 1 - (x[j] - x[i])), summed and divided by C."""
    enum = _enum_of(size_average, reduce, reduction)
    _check_margin_input(input)
    if target.shape != input.shape:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}")
    _check_long_target(target)
    nframe = input.shape[0] if input.dim() == 2 else 1
    C = input.shape[-1] if input.dim() else 1
    t = target.reshape(nframe, C)
    if t.numel() and (int(t.min()) < -1 or int(t.max()) >= C):
        raise RuntimeError("argument #2 'target' is out of range")
    x = input.reshape(nframe, C)
    valid = _fl.cumprod((t != -1).long(), 1)            # the targets before the first -1
    idx = t.clamp_min(0)
    is_target = _fl.zeros_like(t).scatter_add(1, idx, valid) > 0
    margins = (1 - _fl.gather(x, 1, idx).unsqueeze(2) + x.unsqueeze(1)).clamp_min(0)   # [n, j, i]
    mask = (valid > 0).unsqueeze(2) & (~is_target).unsqueeze(1)
    loss = _fl.where(mask, margins, _fl.zeros_like(margins)).sum((1, 2)) / C
    if enum == _NONE:
        return loss.reshape(input.shape[:-1]) if input.dim() else loss.reshape(())
    return _apply_reduction(loss, enum)


@_autocast.fp32
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """max(0, margin + d(anchor, positive) - d(anchor, negative)) with the p-norm distance."""
    enum = _enum_of(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    dist_pos = pairwise_distance(anchor, positive, p, eps)
    dist_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = _fl.minimum(dist_neg, pairwise_distance(positive, negative, p, eps))
    return _apply_reduction((margin + dist_pos - dist_neg).clamp_min(0), enum)


def _check_triplet_dims(anchor, positive, negative):
    a, p, n = anchor.dim(), positive.dim(), negative.dim()
    if not (a == p and p == n):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a}D, positive {p}D, and negative {n}D inputs")


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False,
                                      reduction="mean"):
    """triplet_margin_loss with a custom distance function (pairwise_distance by default)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    if distance_function is None:
        distance_function = pairwise_distance
    dist_pos = distance_function(anchor, positive)
    dist_neg = distance_function(anchor, negative)
    if swap:
        dist_neg = _fl.minimum(dist_neg, distance_function(positive, negative))
    loss = _fl.clamp_min(margin + dist_pos - dist_neg, 0)
    if reduction == "sum":
        return _fl.sum(loss)
    if reduction == "mean":
        return _fl.mean(loss)
    return loss
