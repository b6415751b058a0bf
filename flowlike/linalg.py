"""flowlike.linalg (`torch.linalg`) on the LAPACK primitives of csrc/ops/linalg.h (`_C._linalg_*`).

The primitives take matrices with equal batch dims; broadcasting, the vector right-hand sides and the
left=False forms are done here with views, so autograd sees them. pinv, matrix_rank, matrix_power and the
norms are composites written once here.
"""
import builtins
import math

from . import _C
from . import _dtype as D
from ._reduce import _dims, _return_type, return_types
from ._creation import eye as _eye_factory, ones_like as _ones_like
from ._tensor import Tensor
from .autograd.function import Function
from ._linalg_products import cross as _cross
from ._views import broadcast_shapes
from ._linalg_products import matmul, multi_dot, vecdot  # noqa: F401  (products live with the other products)

__all__ = ["LinAlgError", "inv", "inv_ex", "solve", "solve_ex", "solve_triangular", "det", "slogdet", "cholesky",
           "cholesky_ex", "qr", "eig", "eigvals", "eigh", "eigvalsh", "svd", "svdvals", "lstsq", "pinv", "matrix_rank",
           "matrix_power", "cross", "vector_norm", "matrix_norm", "norm", "vander", "diagonal", "lu_factor",
           "lu_factor_ex", "lu", "lu_solve", "tensorinv", "tensorsolve", "cond", "matrix_exp", "matmul", "multi_dot", "vecdot"]

LinAlgError = _C._LinAlgError
LinAlgError.__module__ = "flowlike.linalg"
LinAlgError.__qualname__ = LinAlgError.__name__ = "LinAlgError"

for _name, _fields in [("linalg_inv_ex", ("inverse", "info")), ("linalg_solve_ex", ("result", "info")),
                       ("linalg_slogdet", ("sign", "logabsdet")), ("slogdet", ("sign", "logabsdet")),
                       ("linalg_cholesky_ex", ("L", "info")), ("linalg_qr", ("Q", "R")), ("qr", ("Q", "R")),
                       ("linalg_eigh", ("eigenvalues", "eigenvectors")),
                       ("linalg_eig", ("eigenvalues", "eigenvectors")), ("linalg_svd", ("U", "S", "Vh")),
                       ("svd", ("U", "S", "V")), ("triangular_solve", ("solution", "cloned_coefficient")),
                       ("linalg_lstsq", ("solution", "residuals", "rank", "singular_values")),
                       ("linalg_lu_factor", ("LU", "pivots")), ("linalg_lu_factor_ex", ("LU", "pivots", "info")),
                       ("linalg_lu", ("P", "L", "U")), ("lu_unpack", ("P", "L", "U"))]:
    setattr(return_types, _name, _return_type(_name, _fields))


def _needs_grad(*ts):
    return _C.is_grad_enabled() and builtins.any(t.requires_grad for t in ts)


def _matmul(a, b):
    return _C._matmul(a, b)


def _check_matrix(op, A):
    if A.dim() < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")


def _check_square(op, A):
    _check_matrix(op, A)
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{op}: A must be batches of square matrices, but they are {A.shape[-2]} by {A.shape[-1]} "
                           "matrices")


def _check_float(op, A):
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. Got {D.c10_name(A.dtype)}")


def _broadcast_batch(A, B):
    """A (..., m, n) and B (..., p, q) expanded to their common batch shape."""
    batch = tuple(broadcast_shapes(A.shape[:-2], B.shape[:-2]))
    return A.expand(batch + tuple(A.shape[-2:])), B.expand(batch + tuple(B.shape[-2:]))


def _eps(dtype):
    return D.finfo(dtype).eps


_LAPACK_TYPES = (D.float32, D.float64, D.complex64, D.complex128)


# ---- inverse and solvers ------------------------------------------------------------------------

def inv_ex(A, *, check_errors=False):
    """(inverse, info) of square matrices; info > 0 marks a singular matrix (no error unless check_errors)."""
    return return_types.linalg_inv_ex(*_C._linalg_inv_ex(A, check_errors=check_errors))


