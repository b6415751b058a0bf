"""Indexing ops (index_select, gather, scatter*, index_*, masked_*, take, nonzero, where); their kernels,
bindings and Tensor methods (including __getitem__/__setitem__) are in C++ (csrc/ops/index*.cpp). Written here:
index_reduce, put, isin, nonzero_static, the *_scatter functions (a view of a copy replaced) and unravel_index."""
import builtins as _b
import math

from . import _C
from . import _dtype as _D
from ._out import inplace_method, write_inplace, write_out

__all__ = ["index_select", "gather", "scatter", "scatter_add", "scatter_reduce", "index_add", "index_copy", "index_fill",
           "index_put", "index_put_", "masked_fill", "masked_select", "masked_scatter", "take", "take_along_dim", "nonzero",
           "argwhere", "where"]
globals().update({name: getattr(_C, name) for name in __all__})


_INDEX_REDUCE = ("prod", "mean", "amax", "amin")


def index_reduce(input, dim, index, source, reduce, *, include_self=True, out=None):
    """Reduces (prod, mean, amax or amin) the slices of source into input at the positions index gives along dim."""
    if reduce not in _INDEX_REDUCE:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    if index.dim() > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector")
    dim = dim + input.dim() if dim < 0 and input.dim() else dim
    if index.numel() != (source.shape[dim] if source.dim() else 1):
        raise RuntimeError("index_reduce_(): Number of indices should be equal to source.size(dim)")
    # index_reduce is scatter_reduce with the index broadcast over source's other dims
    shape = [1] * source.dim()
    if source.dim():
        shape[dim] = -1
    full_index = index.reshape(shape).expand(source.shape)
    result = _C.scatter_reduce(input, dim, full_index, source, reduce, include_self=include_self)
    return write_out(out, result, "index_reduce")


def put(input, index, source, accumulate=False):
    """A copy of input with the elements at the flat indices `index` set to (or, accumulating, increased by) source."""
    return _put(input.clone(), index, source, accumulate)


def _put(self, index, source, accumulate=False):
    """Tensor.put_: writes source into self at the flat (row-major) indices `index`."""
    if index.dtype != _D.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {_D.c10_name(index.dtype)}")
    if self.dtype != source.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{self.dtype} and source.dtype = {source.dtype}")
    if index.numel() != source.numel():
        raise RuntimeError(f"put_(): Expected source and index to have the same number of elements, but got "
                           f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    n = self.numel()
    flat_index = index.reshape(-1)
    if flat_index.numel() and (_b.bool((flat_index >= n).any()) or _b.bool((flat_index < -n).any())):
        bad = flat_index[(flat_index >= n) | (flat_index < -n)][0].item()
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} elements.")
    flat_index = _C.where(flat_index < 0, flat_index + n, flat_index)
    if self.is_contiguous():
        self.view(-1).index_put_((flat_index,), source.reshape(-1), accumulate)
        return self
    flat = self.reshape(-1).clone()
    flat.index_put_((flat_index,), source.reshape(-1), accumulate)
    return write_inplace(self, flat.view(self.shape), "put_")


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """True where an element of `elements` occurs in `test_elements` (either may be a number)."""
    from ._creation import tensor
    if not isinstance(elements, _C.Tensor) and not isinstance(test_elements, _C.Tensor):
        raise TypeError("isin() received an invalid combination of arguments: at least one of elements and "
                        "test_elements must be a Tensor")
    if not isinstance(elements, _C.Tensor):
        elements = tensor(elements, dtype=test_elements.dtype)
    if not isinstance(test_elements, _C.Tensor):
        test_elements = tensor(test_elements, dtype=elements.dtype)
    common = _C.result_type(elements, test_elements)
    x, pool = elements.to(common), test_elements.reshape(-1).to(common)
    if pool.numel() == 0:
        found = _C.ne(x, x) & _C.eq(x, x)  # all False, in x's shape
    else:
        # binary search in the sorted pool: O((n + m) log m) rather than comparing every pair
        pool = pool.sort().values
        pos = _C._searchsorted(pool, x.contiguous(), False, False, None).clamp(max=pool.numel() - 1)
        found = pool[pos.reshape(-1)].reshape(x.shape) == x
    return ~found if invert else found


__all__ += ["index_reduce", "put", "isin"]
_C.Tensor.index_reduce = lambda self, dim, index, source, reduce, *, include_self=True: index_reduce(
    self, dim, index, source, reduce, include_self=include_self)
