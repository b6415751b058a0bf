"""torch.linalg on complex64/complex128 against torch: values, dtypes, shapes, batching, gradients (torch's conjugate
Wirtinger convention: the same random complex weighting of every output is backpropagated in both libraries),
the phase checks of the svd/eig backwards, the *_ex info outputs and torch's error classes.

Singular and eigenvectors of complex matrices are defined up to a phase per vector: they are compared through
phase-invariant functions (|U|, U diag(S) Vh, V diag(L) V^-1), which are also the only losses torch differentiates."""
import numpy as np
import pytest

from helpers import assert_raises_same, check_both, torch

import flowlike as fl

RNG = np.random.default_rng(5)
CDTYPES = ["complex64", "complex128"]


def carray(*shape):
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


def well(*shape):
    """Well-conditioned square complex matrices."""
    return carray(*shape) + 3 * np.eye(shape[-1])


def hpd(*shape):
    """Hermitian positive-definite matrices."""
    a = carray(*shape)
    return a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])


def hermitian(*shape):
    a = carray(*shape)
    return a + np.conj(np.swapaxes(a, -1, -2))


def tols(dtype, loose=False):
    """Value and gradient tolerances by dtype (`loose` for the products of an ill-conditioned chain)."""
    if dtype == "complex64":
        return dict(rtol=1e-3 if loose else 2e-4, atol=1e-3 if loose else 2e-4, grad_rtol=2e-3, grad_atol=2e-3)
    return dict(rtol=1e-8, atol=1e-8, grad_rtol=1e-7, grad_atol=1e-7)


def phase_free(lib, U, Vh):
    """Functions of singular/eigen vectors that do not depend on their phases."""
    return U.abs(), lib.matmul(U, U.mH), lib.matmul(Vh.mH, Vh)


# ---- values and gradients of each function ---------------------------------------------------------------------

SQUARE = {
    "inv": lambda lib, a: lib.linalg.inv(a),
    "inv_ex": lambda lib, a: tuple(lib.linalg.inv_ex(a)),
    "det": lambda lib, a: lib.linalg.det(a),
    "slogdet": lambda lib, a: tuple(lib.linalg.slogdet(a)),
    "logdet": lambda lib, a: lib.logdet(a),
    "torch.det": lambda lib, a: lib.det(a),
    "matrix_power3": lambda lib, a: lib.linalg.matrix_power(a, 3),
    "matrix_power-2": lambda lib, a: lib.linalg.matrix_power(a, -2),
    "matrix_power0": lambda lib, a: lib.linalg.matrix_power(a, 0),
    "lu_factor": lambda lib, a: tuple(lib.linalg.lu_factor(a)),
    "lu_factor_ex": lambda lib, a: tuple(lib.linalg.lu_factor_ex(a)),
    "lu": lambda lib, a: tuple(lib.linalg.lu(a)),
    "lu_unpack": lambda lib, a: tuple(lib.lu_unpack(*lib.linalg.lu_factor(a))),
    "matrix_exp": lambda lib, a: lib.linalg.matrix_exp(a * 0.3),
    "eigvals": lambda lib, a: lib.linalg.eigvals(a),
    "eig": lambda lib, a: (lambda L, V: (L, lib.linalg.solve(V, V * L.unsqueeze(-2), left=False)))(
        *lib.linalg.eig(a)),  # V diag(L) V^-1 = A: phase-free
    "eig.vectors_abs": lambda lib, a: lib.linalg.eig(a).eigenvectors.abs(),
    "cond": lambda lib, a: lib.linalg.cond(a),
    "cond.fro": lambda lib, a: lib.linalg.cond(a, "fro"),
    "cond.1": lambda lib, a: lib.linalg.cond(a, 1),
    "tensorinv": lambda lib, a: lib.linalg.tensorinv(a.reshape(-1, a.shape[-1]) if a.dim() == 2 else a[0], 1),
}


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3)])
@pytest.mark.parametrize("op", sorted(SQUARE))
def test_square(op, shape, dtype):
    grad = op not in ("cond.fro", "cond.1")  # (torch's own backward of these fails: an in-place op on inv's output)
    check_both(SQUARE[op], well(*shape), dtype=dtype, grad=grad, **tols(dtype, loose=op.startswith("cond")))


