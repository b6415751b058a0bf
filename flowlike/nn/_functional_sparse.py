"""Sparse functions of torch.nn.functional: embedding, embedding_bag and one_hot.

embedding is a C++ op whose backward scatter-adds gradient rows (csrc/ops/embedding.cpp);
embedding_bag is written once here over it, and one_hot over scatter_.
"""
import builtins

import numpy as np

from .. import _C
from .. import _dtype as D
from .._tensor import int_arg

__all__ = ["embedding", "embedding_bag", "one_hot"]


def _fl():
    import flowlike
    return flowlike


def _padding_index(padding_idx, num_weights):
    if padding_idx is None:
        return -1
    if padding_idx > 0:
        assert padding_idx < num_weights, "Padding_idx must be within num_embeddings"
    elif padding_idx < 0:
        assert padding_idx >= -num_weights, "Padding_idx must be within num_embeddings"
        padding_idx = num_weights + padding_idx
    return int_arg(padding_idx, "embedding", "padding_idx")


def _renorm_(weight, indices, max_norm, norm_type):
    # PyTorch's embedding_renorm_: rows looked up whose norm exceeds max_norm are scaled in place
    # to max_norm / (norm + 1e-7); not recorded by autograd.
    fl = _fl()
    with fl.no_grad():
        idx = fl.unique(indices.reshape(-1))
        rows = weight.index_select(0, idx)
        norms = fl.norm(rows, builtins.float(norm_type), dim=1, keepdim=True)
        scale = fl.where(norms > max_norm, max_norm / (norms + 1e-7), fl.ones((), dtype=norms.dtype))
        weight.index_copy_(0, idx, rows * scale)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    """Rows of weight at the indices in input: (*input.shape, embedding_dim)."""
    if sparse:
        raise NotImplementedError("embedding: sparse=True (sparse gradients) is not supported by flowlike")
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    padding_idx = _padding_index(padding_idx, weight.shape[0])
    if max_norm is not None:
        input = input.contiguous()
        _renorm_(weight, input, max_norm, norm_type)
    return _C._embedding(weight, input, padding_idx, builtins.bool(scale_grad_by_freq))


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Sums, means or maxes of bags of embeddings, without materializing the per-index rows twice.

    Bags are gathered as one padded (bags, longest bag, dim) block through embedding, then reduced
    with masks, so the gradient is embedding's row scatter-add.
    """
    fl = _fl()
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it must "
                         f"have the same shape as the input ({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed "
                             f"length sequences. However, found offsets of type {type(offsets).__name__}")
        offsets_np = np.arange(0, input.numel(), builtins.max(input.shape[1], 1), dtype=np.int64)
        if input.shape[1] == 0:
            offsets_np = np.zeros(input.shape[0], dtype=np.int64)
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        offsets_np = offsets.numpy().astype(np.int64)
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if sparse:
        raise NotImplementedError("embedding_bag: sparse=True (sparse gradients) is not supported by flowlike")
    if max_norm is not None:
        _renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. per_sample_weights is only supported "
                                  f"for mode='sum' (got mode='{mode}'). Please open a feature request on GitHub.")
    if input.dtype not in (D.int64, D.int32):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, "
                           f"Int; but got {input.dtype} instead (while checking arguments for embedding_bag)")
    padding_idx = _padding_index(padding_idx, weight.shape[0])
    n = input.shape[0]
    if offsets_np.size and offsets_np[0] != 0:
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {offsets_np[0]}")
    if offsets_np.size and offsets_np[-1] > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n}, but got {offsets_np[-1]}")
    if include_last_offset:
        starts, ends = offsets_np[:-1], offsets_np[1:]
    else:
        starts, ends = offsets_np, np.append(offsets_np[1:], n)
    lengths = np.maximum(ends - starts, 0)
    nbags, width = len(starts), builtins.int(lengths.max()) if len(starts) else 0
    dim = weight.shape[1]
    if width == 0:  # every bag empty: zeros that still take part in autograd, as PyTorch's
        return fl.zeros(nbags, dim, dtype=weight.dtype) + weight.reshape(-1)[:1].sum() * 0
    # positions (bags, width) into input; slots past a bag's end point at 0 and are masked out
    pos = starts[:, None] + np.arange(width)[None, :]
    valid = np.arange(width)[None, :] < lengths[:, None]
    pos = np.where(valid, pos, 0)
    flat = input.numpy().astype(np.int64)
    if n:
        valid &= flat[pos] != padding_idx
    pos_t = fl.from_numpy(pos)
    # rows are looked up once per index (so scale_grad_by_freq counts real occurrences), then laid out
    flat_rows = _C._embedding(weight, input, padding_idx, builtins.bool(scale_grad_by_freq))
    rows = flat_rows.index_select(0, pos_t.reshape(-1)).reshape(nbags, width, dim)
    mask = fl.from_numpy(valid)
    counts = fl.from_numpy(valid.sum(1).astype(np.int64)).unsqueeze(1)
    if mode == "max":
        neg = fl.full((), -float("inf"), dtype=weight.dtype)
        best = fl.where(mask.unsqueeze(-1), rows, neg).amax(1)
        return fl.where(counts > 0, best, fl.zeros((), dtype=weight.dtype))
    scale = mask.to(weight.dtype)
    if per_sample_weights is not None:
        scale = scale * per_sample_weights.take(pos_t)
    total = (rows * scale.unsqueeze(-1)).sum(1)
    if mode == "sum":
        return total
    return total / counts.clamp_min(1).to(weight.dtype)


def one_hot(tensor, num_classes=-1):
    """int64 one-hot encoding with a new last dim of num_classes (inferred as max + 1 when -1)."""
    fl = _fl()
    if tensor.dtype != D.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() == 0:
        if num_classes == -1:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return fl.empty(*tensor.shape, num_classes, dtype=D.int64)
    if builtins.int(tensor.min()) < 0:
        raise RuntimeError("Class values must be non-negative.")
    top = builtins.int(tensor.max())
    if num_classes == -1:
        num_classes = top + 1
    elif top >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = fl.zeros(*tensor.shape, num_classes, dtype=D.int64)
    return out.scatter_(-1, tensor.unsqueeze(-1), 1)