_C.Tensor.index_reduce_ = inplace_method(index_reduce, "index_reduce_")
_C.Tensor.put = put
_C.Tensor.put_ = _put


def _fill_diagonal_(self, fill_value, wrap=False):
    """Tensor.fill_diagonal_: fills the main diagonal (all indices equal) in place; for a tall 2-D tensor with wrap,
    the diagonal restarts N + 1 rows down, as numpy.fill_diagonal."""
    if self.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    shape = tuple(self.shape)
    if self.dim() > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    # flat (row-major) position of element (i, i, ..., i) is i * step
    step, size = 0, 1
    for s in reversed(shape):
        step += size
        size *= s
    n = min(shape)
    end = self.numel() if wrap and self.dim() == 2 else n * step - (step - 1) if n else 0
    from ._creation import arange, full
    index = arange(0, end, step) if end > 0 else arange(0)
    return self.put_(index, full(tuple(index.shape), fill_value, dtype=self.dtype))


def nonzero_static(input, *, size, fill_value=-1):
    """nonzero with a fixed number of rows: truncated to `size`, or padded with fill_value."""
    if size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, but got size: {size}")
    found = _C.nonzero(input)
    if found.shape[0] >= size:
        return found[:size]
    from ._creation import full
    return _C.cat([found, full((size - found.shape[0], found.shape[1]), fill_value, dtype=found.dtype)], 0)


__all__ += ["nonzero_static"]
_C.Tensor.fill_diagonal_ = _fill_diagonal_
_C.Tensor.nonzero_static = lambda self, *, size, fill_value=-1: nonzero_static(self, size=size, fill_value=fill_value)


# ---- the *_scatter functions: a copy of input with one view of it replaced -----------------------------------

def _scatter_into(input, src, view_of, op):
    out = input.clone()
    target = view_of(out)
    if tuple(target.shape) != tuple(src.shape):
        raise RuntimeError(f"{op}: expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(target.shape)}")
    target.copy_(src)
    return out


def select_scatter(input, src, dim, index):
    """A copy of input with input.select(dim, index) replaced by src."""
    return _scatter_into(input, src, lambda t: t.select(dim, index), "select_scatter")


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """A copy of input with the slice start:end:step of dim replaced by src."""
    big = 2 ** 62  # Python slicing clamps missing bounds to the dim
    return _scatter_into(input, src, lambda t: _C._slice(t, dim, 0 if start is None else start,
                                                         big if end is None else end, step), "slice_scatter")


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """A copy of input with input.as_strided(size, stride, storage_offset) replaced by src."""
    return _scatter_into(input, src, lambda t: t.as_strided(size, stride, storage_offset), "as_strided_scatter")


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """A copy of input with its diagonal (offset, dim1, dim2) replaced by src."""
    return _scatter_into(input, src, lambda t: t.diagonal(offset, dim1, dim2), "diagonal_scatter")


def unravel_index(indices, shape):
    """Converts flat indices into a tuple of coordinate tensors for an array of the given shape."""
    from ._creation import tensor
    if not isinstance(indices, _C.Tensor):
        indices = tensor(indices)
    if indices.dtype.is_floating_point or indices.dtype == _D.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    # (torch's checks; a tensor is refused before anything iterates it)
    if isinstance(shape, _C.Tensor) or not isinstance(shape, (int, tuple, list)):
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {type(shape)}")
    shape = [shape] if isinstance(shape, int) else list(shape)
    for s in shape:
        if not isinstance(s, int):
            raise TypeError(f"expected 'shape' sequence to only contain ints, but got {type(s)}")
    if any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got " + str(tuple(shape)))
    # torch holds the sizes and their suffix products as int64 tensors (ValueError past int64)
    if any(s >= 1 << 63 for s in shape) or math.prod(shape[1:]) >= 1 << 63:
        raise ValueError("Overflow when unpacking long long")
    index = indices.to(_D.int64)
    # as torch, by floor division and remainder: negative and out-of-range indices wrap around
    coords = []
    for s in reversed(shape):
        coords.append(_C.remainder(index, s))
        index = _C.div(index, s, rounding_mode="floor")
    return tuple(reversed(coords))


__all__ += ["select_scatter", "slice_scatter", "as_strided_scatter", "diagonal_scatter", "unravel_index"]
for _name in ["select_scatter", "slice_scatter", "as_strided_scatter", "diagonal_scatter"]:
    setattr(_C.Tensor, _name, globals()[_name])
del _name
