"""nn.utils.parametrize, nn.utils.parametrizations (weight_norm, spectral_norm, orthogonal) and the legacy
weight_norm / spectral_norm hooks against torch: same classes, reprs and state_dict keys, and equal outputs,
gradients and SGD training runs from identical weights (and identical power-iteration buffers)."""
import copy
import pickle
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402
from helpers import assert_raises_same, assert_same, convert, copy_state, outcome_type, run_both, to_flowlike  # noqa: E402

MODULES = {
    "linear": ("Linear(5, 4)", (3, 5)),
    "conv2d": ("Conv2d(3, 4, 3, padding=1)", (2, 3, 6, 6)),
    "conv_transpose2d": ("ConvTranspose2d(3, 2, 3)", (2, 3, 5, 5)),
}


def _pair(spec):
    """A torch and a flowlike module of the same spec with equal weights."""
    tm, fm = run_both(lambda lib: eval("lib.nn." + spec))
    copy_state(tm, fm)
    return tm, fm


def _input(shape, seed=0):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return convert(torch, x), convert(fl, x)


def _same_structure(tm, fm):
    assert type(fm).__name__ == type(tm).__name__
    assert repr(fm) == repr(tm)
    assert [(k, tuple(v.shape)) for k, v in fm.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in tm.state_dict().items()]
    assert [n for n, _ in fm.named_parameters()] == [n for n, _ in tm.named_parameters()]


