"""flowlike.linalg against numpy.linalg: values, shapes, dtypes, batching, errors and gradients (numerical)."""
import math

import numpy as np
import pytest

import flowlike as torch

rng = np.random.default_rng(0)
DTYPES = [torch.float32, torch.float64]
TOL = {torch.float32: dict(rtol=1e-4, atol=1e-4), torch.float64: dict(rtol=1e-10, atol=1e-10)}


def T(a, dtype=torch.float64, requires_grad=False):
    return torch.tensor(np.asarray(a), dtype=dtype, requires_grad=requires_grad)


def N(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def randn(*shape):
    return rng.standard_normal(shape)


def spd(*shape):
    a = randn(*shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def close(a, b, dtype=torch.float64):
    np.testing.assert_allclose(N(a), b, **TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 3), (4, 2, 5, 5), (0, 3, 3), (1, 1)])
def test_inv_det_slogdet(dtype, shape):
    a = randn(*shape) + 3 * np.eye(shape[-1])
    A = T(a, dtype)
    close(torch.linalg.inv(A), np.linalg.inv(a), dtype)
    assert torch.linalg.inv(A).dtype == dtype and tuple(torch.linalg.inv(A).shape) == shape
    close(torch.linalg.det(A), np.linalg.det(a), dtype)
    s, l = torch.linalg.slogdet(A)
    ns, nl = np.linalg.slogdet(a)
    close(s, ns, dtype)
    close(l, nl, dtype)
    close(torch.inverse(A), np.linalg.inv(a), dtype)
    close(A.det(), np.linalg.det(a), dtype)
    inv, info = torch.linalg.inv_ex(A)
    assert info.dtype == torch.int32 and (N(info) == 0).all()


def test_logdet_signs():
    a = np.diag([-1.0, 2.0, 3.0])
    assert math.isnan(torch.logdet(T(a)).item())
    np.testing.assert_allclose(torch.logdet(T(np.diag([1.0, 2.0, 3.0]))).item(), math.log(6))
    assert torch.logdet(T(np.zeros((2, 2)))).item() == -math.inf
    assert torch.linalg.det(T(np.zeros((3, 3)))).item() == 0


@pytest.mark.parametrize("dtype", DTYPES)
def test_solve(dtype):
    a, b = randn(2, 4, 4) + 4 * np.eye(4), randn(2, 4, 3)
    close(torch.linalg.solve(T(a, dtype), T(b, dtype)), np.linalg.solve(a, b), dtype)
    v = randn(4)
    close(torch.linalg.solve(T(a[0], dtype), T(v, dtype)), np.linalg.solve(a[0], v), dtype)
    # broadcasting of batch dims and left=False
    close(torch.linalg.solve(T(a[0], dtype), T(b, dtype)), np.linalg.solve(a[0], b), dtype)
    c = randn(2, 3, 4)
    close(torch.linalg.solve(T(a, dtype), T(c, dtype), left=False), np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), np.swapaxes(c, -1, -2)), -1, -2), dtype)