def inv(A):
    """The inverse of square matrices (batched); LinAlgError for a singular one."""
    return _C._linalg_inv_ex(A, check_errors=True)[0]


def _solve(A, B, left, check_errors):
    _check_square("linalg.solve", A)
    # B is a batch of vectors when it is 1-D or has A's shape without the last dim (torch's rule).
    vector = B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    if not left:
        A = A.mT
    B = B.unsqueeze(-1) if vector else (B if left else B.mT)
    A, B = _broadcast_batch(A, B)
    X, info = _C._linalg_solve_ex(A, B, check_errors=check_errors)
    X = X.squeeze(-1) if vector else (X if left else X.mT)
    return X, info


def solve_ex(A, B, *, left=True, check_errors=False):
    """(result, info) of A X = B (left) or X A = B; info > 0 marks a singular A."""
    return return_types.linalg_solve_ex(*_solve(A, B, left, check_errors))


def solve(A, B, *, left=True):
    """Solves A X = B (left=True) or X A = B for square A; B may be a (batch of) vector(s). Batch dims broadcast."""
    return _solve(A, B, left, True)[0]


def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """Solves the triangular system A X = B (left) or X A = B; batch dims broadcast."""
    A, B = _broadcast_batch(A, B)
    return _C._linalg_solve_triangular(A, B, upper=upper, left=left, unitriangular=unitriangular)


# ---- determinants ---------------------------------------------------------------------------------

def det(A):
    """Determinant of square matrices (batched), through an LU factorization."""
    return _C._linalg_det(A)


def slogdet(A):
    """(sign, logabsdet): the sign and the log of the absolute value of the determinant."""
    return return_types.linalg_slogdet(*_C._linalg_slogdet(A))


# ---- factorizations -------------------------------------------------------------------------------

def cholesky_ex(A, *, upper=False, check_errors=False):
    """(L, info) of the Cholesky factorization; info > 0 marks a matrix that is not positive-definite."""
    return return_types.linalg_cholesky_ex(*_C._linalg_cholesky_ex(A, upper=upper, check_errors=check_errors))


def cholesky(A, *, upper=False):
    """L with A = L L^T (or U with A = U^T U when upper); LinAlgError when A is not positive-definite."""
    return _C._linalg_cholesky_ex(A, upper=upper, check_errors=True)[0]


def qr(A, mode="reduced"):
    """(Q, R) with A = Q R; mode 'reduced' (k = min(m, n) columns of Q), 'complete' or 'r' (Q empty)."""
    return return_types.linalg_qr(*_C._linalg_qr(A, mode))


def eig(A):
    """(eigenvalues, eigenvectors) of square matrices, complex also for real A; eigenvectors of norm 1."""
    return return_types.linalg_eig(*_C._linalg_eig(A, True))


def eigvals(A):
    """Eigenvalues of square matrices (complex, in LAPACK's order)."""
    return _C._linalg_eig(A, _needs_grad(A))[0]


def eigh(A, UPLO="L"):
    """(eigenvalues ascending, eigenvectors) of symmetric matrices, reading the UPLO triangle."""
    return return_types.linalg_eigh(*_C._linalg_eigh(A, UPLO, True))


def eigvalsh(A, UPLO="L"):
    """Eigenvalues (ascending) of symmetric matrices."""
    return _C._linalg_eigh(A, UPLO, _needs_grad(A))[0]


def svd(A, full_matrices=True, *, driver=None):
    """(U, S, Vh) with A = U diag(S) Vh, singular values descending."""
    return return_types.linalg_svd(*_C._linalg_svd(A, full_matrices, True))


def svdvals(A, *, driver=None):
    """Singular values (descending)."""
    return _C._linalg_svd(A, False, _needs_grad(A))[1]


