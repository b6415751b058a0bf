"""View and shape functions written in terms of the C++ view/shape ops (csrc/ops/views.h), with flips and
rotations, the *_copy forms of views and the conjugation no-ops of real tensors.

Views share storage and the version counter with their input; split/chunk/unbind return tuples of views.
Joining, tiling and repeating tensors is in _joining.py, building matrices (diagonals, triangle indices) in
_matrix.py, the *_scatter functions in _index.py.
"""
import builtins
import math
import os
import warnings

from . import _C
from ._out import write_out
from ._tensor import Tensor, Size, int_arg, int_list_arg

__all__ = ["reshape", "permute", "transpose", "swapaxes", "swapdims", "t", "squeeze", "unsqueeze", "narrow", "select",
           "diagonal", "as_strided", "cat", "concat", "concatenate", "flip", "roll", "tril", "triu", "trace",
           "broadcast_to", "broadcast_tensors", "broadcast_shapes", "flatten", "unflatten", "unbind", "split", "chunk",
           "tensor_split", "hsplit", "vsplit", "dsplit", "movedim", "moveaxis", "fliplr", "flipud", "rot90", "ravel",
           "adjoint"]

reshape, permute, transpose, swapaxes, swapdims = _C.reshape, _C.permute, _C.transpose, _C.swapaxes, _C.swapdims
squeeze, unsqueeze, narrow, select, diagonal, as_strided = (_C.squeeze, _C.unsqueeze, _C.narrow, _C.select, _C.diagonal,
                                                            _C.as_strided)
cat, concat, concatenate, flip, roll, tril, triu, trace = (_C.cat, _C.concat, _C.concatenate, _C.flip, _C.roll, _C.tril,
                                                           _C.triu, _C.trace)


def _wrap(dim, ndim):
    n = builtins.max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


def _check_view_count(count, name):
    """torch builds one tensor per piece (a std::vector of them first): when `count` views cannot fit in this
    machine's memory its allocation fails with RuntimeError (std::bad_alloc). Raised here up front, instead of
    building views for minutes until memory runs out."""
    memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    if count * 512 > memory:  # (a view costs about 400 bytes in flowlike, 650 in torch)
        raise RuntimeError(f"{name}: {count} views do not fit in memory ({memory >> 20} MiB) (std::bad_alloc)")


def _ints(v):
    """An int, a sequence of ints or an integer tensor, as a list of ints."""
    if isinstance(v, Tensor):
        v = v.tolist()
    return [v] if isinstance(v, builtins.int) else [int_arg(a, "split", "split_size_or_sections") for a in v]


# ---- views --------------------------------------------------------------------------------------

def t(input):
    """Transposes a tensor of at most 2 dims (a view; 0-D and 1-D come back as they are)."""
    if input.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.dim()}D")
    return input.transpose(0, 1) if input.dim() == 2 else input.view(input.shape)


def _t_(self):
    t(self)  # the same dim check as t()
    return self.transpose_(0, 1) if self.dim() == 2 else self


def _T(self):
    if self.dim() > 2:
        warnings.warn("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and it "
                      "will throw an error in a future release. Consider `x.mT` to transpose batches of matrices or "
                      "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.",
                      UserWarning, stacklevel=2)
    return self.permute(*range(self.dim() - 1, -1, -1))


def _mT(self, name="tensor.mT"):
    if self.dim() < 2:
        raise RuntimeError(f"{name} is only supported on matrices or batches of matrices. Got {self.dim()}-D tensor.")
    return self.transpose(-2, -1)


def _mH(self):
    return _mT(self, "tensor.mH").conj()  # (conj: a view with the conjugate bit, the tensor itself when real)


def _H(self):
    if self.dim() == 0:
        warnings.warn("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().", UserWarning, stacklevel=2)
        return self.conj()
    if self.dim() != 2:
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.dim()}-D tensor."
                           + (" For batches of matrices, consider using tensor.mH" if self.dim() > 2 else ""))
    return self.transpose(0, 1).conj()