SOLVERS = {
    "solve": lambda lib, a, b: lib.linalg.solve(a, b),
    "solve.left_false": lambda lib, a, b: lib.linalg.solve(a, b.mT, left=False),
    "solve.vector": lambda lib, a, b: lib.linalg.solve(a, b[..., 0]),
    "solve_ex": lambda lib, a, b: tuple(lib.linalg.solve_ex(a, b)),
    "lu_solve": lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b),
    "lu_solve.adjoint": lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b, adjoint=True),
    "lu_solve.left_false": lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b.mT, left=False),
    "lu_solve.left_false_adjoint": lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b.mT, left=False,
                                                                         adjoint=True),
    "torch.lu_solve": lambda lib, a, b: lib.lu_solve(b, *lib.linalg.lu_factor(a)),
    "solve_triangular.upper": lambda lib, a, b: lib.linalg.solve_triangular(a.triu(), b, upper=True),
    "solve_triangular.lower_unit": lambda lib, a, b: lib.linalg.solve_triangular(a.tril(), b, upper=False,
                                                                                 unitriangular=True),
    "solve_triangular.right": lambda lib, a, b: lib.linalg.solve_triangular(a.triu(), b.mT, upper=True, left=False),
    "triangular_solve": lambda lib, a, b: tuple(lib.triangular_solve(b, a.triu())),
    "triangular_solve.transpose": lambda lib, a, b: tuple(lib.triangular_solve(b, a.tril(), upper=False,
                                                                               transpose=True)),
    "lstsq": lambda lib, a, b: lib.linalg.lstsq(a, b).solution,
    "lstsq.gelsd": lambda lib, a, b: tuple(lib.linalg.lstsq(a, b, driver="gelsd")[::3]),
    "tensorsolve": lambda lib, a, b: lib.linalg.tensorsolve(a[0] if a.dim() == 3 else a,
                                                            b[..., 0].reshape(-1)[:a.shape[-1]]),
}


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3)])
@pytest.mark.parametrize("op", sorted(SOLVERS))
def test_solvers(op, shape, dtype):
    b = carray(*shape[:-1], 2)
    check_both(SOLVERS[op], well(*shape), b, dtype=dtype, grad=True, **tols(dtype))


def test_solve_broadcasts_batches():
    check_both(lambda lib, a, b: lib.linalg.solve(a, b), well(2, 1, 3, 3), carray(4, 3, 2), grad=True)


HERMITIAN = {
    "cholesky": lambda lib, a: lib.linalg.cholesky(a),
    "cholesky.upper": lambda lib, a: lib.linalg.cholesky(a, upper=True),
    "cholesky_ex": lambda lib, a: tuple(lib.linalg.cholesky_ex(a)),
    "torch.cholesky": lambda lib, a: lib.cholesky(a),
    "cholesky_inverse": lambda lib, a: lib.cholesky_inverse(lib.linalg.cholesky(a)),
    "cholesky_inverse.upper": lambda lib, a: lib.cholesky_inverse(lib.linalg.cholesky(a, upper=True), upper=True),
    "cholesky_solve": lambda lib, a: lib.cholesky_solve(a[..., :2] * 0.5, lib.linalg.cholesky(a)),
    "cholesky_solve.upper": lambda lib, a: lib.cholesky_solve(a[..., :2] * 0.5, lib.linalg.cholesky(a, upper=True),
                                                              upper=True),
    "eigvalsh": lambda lib, a: lib.linalg.eigvalsh(a),
    "eigvalsh.U": lambda lib, a: lib.linalg.eigvalsh(a, UPLO="U"),
    "eigh": lambda lib, a: (lambda L, V: (L, lib.matmul(V * L.unsqueeze(-2), V.mH), V.abs()))(*lib.linalg.eigh(a)),
    "eigh.U": lambda lib, a: (lambda L, V: (L, lib.matmul(V * L.unsqueeze(-2), V.mH)))(*lib.linalg.eigh(a, "U")),
    "pinv.hermitian": lambda lib, a: lib.linalg.pinv(a, hermitian=True),
    "matrix_rank.hermitian": lambda lib, a: lib.linalg.matrix_rank(a, hermitian=True),
}


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3)])
@pytest.mark.parametrize("op", sorted(HERMITIAN))
def test_hermitian(op, shape, dtype):
    check_both(HERMITIAN[op], hpd(*shape), dtype=dtype, grad=True, **tols(dtype))


def test_eigh_reads_one_triangle():
    """eigh reads only the UPLO triangle: the gradient goes to that triangle (and the diagonal's real part)."""
    a = hermitian(4, 4)
    a[np.triu_indices(4, 1)] = 7 + 7j  # garbage in the upper triangle
    check_both(lambda lib, x: lib.linalg.eigvalsh(x), a, grad=True)
    check_both(lambda lib, x: lib.linalg.eigvalsh(x.mH, UPLO="U"), a, grad=True)