def test_singular_errors():
    s = T([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(torch.linalg.LinAlgError, match="singular"):
        torch.linalg.inv(s)
    with pytest.raises(RuntimeError, match=r"\(Batch element 1\)"):
        torch.linalg.inv(torch.stack([torch.eye(2, dtype=torch.float64), s]))
    with pytest.raises(torch.linalg.LinAlgError):
        torch.linalg.solve(s, T([1.0, 1.0]))
    assert torch.linalg.inv_ex(s).info.item() == 2
    with pytest.raises(torch.linalg.LinAlgError, match="positive-definite"):
        torch.linalg.cholesky(-torch.eye(2))
    assert issubclass(torch.linalg.LinAlgError, RuntimeError)
    assert torch.linalg.cholesky_ex(-torch.eye(2)).info.item() == 1


def test_input_errors():
    with pytest.raises(RuntimeError, match="linalg.inv: A must be batches of square matrices, but they are 2 by 3 matrices"):
        torch.linalg.inv(torch.zeros(2, 3))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        torch.linalg.det(torch.zeros(3))
    with pytest.raises(RuntimeError, match="Low precision dtypes not supported. Got Half"):
        torch.linalg.inv(torch.eye(2, dtype=torch.float16))
    with pytest.raises(RuntimeError, match="Expected a floating point"):
        torch.linalg.svd(torch.eye(2, dtype=torch.int64))
    with pytest.raises(RuntimeError, match="same dtype"):
        torch.linalg.solve(torch.eye(3, dtype=torch.float64), torch.ones(3))
    with pytest.raises(RuntimeError, match="unrecognized mode"):
        torch.linalg.qr(torch.eye(3), mode="foo")
    with pytest.raises(RuntimeError, match="UPLO"):
        torch.linalg.eigh(torch.eye(3), UPLO="X")
    with pytest.raises(RuntimeError, match="Order 3 not supported"):
        torch.linalg.matrix_norm(torch.eye(3), ord=3)
    with pytest.raises(IndexError):
        torch.linalg.matrix_norm(torch.eye(3), dim=(0, 5))
    with pytest.raises(RuntimeError, match="driver"):
        torch.linalg.lstsq(torch.eye(3), torch.eye(3), driver="foo")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky(dtype, upper):
    a = spd(3, 4, 4)
    L = torch.linalg.cholesky(T(a, dtype), upper=upper)
    ref = np.linalg.cholesky(a)
    close(L, np.swapaxes(ref, -1, -2) if upper else ref, dtype)
    close(torch.cholesky_inverse(L, upper=upper), np.linalg.inv(a), dtype)
    b = randn(3, 4, 2)
    close(torch.cholesky_solve(T(b, dtype), L, upper=upper), np.linalg.solve(a, b), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
def test_qr(dtype, shape):
    a = randn(*shape)
    for mode in ["reduced", "complete"]:
        Q, R = torch.linalg.qr(T(a, dtype), mode=mode)
        nq, nr = np.linalg.qr(a, mode=mode)
        assert tuple(Q.shape) == nq.shape and tuple(R.shape) == nr.shape
        close(torch.matmul(Q, R) if hasattr(torch, "matmul") else torch._C._matmul(Q, R), a, dtype)
        close(np.abs(N(R)), np.abs(nr), dtype)  # unique up to the signs of R's rows
    Q, R = torch.linalg.qr(T(a, dtype), mode="r")
    assert Q.numel() == 0 and np.allclose(np.abs(N(R)), np.abs(np.linalg.qr(a, mode="r")), **TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
def test_eigh(dtype):
    a = randn(2, 5, 5)
    a = a + np.swapaxes(a, -1, -2)
    L, V = torch.linalg.eigh(T(a, dtype))
    nl = np.linalg.eigvalsh(a)
    close(L, nl, dtype)
    close(torch._C._matmul(V * L.unsqueeze(-2), V.mT), a, dtype)
    close(torch.linalg.eigvalsh(T(a, dtype), UPLO="U"), np.linalg.eigvalsh(a, UPLO="U"), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4), (0, 3)])
def test_svd(dtype, shape):
    a = randn(*shape)
    for full in [True, False]:
        U, S, Vh = torch.linalg.svd(T(a, dtype), full_matrices=full)
        nu, ns, nvh = np.linalg.svd(a, full_matrices=full)
        assert tuple(U.shape) == nu.shape and tuple(Vh.shape) == nvh.shape
        close(S, ns, dtype)
        k = S.shape[-1]
        close(torch._C._matmul(U[..., :k] * S.unsqueeze(-2), Vh[..., :k, :]), a, dtype)
    close(torch.linalg.svdvals(T(a, dtype)), np.linalg.svd(a, compute_uv=False), dtype)
    U, S, V = torch.svd(T(a, dtype))
    close(torch._C._matmul(U * S.unsqueeze(-2), V.mT), a, dtype)


@pytest.mark.parametrize("driver", ["gelsy", "gelsd", "gelss", "gels"])
def test_lstsq(driver):
    a, b = randn(6, 3), randn(6, 2)
    r = torch.linalg.lstsq(T(a), T(b), driver=driver)
    sol, res, rank, sv = np.linalg.lstsq(a, b, rcond=None)
    close(r.solution, sol)
    if driver in ("gelsd", "gelss", "gels"):
        close(r.residuals, res)
    else:
        assert r.residuals.numel() == 0
    if driver != "gels":
        assert r.rank.item() == rank
    if driver in ("gelsd", "gelss"):
        close(r.singular_values, sv)
    v = randn(6)
    close(torch.linalg.lstsq(T(a), T(v), driver=driver).solution, np.linalg.lstsq(a, v, rcond=None)[0])


def test_pinv_rank_power():
    a = randn(2, 5, 3)
    close(torch.linalg.pinv(T(a)), np.linalg.pinv(a))
    h = spd(4, 4)
    close(torch.linalg.pinv(T(h), hermitian=True), np.linalg.pinv(h, hermitian=True))
    low = randn(6, 2) @ randn(2, 5)
    assert torch.linalg.matrix_rank(T(low)).item() == 2 == np.linalg.matrix_rank(low)
    assert torch.linalg.matrix_rank(T(spd(4, 4)), hermitian=True).item() == 4
    sq = randn(3, 3) + 2 * np.eye(3)
    for n in [0, 1, 2, 5, -1, -3]:
        close(torch.linalg.matrix_power(T(sq), n), np.linalg.matrix_power(sq, n), torch.float64)
    close(torch.pinverse(T(a)), np.linalg.pinv(a, rcond=1e-15))


@pytest.mark.parametrize("ord", [2, 1, 0, 3.5, 0.5, math.inf, -math.inf])
def test_vector_norm(ord):
    x = randn(3, 4)
    close(torch.linalg.vector_norm(T(x), ord), np.linalg.norm(x.ravel(), ord))
    close(torch.linalg.vector_norm(T(x), ord, dim=1), np.linalg.norm(x, ord, axis=1))
    assert tuple(torch.linalg.vector_norm(T(x), ord, dim=0, keepdim=True).shape) == (1, 4)
    assert torch.linalg.vector_norm(T(x, torch.float32), ord, dtype=torch.float64).dtype == torch.float64


@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf])
def test_matrix_norm(ord):
    a = randn(2, 3, 4)
    close(torch.linalg.matrix_norm(T(a), ord), np.linalg.norm(a, ord, axis=(-2, -1)))
    close(torch.linalg.matrix_norm(T(a), ord, dim=(0, 2)), np.linalg.norm(a, ord, axis=(0, 2)))
    assert tuple(torch.linalg.matrix_norm(T(a), ord, keepdim=True).shape) == (2, 1, 1)
    close(torch.linalg.norm(T(a[0]), ord), np.linalg.norm(a[0], ord))