def _view_as(self, other):
    return self.view(other.shape)


def _reshape_as(self, other):
    return self.reshape(other.shape)


def _expand_as(self, other):
    return self.expand(other.shape)


def adjoint(input):
    """The conjugate transpose of the last two dims (a view, with the conjugate bit when complex)."""
    return _mT(input, "tensor.adjoint()").conj()


def ravel(input):
    """The elements as a 1-D tensor: a view when input is contiguous, else a copy."""
    return input.contiguous().view(-1)


def broadcast_to(input, size):
    """A view of input expanded to `size` (-1 keeps a dim)."""
    return input.expand(_ints(size))


def broadcast_shapes(*shapes):
    """The shape that tensors of the given shapes broadcast to."""
    shapes = [(s,) if isinstance(s, builtins.int) else tuple(s) for s in shapes]
    n = builtins.max((len(s) for s in shapes), default=0)
    out, owner = [1] * n, [0] * n  # owner: the arg that set each non-1 size, for the error
    for i, s in enumerate(shapes):
        for j, v in enumerate(s):
            k = n - len(s) + j
            if v < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {v}: {list(s)}")
            if out[k] == 1:
                out[k], owner[k] = v, i
            elif v != 1 and v != out[k]:
                raise RuntimeError("shape mismatch: objects cannot be broadcast to a single shape.  Mismatch is "
                                   f"between arg {owner[k]} and arg {i}.")
    return Size(out)