RECT = {
    "svdvals": lambda lib, a: lib.linalg.svdvals(a),
    "svd": lambda lib, a: (lambda U, S, Vh: (S, lib.matmul(U * S.unsqueeze(-2).to(U.dtype), Vh)) +
                           phase_free(lib, U, Vh))(*lib.linalg.svd(a, full_matrices=False)),
    "svd.full_S": lambda lib, a: lib.linalg.svd(a).S,
    "torch.svd": lambda lib, a: (lambda U, S, V: (S, lib.matmul(U * S.unsqueeze(-2).to(U.dtype), V.mH)))(
        *lib.svd(a)),
    "pinv": lambda lib, a: lib.linalg.pinv(a),
    "pinverse": lambda lib, a: lib.pinverse(a),
    "matrix_rank": lambda lib, a: lib.linalg.matrix_rank(a),
    "qr": lambda lib, a: tuple(lib.linalg.qr(a)),
    "torch.qr": lambda lib, a: tuple(lib.qr(a)),
    "norm.fro": lambda lib, a: lib.linalg.matrix_norm(a),
    "norm.nuc": lambda lib, a: lib.linalg.matrix_norm(a, "nuc"),
    "norm.2": lambda lib, a: lib.linalg.matrix_norm(a, 2),
    "norm.-2": lambda lib, a: lib.linalg.matrix_norm(a, -2),
    "norm.1": lambda lib, a: lib.linalg.matrix_norm(a, 1),
    "norm.inf": lambda lib, a: lib.linalg.matrix_norm(a, float("inf")),
    "norm.-inf_keepdim": lambda lib, a: lib.linalg.matrix_norm(a, -float("inf"), keepdim=True),
    "linalg.norm": lambda lib, a: lib.linalg.norm(a),
    "linalg.norm.dims": lambda lib, a: lib.linalg.norm(a, "fro", dim=(-2, -1)),
    "vector_norm": lambda lib, a: lib.linalg.vector_norm(a, dim=-1),
    "vector_norm.1": lambda lib, a: lib.linalg.vector_norm(a, 1),
    "vector_norm.inf": lambda lib, a: lib.linalg.vector_norm(a, float("inf"), dim=(-2, -1)),
    "vector_norm.3": lambda lib, a: lib.linalg.vector_norm(a, 3, dim=-2),
    "vecdot": lambda lib, a: lib.linalg.vecdot(a, a * 2),
    "lstsq.rect": lambda lib, a: lib.linalg.lstsq(a, a[..., :2] + 1).solution,
}


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
@pytest.mark.parametrize("op", sorted(RECT))
def test_rectangular(op, shape, dtype):
    if op == "lstsq.rect" and shape[-2] < shape[-1]:
        shape = shape[::-1]
    check_both(RECT[op], carray(*shape), dtype=dtype, grad=True, **tols(dtype))


@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr_modes(mode):
    check_both(lambda lib, a: tuple(lib.linalg.qr(a, mode=mode)), carray(3, 5), grad=True)
    check_both(lambda lib, a: tuple(lib.linalg.qr(a, mode=mode)), carray(2, 5, 3), grad=mode == "reduced")
    check_both(lambda lib, a: lib.linalg.qr(a, mode="r").R, carray(2, 5, 3))


def test_real_eig_is_complex():
    """Real input: complex eigenvalues and vectors (conjugate pairs), a real gradient."""
    a = RNG.standard_normal((2, 4, 4))
    for dtype in ["float32", "float64"]:
        check_both(lambda lib, x: lib.linalg.eigvals(x), a, dtype=dtype, grad=True, **tols("complex64"))
        check_both(SQUARE["eig"], a, dtype=dtype, grad=True, **tols("complex64"))
        check_both(lambda lib, x: lib.linalg.eig(x).eigenvectors.abs(), a, dtype=dtype, **tols("complex64"))


def test_empty_and_batched_shapes():
    for shape in [(0, 3, 3), (2, 0, 0), (3, 1, 1)]:
        a = well(*shape) if shape[-1] else np.zeros(shape, np.complex128)
        for op in ["inv", "det", "slogdet", "lu_factor", "eigvals"]:
            check_both(SQUARE[op], a)
        check_both(lambda lib, x: tuple(lib.linalg.svd(x)), a)
        check_both(lambda lib, x: tuple(lib.linalg.qr(x)), a)