def lstsq(A, B, rcond=None, *, driver=None):
    """Least-squares solution of A X = B: (solution, residuals, rank, singular_values), driver 'gelsy' by default.

    residuals are filled when m > n and every matrix has full rank (not with gelsy); rank with gelsy, gelsd and
    gelss; singular_values with gelsd and gelss. With autograd the solution is pinv(A) @ B (as in torch's derivative)
    and the residuals |A X - B|^2.
    """
    if driver is None:
        driver = "gelsy"
    if not 0 <= A.dim() - B.dim() <= 1:
        raise RuntimeError("torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and "
                           "(input.dim() - other.dim()) <= 1")
    vector = B.dim() == A.dim() - 1
    Bm = B.unsqueeze(-1) if vector else B
    if A.dim() >= 2 and Bm.dim() >= 2:
        A2, Bm = _broadcast_batch(A, Bm)
    else:
        A2 = A
    sol, res, rank, sv = _C._linalg_lstsq(A2, Bm, -1.0 if rcond is None else builtins.float(rcond), driver=driver)
    if _needs_grad(A, B):  # differentiable composites with the same values
        sol = _matmul(pinv(A2), Bm)
        if res.numel():
            res = (_matmul(A2, sol) - Bm).abs().pow(2).sum(-2)
        else:  # (torch's residuals are a differentiable output even when empty)
            res = sol.abs().flatten()[:0].reshape(res.shape)
    if vector:
        sol = sol.squeeze(-1)
    return return_types.linalg_lstsq(sol, res, rank, sv)


# ---- LU ----------------------------------------------------------------------------------------------

def lu_factor_ex(A, *, pivot=True, check_errors=False):
    """(LU, pivots, info): A = P L U packed as LAPACK's getrf does (pivots 1-based int32)."""
    return return_types.linalg_lu_factor_ex(*_C._linalg_lu_factor_ex(A, pivot=pivot, check_errors=check_errors))


def lu_factor(A, *, pivot=True):
    """(LU, pivots) of A = P L U; an error when some U[i, i] is exactly 0."""
    LU, pivots, _ = _C._linalg_lu_factor_ex(A, pivot=pivot, check_errors=True)
    return return_types.linalg_lu_factor(LU, pivots)


def _lu_unpack(LU, pivots, unpack_data=True, unpack_pivots=True):
    m, n = LU.shape[-2], LU.shape[-1]
    k = builtins.min(m, n)
    empty = LU.new_empty(0)
    P = _C._lu_pivots_to_permutation(pivots, m, LU.dtype) if unpack_pivots else empty
    if not unpack_data:
        return P, empty, empty
    L = LU[..., :, :k].tril(-1) + _eye_factory(m, k, dtype=LU.dtype)
    return P, L, LU[..., :k, :].triu()


def lu(A, *, pivot=True):
    """(P, L, U) with A = P L U, L unit lower triangular (m x k), U upper triangular (k x n)."""
    LU, pivots, _ = _C._linalg_lu_factor_ex(A, pivot=pivot)
    return return_types.linalg_lu(*_lu_unpack(LU, pivots))


def lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    """Solves A X = B (A^H X = B when adjoint; X A = B when not left) from lu_factor's (LU, pivots)."""
    _check_square("linalg.lu_solve", LU)
    if not left:
        return lu_solve(LU, pivots, B.mH, adjoint=not adjoint).mH
    P = _C._lu_pivots_to_permutation(pivots, LU.shape[-1], LU.dtype)
    if not adjoint:  # X = U^-1 L^-1 P^T B
        LU_, Y = _broadcast_batch(LU, _matmul(P.mT, B))
        Y = _C._linalg_solve_triangular(LU_, Y, upper=False, unitriangular=True)
        return _C._linalg_solve_triangular(LU_, Y, upper=True)
    LU_, Y = _broadcast_batch(LU, B)  # X = P L^-H U^-H B
    Y = _C._linalg_solve_triangular(LU_.mH, Y, upper=False)
    return _matmul(P, _C._linalg_solve_triangular(LU_.mH, Y, upper=True, unitriangular=True))


# ---- composites -----------------------------------------------------------------------------------

def _tolerances(atol, rtol, rcond_default):
    """torch's (atol, rtol) rule: rtol defaults to eps * max(m, n) unless only atol > 0 is given."""
    if rtol is None:
        rtol = rcond_default if (atol is None or (not isinstance(atol, Tensor) and atol <= 0)) else 0.0
    if atol is None:
        atol = 0.0
    return atol, rtol


