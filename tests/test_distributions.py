"""torch.distributions on flowlike without torch: shapes, supports, validation, sampling statistics of large
seeded samples (means and variances within a few standard errors of the exact values), reproducibility under
manual_seed, and that reparameterized draws carry gradients to the parameters."""
import math
import subprocess
import sys

import numpy as np
import pytest

import flowlike as fl
import flowlike.distributions as D

N = 40000  # draws per statistics check


def t(x):
    return fl.tensor(x, dtype=fl.float64)


def _cb_mean(p):
    """The mean of ContinuousBernoulli(p), p != 1/2."""
    return p / (2 * p - 1) + 1 / (math.log1p(-p) - math.log(p))


def _cb_var(p):
    return p * (p - 1) / (1 - 2 * p) ** 2 + 1 / (math.log1p(-p) - math.log(p)) ** 2


# name, the distribution, its exact mean and variance (None: VonMises, whose variance is circular; the sample's
# own variance sizes the mean's standard error)
FAMILIES = [
    ("Normal", lambda: D.Normal(t([0.5, -2.0]), t([1.0, 3.0])), [0.5, -2.0], [1.0, 9.0]),
    ("Uniform", lambda: D.Uniform(t([0.0, -1.0]), t([2.0, 5.0])), [1.0, 2.0], [4 / 12, 36 / 12]),
    ("Exponential", lambda: D.Exponential(t([0.5, 4.0])), [2.0, 0.25], [4.0, 1 / 16]),
    ("Laplace", lambda: D.Laplace(t([1.0]), t([2.0])), [1.0], [8.0]),
    ("Gamma small", lambda: D.Gamma(t([0.3, 0.9]), t([1.0, 2.0])), [0.3, 0.45], [0.3, 0.225]),
    ("Gamma large", lambda: D.Gamma(t([3.0, 50.0]), t([2.0, 0.5])), [1.5, 100.0], [0.75, 200.0]),
    ("Chi2", lambda: D.Chi2(t([3.0])), [3.0], [6.0]),
    ("Beta", lambda: D.Beta(t([2.0, 0.5]), t([3.0, 0.5])), [0.4, 0.5], [0.04, 0.125]),
    ("StudentT", lambda: D.StudentT(t([6.0]), t([1.0]), t([2.0])), [1.0], [6.0]),
    ("LogNormal", lambda: D.LogNormal(t([0.0]), t([0.5])), [math.exp(0.125)],
     [(math.exp(0.25) - 1) * math.exp(0.25)]),
    ("HalfNormal", lambda: D.HalfNormal(t([2.0])), [2 * math.sqrt(2 / math.pi)], [4 * (1 - 2 / math.pi)]),
    ("Gumbel", lambda: D.Gumbel(t([1.0]), t([2.0])), [1.0 + 2.0 * 0.5772156649015329], [math.pi ** 2 / 6 * 4]),
    ("Poisson", lambda: D.Poisson(t([0.5, 4.0, 30.0])), [0.5, 4.0, 30.0], [0.5, 4.0, 30.0]),
    ("Bernoulli", lambda: D.Bernoulli(probs=t([0.2, 0.7])), [0.2, 0.7], [0.16, 0.21]),
    ("Geometric", lambda: D.Geometric(probs=t([0.3])), [7 / 3], [0.7 / 0.09]),
    ("Binomial small", lambda: D.Binomial(t([10.0, 4.0]), probs=t([0.3, 0.9])), [3.0, 3.6], [2.1, 0.36]),
    ("Binomial large", lambda: D.Binomial(t([200.0, 1000.0]), probs=t([0.4, 0.75])), [80.0, 750.0],
     [48.0, 187.5]),
    ("VonMises", lambda: D.VonMises(t([0.5]), t([4.0])), [0.5], None),
    ("Pareto", lambda: D.Pareto(t([1.0]), t([5.0])), [1.25], [5 / 48]),
    ("Weibull", lambda: D.Weibull(t([1.0]), t([2.0])), [math.sqrt(math.pi) / 2], [1 - math.pi / 4]),
    ("InverseGamma", lambda: D.InverseGamma(t([6.0]), t([5.0])), [1.0], [0.25]),
    ("Kumaraswamy", lambda: D.Kumaraswamy(t([2.0]), t([3.0])), [16 / 35], [0.25 - (16 / 35) ** 2]),
    ("NegativeBinomial", lambda: D.NegativeBinomial(t([5.0]), probs=t([0.3])), [1.5 / 0.7], [1.5 / 0.49]),
    ("GeneralizedPareto", lambda: D.GeneralizedPareto(t([1.0, 0.0]), t([2.0, 1.0]), t([0.1, -0.5])),
     [1.0 + 2.0 / 0.9, 1.0 / 1.5], [4.0 / (0.81 * 0.8), 1.0 / (2.25 * 2.0)]),
    ("ContinuousBernoulli", lambda: D.ContinuousBernoulli(probs=t([0.2, 0.5, 0.9])),
     [_cb_mean(0.2), 0.5, _cb_mean(0.9)], [_cb_var(0.2), 1 / 12, _cb_var(0.9)]),
    ("FisherSnedecor", lambda: D.FisherSnedecor(t([5.0]), t([20.0])), [20 / 18], [2 * 400 * 23 / (5 * 324 * 16)]),
]


