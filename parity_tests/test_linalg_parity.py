"""flowlike.linalg against torch.linalg: values, dtypes, shapes, strides of results, gradients (incl. double
backward) and exception types. Eigen/singular vectors are compared up to sign or through reconstructions."""
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import flowlike as fl  # noqa: E402
from helpers import assert_raises_same, assert_same, check_both, convert, run_both  # noqa: E402

rng = np.random.default_rng(1)
DTYPES = ["float32", "float64"]


def pair(a, dtype="float64", requires_grad=False):
    """The flowlike and the torch tensor of `a`, flowlike's first."""
    return tuple(convert(lib, np.asarray(a), dtype, requires_grad) for lib in (fl, torch))


def mm(a, b):
    return fl._C._matmul(a, b) if isinstance(a, fl.Tensor) else torch.matmul(a, b)


def same(f, t, tol=None):
    """assert_same with this suite's tolerance (by default by torch's dtype), as rtol and atol."""
    tol = tol or (1e-4 if t.dtype == torch.float32 else 1e-9)
    assert_same(f, t, rtol=tol, atol=tol)


def well(shape):
    return rng.standard_normal(shape) + 3 * np.eye(shape[-1])


def spd(shape):
    a = rng.standard_normal(shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def grads(fl_fn, t_fn, a, dtype="float64", tol=1e-7):
    """The dual run of fl_fn / t_fn on `a`: values, and the gradient of the same random weighting of the result."""
    tol, gtol = (max(tol, 1e-4), 1e-3) if dtype == "float32" else (tol, 1e-6)
    check_both(lambda lib, A: (t_fn if lib is torch else fl_fn)(A), np.asarray(a), dtype=dtype, grad=True,
               rtol=tol, atol=tol, grad_rtol=gtol, grad_atol=gtol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (3, 2, 5, 5), (0, 2, 2)])
def test_forward_square(dtype, shape):
    a = well(shape)
    fa, ta = pair(a, dtype)
    for name in ["inv", "det"]:
        same(getattr(fl.linalg, name)(fa), getattr(torch.linalg, name)(ta))
    fs, ts = fl.linalg.slogdet(fa), torch.linalg.slogdet(ta)
    same(fs.sign, ts.sign)
    same(fs.logabsdet, ts.logabsdet)
    same(fl.logdet(fa), torch.logdet(ta))
    b = rng.standard_normal(shape[:-1] + (3,))
    fb, tb = pair(b, dtype)
    same(fl.linalg.solve(fa, fb), torch.linalg.solve(ta, tb))
    same(fl.linalg.solve_ex(fa, fb).result, torch.linalg.solve_ex(ta, tb).result)
    same(fl.linalg.matrix_power(fa, 3), torch.linalg.matrix_power(ta, 3))
    same(fl.linalg.matrix_power(fa, -2), torch.linalg.matrix_power(ta, -2), tol=1e-3)
    same(fl.linalg.inv_ex(fa).info, torch.linalg.inv_ex(ta).info)
    assert fl.linalg.inv(fa).stride() == torch.linalg.inv(ta).stride()


@pytest.mark.parametrize("dtype", DTYPES)
def test_cholesky_eigh(dtype):
    a = spd((2, 4, 4))
    fa, ta = pair(a, dtype)
    for upper in [False, True]:
        same(fl.linalg.cholesky(fa, upper=upper), torch.linalg.cholesky(ta, upper=upper))
        same(fl.cholesky_inverse(fl.linalg.cholesky(fa, upper=upper), upper=upper),
             torch.cholesky_inverse(torch.linalg.cholesky(ta, upper=upper), upper=upper), tol=1e-3)
    same(fl.linalg.cholesky_ex(fa).info, torch.linalg.cholesky_ex(ta).info)
    fl_l, fl_v = fl.linalg.eigh(fa)
    t_l, t_v = torch.linalg.eigh(ta)
    same(fl_l, t_l)
    same(fl_v.abs(), t_v.abs(), tol=1e-3 if dtype == "float32" else 1e-7)
    same(fl.linalg.eigvalsh(fa, UPLO="U"), torch.linalg.eigvalsh(ta, UPLO="U"))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