def _tol(S, big, atol, rtol):
    """max(atol, rtol * big) per matrix, atol and rtol numbers or tensors over the batch dims."""
    col = lambda t: t.unsqueeze(-1) if isinstance(t, Tensor) else t  # noqa: E731
    tol = big * col(rtol)
    return _C.maximum(tol, col(atol).to(S.dtype)) if isinstance(atol, Tensor) else tol.clamp(min=atol)


def _eye(n, dtype):
    return _eye_factory(n, dtype=dtype)


def pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None):
    """Moore-Penrose pseudo-inverse through the SVD (eigh when hermitian); singular values at or below
    max(atol, rtol * largest) count as 0."""
    _check_matrix("linalg.pinv", A)
    if A.dtype not in _LAPACK_TYPES:
        raise RuntimeError(f"linalg.pinv({D.c10_name(A.dtype)}{{{list(A.shape)}}}): expected a tensor with 2 or more "
                           "dimensions of float, double, cfloat or cdouble types")
    if rcond is not None:
        rtol = rcond
    atol, rtol = _tolerances(atol, rtol, _eps(A.dtype) * builtins.max(A.shape[-2], A.shape[-1]))
    return _Pinv.apply(A, hermitian, atol, rtol)


class _Pinv(Function):
    """The pseudo-inverse's value from the SVD (eigh when hermitian), with torch's gradient (its pinv_backward, over
    the whole of A also when hermitian): the decompositions' own gradients would break down on the repeated or
    zero singular values of singular inputs, to which the pseudo-inverse is indifferent."""

    @staticmethod
    def forward(ctx, A, hermitian, atol, rtol):
        if hermitian:
            L, V = _C._linalg_eigh(A, "L", True)
            absL = L.abs()
            big = absL.amax(-1, keepdim=True) if L.shape[-1] else absL
            keep = absL > _tol(absL, big, atol, rtol)
            Linv = _C.where(keep, 1 / _C.where(keep, L, 1.0), 0.0)
            result = _matmul(V * Linv.unsqueeze(-2), V.mH)
        else:
            U, S, Vh = _C._linalg_svd(A, False, True)
            big = S[..., :1] if S.shape[-1] else S
            keep = S > _tol(S, big, atol, rtol)
            Sinv = _C.where(keep, 1 / _C.where(keep, S, 1.0), 0.0)
            result = _matmul(Vh.mH * Sinv.unsqueeze(-2), U.mH)
        ctx.save_for_backward(A, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        A, pinv_a = ctx.saved_tensors
        pinv_h, grad_h = pinv_a.mH, grad.mH
        if A.shape[-2] <= A.shape[-1]:  # (torch's grouping: the products of the smaller size)
            K = grad_h @ pinv_a
            K_pinv_h = K @ pinv_h
            g = -(pinv_a @ K).mH + K_pinv_h - (A @ pinv_a) @ K_pinv_h + (pinv_h @ pinv_a) @ (grad_h - K @ A)
        else:
            K = pinv_a @ grad_h
            pinv_h_K = pinv_h @ K
            g = -(K @ pinv_a).mH + (grad_h - A @ K) @ pinv_a @ pinv_h + pinv_h_K - pinv_h_K @ pinv_a @ A
        return g, None, None, None


def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None):
    """The number of singular values (|eigenvalues| when hermitian) above max(atol, rtol * largest)."""
    _check_matrix("linalg.matrix_rank", A)
    if A.dtype not in _LAPACK_TYPES:
        raise RuntimeError("This function doesn't handle types other than float and double")
    if tol is not None:
        atol, rtol = tol, 0.0
    atol, rtol = _tolerances(atol, rtol, _eps(A.dtype) * builtins.max(A.shape[-2], A.shape[-1]))
    S = _C._linalg_eigh(A, "L", False)[0].abs() if hermitian else _C._linalg_svd(A, False, False)[1]
    big = S.amax(-1, keepdim=True) if S.shape[-1] else S
    keep = S > _tol(S, big, atol, rtol)
    return keep.sum(-1)