@pytest.mark.parametrize("name, make, mean, var", FAMILIES, ids=[f[0] for f in FAMILIES])
def test_sample_statistics(name, make, mean, var):
    """The sample mean (and variance) of many draws lies within 5 standard errors of the exact value; the draws
    lie in the support and have sample_shape + batch_shape."""
    fl.manual_seed(0)
    d = make()
    x = d.sample((N,))
    assert tuple(x.shape) == (N,) + tuple(d.batch_shape)
    assert bool(d.support.check(x).all())
    x = x.numpy()
    exact_var = np.asarray(var) if var is not None else x.var(0)
    np.testing.assert_array_less(np.abs(x.mean(0) - mean), 5 * np.sqrt(exact_var / N) + 1e-12)
    if var is not None:
        # standard error of the sample variance, from the sample's fourth central moment
        m4 = ((x - x.mean(0)) ** 4).mean(0)
        np.testing.assert_array_less(np.abs(x.var(0) - var), 5 * np.sqrt((m4 - np.asarray(var) ** 2) / N) + 1e-12)
    np.testing.assert_allclose(d.mean.numpy(), mean, rtol=1e-12)


def test_von_mises_circular_statistics():
    """VonMises draws: the mean resultant direction is loc, its length I1(k)/I0(k) (= 1 - variance)."""
    fl.manual_seed(1)
    d = D.VonMises(t([2.5, -1.0]), t([0.5, 8.0]))
    x = d.sample((N,)).numpy()
    c, s = np.cos(x).mean(0), np.sin(x).mean(0)
    np.testing.assert_allclose(np.arctan2(s, c), [2.5, -1.0], atol=0.1)
    np.testing.assert_allclose(np.hypot(c, s), 1 - d.variance.numpy(), atol=0.01)
    assert ((x >= -math.pi) & (x < math.pi)).all()