def test_qr_svd(dtype, shape):
    a = rng.standard_normal(shape)
    fa, ta = pair(a, dtype)
    tol = 1e-3 if dtype == "float32" else 1e-8
    for mode in ["reduced", "complete", "r"]:
        fq, fr = fl.linalg.qr(fa, mode=mode)
        tq, tr = torch.linalg.qr(ta, mode=mode)
        same(fq, tq, tol)  # LAPACK's Householder QR is deterministic: same signs as torch
        same(fr, tr, tol)
    for full in [True, False]:
        fu, fs, fv = fl.linalg.svd(fa, full_matrices=full)
        tu, ts, tv = torch.linalg.svd(ta, full_matrices=full)
        assert fu.shape == tu.shape and fv.shape == tv.shape
        same(fs, ts, tol)
        k = ts.shape[-1]
        same(mm(fu[..., :k] * fs.unsqueeze(-2), fv[..., :k, :]), mm(tu[..., :k] * ts.unsqueeze(-2), tv[..., :k, :]), tol)
    same(fl.linalg.svdvals(fa), torch.linalg.svdvals(ta), tol)
    fu, fs, fv = fl.svd(fa)
    tu, ts, tv = torch.svd(ta)
    assert fv.shape == tv.shape
    same(fu.abs(), tu.abs(), 1e-2 if dtype == "float32" else 1e-6)
    same(fl.linalg.pinv(fa), torch.linalg.pinv(ta), tol)
    same(fl.linalg.matrix_rank(fa), torch.linalg.matrix_rank(ta))
    for ord in ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf]:
        same(fl.linalg.matrix_norm(fa, ord), torch.linalg.matrix_norm(ta, ord), tol)
        same(fl.linalg.norm(fa, ord, dim=(-2, -1)), torch.linalg.norm(ta, ord, dim=(-2, -1)), tol)


@pytest.mark.parametrize("driver", [None, "gelsy", "gelsd", "gelss", "gels"])
@pytest.mark.parametrize("ashape,bshape", [((6, 3), (6, 2)), ((6, 3), (6,)), ((3, 6, 3), (1, 6, 2)), ((2, 6, 3), (2, 6)),
                                           ((3, 5), (3, 2))])
def test_lstsq(driver, ashape, bshape):
    a, b = rng.standard_normal(ashape), rng.standard_normal(bshape)
    fa, ta = pair(a)
    fb, tb = pair(b)
    fr, tr = fl.linalg.lstsq(fa, fb, driver=driver), torch.linalg.lstsq(ta, tb, driver=driver)
    for f, t in zip(fr, tr):
        same(f, t, 1e-8)


@pytest.mark.parametrize("ord", [None, 2, 1, 0, 0.5, 3, math.inf, -math.inf])
@pytest.mark.parametrize("dim", [None, 1, (0, 2)])
def test_vector_norms(ord, dim):
    a = rng.standard_normal((3, 4, 5))
    fa, ta = pair(a, "float32")
    kw = {} if ord is None else {"ord": ord}
    same(fl.linalg.vector_norm(fa, dim=dim, **kw), torch.linalg.vector_norm(ta, dim=dim, **kw))
    same(fl.linalg.vector_norm(fa, dim=dim, keepdim=True, dtype=fl.float64, **kw),
         torch.linalg.vector_norm(ta, dim=dim, keepdim=True, dtype=torch.float64, **kw))
    if dim is None or isinstance(dim, int):
        same(fl.linalg.norm(fa, dim=dim, **({} if dim is None else kw)), torch.linalg.norm(ta, dim=dim, **({} if dim is None else kw)))


