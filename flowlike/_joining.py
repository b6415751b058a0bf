"""Tensors made by joining, tiling and repeating others: stack and its h/v/d/column forms, atleast_*, tile,
repeat_interleave, meshgrid, cartesian_prod and combinations (all on cat, views and expand)."""
import builtins
import warnings

from . import _dtype as D
from ._tensor import Tensor, int_arg
from ._views import _ints, _wrap, cat

__all__ = ["stack", "hstack", "vstack", "row_stack", "dstack", "column_stack", "atleast_1d", "atleast_2d", "atleast_3d",
           "tile", "repeat_interleave", "meshgrid", "cartesian_prod", "combinations"]


def _tensor_seq(tensors, op):
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{op}(): argument 'tensors' must be tuple of Tensors, not {type(tensors).__name__}")
    return list(tensors)


def stack(tensors, dim=0, *, out=None):
    """Joins equally shaped tensors along a new dim."""
    ts = _tensor_seq(tensors, "stack")
    if not ts:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, x in enumerate(ts[1:], 1):
        if x.shape != ts[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(ts[0].shape)} at entry 0 "
                               f"and {list(x.shape)} at entry {i}")
    d = _wrap(dim, ts[0].dim() + 1)
    return cat([x.unsqueeze(d) for x in ts], d, out=out)


def atleast_1d(*tensors):
    """Views with at least one dim (a tuple when several tensors are given)."""
    return _atleast(tensors, lambda x: x.reshape(1) if x.dim() == 0 else x)


def atleast_2d(*tensors):
    """Views with at least two dims: a 1-D tensor of size n becomes (1, n)."""
    return _atleast(tensors, lambda x: x.reshape(1, 1) if x.dim() == 0 else x.unsqueeze(0) if x.dim() == 1 else x)


def atleast_3d(*tensors):
    """Views with at least three dims: (n) becomes (1, n, 1), (m, n) becomes (m, n, 1)."""
    def f(x):
        if x.dim() == 0:
            return x.reshape(1, 1, 1)
        if x.dim() == 1:
            return x.unsqueeze(0).unsqueeze(-1)
        return x.unsqueeze(-1) if x.dim() == 2 else x
    return _atleast(tensors, f)


def _atleast(tensors, f):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(f(x) for x in tensors[0])
    return f(tensors[0]) if len(tensors) == 1 else tuple(f(x) for x in tensors)


def hstack(tensors, *, out=None):
    """Concatenates along dim 1 (dim 0 for 1-D tensors)."""
    ts = atleast_1d(_tensor_seq(tensors, "hstack"))
    if not ts:
        raise RuntimeError("hstack expects a non-empty TensorList")
    return cat(ts, 0 if ts[0].dim() == 1 else 1, out=out)


def vstack(tensors, *, out=None):
    """Concatenates along dim 0 after making every tensor at least 2-D."""
    ts = atleast_2d(_tensor_seq(tensors, "vstack"))
    if not ts:
        raise RuntimeError("vstack expects a non-empty TensorList")
    return cat(ts, 0, out=out)


row_stack = vstack


def dstack(tensors, *, out=None):
    """Concatenates along dim 2 after making every tensor at least 3-D."""
    ts = atleast_3d(_tensor_seq(tensors, "dstack"))
    if not ts:
        raise RuntimeError("dstack expects a non-empty TensorList")
    return cat(ts, 2, out=out)


def column_stack(tensors, *, out=None):
    """Stacks 0-D/1-D tensors as columns and concatenates 2-D+ tensors along dim 1."""
    ts = _tensor_seq(tensors, "column_stack")
    if not ts:
        raise RuntimeError("column_stack expects a non-empty TensorList")
    return cat([x.reshape(x.numel(), 1) if x.dim() <= 1 else x for x in ts], 1, out=out)


def tile(input, dims):
    """Repeats input along each dim (dims shorter than input.dim() is padded with ones in front)."""
    dims = _ints(dims)
    dims = [1] * (input.dim() - len(dims)) + dims
    return input.repeat(dims)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeats each element `repeats` times (an int or a tensor of counts) along dim (flattened without dim)."""
    from ._creation import arange
    if repeats is None:  # repeat_interleave(counts): indices repeated by counts
        counts = input
        if counts.dim() != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        return repeat_interleave(arange(counts.shape[0]), counts, 0)
    if dim is None:
        input, dim = input.reshape(-1), 0
    d = _wrap(dim, input.dim())
    if input.dim() == 0:
        input = input.reshape(1)
    n = input.shape[d]
    if isinstance(repeats, Tensor) and repeats.dim() > 0 and repeats.numel() != 1:
        if repeats.dim() != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        if repeats.dtype.is_floating_point:
            raise RuntimeError("repeats has to be Long or Int tensor")
        counts = repeats.tolist()
        if len(counts) != n:
            raise RuntimeError("repeats must have the same size as input along dim, but got repeats.size(0) = "
                               f"{len(counts)} and input.size({d}) = {n}")
        if builtins.any(c < 0 for c in counts):
            raise RuntimeError("repeats can not be negative")
        shape = list(input.shape)
        pieces = []
        for i, c in enumerate(counts):
            row = input.narrow(d, i, 1)
            pieces.append(row.expand(shape[:d] + [c] + shape[d + 1:]))
        return cat(pieces, d) if pieces else input.narrow(d, 0, 0).clone()
    r = int_arg(repeats, "repeat_interleave", "repeats")
    if r < 0:
        raise RuntimeError("repeats can not be negative")
    shape = list(input.shape)
    x = input.unsqueeze(d + 1).expand(shape[:d + 1] + [r] + shape[d + 1:])
    return x.reshape(shape[:d] + [n * r] + shape[d + 1:]).contiguous()


def meshgrid(*tensors, indexing=None):
    """Coordinate grids (views expanded from the 1-D inputs); indexing 'ij' (default) or 'xy'."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    for x in tensors:
        if x.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {x.dim()}D tensor")
    ts = [x.reshape(-1) for x in tensors]
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = [x.shape[0] for x in ts]
    out = []
    for i, x in enumerate(ts):
        view_shape = [1] * len(ts)
        view_shape[i] = -1
        out.append(x.view(view_shape).expand(shape))
    if swap:
        out[0], out[1] = out[1], out[0]
    return tuple(out)


def cartesian_prod(*tensors):
    """Cartesian product of 1-D tensors, as rows of a 2-D tensor (a 1-D tensor for one input)."""
    for x in tensors:
        if x.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(x.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    return stack([g.reshape(-1) for g in meshgrid(*tensors, indexing="ij")], 1)


def combinations(input, r=2, with_replacement=False):
    """The r-length combinations of the elements of a 1-D tensor, as the rows of a (count, r) tensor."""
    import itertools
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    r = int_arg(r, "combinations", "r")
    if not isinstance(with_replacement, builtins.bool):
        raise TypeError(f"combinations(): argument 'with_replacement' must be bool, not {type(with_replacement).__name__}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input.new_empty(0)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    from ._creation import tensor
    try:
        index = tensor(list(pick(range(input.shape[0]), r)), dtype=D.int64).reshape(-1, r)
    except MemoryError:  # (as torch's allocator: a RuntimeError)
        raise RuntimeError("combinations: not enough memory for the combinations asked for") from None
    return input[index.reshape(-1)].reshape(-1, r)


Tensor.repeat_interleave = repeat_interleave
Tensor.tile = lambda self, *dims: tile(self, dims[0] if len(dims) == 1 else dims)
