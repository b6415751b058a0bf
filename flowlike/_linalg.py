"""The torch.* spellings of linear algebra (det, slogdet, logdet, inverse, cholesky, qr, svd, pinverse,
matrix_power, matrix_exp, cholesky_solve, cholesky_inverse, triangular_solve, lu, lu_solve, lu_unpack) and their
Tensor methods, on flowlike.linalg."""
import math

from . import _C
from . import linalg as _L
from ._creation import zeros as _zeros
from ._reduce import return_types
from ._tensor import Tensor
from .autograd.function import Function

__all__ = ["det", "slogdet", "logdet", "inverse", "cholesky", "cholesky_solve", "cholesky_inverse", "qr", "svd",
           "pinverse", "matrix_power", "triangular_solve", "lu", "lu_solve", "lu_unpack", "matrix_exp"]

det = _L.det
inverse = _L.inv
matrix_power = _L.matrix_power
matrix_exp = _L.matrix_exp


def lu(A, pivot=True, get_infos=False):
    """torch.lu (deprecated spelling of linalg.lu_factor_ex): (LU, pivots) or (LU, pivots, infos)."""
    LU, pivots, info = _C._linalg_lu_factor_ex(A, pivot=pivot)
    return (LU, pivots, info) if get_infos else (LU, pivots)


def lu_solve(b, LU_data, LU_pivots):
    """torch.lu_solve: linalg.lu_solve(LU_data, LU_pivots, b)."""
    return _L.lu_solve(LU_data, LU_pivots, b)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """(P, L, U) from lu_factor's packed result."""
    return return_types.lu_unpack(*_L._lu_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots))


def slogdet(input):
    """(sign, logabsdet) of the determinant."""
    return return_types.slogdet(*_C._linalg_slogdet(input))


def logdet(input):
    """log(det(input)): nan where a real determinant is negative, -inf where it is 0; log(sign) + logabsdet for
    complex input."""
    sign, logabs = _C._linalg_slogdet(input)
    if input.dtype.is_complex:
        return sign.log() + logabs
    return _C.where(sign == -1, math.nan, logabs)


def cholesky(input, upper=False):
    """torch.cholesky (the deprecated spelling of linalg.cholesky)."""
    return _L.cholesky(input, upper=upper)


class _CholeskySolve(Function):
    """The two triangular solves of cholesky_solve, with torch's gradient for the factor: that of (L L^H)^-1 B over
    the whole of L (torch's cholesky_solve_backward), where the solves' own gradients would keep only the triangle
    they read."""

    @staticmethod
    def forward(ctx, b, factor, upper):
        first, second = (factor.mH, factor) if upper else (factor, factor.mH)
        y = _C._linalg_solve_triangular(first, b, upper=False)
        x = _C._linalg_solve_triangular(second, y, upper=True)
        ctx.save_for_backward(factor, x)
        ctx.upper = upper
        return x

    @staticmethod
    def backward(ctx, g):
        factor, x = ctx.saved_tensors
        grad_b = cholesky_solve(g, factor, ctx.upper)  # (through the Function again: differentiable)
        common = grad_b @ x.mH
        common = common + common.mH
        return grad_b, -(factor @ common) if ctx.upper else -(common @ factor), None


def cholesky_solve(input, input2, upper=False):
    """Solves A X = input given A's Cholesky factor input2 (L, or U when upper); batch dims broadcast."""
    L, B = _L._broadcast_batch(input2, input)
    return _CholeskySolve.apply(B, L, upper)


def cholesky_inverse(input, upper=False):
    """The inverse of A from its Cholesky factor input (L, or U when upper)."""
    _L._check_square("cholesky_inverse", input)
    return cholesky_solve(_L._eye(input.shape[-1], input.dtype).expand(input.shape), input, upper)


def qr(input, some=True):
    """torch.qr: (Q, R), reduced when some else complete."""
    return return_types.qr(*_C._linalg_qr(input, "reduced" if some else "complete"))


def svd(input, some=True, compute_uv=True):
    """torch.svd: (U, S, V) with V = Vh^H (not Vh); zero-filled U and V when compute_uv is False."""
    if not compute_uv:
        m, n, batch = input.shape[-2], input.shape[-1], tuple(input.shape[:-2])
        return return_types.svd(_zeros(batch + (m, m), dtype=input.dtype), _L.svdvals(input),
                                _zeros(batch + (n, n), dtype=input.dtype))
    U, S, Vh = _C._linalg_svd(input, not some, True)
    return return_types.svd(U, S, Vh.mH)


def pinverse(input, rcond=1e-15):
    """torch.pinverse: linalg.pinv with rtol=rcond."""
    return _L.pinv(input, rtol=rcond)


def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False):
    """torch.triangular_solve: (X solving op(A) X = input, a copy of A), op(A) = A^T when transpose."""
    X = _L.solve_triangular(A.mT if transpose else A, input, upper=upper != transpose, unitriangular=unitriangular)
    return return_types.triangular_solve(X, A.clone())


for _name in __all__:
    if _name not in ("lu_unpack", "lu_solve"):
        setattr(Tensor, _name, globals()[_name])
Tensor.lu_solve = lambda self, LU_data, LU_pivots: lu_solve(self, LU_data, LU_pivots)
del _name


def frobenius_norm(input, dim=(-2, -1), keepdim=False):
    """Deprecated torch.frobenius_norm: the 2-norm over dim (linalg.vector_norm(input, 2, dim, keepdim))."""
    return _L.vector_norm(input, 2, dim, keepdim)


def nuclear_norm(input, dim=None, keepdim=False):
    """Deprecated torch.nuclear_norm: the sum of singular values (over the two dims `dim`, else of a 2-D input)."""
    if isinstance(dim, bool):  # the nuclear_norm(input, keepdim) overload
        dim, keepdim = None, dim
    if dim is None:
        if input.dim() != 2:
            raise RuntimeError(f"Expected a tensor with 2 dimensions, but got a tensor with {input.dim()} dimensions "
                               f"instead.")
        dim = (0, 1)
    return _L.matrix_norm(input, "nuc", tuple(dim), keepdim)


__all__ += ["frobenius_norm", "nuclear_norm"]
