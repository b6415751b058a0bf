"""The torch.* spellings of linear algebra (det, slogdet, logdet, inverse, cholesky, qr, svd, pinverse,
matrix_power, cholesky_solve, cholesky_inverse, triangular_solve) and their Tensor methods, on flowlike.linalg."""
import math

from . import _C
from . import linalg as _L
from ._creation import zeros as _zeros
from ._reduce import return_types
from ._tensor import Tensor

__all__ = ["det", "slogdet", "logdet", "inverse", "cholesky", "cholesky_solve", "cholesky_inverse", "qr", "svd",
           "pinverse", "matrix_power", "triangular_solve"]

det = _L.det
inverse = _L.inv
matrix_power = _L.matrix_power


def slogdet(input, *, out=None):
    """(sign, logabsdet) of the determinant."""
    return return_types.slogdet(*_C._linalg_slogdet(input))


def logdet(input):
    """log(det(input)): nan where the determinant is negative, -inf where it is 0."""
    sign, logabs = _C._linalg_slogdet(input)
    return _C.where(sign == -1, math.nan, logabs)


def cholesky(input, upper=False, *, out=None):
    """torch.cholesky (the deprecated spelling of linalg.cholesky)."""
    return _L.cholesky(input, upper=upper)


def cholesky_solve(input, input2, upper=False, *, out=None):
    """Solves A X = input given A's Cholesky factor input2 (L, or U when upper); batch dims broadcast."""
    L, B = _L._broadcast_batch(input2, input)
    Lt = L.mT
    first, second = (Lt, L) if upper else (L, Lt)
    return _C._linalg_solve_triangular(second, _C._linalg_solve_triangular(first, B, False, True, False), True, True,
                                       False)


def cholesky_inverse(input, upper=False, *, out=None):
    """The inverse of A from its Cholesky factor input (L, or U when upper)."""
    _L._check_square("cholesky_inverse", input)
    return cholesky_solve(_L._eye(input.shape[-1], input.dtype).expand(input.shape), input, upper)


def qr(input, some=True, *, out=None):
    """torch.qr: (Q, R), reduced when some else complete."""
    return return_types.qr(*_C._linalg_qr(input, "reduced" if some else "complete"))


def svd(input, some=True, compute_uv=True, *, out=None):
    """torch.svd: (U, S, V) with V = Vh^T (not Vh); zero-filled U and V when compute_uv is False."""
    if not compute_uv:
        m, n, batch = input.shape[-2], input.shape[-1], tuple(input.shape[:-2])
        return return_types.svd(_zeros(batch + (m, m), dtype=input.dtype), _L.svdvals(input),
                                _zeros(batch + (n, n), dtype=input.dtype))
    U, S, Vh = _C._linalg_svd(input, not some, True)
    return return_types.svd(U, S, Vh.mT)


def pinverse(input, rcond=1e-15):
    """torch.pinverse: linalg.pinv with rtol=rcond."""
    return _L.pinv(input, rtol=rcond)


def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """torch.triangular_solve: (X solving op(A) X = input, a copy of A), op(A) = A^T when transpose."""
    X = _L.solve_triangular(A.mT if transpose else A, input, upper=upper != transpose, unitriangular=unitriangular)
    return return_types.triangular_solve(X, A.clone())


for _name in __all__:
    setattr(Tensor, _name, globals()[_name])
del _name