def matrix_power(A, n):
    """A @ A @ ... (n times) by repeated squaring; n < 0 uses inv(A), n == 0 the identity."""
    _check_square("linalg.matrix_power", A)
    n = builtins.int(n)
    if n == 0:  # (a copy of A overwritten, as torch: the result stays in A's graph, with a zero gradient)
        return A.clone().copy_(_eye(A.shape[-1], A.dtype).expand(A.shape))
    if n < 0:
        A, n = inv(A), -n
    result, base = None, A
    while n:
        if n & 1:
            result = base if result is None else _matmul(result, base)
        n >>= 1
        if n:
            base = _matmul(base, base)
    return result.clone() if result is A else result


def cross(input, other, *, dim=-1):
    """The 3-D cross product along dim (default the last dim); batch dims broadcast."""
    if input.dim() == other.dim() and input.dim() > 0:
        n1, n2 = input.shape[dim], other.shape[dim]
        if n1 != 3 or n2 != 3:
            raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {n1} and {n2}")
    return _cross(input, other, dim)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """sum(|x|^ord)^(1/ord) over dim (all dims when None); ord may be inf, -inf, 0 or fractional."""
    if isinstance(ord, str):
        raise TypeError(f"linalg.vector_norm(): argument 'ord' must be Number, not str")
    return _C._norm(x, builtins.float(ord), _dims(dim), keepdim, dtype)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """Matrix norms over the two dims `dim`: 'fro', 'nuc', inf, -inf, 1, -1, 2, -2."""
    _check_matrix("linalg.matrix_norm", A)
    _check_float("linalg.matrix_norm", A)
    if dtype is not None:
        A = A.to(dtype)
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {tuple(dim)}")
    d0, d1 = (builtins.int(d) % A.dim() if -A.dim() <= d < A.dim() else _raise_dim(d, A.dim()) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    if ord == "fro":
        return _C._norm(A, 2.0, [d0, d1], keepdim, None)
    if ord in ("nuc", 2, -2):
        S = svdvals(A.movedim((d0, d1), (-2, -1)))
        r = S.sum(-1) if ord == "nuc" else (S.amax(-1) if ord == 2 else S.amin(-1))
        if keepdim:
            for d in sorted((d0, d1)):
                r = r.unsqueeze(d)
        return r
    if ord in (1, -1, math.inf, -math.inf):
        if ord in (math.inf, -math.inf):
            d0, d1 = d1, d0
        s = A.abs().sum(d0, keepdim=True)
        r = s.amax(d1, keepdim=True) if ord > 0 else s.amin(d1, keepdim=True)
        return r if keepdim else r.squeeze((d0, d1))
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def _raise_dim(d, ndim):
    raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {d})")


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """torch.linalg.norm: a vector norm, or a matrix norm when ord is given and dim has 2 entries (or A is 2-D
    and dim is None); with ord and dim both None, the 2-norm of A flattened."""
    if isinstance(dim, builtins.int):
        dim = (dim,)
    if dim is not None:
        if len(dim) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dim)}")
    elif ord is not None and A.dim() not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got {A.dim()}D.")
    if isinstance(ord, str) or (ord is not None and ((dim is not None and len(dim) == 2) or (dim is None and A.dim() == 2))):
        return matrix_norm(A, "fro" if ord is None else ord, (0, 1) if dim is None else dim, keepdim, dtype=dtype)
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def vander(x, *, N=None):
    """(..., n) -> (..., n, N) with columns x^0, x^1, ..., x^(N-1) (a 0-dim x is one point, as torch)."""
    if x.dim() == 0:
        x = x.reshape(1)
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    ones = _ones_like(x.unsqueeze(-1))
    powers = x.unsqueeze(-1).expand(tuple(x.shape) + (n - 1,)).cumprod(-1, dtype=x.dtype)
    return _C.cat([ones.to(powers.dtype), powers], -1)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonal of the matrices over dims (dim1, dim2) (a view)."""
    return A.diagonal(offset, dim1, dim2)


def tensorinv(A, ind=2):
    """The inverse of A seen as a linear map from its first `ind` dims to the rest."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    out_shape, in_shape = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    rows, cols = math.prod(out_shape), math.prod(in_shape)
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == prod(self.shape[:ind]), "
                           f"but got {cols} != {rows}")
    return inv(A.reshape(rows, cols)).reshape(in_shape + out_shape)