def test_misc_forward():
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    (fa, ta), (fb, tb) = pair(a), pair(b)
    same(fl.linalg.cross(fa, fb), torch.linalg.cross(ta, tb))
    v = rng.standard_normal((2, 4))
    fv, tv = pair(v)
    same(fl.linalg.vander(fv), torch.linalg.vander(tv))
    same(fl.linalg.vander(fv, N=6), torch.linalg.vander(tv, N=6))
    same(fl.linalg.diagonal(fa, offset=1), torch.linalg.diagonal(ta, offset=1))
    t = np.triu(well((2, 4, 4)))
    ft, tt = pair(t)
    fb, tb = pair(rng.standard_normal((4, 2)))
    same(fl.linalg.solve_triangular(ft, fb, upper=True), torch.linalg.solve_triangular(tt, tb, upper=True))
    fb2, tb2 = pair(rng.standard_normal((2, 4)))
    same(fl.linalg.solve_triangular(ft, fb2, upper=True, left=False, unitriangular=True),
         torch.linalg.solve_triangular(tt, tb2, upper=True, left=False, unitriangular=True))
    same(fl.triangular_solve(fb, ft, upper=True, transpose=True).solution,
         torch.triangular_solve(tb, tt, upper=True, transpose=True).solution)
    s = spd((3, 3))
    (fs, ts), (fb, tb) = pair(s), pair(rng.standard_normal((3, 2)))
    same(fl.cholesky_solve(fb, fl.linalg.cholesky(fs)), torch.cholesky_solve(tb, torch.linalg.cholesky(ts)))
    same(fl.linalg.pinv(fs, hermitian=True), torch.linalg.pinv(ts, hermitian=True))
    same(fl.linalg.matrix_rank(fs, hermitian=True), torch.linalg.matrix_rank(ts, hermitian=True))
    same(fl.linalg.pinv(fa, atol=0.5), torch.linalg.pinv(ta, atol=0.5))
    same(fl.linalg.pinv(fa, rtol=0.3), torch.linalg.pinv(ta, rtol=0.3))
    same(fl.pinverse(fa), torch.pinverse(ta))
    same(fl.linalg.matrix_rank(fa, atol=1.0, rtol=0.0), torch.linalg.matrix_rank(ta, atol=1.0, rtol=0.0))


# ---- gradients ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_grads_square(dtype):
    a = well((2, 3, 3))
    grads(lambda A: fl.linalg.inv(A), lambda A: torch.linalg.inv(A), a, dtype)
    grads(lambda A: fl.linalg.det(A), lambda A: torch.linalg.det(A), a, dtype)
    grads(lambda A: fl.linalg.slogdet(A).logabsdet, lambda A: torch.linalg.slogdet(A).logabsdet, a, dtype)
    grads(lambda A: fl.logdet(mm(A, A.mT)), lambda A: torch.logdet(mm(A, A.mT)), a, dtype)
    b = rng.standard_normal((2, 3, 2))
    grads(lambda A: fl.linalg.solve(A, fl.tensor(b.astype(dtype))), lambda A: torch.linalg.solve(A, torch.tensor(b.astype(dtype))), a, dtype)
    grads(lambda A: fl.linalg.solve(fl.tensor(a.astype(dtype)), A), lambda A: torch.linalg.solve(torch.tensor(a.astype(dtype)), A), b, dtype)
    grads(lambda A: fl.linalg.matrix_power(A, -2), lambda A: torch.linalg.matrix_power(A, -2), a, dtype)
    grads(lambda A: fl.linalg.solve_triangular(A, fl.tensor(b.astype(dtype)), upper=True),
          lambda A: torch.linalg.solve_triangular(A, torch.tensor(b.astype(dtype)), upper=True), a, dtype)
    grads(lambda A: fl.linalg.solve_triangular(A, fl.tensor(b.astype(dtype)).mT, upper=False, left=False),
          lambda A: torch.linalg.solve_triangular(A, torch.tensor(b.astype(dtype)).mT, upper=False, left=False), a, dtype)


def test_grads_det_singular():
    # Rank-2 matrices (third row = first + second) whose determinant rounds to a tiny nonzero value in
    # torch: both sides return the cofactor matrix. (Where torch's LU finds an exact zero pivot, e.g.
    # diag(2, 3, 0), torch returns 0 instead of the cofactors and flowlike the cofactors, whichever
    # LAPACK build rounds to exact zero: see tests/test_linalg.py.)
    a = np.array([[[0.3, 1.7, 2.2], [1.1, 0.4, 1.5], [1.4, 2.1, 3.7]], [[2.0, 1, 0.5], [1.3, 0.7, 2.1], [3.3, 1.7, 2.6]],
                  [[2.0, 0, 1], [0, 3.0, 0], [0, 0, 1]]])
    grads(lambda A: fl.linalg.det(A), lambda A: torch.linalg.det(A), a)


