"""Matrices built from tensors and sizes: diagonal matrices (diag, diag_embed, diagflat, block_diag), the
indices of a triangle (tril_indices, triu_indices, computed by numpy) and Vandermonde matrices."""
import builtins

import numpy as np

from . import _C
from . import _dtype as D
from ._out import write_out
from ._tensor import Tensor, int_arg
from ._views import _wrap

__all__ = ["tril_indices", "triu_indices", "diag", "diag_embed", "diagflat", "block_diag", "vander"]


def _tri_indices(np_fn, row, col, offset, dtype):
    from ._creation import tensor
    if row < 0 or col < 0:
        raise RuntimeError(f"row must be non-negative, got{row}" if row < 0 else f"col must be non-negative, got{col}")
    try:
        r, c = np_fn(row, offset, col)
        return tensor(np.stack([r, c]).reshape(2, -1), dtype=dtype or D.int64)
    except MemoryError as e:  # as torch's allocator: a RuntimeError
        raise RuntimeError(f"{np_fn.__name__}: not enough memory for the indices of a {row} x {col} matrix "
                           f"({e})") from None


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (2, N) indices of the lower triangle of a row x col matrix, in row-major order."""
    return _tri_indices(np.tril_indices, row, col, offset, dtype)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (2, N) indices of the upper triangle of a row x col matrix, in row-major order."""
    return _tri_indices(np.triu_indices, row, col, offset, dtype)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """A tensor whose (dim1, dim2) diagonals at `offset` are filled from the last dim of input."""
    from ._creation import zeros
    nd = input.dim() + 1
    d1, d2 = _wrap(dim1, nd), _wrap(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = input.shape[-1] + builtins.abs(offset)
    shape = list(input.shape[:-1])
    for d in sorted((d1, d2)):
        shape.insert(d, n)
    out = zeros(shape, dtype=input.dtype)
    out.diagonal(offset, d1, d2).copy_(input)
    return out


def diag(input, diagonal=0, *, out=None):
    """A 2-D matrix with the 1-D input on a diagonal, or the diagonal of a 2-D input (a copy)."""
    diagonal = int_arg(diagonal, "diag", "diagonal")
    if input.dim() == 1:
        r = diag_embed(input, diagonal, 0, 1)
    elif input.dim() == 2:
        r = input.diagonal(diagonal).clone()
    else:
        raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " + f"{input.dim()}D")
    return write_out(out, r, "diag", exact_dtype=True)


def diagflat(input, offset=0):
    """A 2-D matrix with the flattened input on the diagonal at offset."""
    return diag_embed(input.reshape(-1), offset, 0, 1)


def block_diag(*tensors):
    """A block diagonal matrix of the given 0-D, 1-D or 2-D tensors."""
    from ._creation import zeros
    if not tensors:
        return zeros(1, 0)
    mats = []
    for i, x in enumerate(tensors):
        if x.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{x.dim()} dimensions")
        mats.append(x.reshape(1, 1) if x.dim() == 0 else x.reshape(1, -1) if x.dim() == 1 else x)
    dtype = mats[0].dtype
    for m in mats[1:]:
        dtype = D.promote_types(dtype, m.dtype)
    out = zeros(builtins.sum(m.shape[0] for m in mats), builtins.sum(m.shape[1] for m in mats), dtype=dtype)
    r = c = 0
    for m in mats:
        out.narrow(0, r, m.shape[0]).narrow(1, c, m.shape[1]).copy_(m)
        r, c = r + m.shape[0], c + m.shape[1]
    return out


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of a 1-D tensor: columns x**(N-1), ..., x**0 (or increasing powers)."""
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    x = x.to(D.promote_types(x.dtype, D.int64))
    if n == 0:
        return x.new_empty((x.shape[0], 0))
    powers = _C.cat([x.new_ones((x.shape[0], 1)), x.unsqueeze(1).expand(x.shape[0], n - 1)], 1).cumprod(1)
    return powers if increasing else powers.flip(1)


for _name in ["diag", "diag_embed", "diagflat"]:
    setattr(Tensor, _name, globals()[_name])
del _name