def broadcast_tensors(*tensors):
    """Views of the tensors expanded to their common broadcast shape."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape = broadcast_shapes(*(x.shape for x in tensors))
    return tuple(x.expand(shape) for x in tensors)


def flatten(input, start_dim=0, end_dim=-1):
    """Merges dims start_dim..end_dim into one (a view when the layout allows, else a copy)."""
    shape = input.shape
    nd = len(shape)
    if nd == 0:
        return input.reshape(1)
    s, e = _wrap(start_dim, nd), _wrap(end_dim, nd)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    return input.reshape(shape[:s] + (-1,) + shape[e + 1:]) if input.numel() else \
        input.reshape(shape[:s] + (math.prod(shape[s:e + 1]),) + shape[e + 1:])


def unflatten(input, dim, sizes):
    """Splits dim into `sizes` (one of which may be -1); a view."""
    nd = input.dim()
    d = _wrap(dim, nd)
    sizes = _ints(sizes)
    if len(sizes) == 0:
        raise RuntimeError("unflatten: sizes must be non-empty")
    n = input.shape[d]
    known = math.prod(v for v in sizes if v != -1)
    if sizes.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if (known == 0 or n % known) if -1 in sizes else known != n:
        raise RuntimeError(f"unflatten: Provided sizes {sizes} don't multiply up to the size of dim {dim} ({n}) in "
                           "the input tensor")
    if -1 in sizes:
        sizes[sizes.index(-1)] = n // known
    shape = list(input.shape)
    return input.view(shape[:d] + sizes + shape[d + 1:])


def unbind(input, dim=0):
    """The slices of input along dim, as a tuple of views."""
    d = _wrap(dim, input.dim())
    if input.dim() == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    _check_view_count(input.shape[d], "unbind")
    return tuple(input.select(d, i) for i in range(input.shape[d]))


def split(tensor, split_size_or_sections, dim=0):
    """Splits into views of split_size along dim (the last may be smaller), or into the given sizes."""
    if tensor.dim() == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = _wrap(dim, tensor.dim())
    n = tensor.shape[d]
    if isinstance(split_size_or_sections, Tensor) and split_size_or_sections.dim() > 0:
        raise TypeError("split_with_sizes(): argument 'split_sizes' (position 2) must be tuple of ints, not Tensor")
    if isinstance(split_size_or_sections, (builtins.int, Tensor)):
        size = int_arg(split_size_or_sections, "split", "split_size")
        if size < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={size}")
        if size == 0 and n != 0:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
        count = builtins.max((n + size - 1) // size, 1) if size else 1
        _check_view_count(count, "split")
        return tuple(tensor.narrow(d, i * size, builtins.min(size, n - i * size)) for i in range(count))
    sizes = _ints(split_size_or_sections)
    if builtins.sum(sizes) != n or builtins.any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
                           f"dimension {d}), but got split_sizes={sizes}")
    out, pos = [], 0
    for s in sizes:
        out.append(tensor.narrow(d, pos, s))
        pos += s
    return tuple(out)


def chunk(input, chunks, dim=0):
    """Splits into at most `chunks` views of equal size along dim (the last may be smaller)."""
    if input.dim() == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = _wrap(dim, input.dim())
    n = input.shape[d]
    size = (n + chunks - 1) // chunks
    if size == 0 and n == 0:
        _check_view_count(chunks, "chunk")
        return split(input, [0] * chunks, d)
    return split(input, size, d)


def tensor_split(input, indices_or_sections, dim=0):
    """Splits into `sections` nearly equal views, or at the given indices, along dim."""
    if input.dim() == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    d = _wrap(dim, input.dim())
    n = input.shape[d]
    ios = indices_or_sections
    if isinstance(ios, Tensor):
        if ios.dtype.is_floating_point or ios.dim() > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have integer dtype and be 0-D or 1-D")
        ios = ios.item() if ios.dim() == 0 else ios.tolist()
    if isinstance(ios, builtins.int):
        if ios <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {ios}")
        q, r = divmod(n, ios)
        _check_view_count(ios, "tensor_split")
        sizes = [q + 1] * r + [q] * (ios - r)
        return split(input, sizes, d)
    bounds = [0] + int_list_arg(ios, "tensor_split", "indices") + [n]
    out = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        a = builtins.min(builtins.max(a + n if a < 0 else a, 0), n)
        b = builtins.min(builtins.max(b + n if b < 0 else b, 0), n)
        out.append(input.narrow(d, a, builtins.max(b - a, 0)))
    return tuple(out)


def _split_dim(name, min_dim, dim):
    def f(input, indices_or_sections):
        if input.dim() < min_dim:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dim} dimension, but got a tensor "
                               f"with {input.dim()} dimensions!")
        d = 0 if name == "hsplit" and input.dim() == 1 else dim
        if not isinstance(indices_or_sections, (builtins.int, builtins.list, builtins.tuple, Tensor)) or \
                isinstance(indices_or_sections, builtins.bool):
            raise TypeError(f"{name}() received an invalid combination of arguments: indices_or_sections must be an "
                            f"int, a sequence of ints or a tensor, not {type(indices_or_sections).__name__}")
        if isinstance(indices_or_sections, builtins.int) and not -(1 << 63) <= indices_or_sections < (1 << 63):
            raise ValueError("Overflow when unpacking long long")  # (torch's argument parser)
        if isinstance(indices_or_sections, builtins.int) and (
                indices_or_sections == 0 or input.shape[d] % indices_or_sections):
            raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but the size of the dimension "
                               f"{input.shape[d]} is not divisible by the split_size {indices_or_sections}!")
        return tensor_split(input, indices_or_sections, d)
    f.__name__ = name
    f.__doc__ = f"tensor_split along dim {dim} (numpy's {name})."
    return f


hsplit = _split_dim("hsplit", 1, 1)
vsplit = _split_dim("vsplit", 2, 0)
dsplit = _split_dim("dsplit", 3, 2)


def movedim(input, source, destination):
    """A view of input with dims moved from source to destination positions."""
    nd = input.dim()
    if isinstance(source, builtins.int) != isinstance(destination, builtins.int):
        raise TypeError("movedim(): argument 'source' and 'destination' must both be ints or both be tuples of ints")
    src = [source] if isinstance(source, builtins.int) else list(source)
    dst = [destination] if isinstance(destination, builtins.int) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) should contain the same "
                           f"number of dims as destination ({dst} dims)")
    src = [_wrap(s, nd) for s in src]
    dst = [_wrap(s, nd) for s in dst]
    if len(set(src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({src})")
    if len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({dst})")
    if nd == 0:
        return input.view(())
    order = [-1] * nd
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(i for i in range(nd) if i not in src)
    order = [o if o >= 0 else next(rest) for o in order]
    return input.permute(order)


moveaxis = movedim


# ---- flips and rotations ------------------------------------------------------------------------


def fliplr(input):
    """Reverses dim 1."""
    if input.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, [1])


def flipud(input):
    """Reverses dim 0."""
    if input.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, [0])


def rot90(input, k=1, dims=(0, 1)):
    """Rotates by 90 degrees k times in the plane of dims (from the first towards the second)."""
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.dim() < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.dim()}")
    a, b = _wrap(dims[0], input.dim()), _wrap(dims[1], input.dim())
    if a == b:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {a} and dim1 = {b}")
    k %= 4
    if k == 1:
        return flip(input, [b]).transpose(a, b)
    if k == 2:
        return flip(input, [a, b])
    if k == 3:
        return flip(input, [a]).transpose(a, b)
    return input.clone()


# ---- Tensor methods and properties --------------------------------------------------------------

for _name in ["t", "flatten", "unflatten", "unbind", "chunk", "tensor_split", "hsplit", "vsplit", "dsplit",
              "movedim", "moveaxis", "fliplr", "flipud", "rot90", "broadcast_to", "ravel", "adjoint"]:
    setattr(Tensor, _name, globals()[_name])
Tensor.view_as = _view_as
Tensor.reshape_as = _reshape_as
Tensor.expand_as = _expand_as
Tensor.split = lambda self, split_size, dim=0: split(self, split_size, dim)
Tensor.split_with_sizes = lambda self, split_sizes, dim=0: split(self, list(split_sizes), dim)
Tensor.t_ = _t_
Tensor.T = property(_T)
Tensor.H = property(_H)
Tensor.mT = property(_mT)
Tensor.mH = property(_mH)
del _name


# ---- split and view variants: the unsafe_* aliases and the *_copy forms (a view, materialized) ---------------------

def split_with_sizes(input, split_sizes, dim=0):
    """Splits input along dim into pieces of the given sizes (which must sum to the dim's size)."""
    return split(input, [int_arg(s, "split_with_sizes", "split_sizes") for s in split_sizes], dim)


unsafe_split = split
unsafe_chunk = chunk
unsafe_split_with_sizes = split_with_sizes


def _materialize(view):
    if isinstance(view, (tuple, list)):
        return type(view)(_materialize(v) for v in view)
    result = view.contiguous()
    return result.clone() if result is view else result


def _copy_variant(name, view_fn):
    def fn(input, *args, **kwargs):
        return _materialize(view_fn(input, *args, **kwargs))
    fn.__name__ = fn.__qualname__ = name + "_copy"
    fn.__doc__ = f"torch.{name} as a new tensor (a copy) instead of a view."
    return fn


def _narrow(x, dim, start, length):
    # torch's narrow_copy asserts dim < ndim (a RuntimeError) before narrow's own dim check (an IndexError)
    if x.dim() and isinstance(dim, builtins.int) and dim >= x.dim():
        raise RuntimeError(f"narrow_copy(): Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, but got "
                           f"false (dim {dim}, {x.dim()} dims)")
    return x.narrow(dim, start, length)


def _slice(input, dim=0, start=None, end=None, step=1):
    return _C._slice(input, dim, 0 if start is None else start, 2 ** 62 if end is None else end, step)


_COPY_VARIANTS = {
    "alias": lambda x: x.view_as(x),
    "as_strided": lambda x, size, stride, storage_offset=None: x.as_strided(size, stride, storage_offset),
    "detach": lambda x: x.detach(),
    "diagonal": lambda x, offset=0, dim1=0, dim2=1: x.diagonal(offset, dim1, dim2),
    "expand": lambda x, size, *, implicit=False: x.expand(size),
    "narrow": _narrow,
    "permute": lambda x, dims: x.permute(dims),
    "select": lambda x, dim, index: x.select(dim, index),
    "slice": _slice,
    "split": lambda x, split_size, dim=0: split(x, split_size, dim),
    "split_with_sizes": split_with_sizes,
    "squeeze": lambda x, dim=None: x.squeeze() if dim is None else x.squeeze(dim),
    "t": lambda x: t(x),
    "transpose": lambda x, dim0, dim1: x.transpose(dim0, dim1),
    "unbind": lambda x, dim=0: unbind(x, dim),
    "unfold": lambda x, dimension, size, step: x.unfold(dimension, size, step),
    "unsqueeze": lambda x, dim: x.unsqueeze(dim),
    "view": lambda x, size: x.view(size),
}
globals().update({name + "_copy": _copy_variant(name, fn) for name, fn in _COPY_VARIANTS.items()})
__all__ += ["split_with_sizes", "unsafe_split", "unsafe_chunk", "unsafe_split_with_sizes"] + [
    name + "_copy" for name in _COPY_VARIANTS]


def _sum_to_size(self, *size):
    """Sums self down to `size`, which must be broadcastable to self's shape."""
    size = list(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else list(size)
    if broadcast_shapes(tuple(size), tuple(self.shape)) != tuple(self.shape):
        raise RuntimeError(f"size {{{', '.join(map(str, size))}}} is not expandable to size "
                           f"{{{', '.join(map(str, self.shape))}}}.")
    lead = self.dim() - len(size)
    dims = list(range(lead)) + [lead + i for i, s in enumerate(size) if s == 1 and self.shape[lead + i] != 1]
    result = self.sum(dims, keepdim=True) if dims else self
    return result.reshape(size)


def _dim_order(self, *, ambiguity_check=False):
    """The dims from outermost to innermost in memory: the logical-to-physical permutation torch's elementwise ops
    compute (dims sorted by stride, larger first; stride-0 dims left where they are; ties broken by size)."""
    if not isinstance(ambiguity_check, (bool, list)):
        raise TypeError("ambiguity_check must be a bool or a list of memory formats")
    strides, shape = self.stride(), tuple(self.shape)

    def should_swap(a, b):
        if strides[a] == 0 or strides[b] == 0:
            return 0
        if strides[a] != strides[b]:
            return -1 if strides[a] < strides[b] else 1
        return 1 if shape[a] > shape[b] else 0

    perm = list(reversed(range(self.dim())))  # innermost first, then an insertion sort that tolerates ties
    for i in range(1, self.dim()):
        dim1 = i
        for dim0 in reversed(range(i)):
            comparison = should_swap(perm[dim0], perm[dim1])
            if comparison > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif comparison < 0:
                break
    return tuple(reversed(perm))


def as_strided_(input, size, stride, storage_offset=None):
    """Gives input, in place, the sizes, strides and storage offset (default: its own) over its storage (the
    Tensor method, which also records the view for autograd)."""
    return input.as_strided_(size, stride, storage_offset)


def _resize(self, *sizes):
    """Deprecated Tensor.resize: self reshaped to sizes (with the same number of elements)."""
    sizes = tuple(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else tuple(sizes)
    sizes = tuple(int_arg(s, "resize", "size") for s in sizes)
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    numel = math.prod(sizes)
    if numel != self.numel():
        raise RuntimeError(f"requested resize to {'x'.join(map(str, sizes))} ({numel} elements in total), but the "
                           f"given tensor has a size of {'x'.join(map(str, self.shape))} ({self.numel()} elements). "
                           f"autograd's resize can only change the shape of a given tensor, while preserving the "
                           f"number of elements. ")
    return self.reshape(sizes)


__all__ += ["as_strided_"]
for _name in ["split_with_sizes", "unsafe_split", "unsafe_chunk", "unsafe_split_with_sizes", "narrow_copy"]:
    setattr(Tensor, _name, globals()[_name])
Tensor.sum_to_size = _sum_to_size
Tensor.dim_order = _dim_order
Tensor.resize = _resize
Tensor.resize_as = lambda self, tensor: _resize(self, tuple(tensor.shape))
del _name