def _train(tm, fm, shape, steps=3, lr=0.1):
    """SGD steps on mean(out^2) from equal inputs; the outputs and parameter gradients must agree at every step."""
    topt = torch.optim.SGD(tm.parameters(), lr=lr, momentum=0.9)
    fopt = fl.optim.SGD(fm.parameters(), lr=lr, momentum=0.9)
    for step in range(steps):
        tx, fx = _input(shape, seed=step)
        tx.requires_grad_(True)
        fx.requires_grad_(True)
        to, fo = tm(tx), fm(fx)
        assert_same(fo, to, rtol=1e-4, atol=1e-5)
        to.pow(2).mean().backward()
        fo.pow(2).mean().backward()
        assert_same(fx.grad, tx.grad, rtol=1e-3, atol=1e-4)
        for (name, tp), (fname, fp) in zip(tm.named_parameters(), fm.named_parameters()):
            assert fname == name
            assert_same(fp.grad, tp.grad, rtol=1e-3, atol=1e-4)
        topt.step()
        fopt.step()
        topt.zero_grad()
        fopt.zero_grad()
    assert_same(fm.state_dict(), tm.state_dict(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dim", [0, 1, None, -1])
@pytest.mark.parametrize("kind", ["linear", "conv2d"])
def test_weight_norm_parametrization(kind, dim):
    spec, shape = MODULES[kind]
    tm, fm = _pair(spec)
    torch.nn.utils.parametrizations.weight_norm(tm, dim=dim)
    fl.nn.utils.parametrizations.weight_norm(fm, dim=dim)
    _same_structure(tm, fm)
    assert list(fm.state_dict()) == ["bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]
    assert_same(fm.state_dict(), tm.state_dict(), rtol=1e-5, atol=1e-6)
    assert_same(fm.weight, tm.weight)
    assert fm.parametrizations.weight.original1 is fm.parametrizations["weight"].original1
    _train(tm, fm, shape)
    for M, m in ((torch, tm), (fl, fm)):
        M.nn.utils.parametrize.remove_parametrizations(m, "weight")
    _same_structure(tm, fm)
    assert_same(fm.weight, tm.weight, rtol=1e-5, atol=1e-6)
    assert type(fm) is fl.nn.Linear or type(fm) is fl.nn.Conv2d


def test_weight_norm_loads_legacy_checkpoint():
    tm, fm = _pair("Linear(5, 4)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        torch.nn.utils.weight_norm(tm)
    legacy = {k: to_flowlike(v) for k, v in tm.state_dict().items()}
    assert list(legacy) == ["bias", "weight_g", "weight_v"]
    fl.nn.utils.parametrizations.weight_norm(fm)
    fm.load_state_dict(legacy)
    assert_same(fm.parametrizations.weight.original0, tm.weight_g)
    assert_same(fm.parametrizations.weight.original1, tm.weight_v)


@pytest.mark.parametrize("kind", ["linear", "conv2d", "conv_transpose2d"])
@pytest.mark.parametrize("n_power_iterations", [1, 3])
def test_spectral_norm_parametrization(kind, n_power_iterations):
    spec, shape = MODULES[kind]
    tm, fm = _pair(spec)
    torch.nn.utils.parametrizations.spectral_norm(tm, n_power_iterations=n_power_iterations)
    fl.nn.utils.parametrizations.spectral_norm(fm, n_power_iterations=n_power_iterations)
    _same_structure(tm, fm)
    assert [k for k, _ in fm.named_buffers()] == ["parametrizations.weight.0._u", "parametrizations.weight.0._v"]
    copy_state(tm, fm)
    _train(tm, fm, shape)  # training mode: power iteration on every access of .weight
    # Evaluation mode: no power iteration, the buffers stay as they are.
    tm.eval()
    fm.eval()
    u = fm.parametrizations.weight[0]._u.clone()
    assert_same(fm.weight, tm.weight, rtol=1e-4, atol=1e-5)
    assert_same(fm.parametrizations.weight[0]._u, u, rtol=0, atol=0)
    assert_same(fm.state_dict(), tm.state_dict(), rtol=1e-4, atol=1e-5)
    for M, m in ((torch, tm), (fl, fm)):
        M.nn.utils.parametrize.remove_parametrizations(m, "weight")
    _same_structure(tm, fm)
    assert_same(fm.weight, tm.weight, rtol=1e-4, atol=1e-5)


def test_spectral_norm_dim_and_1d_weight():
    tm, fm = _pair("Linear(5, 4)")
    torch.nn.utils.parametrizations.spectral_norm(tm, dim=1, eps=1e-6)
    fl.nn.utils.parametrizations.spectral_norm(fm, dim=1, eps=1e-6)
    copy_state(tm, fm)
    assert tuple(fm.parametrizations.weight[0]._u.shape) == (5,)
    assert_same(fm.weight, tm.weight, rtol=1e-4, atol=1e-5)
    # A 1-d tensor is just normalized (no buffers).
    torch.nn.utils.parametrizations.spectral_norm(tm, "bias")
    fl.nn.utils.parametrizations.spectral_norm(fm, "bias")
    _same_structure(tm, fm)
    assert_same(fm.bias, tm.bias)


@pytest.mark.parametrize("kind", ["linear", "conv2d"])
def test_legacy_weight_norm(kind):
    spec, shape = MODULES[kind]
    tm, fm = _pair(spec)
    with pytest.warns(FutureWarning):
        torch.nn.utils.weight_norm(tm)
    with pytest.warns(FutureWarning):
        fl.nn.utils.weight_norm(fm)
    _same_structure(tm, fm)
    assert list(fm.state_dict()) == ["bias", "weight_g", "weight_v"]
    assert_same(fm.state_dict(), tm.state_dict(), rtol=1e-5, atol=1e-6)
    _train(tm, fm, shape)
    torch.nn.utils.remove_weight_norm(tm)
    fl.nn.utils.remove_weight_norm(fm)
    _same_structure(tm, fm)
    assert_same(fm.weight, tm.weight, rtol=1e-5, atol=1e-6)
    assert isinstance(fm.weight, fl.nn.Parameter)


@pytest.mark.parametrize("kind", ["linear", "conv2d", "conv_transpose2d"])
def test_legacy_spectral_norm(kind):
    spec, shape = MODULES[kind]
    tm, fm = _pair(spec)
    torch.nn.utils.spectral_norm(tm, n_power_iterations=2)
    fl.nn.utils.spectral_norm(fm, n_power_iterations=2)
    _same_structure(tm, fm)
    assert list(fm.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    copy_state(tm, fm)
    assert fm.state_dict()._metadata[""]["spectral_norm"] == tm.state_dict()._metadata[""]["spectral_norm"]
    _train(tm, fm, shape)
    tm.eval()
    fm.eval()
    tx, fx = _input(shape)
    assert_same(fm(fx), tm(tx), rtol=1e-4, atol=1e-5)
    torch.nn.utils.remove_spectral_norm(tm)
    fl.nn.utils.remove_spectral_norm(fm)
    _same_structure(tm, fm)
    assert_same(fm.weight, tm.weight, rtol=1e-4, atol=1e-5)
    assert not fm._state_dict_hooks and not fm._load_state_dict_pre_hooks


def _symmetric(M):
    class Symmetric(M.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).mT

        def right_inverse(self, A):
            return A.triu()
    return Symmetric()


def _rank_one(M):
    class RankOne(M.nn.Module):
        def forward(self, x, y):
            return x.unsqueeze(-1) @ y.unsqueeze(-2)

        def right_inverse(self, Z):
            return Z[:, 0].clone(), Z[0].clone() / Z[0, 0]
    return RankOne()


def _scale(M):
    class Scale(M.nn.Module):
        def forward(self, X):
            return 2 * X
    return Scale()


def test_custom_parametrizations():
    tm, fm = _pair("Linear(4, 4)")
    P_t, P_f = torch.nn.utils.parametrize, fl.nn.utils.parametrize
    P_t.register_parametrization(tm, "weight", _symmetric(torch))
    P_f.register_parametrization(fm, "weight", _symmetric(fl))
    _same_structure(tm, fm)
    assert P_f.is_parametrized(fm) and P_f.is_parametrized(fm, "weight") and not P_f.is_parametrized(fm, "bias")
    assert P_f.type_before_parametrizations(fm) is fl.nn.Linear
    assert isinstance(fm.parametrizations.weight, P_f.ParametrizationList)
    assert_same(fm.state_dict(), tm.state_dict(), rtol=1e-5, atol=1e-6)
    assert_same(fm.weight, tm.weight)
    # A second parametrization stacks on the first.
    P_t.register_parametrization(tm, "weight", _scale(torch))
    P_f.register_parametrization(fm, "weight", _scale(fl))
    _same_structure(tm, fm)
    _train(tm, fm, (3, 4))
    # Assigning goes through right_inverse (Scale has none: RuntimeError in both).
    A = np.random.default_rng(7).standard_normal((4, 4)).astype(np.float32)
    assert outcome_type(lambda: setattr(fm, "weight", fl.tensor(A))) is \
        outcome_type(lambda: setattr(tm, "weight", torch.tensor(A))) is RuntimeError
    # The cache computes each parametrized tensor once.
    with P_f.cached():
        assert fm.weight is fm.weight
    assert fm.weight is not fm.weight
    for M, m in ((torch, tm), (fl, fm)):
        M.nn.utils.parametrize.remove_parametrizations(m, "weight", leave_parametrized=False)
    _same_structure(tm, fm)
    assert_same(fm.weight, tm.weight, rtol=1e-5, atol=1e-6)


def test_right_inverse_assignment_and_tuple_originals():
    tm, fm = _pair("Linear(4, 4)")
    torch.nn.utils.parametrize.register_parametrization(tm, "weight", _symmetric(torch))
    fl.nn.utils.parametrize.register_parametrization(fm, "weight", _symmetric(fl))
    original = fm.parametrizations.weight.original
    A = np.random.default_rng(8).standard_normal((4, 4)).astype(np.float32)
    tm.weight = torch.tensor(A + A.T)
    fm.weight = fl.tensor(A + A.T)
    assert fm.parametrizations.weight.original is original  # updated in place, as set_() keeps the Parameter
    assert_same(fm.state_dict(), tm.state_dict(), rtol=1e-5, atol=1e-6)
    assert_same(fm.weight, tm.weight)
    # A right_inverse returning a tuple: original0, original1.
    tm2, fm2 = _pair("Linear(3, 3)")
    torch.nn.utils.parametrize.register_parametrization(tm2, "weight", _rank_one(torch))
    fl.nn.utils.parametrize.register_parametrization(fm2, "weight", _rank_one(fl))
    _same_structure(tm2, fm2)
    assert list(fm2.state_dict()) == ["bias", "parametrizations.weight.original0",
                                      "parametrizations.weight.original1"]
    assert_same(fm2.state_dict(), tm2.state_dict(), rtol=1e-5, atol=1e-6)
    _train(tm2, fm2, (2, 3))
    assert outcome_type(lambda: fl.nn.utils.parametrize.remove_parametrizations(fm2, "weight", False)) is \
        outcome_type(lambda: torch.nn.utils.parametrize.remove_parametrizations(tm2, "weight", False)) is ValueError
    for M, m in ((torch, tm2), (fl, fm2)):
        M.nn.utils.parametrize.remove_parametrizations(m, "weight")
    _same_structure(tm2, fm2)
    assert_same(fm2.weight, tm2.weight, rtol=1e-5, atol=1e-6)


def test_buffer_parametrization_and_copies():
    for M in (torch, fl):
        m = M.nn.BatchNorm1d(3)
        M.nn.utils.parametrize.register_parametrization(m, "running_var", _scale(M))
        assert type(m).__name__ == "ParametrizedBatchNorm1d"
        assert "parametrizations.running_var.original" in m.state_dict()
        assert [k for k, _ in m.named_buffers()][-1] == "parametrizations.running_var.original"
    tm, fm = _pair("Linear(3, 2)")
    torch.nn.utils.parametrizations.weight_norm(tm)
    fl.nn.utils.parametrizations.weight_norm(fm)
    # deepcopy works, pickling refuses (only state_dict serializes a parametrized module).
    fc = copy.deepcopy(fm)
    assert type(fc).__name__ == "ParametrizedLinear"
    assert_same(fc.weight, fm.weight)
    assert fc.parametrizations.weight.original1 is not fm.parametrizations.weight.original1
    assert outcome_type(lambda: pickle.dumps(fm)) is outcome_type(lambda: pickle.dumps(tm)) is RuntimeError


@pytest.mark.parametrize("orthogonal_map,shape", [
    ("matrix_exp", (4, 4)), ("cayley", (4, 4)), ("householder", (4, 4)),
    ("matrix_exp", (5, 3)), ("cayley", (3, 5)), (None, (5, 3)), (None, (3, 5)),
])
def test_orthogonal(orthogonal_map, shape):
    spec = f"Linear({shape[1]}, {shape[0]})"
    tm, fm = _pair(spec)
    torch.nn.utils.parametrizations.orthogonal(tm, orthogonal_map=orthogonal_map)
    fl.nn.utils.parametrizations.orthogonal(fm, orthogonal_map=orthogonal_map)
    _same_structure(tm, fm)
    copy_state(tm, fm)  # the base of a non-square weight is completed with random columns
    assert_same(fm.weight, tm.weight, rtol=1e-4, atol=1e-5)
    w = fm.weight.detach().numpy()
    small = min(shape)
    gram = w.T @ w if shape[0] >= shape[1] else w @ w.T
    np.testing.assert_allclose(gram, np.eye(small), atol=1e-5)
    _train(tm, fm, (2, shape[1]), steps=2)


def test_errors_match():
    def both(fn):
        return type(assert_raises_same(fn)[0])

    def register_missing(M):
        M.nn.utils.parametrize.register_parametrization(M.nn.Linear(2, 2), "nope", _scale(M))

    def shape_changing(M):
        class Bad(M.nn.Module):
            def forward(self, X):
                return X[:1]
        M.nn.utils.parametrize.register_parametrization(M.nn.Linear(2, 2), "weight", Bad())

    assert both(register_missing) is ValueError
    assert both(shape_changing) is ValueError
    assert both(lambda M: M.nn.utils.parametrize.remove_parametrizations(M.nn.Linear(2, 2), "weight")) is ValueError
    assert both(lambda M: M.nn.utils.parametrizations.spectral_norm(M.nn.Linear(2, 2), n_power_iterations=0)) \
        is ValueError
    assert both(lambda M: M.nn.utils.parametrizations.spectral_norm(M.nn.Linear(2, 2), dim=2)) is IndexError
    assert both(lambda M: M.nn.utils.parametrizations.spectral_norm(M.nn.Linear(2, 2), "nope")) is ValueError
    assert both(lambda M: M.nn.utils.spectral_norm(M.nn.Linear(2, 2), n_power_iterations=0)) is ValueError
    assert both(lambda M: M.nn.utils.parametrizations.orthogonal(M.nn.Linear(2, 2), "bias")) is ValueError
    assert both(lambda M: M.nn.utils.parametrizations.orthogonal(M.nn.Linear(2, 2), orthogonal_map="qr")) \
        is ValueError
    assert both(lambda M: M.nn.utils.remove_weight_norm(M.nn.Linear(2, 2))) is ValueError
    assert both(lambda M: M.nn.utils.remove_spectral_norm(M.nn.Linear(2, 2))) is ValueError
    assert both(lambda M: M.nn.utils.spectral_norm(M.nn.utils.spectral_norm(M.nn.Linear(2, 2)))) is RuntimeError
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        assert both(lambda M: M.nn.utils.weight_norm(M.nn.utils.weight_norm(M.nn.Linear(2, 2)))) is RuntimeError