@pytest.mark.parametrize("dtype", DTYPES)
def test_grads_factorizations(dtype):
    s = spd((2, 4, 4))
    for upper in [False, True]:
        grads(lambda A: fl.linalg.cholesky(A, upper=upper), lambda A: torch.linalg.cholesky(A, upper=upper), s, dtype)
    grads(lambda A: fl.linalg.eigvalsh(A), lambda A: torch.linalg.eigvalsh(A), s, dtype)
    # sign-invariant functions of the eigenvectors / singular vectors
    grads(lambda A: fl.linalg.eigh(A).eigenvectors ** 2, lambda A: torch.linalg.eigh(A).eigenvectors ** 2, s, dtype)
    for shape in [(5, 3), (3, 5), (4, 4)]:
        r = rng.standard_normal(shape)
        grads(lambda A: fl.linalg.qr(A).Q, lambda A: torch.linalg.qr(A).Q, r, dtype)
        grads(lambda A: fl.linalg.qr(A).R, lambda A: torch.linalg.qr(A).R, r, dtype)
        grads(lambda A: fl.linalg.svdvals(A), lambda A: torch.linalg.svdvals(A), r, dtype)
        grads(lambda A: fl.linalg.svd(A, full_matrices=False).U ** 2, lambda A: torch.linalg.svd(A, full_matrices=False).U ** 2, r, dtype)
        grads(lambda A: fl.linalg.svd(A, full_matrices=False).Vh ** 2, lambda A: torch.linalg.svd(A, full_matrices=False).Vh ** 2, r, dtype)
        grads(lambda A: fl.linalg.pinv(A), lambda A: torch.linalg.pinv(A), r, dtype)
        grads(lambda A: fl.linalg.matrix_norm(A, "nuc"), lambda A: torch.linalg.matrix_norm(A, "nuc"), r, dtype)
        grads(lambda A: fl.linalg.matrix_norm(A, 2), lambda A: torch.linalg.matrix_norm(A, 2), r, dtype)
        grads(lambda A: fl.linalg.matrix_norm(A, 1), lambda A: torch.linalg.matrix_norm(A, 1), r, dtype)
        grads(lambda A: fl.linalg.matrix_norm(A), lambda A: torch.linalg.matrix_norm(A), r, dtype)
    r = rng.standard_normal((6, 3))
    b = rng.standard_normal((6, 2))
    grads(lambda A: fl.linalg.lstsq(A, fl.tensor(b.astype(dtype))).solution,
          lambda A: torch.linalg.lstsq(A, torch.tensor(b.astype(dtype))).solution, r, dtype)
    grads(lambda A: fl.linalg.lstsq(A, fl.tensor(b.astype(dtype)), driver="gelsd").residuals,
          lambda A: torch.linalg.lstsq(A, torch.tensor(b.astype(dtype)), driver="gelsd").residuals, r, dtype)
    grads(lambda B: fl.linalg.lstsq(fl.tensor(r.astype(dtype)), B).solution,
          lambda B: torch.linalg.lstsq(torch.tensor(r.astype(dtype)), B).solution, b, dtype)


def test_double_backward():
    a = well((3, 3))
    for name in ["inv", "det"]:
        fa, ta = pair(a, requires_grad=True)
        (fg,) = fl.autograd.grad(getattr(fl.linalg, name)(fa).sum(), fa, create_graph=True)
        (tg,) = torch.autograd.grad(getattr(torch.linalg, name)(ta).sum(), ta, create_graph=True)
        same(fg, tg)
        (fgg,) = fl.autograd.grad((fg ** 2).sum(), fa)
        (tgg,) = torch.autograd.grad((tg ** 2).sum(), ta)
        same(fgg, tgg, 1e-6)
    s = spd((3, 3))
    fa, ta = pair(s, requires_grad=True)
    (fg,) = fl.autograd.grad(fl.linalg.cholesky(fa).sum(), fa, create_graph=True)
    (tg,) = torch.autograd.grad(torch.linalg.cholesky(ta).sum(), ta, create_graph=True)
    (fgg,) = fl.autograd.grad((fg ** 2).sum(), fa)
    (tgg,) = torch.autograd.grad((tg ** 2).sum(), ta)
    same(fgg, tgg, 1e-6)