def test_norm_dispatch():
    a = randn(3, 4)
    close(torch.linalg.norm(T(a)), np.linalg.norm(a))
    b = randn(2, 3, 4)
    close(torch.linalg.norm(T(b)), np.sqrt((b ** 2).sum()))
    close(torch.linalg.norm(T(a), dim=1), np.linalg.norm(a, axis=1))
    close(torch.linalg.norm(T(a), 3, dim=1), np.linalg.norm(a, 3, axis=1))
    with pytest.raises(RuntimeError, match="must be 1D or 2D"):
        torch.linalg.norm(T(randn(2, 3, 4)), ord=2)


def test_solve_triangular_cross_vander_diagonal():
    a = np.triu(randn(4, 4)) + 4 * np.eye(4)
    b = randn(4, 2)
    close(torch.linalg.solve_triangular(T(a), T(b), upper=True), np.linalg.solve(a, b))
    c = randn(2, 4)
    close(torch.linalg.solve_triangular(T(a), T(c), upper=True, left=False), c @ np.linalg.inv(a))
    x, y = randn(5, 3), randn(5, 3)
    close(torch.linalg.cross(T(x), T(y)), np.cross(x, y))
    v = randn(4)
    close(torch.linalg.vander(T(v)), np.vander(v, increasing=True))
    close(torch.linalg.diagonal(T(randn(2, 3, 3)) * 0 + T(np.eye(3))), np.ones((2, 3)))


def _numgrad(f, a, eps=1e-6):
    g = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        d = np.zeros_like(a)
        d[i] = eps
        g[i] = (f(a + d) - f(a - d)) / (2 * eps)
    return g


def _check_grad(fl_fn, np_fn, a):
    A = T(a, requires_grad=True)
    fl_fn(A).backward()
    np.testing.assert_allclose(N(A.grad), _numgrad(np_fn, a), rtol=1e-5, atol=1e-6)