def tensorsolve(A, B, dims=None):
    """X with tensordot(A, X, X.dim()) = B; `dims` of A are moved to the end first."""
    if dims is not None:  # (movedim checks the dims: range and repeats, with torch's errors)
        A = A.movedim(list(dims), list(range(A.dim() - len(dims), A.dim())))
    x_shape = tuple(A.shape[B.dim():])
    return solve(A.reshape(B.numel(), -1), B.reshape(-1)).reshape(x_shape)


def cond(A, p=None):
    """Condition number: sigma_max / sigma_min for p None, 2 (-2: the inverse ratio); else
    norm(A, p) * norm(inv(A), p), inf for a singular matrix."""
    _check_matrix("linalg.cond", A)
    if p in (None, 2, -2):
        S = svdvals(A)
        return S[..., 0] / S[..., -1] if p != -2 else S[..., -1] / S[..., 0]
    _check_square("linalg.cond", A)
    Ainv, info = _C._linalg_inv_ex(A)
    r = matrix_norm(A, p) * matrix_norm(Ainv, p)
    return _C.where(info > 0, math.inf, r)


# Bader, Blanes and Casas, "Computing the Matrix Exponential with an Optimized Taylor Polynomial Approximation"
# (Mathematics 2019, 7, 1174), as torch's linalg.matrix_exp uses it, so that results agree to rounding: each matrix
# takes the lowest Taylor degree (1, 2, 4, 8, 12, 18) whose norm bound holds for its 1-norm; past the last bound, the
# degree-18 polynomial of A / 2^s squared s times. The bounds are per precision (float32 / float64). As torch's CPU
# kernel, a batch of more than one matrix takes the degree-18 path for every matrix.
_MEXP_THETAS = {4: (1.192092800768788e-07, 5.978858893805233e-04, 5.116619363445086e-02, 5.800524627688768e-01,
                    1.461661507209034e+00, 3.010066362817634e+00),
                8: (2.220446049250313e-16, 2.580956802971767e-08, 3.397168839976962e-04, 4.991228871115323e-02,
                    2.996158913811580e-01, 1.090863719290036e+00)}
_SQRT_177 = 0.1330413469565007072504e+2
_T8_X3 = 2.0 / 3.0
_T8 = ((1.0 + _SQRT_177) / 88.0 * _T8_X3, (1.0 + _SQRT_177) / 352.0 * _T8_X3,  # x1, x2
       (-271.0 + 29.0 * _SQRT_177) / (315.0 * _T8_X3), (-11.0 + 11.0 * _SQRT_177) / (1260.0 * _T8_X3),  # x4, x5
       (-99.0 + 11.0 * _SQRT_177) / (5040.0 * _T8_X3), (89.0 - _SQRT_177) / (5040.0 * _T8_X3),  # x6, x7
       (857.0 - 58.0 * _SQRT_177) / 630.0)  # y2
# rows: the linear combinations of (I, A, A^2, A^3[, A^6]) the degree-12 and degree-18 schemes multiply
_T12_B = ((9.0198e-16, 0.46932117595418237389, -0.20099424927047284052, -0.04623946134063071740),
          (5.31597895759871264183, 1.19926790417132231573, 0.01179296240992997031, 0.01108844528519167989),
          (0.18188869982170434744, 0.05502798439925399070, 0.09351590770535414968, 0.00610700528898058230),
          (-2.0861320e-13, -0.13181061013830184015, -0.02027855540589259079, -0.00675951846863086359))
_T18_B = ((0.0, -1.00365581030144618291e-01, -8.02924648241156932449e-03, -8.92138498045729985177e-04, 0.0),
          (0.0, 3.97849749499645077844e-01, 1.36783778460411720168e+00, 4.98289622525382669416e-01,
           -6.37898194594723280150e-04),
          (-1.09676396052962061844e+01, 1.68015813878906206114e+00, 5.71779846478865511061e-02,
           -6.98210122488052056106e-03, 3.34975017086070470649e-05),
          (-9.04316832390810593223e-02, -6.76404519071381882256e-02, 6.75961301770459654925e-02,
           2.95552570429315521194e-02, -1.39180257516060693404e-05),
          (0.0, 0.0, -9.23364619367118555360e-02, -1.69364939002081722752e-02, -1.40086798182036094347e-05))