@pytest.mark.parametrize("name", ["svdvals", "svd_U", "eigh", "qr", "solve", "slogdet", "lu_factor", "solve_triangular"])
def test_double_backward_decompositions(name):
    a = rng.standard_normal((4, 3))
    s = a.T @ a + np.eye(3)
    sq = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    fns = {
        "svdvals": (lambda m, A: m.linalg.svdvals(A), a),
        "svd_U": (lambda m, A: m.linalg.svd(A, full_matrices=False)[0] ** 2, a),
        "eigh": (lambda m, A: m.linalg.eigh(A)[1] ** 2 + m.linalg.eigh(A)[0].unsqueeze(-1), s),
        "qr": (lambda m, A: m.linalg.qr(A)[0] + m.linalg.qr(A)[1].sum(), a),
        "solve": (lambda m, A: m.linalg.solve(A, A.sum(-1)), sq),
        "slogdet": (lambda m, A: m.linalg.slogdet(A)[1], sq),
        "lu_factor": (lambda m, A: m.linalg.lu_factor(A)[0], sq),
        "solve_triangular": (lambda m, A: m.linalg.solve_triangular(A, m.ones(3, 2, dtype=m.float64), upper=True), np.triu(sq)),
    }
    f, x = fns[name]

    def body(m):
        A = m.tensor(x, requires_grad=True)
        out = f(m, A)
        w = m.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)))
        (g,) = m.autograd.grad((out * w).sum(), A, create_graph=True)
        (gg,) = m.autograd.grad((g ** 2).sum(), A)
        return gg
    want, got = run_both(body)
    same(got, want, 1e-6)


def test_requires_grad_flags():
    fa, ta = pair(well((3, 3)), requires_grad=True)
    fs, ts = fl.linalg.slogdet(fa), torch.linalg.slogdet(ta)
    assert fs.sign.requires_grad == ts.sign.requires_grad and fs.logabsdet.requires_grad
    assert fl.linalg.inv_ex(fa).info.requires_grad == torch.linalg.inv_ex(ta).info.requires_grad
    with pytest.raises(RuntimeError):
        fl.linalg.qr(fa, mode="r").R.sum().backward()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 3, 3)])