def test_conjugate_view_inputs():
    """A conjugated (lazy) or transposed input is read as its values."""
    a = well(3, 3)
    check_both(lambda lib, x: (lib.linalg.inv(x.conj()), lib.linalg.det(x.mH), lib.linalg.solve(x.conj(), x.mT)),
               a, grad=True)
    check_both(lambda lib, x: (lib.linalg.cholesky(x.conj()), lib.linalg.eigvalsh(x.mH)), hpd(3, 3), grad=True)


def test_adjoint_views():
    a = carray(2, 3)
    check_both(lambda lib, x: (x.mH, x.H, x.adjoint(), lib.adjoint(x)), a, grad=True)


def test_double_backward():
    """Gradients of gradients: the formulas run through differentiable ops."""
    a = well(3, 3)

    def body(lib, x):
        g, = lib.autograd.grad((lib.linalg.det(x) * 1j).real + lib.linalg.inv(x).abs().sum(), x, create_graph=True)
        return g.abs().sum()

    check_both(body, a, grad=True)


# ---- the phase checks of the svd/eig backwards and the *_ex info ----------------------------------------------

PHASE_DEPENDENT = {
    "svd.U": lambda lib, a: lib.linalg.svd(a)[0].real.sum(),
    "svd.Vh": lambda lib, a: lib.linalg.svd(a, full_matrices=False)[2].imag.sum(),
    "eigh": lambda lib, a: lib.linalg.eigh(a + a.mH)[1].sum().real,
    "eig": lambda lib, a: lib.linalg.eig(a)[1].sum().real,
}


@pytest.mark.parametrize("op", sorted(PHASE_DEPENDENT))
def test_phase_dependent_loss_raises(op):
    assert_raises_same(lambda lib, a: PHASE_DEPENDENT[op](lib, a).backward(), carray(3, 3), requires_grad=True,
                       match_message=True)


def test_info_outputs():
    sing = well(3, 3, 3)
    sing[1, :, 2] = 0  # batch element 1 singular
    not_pd = hpd(3, 3, 3)
    not_pd[2] = -not_pd[2]
    check_both(lambda lib, a: (lib.linalg.inv_ex(a).info, lib.linalg.lu_factor_ex(a).info), sing)
    check_both(lambda lib, a: lib.linalg.cholesky_ex(a).info, not_pd)
    check_both(lambda lib, a: lib.linalg.solve_ex(a, a[..., :1]).info, sing)


# ---- errors ------------------------------------------------------------------------------------------------------

ERRORS = [
    (lambda lib, a: lib.linalg.inv(a), lambda: np.zeros((2, 3, 3), np.complex128)),
    (lambda lib, a: lib.linalg.inv_ex(a, check_errors=True), lambda: np.zeros((3, 3), np.complex128)),
    (lambda lib, a: lib.linalg.solve(a, a), lambda: np.zeros((3, 3), np.complex128)),
    (lambda lib, a: lib.linalg.cholesky(a), lambda: -hpd(3, 3)),
    (lambda lib, a: lib.linalg.cholesky_ex(a, check_errors=True), lambda: -hpd(2, 3, 3)),
    (lambda lib, a: lib.linalg.lu_factor(a), lambda: np.zeros((3, 3), np.complex128)),
    (lambda lib, a: lib.linalg.inv(a), lambda: carray(3, 4)),
    (lambda lib, a: lib.linalg.det(a), lambda: carray(4)),
    (lambda lib, a: lib.linalg.eig(a), lambda: carray(2, 3)),
    (lambda lib, a: lib.linalg.eig(a), lambda: np.ones((3, 3), np.int64)),
    (lambda lib, a: lib.linalg.eigvals(a.half()), lambda: np.ones((3, 3))),
    (lambda lib, a: lib.linalg.eigh(a, UPLO="X"), lambda: hpd(3, 3)),
    (lambda lib, a: lib.linalg.solve(a, a.real), lambda: well(3, 3)),  # mixed dtypes
    (lambda lib, a: lib.linalg.qr(a, mode="bad"), lambda: carray(3, 3)),
    (lambda lib, a: lib.linalg.svd(a * float("nan")), lambda: carray(3, 3)),
    (lambda lib, a: lib.linalg.eig(a * float("inf")), lambda: carray(3, 3)),
    (lambda lib, a: lib.linalg.matrix_norm(a, 3), lambda: carray(3, 3)),
    (lambda lib, a: lib.linalg.lstsq(a, a, driver="bad"), lambda: carray(3, 3)),
    (lambda lib, a: lib.linalg.qr(a, mode="r")[1].abs().sum().backward(), lambda: carray(3, 3)),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors(case):
    body, make = ERRORS[case]
    grad = case == len(ERRORS) - 1
    assert_raises_same(body, make(), requires_grad=grad)