def _combine(mats, coeffs):
    """sum_j coeffs[j] * mats[j], summed in order (torch's linear combination kernel)."""
    out = mats[0] * coeffs[0]
    for m, c in zip(mats[1:], coeffs[1:]):
        out = out + m * c
    return out


def _mexp_taylor(A, degree):
    """The degree-`degree` Taylor polynomial of exp at a batch of matrices A, by the paper's product schemes."""
    eye = _eye(A.shape[-1], A.dtype).expand(A.shape)
    if degree == 1:
        return eye + A
    A2 = _matmul(A, A)
    if degree == 2:
        return eye + A + A2 / 2.0
    if degree == 4:
        return eye + A + _matmul(A2, _combine((eye, A, A2), (1 / 2.0, 1 / 6.0, 1 / 24.0)))
    if degree == 8:
        x1, x2, x4, x5, x6, x7, y2 = _T8
        A4 = _matmul(A2, _combine((A, A2), (x1, x2)))
        A8 = _matmul(_combine((A2, A4), (_T8_X3, 1.0)), _combine((eye, A, A2, A4), (x4, x5, x6, x7)))
        return _combine((eye, A, A2, A8), (1.0, 1.0, y2, 1.0))
    powers = (eye, A, A2, _matmul(A, A2))
    if degree == 12:
        B = [_combine(powers, row) for row in _T12_B]
        B2 = B[2] + _matmul(B[3], B[3])
        return B[0] + _matmul(B[1] + B2, B2)
    powers += (_matmul(powers[3], powers[3]),)
    B = [_combine(powers, row) for row in _T18_B]
    B3 = B[3] + _matmul(B[0], B[4])
    return B[1] + _matmul(B[2] + B3, B3)


def matrix_exp(A):
    """exp(A) by torch's method (Bader, Blanes and Casas): per matrix, the lowest-degree Taylor polynomial its
    1-norm allows (a single matrix), or scaling and squaring around the degree-18 one."""
    _check_square("linalg.matrix_exp", A)
    _check_float("linalg.matrix_exp", A)
    n = A.shape[-1]
    if A.numel() == 0:
        return A.clone()
    if n == 1:
        return A.exp()
    batch = A.reshape(-1, n, n)
    norms = batch.detach().abs().sum(-2).amax(-1).tolist()  # 1-norms, in A's real precision
    thetas = _MEXP_THETAS[4 if A.dtype in (D.float32, D.complex64) else 8]
    groups = {}  # degree -> indices of the matrices it serves (0: inf/nan entries, whose result is nan)
    for i, v in enumerate(norms):
        lower = zip((1, 2, 4, 8, 12), thetas) if len(norms) == 1 else ()
        degree = 0 if not math.isfinite(v) else next((d for d, t in lower if v <= t), 18)
        groups.setdefault(degree, []).append(i)
    out = [None] * len(norms)
    for degree, idx in groups.items():
        sub = batch if len(idx) == len(norms) else _C.cat([batch[i:i + 1] for i in idx])
        if degree == 0:
            res = sub * math.nan
        elif degree < 18:
            res = _mexp_taylor(sub, degree)
        else:  # s = max(0, ceil(log2(norm / theta))): A / 2^s within the degree-18 bound, then squared s times
            steps = [builtins.max(0, math.ceil(math.log2(norms[i] / thetas[5]))) for i in idx]
            scale = _C.cat([_ones_like(sub[k:k + 1, :1, :1]) * 2.0 ** -s for k, s in enumerate(steps)])
            res = _mexp_taylor(sub * scale, 18)
            squared = []
            for k, count in enumerate(steps):
                m = res[k:k + 1]
                for _ in range(count):
                    m = _matmul(m, m)
                squared.append(m)
            res = _C.cat(squared)
        for k, i in enumerate(idx):
            out[i] = res[k:k + 1]
    return (_C.cat(out) if len(out) > 1 else out[0]).reshape(A.shape)