def test_categorical_multinomial_frequencies():
    fl.manual_seed(2)
    p = np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]])
    idx = D.Categorical(probs=t(p)).sample((N,)).numpy()
    freq = np.stack([(idx == k).mean(0) for k in range(3)], -1)
    np.testing.assert_allclose(freq, p, atol=5 * np.sqrt(0.25 / N))
    onehot = D.OneHotCategorical(probs=t(p)).sample((N,)).numpy()
    np.testing.assert_allclose(onehot.mean(0), p, atol=5 * np.sqrt(0.25 / N))
    counts = D.Multinomial(10, probs=t(p)).sample((N // 10,)).numpy()
    assert (counts.sum(-1) == 10).all()
    np.testing.assert_allclose(counts.mean(0), 10 * p, atol=5 * np.sqrt(10 * 0.25 / (N // 10)))


def test_dirichlet_and_mvn_moments():
    fl.manual_seed(3)
    conc = np.array([0.5, 2.0, 4.0])
    x = D.Dirichlet(t(conc)).sample((N,)).numpy()
    np.testing.assert_allclose(x.sum(-1), 1.0, atol=1e-12)
    np.testing.assert_allclose(x.mean(0), conc / conc.sum(), atol=0.01)
    cov = np.array([[2.0, 0.6], [0.6, 1.0]])
    for kw in (dict(covariance_matrix=t(cov)), dict(precision_matrix=t(np.linalg.inv(cov))),
               dict(scale_tril=t(np.linalg.cholesky(cov)))):
        y = D.MultivariateNormal(t([1.0, -1.0]), **kw).sample((N,)).numpy()
        np.testing.assert_allclose(y.mean(0), [1.0, -1.0], atol=0.05)
        np.testing.assert_allclose(np.cov(y.T), cov, atol=0.06)


def test_lkj_cholesky_correlations():
    """LKJ(eta) draws are Cholesky factors of correlation matrices (lower triangular, positive diagonal, unit
    diagonal of L L^T); the correlation of the first two variables has mean 0 and variance 1 / (2 eta + dim - 1).
    (The other entries of torch's onion sampler, which flowlike follows draw for draw, spread wider than the LKJ
    marginal; the parity suite compares those spreads with torch's.)"""
    fl.manual_seed(6)
    for eta in (0.5, 1.0, 4.0):
        d = D.LKJCholesky(3, t(eta))
        L = d.sample((N // 4,))
        assert bool(d.support.check(L).all())
        L = L.numpy()
        C = L @ np.swapaxes(L, -1, -2)
        np.testing.assert_allclose(np.diagonal(C, axis1=-2, axis2=-1), 1.0, atol=1e-12)
        r, var = C[:, 1, 0], 1 / (2 * eta + 2)
        assert abs(r.mean()) < 5 * math.sqrt(var / len(r))
        np.testing.assert_allclose(r.var(), var, rtol=0.05)


def test_wishart_moments():
    """Wishart(df, S) draws: positive definite, mean df S, elementwise variance df (S_ij^2 + S_ii S_jj)."""
    fl.manual_seed(8)
    S = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, 0.3], [0.0, 0.3, 1.5]])
    for kw in (dict(covariance_matrix=t(S)), dict(precision_matrix=t(np.linalg.inv(S))),
               dict(scale_tril=t(np.linalg.cholesky(S)))):
        d = D.Wishart(t(6.0), **kw)
        x = d.rsample((N // 4,))
        assert bool(d.support.check(x).all())
        x = x.numpy()
        var = 6.0 * (S ** 2 + np.outer(np.diag(S), np.diag(S)))
        np.testing.assert_array_less(np.abs(x.mean(0) - 6.0 * S), 5 * np.sqrt(var / len(x)))
        np.testing.assert_allclose(x.var(0), var, rtol=0.1)


def test_manual_seed_reproduces_draws():
    for make in (lambda: D.Gamma(t([0.5, 3.0]), 1.0), lambda: D.Binomial(t([5.0, 500.0]), probs=t([0.3, 0.6])),
                 lambda: D.Normal(0.0, 1.0), lambda: D.VonMises(t([0.0]), t([1.0]))):
        fl.manual_seed(7)
        a = make().sample((50,))
        fl.manual_seed(7)
        b = make().sample((50,))
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("make", [
    lambda p: D.Normal(p, p.exp()), lambda p: D.Gamma(p.exp(), 1.0), lambda p: D.Beta(p.exp(), 2.0),
    lambda p: D.Dirichlet(p.exp()), lambda p: D.StudentT(p.exp() + 1), lambda p: D.LogNormal(p, 1.0),
    lambda p: D.RelaxedBernoulli(t(0.5), logits=p), lambda p: D.RelaxedOneHotCategorical(t(0.5), logits=p),
    lambda p: D.MultivariateNormal(p, scale_tril=fl.eye(3, dtype=fl.float64) * p.exp()),
    lambda p: D.Uniform(p, p + 1), lambda p: D.Laplace(p, 1.0), lambda p: D.Gumbel(p, 1.0),
    lambda p: D.Wishart(p.exp().sum() + 3, scale_tril=fl.eye(3, dtype=fl.float64) * p.exp()),
    lambda p: D.Kumaraswamy(p.exp(), 2.0), lambda p: D.FisherSnedecor(p.exp() + 1, 5.0),
    lambda p: D.GeneralizedPareto(p, 1.0, 0.2), lambda p: D.ContinuousBernoulli(logits=p),
    lambda p: D.LowRankMultivariateNormal(p, p.exp().unsqueeze(-1), p.exp())])
def test_rsample_has_gradients(make):
    p = t([0.1, -0.3, 0.5]).requires_grad_()
    d = make(p)
    assert d.has_rsample
    x = d.rsample((20,))
    x.sum().backward()
    assert p.grad is not None and np.isfinite(p.grad.numpy()).all() and (p.grad.numpy() != 0).any()
    with fl.no_grad():
        assert not d.sample((2,)).requires_grad


def test_gamma_rsample_gradient_is_d_mean():
    """d E[x] / d concentration of Gamma(a, 1) is 1, so the mean of the per-draw gradients is 1 too."""
    fl.manual_seed(4)
    a = t([0.2, 1.0, 5.0, 40.0]).requires_grad_()
    D.Gamma(a, 1.0).rsample((N,)).mean(0).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), 1.0, atol=0.03)


def test_shapes_and_expand():
    d = D.Normal(t(np.zeros((3, 1))), t(np.ones((1, 4))))
    assert d.batch_shape == fl.Size([3, 4]) and d.event_shape == fl.Size([])
    assert d.sample((2,)).shape == fl.Size([2, 3, 4])
    e = d.expand((5, 3, 4))
    assert e.batch_shape == fl.Size([5, 3, 4]) and e.log_prob(t(0.0)).shape == fl.Size([5, 3, 4])
    m = D.MultivariateNormal(t(np.zeros(2)), scale_tril=t(np.eye(2)))
    assert (m.batch_shape, m.event_shape) == (fl.Size([]), fl.Size([2]))
    assert m.expand((6,)).sample((3,)).shape == fl.Size([3, 6, 2])
    ind = D.Independent(D.Normal(t(np.zeros((4, 3))), 1.0), 1)
    assert (ind.batch_shape, ind.event_shape) == (fl.Size([4]), fl.Size([3]))
    assert ind.log_prob(t(np.zeros((4, 3)))).shape == fl.Size([4])
    mix = D.MixtureSameFamily(D.Categorical(logits=t(np.zeros(3))), D.Normal(t([-5.0, 0.0, 5.0]), 1.0))
    assert mix.batch_shape == fl.Size([]) and mix.sample((7,)).shape == fl.Size([7])
    assert D.Normal(0.0, 1.0).batch_shape == fl.Size([])


def test_validation():
    with pytest.raises(ValueError, match="Expected parameter scale"):
        D.Normal(t([0.0]), t([-1.0]))
    with pytest.raises(ValueError, match="within the support"):
        D.Exponential(t([1.0])).log_prob(t([-1.0]))
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        D.Categorical()
    assert D.Normal(t([0.0]), t([-1.0]), validate_args=False).scale.item() == -1.0


def test_kl_divergence_against_monte_carlo():
    """KL(p || q) = E_p[log p - log q]: each registered closed form is within sampling error of the estimate."""
    fl.manual_seed(5)
    pairs = [(D.Normal(t([0.3]), t([1.2])), D.Normal(t([-0.5]), t([0.7]))),
             (D.Gamma(t([2.0]), t([1.5])), D.Gamma(t([3.0]), t([1.0]))),
             (D.Beta(t([2.0]), t([3.0])), D.Beta(t([1.0]), t([1.5]))),
             (D.Exponential(t([2.0])), D.Exponential(t([0.5]))),
             (D.Laplace(t([0.0]), t([1.0])), D.Laplace(t([1.0]), t([2.0]))),
             (D.Dirichlet(t([1.0, 2.0, 3.0])), D.Dirichlet(t([2.0, 2.0, 2.0]))),
             (D.Categorical(probs=t([0.2, 0.3, 0.5])), D.Categorical(probs=t([0.4, 0.4, 0.2]))),
             (D.MultivariateNormal(t([0.0, 1.0]), covariance_matrix=t([[1.0, 0.3], [0.3, 2.0]])),
              D.MultivariateNormal(t([1.0, 0.0]), scale_tril=t([[1.5, 0.0], [0.2, 1.0]])))]
    for p, q in pairs:
        x = p.sample((N,))
        diff = (p.log_prob(x) - q.log_prob(x)).numpy()
        kl = D.kl_divergence(p, q).numpy()
        assert abs(diff.mean() - kl.sum()) < 5 * diff.std() / math.sqrt(N), (type(p).__name__, diff.mean(), kl)


def test_transforms_invert_and_match_finite_difference_jacobians():
    x = t(np.linspace(-2.0, 2.0, 9))
    for tr in (D.ExpTransform(), D.SigmoidTransform(), D.TanhTransform(), D.SoftplusTransform(),
               D.AffineTransform(1.0, -3.0), D.ComposeTransform([D.AffineTransform(0.5, 2.0), D.SigmoidTransform()])):
        y = tr(x)
        np.testing.assert_allclose(tr.inv(y).numpy(), x.numpy(), rtol=1e-9, atol=1e-9)
        h = 1e-6
        fd = (tr(x + h).numpy() - tr(x - h).numpy()) / (2 * h)
        np.testing.assert_allclose(tr.log_abs_det_jacobian(x, y).numpy(), np.log(np.abs(fd)), rtol=1e-6, atol=1e-7)
    for c in (D.constraints.positive, D.constraints.unit_interval, D.constraints.simplex,
              D.constraints.lower_cholesky, D.constraints.interval(-2.0, 5.0)):
        z = t(np.random.RandomState(0).standard_normal((3, 3)))
        assert bool(c.check(D.transform_to(c)(z)).all())


def test_compat_import_gets_flowlike_distributions():
    """`import torch.distributions as D` (and torch's per-family modules) under python -m flowlike.compat are
    flowlike's."""
    code = ("import torch.distributions as D, torch.distributions.kl as K; import flowlike; "
            "from torch.distributions.normal import Normal; "
            "assert D is flowlike.distributions and K.kl_divergence is D.kl_divergence and Normal is D.Normal; "
            "n = D.Normal(torch.zeros(2), torch.ones(2)); print(type(n).__module__, n.sample((3,)).shape)")
    out = subprocess.run([sys.executable, "-m", "flowlike.compat", "-c", "import torch; " + code],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["flowlike.distributions._univariate", "torch.Size([3,", "2])"]