def test_gradients_numeric():
    a = randn(3, 3) + 3 * np.eye(3)
    w = randn(3, 3)
    _check_grad(lambda A: (torch.linalg.inv(A) * T(w)).sum(), lambda x: (np.linalg.inv(x) * w).sum(), a)
    _check_grad(lambda A: torch.linalg.det(A), np.linalg.det, a)
    _check_grad(lambda A: torch.linalg.slogdet(A).logabsdet, lambda x: np.linalg.slogdet(x)[1], a)
    _check_grad(lambda A: (torch.linalg.solve(A, T(w)) ** 2).sum(), lambda x: (np.linalg.solve(x, w) ** 2).sum(), a)
    s = spd(3, 3)
    sym = lambda x: (x + x.T) / 2  # noqa: E731  (cholesky/eigh read one triangle: compare on symmetric directions)
    A = T(s, requires_grad=True)
    (torch.linalg.cholesky(A) * T(np.tril(w))).sum().backward()
    g = N(A.grad)
    num = _numgrad(lambda x: (np.linalg.cholesky(sym(x)) * np.tril(w)).sum(), s)
    np.testing.assert_allclose(sym(g), sym(num), rtol=1e-5, atol=1e-6)
    A = T(s, requires_grad=True)
    torch.linalg.eigvalsh(A).pow(2).sum().backward()
    np.testing.assert_allclose(sym(N(A.grad)), sym(_numgrad(lambda x: (np.linalg.eigvalsh(sym(x)) ** 2).sum(), s)), rtol=1e-5, atol=1e-6)
    r = randn(4, 3)
    _check_grad(lambda A: torch.linalg.svdvals(A).sum(), lambda x: np.linalg.svd(x, compute_uv=False).sum(), r)
    _check_grad(lambda A: torch.linalg.matrix_norm(A, "nuc"), lambda x: np.linalg.norm(x, "nuc"), r)
    _check_grad(lambda A: (torch.linalg.pinv(A) * T(randn(3, 4) * 0 + 1)).sum(), lambda x: np.linalg.pinv(x).sum(), r)


def test_decomposition_gradients_numeric():
    r = randn(4, 3)
    wq = randn(4, 3)
    # QR: Q R are unique with positive diag(R) (LAPACK and numpy agree on the signs)
    _check_grad(lambda A: (torch.linalg.qr(A).Q * T(wq)).sum() + torch.linalg.qr(A).R.sum(),
                lambda x: (np.linalg.qr(x)[0] * wq).sum() + np.linalg.qr(x)[1].sum(), r)
    # SVD: a sign-invariant function of U and V
    _check_grad(lambda A: (torch.linalg.svd(A, full_matrices=False).U[:, 0] ** 2 * T(wq[:, 0])).sum()
                + (torch.linalg.svd(A, full_matrices=False).Vh[1] ** 2).sum() * 0.5,
                lambda x: (np.linalg.svd(x, full_matrices=False)[0][:, 0] ** 2 * wq[:, 0]).sum()
                + (np.linalg.svd(x, full_matrices=False)[2][1] ** 2).sum() * 0.5, r)


def test_double_backward_inv_det():
    a = randn(3, 3) + 3 * np.eye(3)
    A = T(a, requires_grad=True)
    (g,) = torch.autograd.grad(torch.linalg.det(A), A, create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), A)
    num = _numgrad(lambda x: (np.linalg.det(x) * np.linalg.inv(x).T).sum(), a)
    np.testing.assert_allclose(N(gg), num, rtol=1e-4, atol=1e-6)


def test_det_singular_grad():
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    A = T(a, requires_grad=True)
    torch.linalg.det(A).backward()
    # gradient of det = cofactor matrix, well defined for singular matrices
    cof = np.array([[np.linalg.det(np.delete(np.delete(a, i, 0), j, 1)) * (-1) ** (i + j) for j in range(3)] for i in range(3)])
    np.testing.assert_allclose(N(A.grad), cof, atol=1e-8)
    A = T(np.diag([2.0, 3.0, 0.0]), requires_grad=True)
    torch.linalg.det(A).backward()
    np.testing.assert_allclose(N(A.grad), np.diag([0.0, 0.0, 6.0]), atol=1e-12)