def test_lu_family(dtype, shape):
    a = rng.standard_normal(shape)
    fa, ta = pair(a, dtype)
    tol = 1e-4 if dtype == "float32" else 1e-9
    for f, t in zip(fl.linalg.lu_factor_ex(fa), torch.linalg.lu_factor_ex(ta)):
        same(f, t, tol)
    for f, t in zip(fl.linalg.lu(fa), torch.linalg.lu(ta)):
        same(f, t, tol)
    LU, piv = torch.linalg.lu_factor(ta)
    for f, t in zip(fl.lu_unpack(*fl.linalg.lu_factor(fa)), torch.lu_unpack(LU, piv)):
        same(f, t, tol)
    grads(lambda A: fl.linalg.lu_factor(A).LU, lambda A: torch.linalg.lu_factor(A).LU, a, dtype)
    grads(lambda A: fl.linalg.lu(A).L, lambda A: torch.linalg.lu(A).L, a, dtype)
    grads(lambda A: fl.linalg.lu(A).U, lambda A: torch.linalg.lu(A).U, a, dtype)
    if shape[-1] == shape[-2]:
        b = rng.standard_normal(shape[:-1] + (2,))
        fb, tb = pair(b, dtype)
        fLU, fpiv = fl.linalg.lu_factor(fa)
        for left in [True, False]:
            for adjoint in [False, True]:
                bb = (fb, tb) if left else (fb.mT, tb.mT)
                same(fl.linalg.lu_solve(fLU, fpiv, bb[0], left=left, adjoint=adjoint),
                     torch.linalg.lu_solve(LU, piv, bb[1], left=left, adjoint=adjoint), tol * 10)
        grads(lambda B: fl.linalg.lu_solve(fLU, fpiv, B), lambda B: torch.linalg.lu_solve(LU, piv, B), b, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_cond_tensorinv_matrix_exp(dtype):
    a = rng.standard_normal((2, 4, 4))
    fa, ta = pair(a, dtype)
    tol = 1e-3 if dtype == "float32" else 1e-8
    for p in [None, "fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf]:
        same(fl.linalg.cond(fa, p), torch.linalg.cond(ta, p), tol)
    same(fl.linalg.matrix_exp(fa), torch.linalg.matrix_exp(ta), tol)
    same(fl.matrix_exp(fa * 5), torch.matrix_exp(ta * 5), tol * 10)
    grads(lambda A: fl.linalg.matrix_exp(A), lambda A: torch.linalg.matrix_exp(A), a, dtype)
    t = rng.standard_normal((4, 6, 8, 3))
    ft, tt = pair(t, dtype)
    same(fl.linalg.tensorinv(ft), torch.linalg.tensorinv(tt), tol * 10)
    b = rng.standard_normal((4, 6))
    fb, tb = pair(b, dtype)
    same(fl.linalg.tensorsolve(ft, fb), torch.linalg.tensorsolve(tt, tb), tol * 10)
    # dims of A moved to the end first
    same(fl.linalg.tensorsolve(ft.permute(3, 0, 1, 2), fb, dims=[0]),
         torch.linalg.tensorsolve(tt.permute(3, 0, 1, 2), tb, dims=[0]), tol * 10)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("norm", [1e-7, 1e-4, 0.03, 0.3, 1.0, 2.5, 40.0])
def test_matrix_exp_same_method_as_torch(dtype, norm):
    """torch's matrix_exp truncates its Taylor polynomial by the matrix's 1-norm (a single matrix) and takes the
    degree-18 path for every matrix of a larger batch: its float64 results differ from exp(A) by up to ~1e-12 in
    the degree-8 range. flowlike uses the same method, so the results agree to rounding, and inf/nan make only
    their own matrix nan."""
    a = np.random.default_rng(5).standard_normal((3, 5, 5))
    a *= norm / np.abs(a).sum(-2).max(-1)[:, None, None]
    fa, ta = pair(a, dtype)
    tol = 2e-6 if dtype == "float32" else 1e-14

    def agree(f, t):  # to rounding, relative to the largest entry (squaring spreads it over the small ones)
        scale = float(t[t.isfinite()].abs().max()) if bool(t.isfinite().any()) else 1.0
        assert_same(f, t, rtol=tol, atol=tol * scale)
    for i in range(3):
        agree(fl.linalg.matrix_exp(fa[i]), torch.linalg.matrix_exp(ta[i]))
    agree(fl.linalg.matrix_exp(fa), torch.linalg.matrix_exp(ta))
    fa[1, 0, 0] = math.nan
    ta[1, 0, 0] = math.nan
    fa[2, 1, 0] = math.inf
    ta[2, 1, 0] = math.inf
    agree(fl.linalg.matrix_exp(fa), torch.linalg.matrix_exp(ta))



# ---- errors ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", [
    # tensorsolve's dims: out of range, near 2^63, repeated
    lambda m: m.linalg.tensorsolve(m.ones(2, 3, 6), m.ones(2, 3), dims=[5]),
    lambda m: m.linalg.tensorsolve(m.ones(2, 3, 6), m.ones(2, 3), dims=[-2**63]),
    lambda m: m.linalg.tensorsolve(m.ones(2, 3, 6), m.ones(2, 3), dims=[2**63 - 1]),
    lambda m: m.linalg.tensorsolve(m.ones(2, 3, 6), m.ones(2, 3), dims=[0, 0]),
    lambda m: m.linalg.inv(m.zeros(2, 3)),
    lambda m: m.linalg.inv(m.tensor([[1.0, 2.0], [2.0, 4.0]])),
    lambda m: m.linalg.inv(m.stack([m.eye(2), m.tensor([[1.0, 2.0], [2.0, 4.0]])])),
    lambda m: m.linalg.inv(m.eye(2, dtype=m.float16)),
    lambda m: m.linalg.inv(m.eye(2, dtype=m.bfloat16)),
    lambda m: m.linalg.inv(m.eye(2, dtype=m.int64)),
    lambda m: m.linalg.inv(m.ones(3)),
    lambda m: m.linalg.det(m.zeros(2, 3)),
    lambda m: m.linalg.slogdet(m.ones(3)),
    lambda m: m.linalg.solve(m.tensor([[1.0, 2.0], [2.0, 4.0]]), m.ones(2)),
    lambda m: m.linalg.solve(m.eye(3), m.ones(2)),
    lambda m: m.linalg.solve(m.eye(3, dtype=m.float64), m.ones(3)),
    lambda m: m.linalg.cholesky(-m.eye(2)),
    lambda m: m.linalg.cholesky(m.stack([m.eye(2), -m.eye(2)])),
    lambda m: m.linalg.cholesky(m.zeros(2, 3)),
    lambda m: m.linalg.eigh(m.zeros(2, 3)),
    lambda m: m.linalg.eigh(m.eye(3), UPLO="X"),
    lambda m: m.linalg.svd(m.ones(3)),
    lambda m: m.linalg.qr(m.ones(3)),
    lambda m: m.linalg.qr(m.eye(3), mode="foo"),
    lambda m: m.linalg.lstsq(m.eye(3), m.ones(3, 2), driver="foo"),
    lambda m: m.linalg.lstsq(m.ones(4, 3), m.ones(3, 2)),
    lambda m: m.linalg.matrix_power(m.zeros(2, 3), 2),
    lambda m: m.linalg.matrix_power(m.tensor([[1.0, 2.0], [2.0, 4.0]]), -1),
    lambda m: m.linalg.matrix_norm(m.ones(3)),
    lambda m: m.linalg.matrix_norm(m.eye(3), ord=3),
    lambda m: m.linalg.matrix_norm(m.eye(3), dim=(0, 4)),
    lambda m: m.linalg.vector_norm(m.ones(3, dtype=m.int64)),
    lambda m: m.linalg.norm(m.eye(3), ord=3),
    lambda m: m.linalg.norm(m.ones(2, 2, 2), ord=2),
    lambda m: m.linalg.norm(m.ones(3), ord="fro"),
    lambda m: m.linalg.solve_triangular(m.eye(3), m.ones(3, 2), upper=True, left=False),
    lambda m: m.linalg.cross(m.ones(3), m.ones(2)),
    lambda m: m.linalg.lu_factor(m.tensor([[1.0, 2.0], [2.0, 4.0]])),
    lambda m: m.linalg.lu_factor(m.eye(2), pivot=False),
    lambda m: m.linalg.lu_factor(m.ones(3)),
    lambda m: m.linalg.tensorinv(m.ones(2, 3, 4), ind=1),
    lambda m: m.linalg.svd(m.tensor([[1.0, float("nan")], [0.5, 2.0]])),
    lambda m: m.linalg.vander(m.ones(3), N=1),
] + [(lambda name, dt: lambda m: getattr(m.linalg, name)(m.eye(3, dtype=getattr(m, dt))))(name, dt)
     for name in ["inv", "det", "slogdet", "cholesky", "qr", "eigh", "eigvalsh", "svd", "svdvals", "lu_factor", "pinv",
                  "matrix_rank"]
     for dt in ["float16", "bfloat16", "int64"]] + [
    lambda m: m.linalg.matrix_exp(m.eye(3, dtype=m.int64)),
    lambda m: m.linalg.solve(m.eye(3, dtype=m.float16), m.eye(3, dtype=m.float16)),
    lambda m: m.linalg.solve_triangular(m.eye(3, dtype=m.int64), m.eye(3, dtype=m.int64), upper=True),
    lambda m: m.linalg.lstsq(m.eye(3, dtype=m.int64), m.eye(3, dtype=m.int64)),
])
def test_errors(case):
    t_msg, f_msg = map(str, assert_raises_same(case))
    assert f_msg.split(":")[0] == t_msg.split(":")[0] or "linalg" not in t_msg.split(":")[0], (f_msg, t_msg)
    if "non-finite" in t_msg or "singular" in t_msg or "positive-definite" in t_msg or "not implemented for" in t_msg:
        assert f_msg == t_msg