def test_tensor_methods():
    a = spd(3, 3)
    A = T(a)
    close(A.inverse(), np.linalg.inv(a))
    close(A.logdet(), np.log(np.linalg.det(a)))
    close(A.slogdet()[1], np.linalg.slogdet(a)[1])
    close(A.cholesky(), np.linalg.cholesky(a))
    close(A.matrix_power(3), np.linalg.matrix_power(a, 3))
    close(A.pinverse(), np.linalg.pinv(a))
    Q, R = A.qr()
    close(torch._C._matmul(Q, R), a)
    U, S, V = A.svd()
    close(S, np.linalg.svd(a, compute_uv=False))


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 4)])
def test_lu(shape):
    a = randn(*shape)
    P, L, U = torch.linalg.lu(T(a))
    close(torch._C._matmul(P, torch._C._matmul(L, U)), a)
    assert np.allclose(np.triu(N(L), 1), 0) and np.allclose(np.diagonal(N(L), axis1=-2, axis2=-1), 1)
    assert np.allclose(np.tril(N(U), -1), 0) and np.all(np.abs(N(L)) <= 1 + 1e-12)  # partial pivoting
    LU, piv = torch.linalg.lu_factor(T(a))
    assert piv.dtype == torch.int32 and tuple(piv.shape) == shape[:-2] + (min(shape[-2:]),)
    if shape[-1] == shape[-2]:
        b = randn(*shape[:-1], 2)
        close(torch.linalg.lu_solve(LU, piv, T(b)), np.linalg.solve(a, b))
        close(torch.linalg.lu_solve(LU, piv, T(b), adjoint=True), np.linalg.solve(np.swapaxes(a, -1, -2), b))


def test_lu_grad_numeric():
    a = randn(3, 3) + 2 * np.eye(3)
    w = randn(3, 3)
    _check_grad(lambda A: (torch.linalg.lu_factor(A).LU * T(w)).sum(),
                lambda x: (_np_lu_packed(x) * w).sum(), a)


def _np_lu_packed(a):
    """Doolittle LU with partial pivoting (same pivots as LAPACK for distinct pivot magnitudes)."""
    a = a.copy()
    n = a.shape[0]
    for k in range(n):
        p = k + np.argmax(np.abs(a[k:, k]))
        a[[k, p]] = a[[p, k]]
        a[k + 1:, k] /= a[k, k]
        a[k + 1:, k + 1:] -= np.outer(a[k + 1:, k], a[k, k + 1:])
    return a


def test_tensorinv_tensorsolve_cond_matrix_exp():
    a = randn(4, 6, 8, 3)
    close(torch.linalg.tensorinv(T(a), ind=2), np.linalg.tensorinv(a, ind=2))
    b = randn(4, 6)
    close(torch.linalg.tensorsolve(T(a), T(b)), np.linalg.tensorsolve(a, b))
    m = randn(3, 3)
    for p in [None, "fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf]:
        close(torch.linalg.cond(T(m), p), np.linalg.cond(m, p))
    s = randn(4, 4)
    s = s + s.T
    w, v = np.linalg.eigh(s)
    close(torch.linalg.matrix_exp(T(s)), (v * np.exp(w)) @ v.T)
    close(torch.linalg.matrix_exp(T(np.zeros((2, 2)))), np.eye(2))


def test_input_layouts():
    """Row-major, column-major (a previous result), transposed, broadcast and sliced inputs give the same values."""
    a = randn(2, 4, 4) + 4 * np.eye(4)
    A = T(a)
    ref = np.linalg.inv(a)
    close(torch.linalg.inv(A), ref)
    F = torch.linalg.inv(torch.linalg.inv(A))  # column-major result fed back
    assert F.stride()[-2:] == (1, 4)
    close(torch.linalg.inv(F), ref)
    close(torch.linalg.inv(A.mT), np.linalg.inv(np.swapaxes(a, -1, -2)))
    close(torch.linalg.det(A[0].expand(3, 4, 4)), np.full(3, np.linalg.det(a[0])))
    big = T(randn(4, 8, 8))
    close(torch.linalg.svdvals(big[::2, 1:5, ::2]), np.linalg.svd(N(big)[::2, 1:5, ::2], compute_uv=False))
    close(torch.linalg.inv(T(a, torch.float32)), ref, torch.float32)
