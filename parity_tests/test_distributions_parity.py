"""Parity of torch.distributions with PyTorch, each family built from the same parameters in both libraries:
log_prob, entropy, mean, mode, variance, stddev, cdf and icdf (values and gradients with respect to the
parameters, and the exception class where torch raises), sample/rsample shapes and dtypes, expand, argument
validation errors, kl_divergence values and gradients, transforms with biject_to/transform_to, and a
VAE-style and a REINFORCE-style training step fed the same random draws. (The compat import of
torch.distributions is checked in tests/test_distributions.py.)"""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402
from helpers import LIBS, assert_raises_same, assert_same, check_both, convert, to_flowlike  # noqa: E402

rng = np.random.RandomState(0)


@pytest.fixture(autouse=True)
def validation_on():
    """Argument validation on in both libraries, as by default: torch.compile turns torch's off for the whole
    process when dynamo first runs (torch/_dynamo/eval_frame.py), which earlier suites do."""
    saved = [lib.distributions.Distribution._validate_args for lib in LIBS]
    for lib in LIBS:
        lib.distributions.Distribution.set_default_validate_args(True)
    yield
    for lib, value in zip(LIBS, saved):
        lib.distributions.Distribution.set_default_validate_args(value)


def pos(*shape, low=0.5, high=3.0):
    return rng.uniform(low, high, shape)


def unit(*shape):
    return rng.uniform(0.1, 0.9, shape)


def simplex(*shape):
    p = rng.uniform(0.1, 1.0, shape)
    return p / p.sum(-1, keepdims=True)


def spd(n, batch=()):
    a = rng.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def tril(n, batch=()):
    return np.linalg.cholesky(spd(n, batch))


def counts(total, probs):
    return np.stack([rng.multinomial(total, p) for p in probs.reshape(-1, probs.shape[-1])]).reshape(
        probs.shape).astype(np.float64)


D = "distributions"
# name -> (builder(D, **params), params (numpy, float64: differentiated), value for log_prob, probability for
# icdf or None). A builder gets the library's torch.distributions module.
CASES = {
    "Normal": (lambda d, loc, scale: d.Normal(loc, scale), dict(loc=rng.randn(3, 2), scale=pos(3, 2)),
               rng.randn(3, 2), unit(3, 2)),
    "Laplace": (lambda d, loc, scale: d.Laplace(loc, scale), dict(loc=rng.randn(4), scale=pos(4)), rng.randn(4),
                unit(4)),
    "Cauchy": (lambda d, loc, scale: d.Cauchy(loc, scale), dict(loc=rng.randn(4), scale=pos(4)), rng.randn(4),
               unit(4)),
    "Uniform": (lambda d, low, high: d.Uniform(low, high), dict(low=-pos(4), high=pos(4)), unit(4) - 0.5, unit(4)),
    "Exponential": (lambda d, rate: d.Exponential(rate), dict(rate=pos(5)), pos(5), unit(5)),
    "Gamma": (lambda d, c, r: d.Gamma(c, r), dict(c=pos(2, 3, low=0.3), r=pos(2, 3)), pos(2, 3), None),
    "Chi2": (lambda d, df: d.Chi2(df), dict(df=pos(4, high=6.0)), pos(4), None),
    "StudentT": (lambda d, df, loc, scale: d.StudentT(df, loc, scale),
                 dict(df=pos(4, low=0.5, high=5.0), loc=rng.randn(4), scale=pos(4)), rng.randn(4), None),
    "Beta": (lambda d, a, b: d.Beta(a, b), dict(a=pos(4), b=pos(4)), unit(4), None),
    "Dirichlet": (lambda d, c: d.Dirichlet(c), dict(c=pos(2, 4)), simplex(2, 4), None),
    "Poisson": (lambda d, rate: d.Poisson(rate), dict(rate=pos(5, high=8.0)), rng.randint(0, 9, 5).astype(float),
                None),
    "Bernoulli_probs": (lambda d, p: d.Bernoulli(probs=p), dict(p=unit(5)), rng.randint(0, 2, 5).astype(float),
                        None),
    "Bernoulli_logits": (lambda d, l: d.Bernoulli(logits=l), dict(l=rng.randn(5)),
                         rng.randint(0, 2, 5).astype(float), None),
    "Geometric": (lambda d, p: d.Geometric(probs=p), dict(p=unit(5)), rng.randint(0, 6, 5).astype(float), None),
    "Binomial": (lambda d, p: d.Binomial(7, probs=p), dict(p=unit(5)), rng.randint(0, 8, 5).astype(float), None),
    "Binomial_logits": (lambda d, l: d.Binomial(fl_or_torch(d).tensor([3.0, 5.0, 9.0]), logits=l),
                        dict(l=rng.randn(3)), np.array([1.0, 5.0, 4.0]), None),
    "Categorical_probs": (lambda d, p: d.Categorical(probs=p), dict(p=simplex(3, 4)), np.array([0, 3, 2]), None),
    "Categorical_logits": (lambda d, l: d.Categorical(logits=l), dict(l=rng.randn(3, 4)), np.array([1, 0, 3]),
                           None),
    "Categorical_sample_shaped_value": (lambda d, l: d.Categorical(logits=l), dict(l=rng.randn(3, 4)),
                                        rng.randint(0, 4, (5, 3)), None),
    "OneHotCategorical": (lambda d, p: d.OneHotCategorical(probs=p), dict(p=simplex(3, 4)),
                          np.eye(4)[[2, 0, 3]], None),
    "Multinomial": (lambda d, p: d.Multinomial(6, probs=p), dict(p=simplex(2, 3)), None, None),
    "MVN_scale_tril": (lambda d, loc, L: d.MultivariateNormal(loc, scale_tril=L),
                       dict(loc=rng.randn(2, 3), L=tril(3, (2,))), rng.randn(4, 2, 3), None),
    "MVN_covariance": (lambda d, loc, S: d.MultivariateNormal(loc, covariance_matrix=S),
                       dict(loc=rng.randn(3), S=spd(3)), rng.randn(2, 3), None),
    "MVN_precision": (lambda d, loc, P: d.MultivariateNormal(loc, precision_matrix=P),
                      dict(loc=rng.randn(3), P=spd(3)), rng.randn(3), None),
    "LKJCholesky": (lambda d, c: d.LKJCholesky(3, c), dict(c=pos(2)), None, None),
    "Wishart_covariance": (lambda d, df, S: d.Wishart(df, covariance_matrix=S), dict(df=np.array([4.0, 6.5]), S=spd(3)),
                           np.stack([spd(3), spd(3)]), None),
    "Wishart_scale_tril": (lambda d, df, L: d.Wishart(df, scale_tril=L), dict(df=np.array(3.5), L=tril(3, (2,))),
                           np.stack([spd(3), spd(3)]), None),
    "Wishart_precision": (lambda d, df, P: d.Wishart(df, precision_matrix=P), dict(df=np.array(5.0), P=spd(2)),
                          spd(2), None),
    "LowRankMVN": (lambda d, loc, W, diag: d.LowRankMultivariateNormal(loc, W, diag),
                   dict(loc=rng.randn(2, 4), W=rng.randn(4, 2), diag=pos(4)), rng.randn(3, 2, 4), None),
    "LogNormal": (lambda d, loc, scale: d.LogNormal(loc, scale), dict(loc=rng.randn(4), scale=pos(4)), pos(4),
                  unit(4)),
    "HalfNormal": (lambda d, scale: d.HalfNormal(scale), dict(scale=pos(4)), pos(4), unit(4)),
    "HalfCauchy": (lambda d, scale: d.HalfCauchy(scale), dict(scale=pos(4)), pos(4), unit(4)),
    "Gumbel": (lambda d, loc, scale: d.Gumbel(loc, scale), dict(loc=rng.randn(4), scale=pos(4)), rng.randn(4),
               unit(4)),
    "VonMises": (lambda d, loc, k: d.VonMises(loc, k), dict(loc=rng.randn(4), k=pos(4, low=0.5, high=6.0)),
                 rng.uniform(-3, 3, 4), None),
    "Pareto": (lambda d, scale, a: d.Pareto(scale, a), dict(scale=pos(4), a=pos(4, high=5.0)), pos(4) + 3.0, unit(4)),
    "Weibull": (lambda d, scale, k: d.Weibull(scale, k), dict(scale=pos(4), k=pos(4)), pos(4), unit(4)),
    "InverseGamma": (lambda d, c, r: d.InverseGamma(c, r), dict(c=pos(4, high=4.0), r=pos(4)), pos(4), None),
    "Kumaraswamy": (lambda d, a, b: d.Kumaraswamy(a, b), dict(a=pos(4), b=pos(4)), unit(4), unit(4)),
    "LogisticNormal": (lambda d, loc, scale: d.LogisticNormal(loc, scale), dict(loc=rng.randn(2, 3), scale=pos(2, 3)),
                       simplex(2, 4), None),
    "NegativeBinomial": (lambda d, n, p: d.NegativeBinomial(n, probs=p), dict(n=pos(4, high=6.0), p=unit(4)),
                         rng.randint(0, 9, 4).astype(float), None),
    "NegativeBinomial_logits": (lambda d, l: d.NegativeBinomial(fl_or_torch(d).tensor([0.0, 2.0, 3.5]), logits=l),
                                dict(l=rng.randn(3)), np.array([0.0, 2.0, 7.0]), None),
    "FisherSnedecor": (lambda d, a, b: d.FisherSnedecor(a, b), dict(a=pos(4, high=6.0), b=pos(4, high=9.0)), pos(4),
                       None),
    # float32: torch's GeneralizedPareto compares its concentration with a float32 zero (float64 raises there)
    "GeneralizedPareto": (lambda d, loc, scale, c: d.GeneralizedPareto(loc.float(), scale.float(), c.float()),
                          dict(loc=np.zeros(4) + 0.5, scale=np.array([1.0, 2.0, 0.5, 1.5]),
                               c=np.array([0.3, -0.2, 0.0, 0.45])), np.array([0.8, 1.1, 2.0, 0.6]), unit(4)),
    "ContinuousBernoulli": (lambda d, p: d.ContinuousBernoulli(probs=p),
                            dict(p=np.array([0.2, 0.5004, 0.7, 0.95])), unit(4), unit(4)),
    "ContinuousBernoulli_logits": (lambda d, l: d.ContinuousBernoulli(logits=l), dict(l=rng.randn(4)), unit(4),
                                   unit(4)),
    "RelaxedBernoulli": (lambda d, t, p: d.RelaxedBernoulli(t, probs=p), dict(t=pos(1), p=unit(4)), unit(4), None),
    "RelaxedOneHotCategorical": (lambda d, t, l: d.RelaxedOneHotCategorical(t, logits=l),
                                 dict(t=pos(1), l=rng.randn(2, 3)), simplex(2, 3), None),
    "Independent": (lambda d, loc, scale: d.Independent(d.Normal(loc, scale), 1),
                    dict(loc=rng.randn(3, 2), scale=pos(3, 2)), rng.randn(3, 2), None),
    "MixtureSameFamily": (lambda d, l, loc, scale: d.MixtureSameFamily(d.Categorical(logits=l),
                                                                      d.Normal(loc, scale)),
                          dict(l=rng.randn(2, 3), loc=rng.randn(2, 3), scale=pos(2, 3)), rng.randn(4, 2), None),
    "TransformedTanhAffine": (lambda d, loc, scale: d.TransformedDistribution(
        d.Normal(loc, scale), [d.transforms.TanhTransform(), d.transforms.AffineTransform(1.0, 2.0)]),
        dict(loc=rng.randn(3), scale=pos(3)), rng.uniform(-0.9, 2.9, 3), unit(3)),
    "TransformedSigmoidDecreasing": (lambda d, loc, scale: d.TransformedDistribution(
        d.Normal(loc, scale), [d.transforms.SigmoidTransform(), d.transforms.AffineTransform(0.0, -1.0)]),
        dict(loc=rng.randn(3), scale=pos(3)), -unit(3), unit(3)),
    "TransformedStickBreaking": (lambda d, loc, scale: d.TransformedDistribution(
        d.Independent(d.Normal(loc, scale), 1), d.transforms.StickBreakingTransform()),
        dict(loc=rng.randn(3), scale=pos(3)), simplex(4), None),
}
CASES["Multinomial"] = CASES["Multinomial"][:2] + (counts(6, CASES["Multinomial"][1]["p"]), None)
# Cholesky factors of random correlation matrices
CASES["LKJCholesky"] = CASES["LKJCholesky"][:2] + (np.stack([np.linalg.cholesky(
    (lambda c: c / np.sqrt(np.outer(np.diag(c), np.diag(c))))(spd(3))) for _ in range(2)]), None)


def fl_or_torch(d):
    return torch if d is torch.distributions else fl


def build(lib, name, params):
    builder = CASES[name][0]
    return builder(getattr(lib, D), *params)


def outcome_of(fn):
    """fn()'s value, or the name of the exception class it raised (compared across libraries)."""
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - compared between the libraries
        return type(e).__name__


STATS = ("mean", "mode", "variance", "stddev")
# torch's igamma has no derivative in its first argument: their cdf values are compared without gradients
CDF_NO_GRAD = {"Gamma", "Chi2", "InverseGamma"}


@pytest.mark.parametrize("name", list(CASES))
def test_log_prob_entropy_moments_and_grads(name):
    """Every statistic and density torch gives agrees (or raises the same class), with the gradients of all
    parameters."""
    _, params, value, prob = CASES[name]

    def body(lib, *ps):
        d = build(lib, name, ps)
        v = convert(lib, value)
        cdf = outcome_of(lambda: d.cdf(v))
        out = [d.log_prob(v), outcome_of(d.entropy), cdf.detach() if name in CDF_NO_GRAD else cdf]
        out += [outcome_of(lambda s=s: getattr(d, s)) for s in STATS]
        if prob is not None:
            out.append(outcome_of(lambda: d.icdf(convert(lib, prob))))
        return out

    check_both(body, *params.values(), grad=True, rtol=1e-6, atol=1e-8, quiet=True)


@pytest.mark.parametrize("name", ["Normal", "Gamma", "Beta", "Dirichlet", "Bernoulli_logits", "Categorical_probs",
                                  "Binomial", "MVN_scale_tril", "LowRankMVN", "Gumbel", "StudentT", "VonMises"])
def test_float32_parameters(name):
    """float32 parameters give float32 densities, statistics and draws (and the same values within float32
    rounding)."""
    _, params, value, _ = CASES[name]

    def body(lib, *ps):
        d = build(lib, name, ps)
        v = convert(lib, value, "float32" if value.dtype.kind == "f" else None)
        return [d.log_prob(v), outcome_of(d.entropy), d.mean, str(d.sample((2,)).dtype).split(".")[-1]]

    check_both(body, *params.values(), dtype="float32", grad=True, rtol=2e-5, atol=1e-5, quiet=True)


@pytest.mark.parametrize("name", list(CASES))
def test_shapes_support_and_samples(name):
    """batch/event shapes, has_rsample, support class, sample and rsample shapes and dtypes, expand."""
    _, params, value, _ = CASES[name]

    def body(lib, *ps):
        d = build(lib, name, ps)
        sample = d.sample((4, 2))
        out = [tuple(d.batch_shape), tuple(d.event_shape), d.has_rsample, d.has_enumerate_support,
               type(d.support).__name__.lstrip("_"), tuple(sample.shape), str(sample.dtype).split(".")[-1],
               bool(d.support.check(sample).all())]
        if d.has_rsample:
            r = d.rsample((3,))
            out += [tuple(r.shape), r.requires_grad]
        big = d.expand((5,) + tuple(d.batch_shape))
        out += [tuple(big.batch_shape), big.log_prob(convert(lib, value))]
        out += [outcome_of(lambda s=s: getattr(big, s)) for s in STATS]
        return out

    check_both(body, *params.values(), grad=True, rtol=1e-6, atol=1e-8, quiet=True)


def test_enumerate_support():
    for name in ("Bernoulli_probs", "Categorical_probs", "Binomial", "OneHotCategorical"):
        _, params, _, _ = CASES[name]
        check_both(lambda lib, *ps: [build(lib, name, ps).enumerate_support(),
                                     build(lib, name, ps).enumerate_support(expand=False)], *params.values())


def test_utils():
    def body(lib, m, p):
        u = lib.distributions.utils
        vec = u.tril_matrix_to_vec(m, diag=-1)
        return [vec, u.vec_to_tril_matrix(vec, diag=-1), u.tril_matrix_to_vec(m), u.probs_to_logits(p),
                u.probs_to_logits(p, is_binary=True), u.logits_to_probs(m), u.logits_to_probs(m, is_binary=True),
                u.clamp_probs(p * 0), list(u.broadcast_all(p, 2.0, m[..., :1]))]

    check_both(body, rng.randn(2, 4, 4), simplex(2, 4), grad=True)
    assert_raises_same(lambda lib: lib.distributions.utils.broadcast_all(lib.ones(2), "a"), match_message=True)
    assert_raises_same(lambda lib: lib.distributions.utils.vec_to_tril_matrix(lib.ones(4)), match_message=True)


# ---- validation: torch's ValueError (and first line) -------------------------------------------------------------

def _bad(lib, which):
    d = lib.distributions
    t = lib.tensor
    return {
        "negative scale": lambda: d.Normal(t([0.0, 1.0]), t([1.0, -1.0])),
        "probs above 1": lambda: d.Bernoulli(probs=t([0.2, 1.5])),
        "probs and logits": lambda: d.Bernoulli(probs=t([0.2]), logits=t([0.1])),
        "categorical 0-d": lambda: d.Categorical(probs=t(1.0)),
        "uniform low >= high": lambda: d.Uniform(t([0.0, 2.0]), t([1.0, 1.0])),
        "beta concentration": lambda: d.Beta(t([0.0]), t([1.0])),
        "dirichlet 0-d": lambda: d.Dirichlet(t(1.0)),
        "not positive definite": lambda: d.MultivariateNormal(t([0.0, 0.0]),
                                                              covariance_matrix=t([[1.0, 2.0], [2.0, 1.0]])),
        "two matrices": lambda: d.MultivariateNormal(t([0.0]), covariance_matrix=t([[1.0]]), scale_tril=t([[1.0]])),
        "value outside support": lambda: d.Exponential(t([1.0])).log_prob(t([-1.0])),
        "value wrong event shape": lambda: d.Dirichlet(t([1.0, 2.0])).log_prob(t([0.2, 0.3, 0.5])),
        "value not broadcastable": lambda: d.Normal(t([0.0, 1.0]), t([1.0, 1.0])).log_prob(t([0.0, 1.0, 2.0])),
        "log_prob of a list": lambda: d.Normal(t([0.0]), t([1.0])).log_prob([0.0]),
        "categorical index out of range": lambda: d.Categorical(probs=t([0.5, 0.5])).log_prob(t(2)),
        "geometric probs 0": lambda: d.Geometric(probs=t([0.0, 0.5])),
        "multinomial inhomogeneous": lambda: d.Multinomial(t([2, 3]), probs=t([0.5, 0.5])),
        "lowrank incompatible batch": lambda: d.LowRankMultivariateNormal(lib.zeros(2, 3), lib.zeros(4, 3, 1),
                                                                          lib.ones(3)),
        "independent too many dims": lambda: d.Independent(d.Normal(t([0.0]), t([1.0])), 2),
        "kl not implemented": lambda: d.kl_divergence(d.VonMises(t([0.0]), t([1.0])), d.Normal(0.0, 1.0)),
        "transform cache": lambda: d.transforms.ExpTransform(cache_size=2),
        "biject_to unknown": lambda: d.biject_to(d.constraints.positive_definite),
        "set_default_validate_args": lambda: d.Distribution.set_default_validate_args(2),
    }[which]


VALIDATION = ["negative scale", "probs above 1", "probs and logits", "categorical 0-d", "uniform low >= high",
              "beta concentration", "dirichlet 0-d", "not positive definite", "two matrices", "value outside support",
              "value wrong event shape", "value not broadcastable", "log_prob of a list",
              "categorical index out of range", "geometric probs 0", "multinomial inhomogeneous",
              "lowrank incompatible batch",
              "independent too many dims", "kl not implemented", "transform cache", "biject_to unknown",
              "set_default_validate_args"]


@pytest.mark.parametrize("which", VALIDATION)
def test_validation_errors(which):
    assert_raises_same(lambda lib: _bad(lib, which)(), match_message=which not in ("not positive definite",))


def test_validate_args_off():
    """validate_args=False (per instance, and by set_default_validate_args) skips the checks in both."""
    for lib in LIBS:
        d = lib.distributions
        assert d.Normal(lib.tensor([0.0]), lib.tensor([-1.0]), validate_args=False).scale.item() == -1.0
        d.Distribution.set_default_validate_args(False)
        try:
            assert float(d.Exponential(lib.tensor([1.0])).log_prob(lib.tensor([-1.0]))) == 1.0
        finally:
            d.Distribution.set_default_validate_args(True)


# ---- kl_divergence ---------------------------------------------------------------------------------------------

KL_PAIRS = {
    "Normal": (lambda d, a, b, c, e: (d.Normal(a, b), d.Normal(c, e)),
               [rng.randn(3), pos(3), rng.randn(3), pos(3)]),
    "Categorical": (lambda d, a, b: (d.Categorical(probs=a), d.Categorical(logits=b)),
                    [simplex(2, 4), rng.randn(2, 4)]),
    "OneHotCategorical": (lambda d, a, b: (d.OneHotCategorical(probs=a), d.OneHotCategorical(probs=b)),
                          [simplex(4), simplex(4)]),
    "Bernoulli": (lambda d, a, b: (d.Bernoulli(probs=a), d.Bernoulli(logits=b)), [unit(4), rng.randn(4)]),
    "MVN": (lambda d, a, L, c, S: (d.MultivariateNormal(a, scale_tril=L), d.MultivariateNormal(c, covariance_matrix=S)),
            [rng.randn(2, 3), tril(3, (2,)), rng.randn(3), spd(3)]),
    "LowRank_LowRank": (lambda d, a, W, g, c, V, h: (d.LowRankMultivariateNormal(a, W, g),
                                                   d.LowRankMultivariateNormal(c, V, h)),
                        [rng.randn(2, 3), rng.randn(3, 2), pos(3), rng.randn(3), rng.randn(2, 3, 1), pos(2, 3)]),
    "MVN_LowRank": (lambda d, a, L, c, V, h: (d.MultivariateNormal(a, scale_tril=L),
                                              d.LowRankMultivariateNormal(c, V, h)),
                    [rng.randn(3), tril(3, (2,)), rng.randn(3), rng.randn(3, 2), pos(3)]),
    "LowRank_MVN": (lambda d, a, W, g, c, S: (d.LowRankMultivariateNormal(a, W, g),
                                              d.MultivariateNormal(c, covariance_matrix=S)),
                    [rng.randn(3), rng.randn(2, 3, 2), pos(3), rng.randn(3), spd(3)]),
    "Beta": (lambda d, a, b, c, e: (d.Beta(a, b), d.Beta(c, e)), [pos(3), pos(3), pos(3), pos(3)]),
    "Gamma": (lambda d, a, b, c, e: (d.Gamma(a, b), d.Gamma(c, e)), [pos(3), pos(3), pos(3), pos(3)]),
    "Chi2": (lambda d, a, b: (d.Chi2(a), d.Chi2(b)), [pos(3), pos(3)]),
    "Dirichlet": (lambda d, a, b: (d.Dirichlet(a), d.Dirichlet(b)), [pos(2, 4), pos(2, 4)]),
    "Exponential": (lambda d, a, b: (d.Exponential(a), d.Exponential(b)), [pos(3), pos(3)]),
    "Uniform": (lambda d, a, b, c, e: (d.Uniform(a, b), d.Uniform(c, e)),
                [-unit(3), unit(3), -unit(3) - 1, unit(3) + 1]),
    "Uniform_not_covered": (lambda d, a, b, c, e: (d.Uniform(a, b), d.Uniform(c, e)),
                            [-pos(3), pos(3), -unit(3), unit(3)]),
    "Independent": (lambda d, a, b, c, e: (d.Independent(d.Normal(a, b), 1), d.Independent(d.Normal(c, e), 1)),
                    [rng.randn(2, 3), pos(2, 3), rng.randn(2, 3), pos(2, 3)]),
    "Laplace": (lambda d, a, b, c, e: (d.Laplace(a, b), d.Laplace(c, e)), [rng.randn(3), pos(3), rng.randn(3), pos(3)]),
    "Poisson": (lambda d, a, b: (d.Poisson(a), d.Poisson(b)), [pos(3), pos(3)]),
    "Pareto": (lambda d, a, b, c, e: (d.Pareto(a, b), d.Pareto(c, e)), [pos(4), pos(4), pos(4), pos(4)]),
    "ContinuousBernoulli": (lambda d, a, b: (d.ContinuousBernoulli(probs=a), d.ContinuousBernoulli(logits=b)),
                            [np.array([0.2, 0.5002, 0.9]), rng.randn(3)]),
    "Geometric": (lambda d, a, b: (d.Geometric(probs=a), d.Geometric(probs=b)), [unit(3), unit(3)]),
    "Binomial": (lambda d, a, b: (d.Binomial(5, probs=a), d.Binomial(5, probs=b)), [unit(3), unit(3)]),
    "Gumbel": (lambda d, a, b, c, e: (d.Gumbel(a, b), d.Gumbel(c, e)), [rng.randn(3), pos(3), rng.randn(3), pos(3)]),
    "HalfNormal": (lambda d, a, b: (d.HalfNormal(a), d.HalfNormal(b)), [pos(3), pos(3)]),
    "LogNormal": (lambda d, a, b, c, e: (d.LogNormal(a, b), d.LogNormal(c, e)),
                  [rng.randn(3), pos(3), rng.randn(3), pos(3)]),
    "Cauchy": (lambda d, a, b, c, e: (d.Cauchy(a, b), d.Cauchy(c, e)), [rng.randn(3), pos(3), rng.randn(3), pos(3)]),
}


@pytest.mark.parametrize("pair", list(KL_PAIRS))
def test_kl_divergence(pair):
    make, params = KL_PAIRS[pair]
    check_both(lambda lib, *ps: lib.distributions.kl_divergence(*make(lib.distributions, *ps)), *params, grad=True,
               rtol=1e-6, atol=1e-8)


EXP_FAMILIES = ["Normal", "Exponential", "Gamma", "Beta", "Dirichlet", "Bernoulli_probs",
                "ContinuousBernoulli_logits", "Wishart_covariance"]


@pytest.mark.parametrize("name", EXP_FAMILIES)
def test_exponential_family_bregman_entropy_and_kl(name):
    """ExponentialFamily's generic entropy and the Bregman KL (from the natural parameters and log normalizer)
    agree with torch's, values and gradients."""
    _, params, _, _ = CASES[name]
    other = {k: v * 0.8 for k, v in params.items()}  # valid parameters of every family listed

    def body(lib, *ps):
        d = lib.distributions
        p, q = build(lib, name, ps[:len(params)]), build(lib, name, ps[len(params):])
        return [isinstance(p, d.ExponentialFamily), d.ExponentialFamily.entropy(p),
                d.kl._kl_expfamily_expfamily(p, q)]

    check_both(body, *params.values(), *other.values(), grad=True, rtol=1e-6, atol=1e-8)


def test_register_kl_dispatch():
    """A user pair registered on a subclass wins over the base pair, in both libraries."""
    results = []
    for lib in LIBS:
        d = lib.distributions

        class MyNormal(d.Normal):
            pass

        @d.register_kl(MyNormal, d.Normal)
        def _kl(p, q):
            return p.loc * 0 + 42.0

        results.append([float(d.kl_divergence(MyNormal(0.0, 1.0), d.Normal(0.0, 1.0))),
                        float(d.kl_divergence(d.Normal(0.0, 1.0), MyNormal(1.0, 1.0)))])
        del d.kl._KL_REGISTRY[MyNormal, d.Normal]
        d.kl._KL_MEMOIZE.clear()
    assert results[0] == results[1]


# ---- transforms and the constraint registry ------------------------------------------------------------------------

CONSTRAINTS = ["real", "positive", "nonnegative", "unit_interval", "simplex", "lower_cholesky", "corr_cholesky",
               "real_vector", "positive_definite", "greater_than(-1.5)", "less_than(2.0)", "interval(-1.0, 3.0)",
               "cat([constraints.positive, constraints.real], 0, [2, 3])",
               "stack([constraints.unit_interval, constraints.positive] * 2 + [constraints.real], 0)"]


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("constraint", CONSTRAINTS)
def test_constraint_registry_round_trip(registry, constraint):
    """The registry's transform of an unconstrained x: its value (in the constraint), inverse and log |det J|."""
    shapes = {"simplex": (2, 3), "lower_cholesky": (2, 3, 3), "corr_cholesky": (2, 6), "positive_definite": (3, 3),
              "real_vector": (2, 3)}
    x = rng.randn(*shapes.get(constraint, (5,)))

    def body(lib, x):
        constraints = lib.distributions.constraints  # noqa: F841 - used by the expressions
        c = eval("constraints." + constraint)  # noqa: S307 - expressions from the list above
        t = getattr(lib.distributions, registry)(c)
        y = t(x)
        out = [repr(t).replace("\n", ""), y, bool(c.check(y).all()), t.inv(y)]
        try:
            out.append(t.log_abs_det_jacobian(x, y))
        except NotImplementedError:
            out.append("NotImplementedError")
        return out

    check_both(body, x, grad=True, rtol=1e-6, atol=1e-7)


CHECKS = {  # constraint expression -> a value with valid and invalid events
    "real": np.array([0.0, np.inf, np.nan]), "boolean": np.array([0.0, 1.0, 0.5]),
    "nonnegative_integer": np.array([0.0, 3.0, -1.0, 1.5]), "positive_integer": np.array([0.0, 3.0, 1.5]),
    "integer_interval(1, 4)": np.array([0.0, 1.0, 4.0, 5.0, 2.5]), "positive": np.array([0.0, 1.0, -1.0]),
    "greater_than_eq(-1.0)": np.array([-1.0, -2.0]), "less_than(2.0)": np.array([2.0, 1.0]),
    "half_open_interval(0.0, 1.0)": np.array([0.0, 1.0, 0.5]), "interval(-1.0, 1.0)": np.array([-1.0, 1.0, 2.0]),
    "simplex": np.array([[0.2, 0.8], [0.5, 0.6], [-0.1, 1.1]]), "one_hot": np.array([[0.0, 1.0], [1.0, 1.0]]),
    "real_vector": np.array([[0.0, np.nan], [1.0, 2.0]]), "multinomial(3)": np.array([[1.0, 2.0], [2.0, 2.0]]),
    "lower_triangular": np.array([[[1.0, 0.0], [2.0, 3.0]], [[1.0, 1.0], [0.0, 1.0]]]),
    "lower_cholesky": np.array([[[1.0, 0.0], [2.0, 3.0]], [[-1.0, 0.0], [0.0, 1.0]]]),
    "corr_cholesky": np.array([[[1.0, 0.0], [0.6, 0.8]], [[1.0, 0.0], [0.5, 0.5]]]),
    "independent(constraints.positive, 1)": np.array([[1.0, 2.0], [1.0, -2.0]]),
    "cat([constraints.positive, constraints.real], 0, [1, 2])": np.array([-1.0, 0.0, 1.0]),
    "stack([constraints.positive, constraints.unit_interval], 0)": np.array([[1.0, -1.0], [0.5, 2.0]]),
    "MixtureSameFamilyConstraint(constraints.positive)": np.array([1.0, -1.0]),
}


@pytest.mark.parametrize("expr", list(CHECKS))
def test_constraints_check_repr_and_attributes(expr):
    def body(lib, value):
        constraints = lib.distributions.constraints  # noqa: F841 - used by the expressions
        c = eval("constraints." + expr)  # noqa: S307 - expressions from the table above
        return [c.check(value), repr(c), c.is_discrete, c.event_dim]

    check_both(body, CHECKS[expr], exact=True)


TRANSFORMS = {
    "Exp": lambda T: T.ExpTransform(), "Sigmoid": lambda T: T.SigmoidTransform(), "Tanh": lambda T: T.TanhTransform(),
    "Softplus": lambda T: T.SoftplusTransform(), "Abs": lambda T: T.AbsTransform(),
    "Affine": lambda T: T.AffineTransform(0.5, -2.0), "Power": lambda T: T.ExpTransform().inv.inv,
    "Compose": lambda T: T.ComposeTransform([T.AffineTransform(1.0, 3.0), T.SigmoidTransform()]),
    "ExpInv": lambda T: T.ComposeTransform([T.ExpTransform(), T.ExpTransform().inv]),
    "Reshape": lambda T: T.ReshapeTransform((6,), (2, 3)),
    "IndependentSigmoid": lambda T: T.IndependentTransform(T.SigmoidTransform(), 1),
    "Cat": lambda T: T.CatTransform([T.ExpTransform(), T.IndependentTransform(T.SigmoidTransform(), 1)], dim=-1,
                                    lengths=[2, 4]),
    "CatDim0": lambda T: T.CatTransform([T.ExpTransform(), T.TanhTransform()], dim=0, lengths=[1, 3]),
    "Stack": lambda T: T.StackTransform([T.ExpTransform(), T.AffineTransform(1.0, 2.0)] * 3, dim=1),
}


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_transforms(name):
    x = rng.randn(4, 6)

    def body(lib, x):
        t = TRANSFORMS[name](lib.distributions.transforms)
        y = t(x)
        out = [y, t.inv(y), t.bijective, t.domain.event_dim, t.codomain.event_dim, t.forward_shape((4, 6)),
               t.inverse_shape(tuple(y.shape)), t == TRANSFORMS[name](lib.distributions.transforms)]
        out.append(outcome_of(lambda: t.log_abs_det_jacobian(x, y)))
        out.append(outcome_of(lambda: t.sign if isinstance(t.sign, int) else "tensor sign"))
        return out

    check_both(body, x, grad=True, rtol=1e-6, atol=1e-8)


def test_cumulative_distribution_transform():
    def body(lib, loc, scale, x):
        T = lib.distributions.transforms
        t = T.CumulativeDistributionTransform(lib.distributions.Normal(loc, scale))
        y = t(x)
        return [y, t.inv(y), t.log_abs_det_jacobian(x, y), repr(t.domain), repr(t.codomain)]

    check_both(body, rng.randn(4), pos(4), rng.randn(4), grad=True, rtol=1e-6, atol=1e-8)


def test_transform_cache():
    """With cache_size=1 the inverse of the last output is the input itself (not recomputed)."""
    for lib in LIBS:
        t = lib.distributions.transforms.ExpTransform(cache_size=1)
        x = lib.tensor([1e3])  # exp overflows: only the cache gives x back
        assert t.inv(t(x)) is x


# ---- the Gamma sampler's gradient and sample statistics -------------------------------------------------------------

def test_standard_gamma_grad_matches_torch():
    """flowlike's d x / d alpha of standard Gamma draws (every branch: small x, large alpha near and away from the
    mode, the rational approximation) equals torch._standard_gamma_grad."""
    from flowlike.distributions._sampling import _standard_gamma_grad
    alpha = np.repeat([0.05, 0.3, 1.0, 2.5, 7.9, 8.5, 30.0, 200.0], 7)
    x = alpha * np.tile([0.01, 0.3, 0.85, 0.95, 1.05, 1.5, 3.0], 8) + np.tile([0.0, 0, 0, 0, 0, 0, 0.1], 8)
    for dtype in (torch.float64, torch.float32):
        a, v = torch.from_numpy(alpha).to(dtype), torch.from_numpy(x).to(dtype)
        want = torch._standard_gamma_grad(a, v)
        got = _standard_gamma_grad(to_flowlike(a), to_flowlike(v))
        assert_same(got, want, rtol=1e-5 if dtype == torch.float32 else 1e-9, atol=1e-7)


@pytest.mark.parametrize("name, make", [
    ("Gamma", lambda d, a: d.Gamma(a, 2.0)), ("Beta", lambda d, a: d.Beta(a, a.flip(0))),
    ("Dirichlet", lambda d, a: d.Dirichlet(a)), ("Chi2", lambda d, a: d.Chi2(a)),
    ("StudentT", lambda d, a: d.StudentT(a + 2.0))])
def test_rsample_gradient_expectations_agree(name, make):
    """The mean over many reparameterized draws of d(sum of draws)/d(parameter), in each library from its own
    generator: both estimate the same derivative of the mean, so they agree within sampling error."""
    a = np.array([0.4, 1.5, 6.0])
    grads = []
    for lib in LIBS:
        lib.manual_seed(3)
        p = convert(lib, a, requires_grad=True)
        make(lib.distributions, p).rsample((40000,)).mean(0).sum().backward()
        grads.append(p.grad.numpy().copy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=0.05, atol=0.02)


@pytest.mark.parametrize("eta", [0.5, 1.0, 4.0])
def test_lkj_cholesky_sample_spread_agrees(eta):
    """The variances of the correlations drawn by LKJCholesky agree with torch's sampler's, entry by entry."""
    spreads = []
    for lib in LIBS:
        lib.manual_seed(0)
        L = lib.distributions.LKJCholesky(4, lib.tensor(eta, dtype=lib.float64)).sample((20000,)).numpy()
        C = L @ np.swapaxes(L, -1, -2)
        spreads.append(C[:, [1, 2, 2, 3, 3, 3], [0, 0, 1, 0, 1, 2]].var(0))
    np.testing.assert_allclose(spreads[1], spreads[0], rtol=0.06)


# ---- training steps fed the same draws -------------------------------------------------------------------------------

def _fixed_normal(monkeypatch, eps):
    """Makes Normal.rsample's standard normal draws (both libraries') the given values."""
    import flowlike.distributions._univariate as fl_uni
    import torch.distributions.normal as t_normal
    monkeypatch.setattr(t_normal, "_standard_normal", lambda shape, dtype, device: eps.to(dtype).reshape(shape))
    flowlike_eps = to_flowlike(eps)
    monkeypatch.setattr(fl_uni, "_standard_normal", lambda shape, dtype, device=None: flowlike_eps.to(dtype).reshape(
        shape))


def test_vae_step_matches_torch(monkeypatch):
    """A VAE step: encoder to (loc, log scale), z = Normal(loc, scale).rsample(), Bernoulli decoder log-likelihood
    minus KL to the standard normal prior; Adam updates of both nets equal torch's."""
    torch.manual_seed(0)
    x = (torch.rand(8, 10) > 0.5).double()
    eps = torch.randn(8, 3, dtype=torch.float64)
    _fixed_normal(monkeypatch, eps)
    weights = [torch.randn(6, 10, dtype=torch.float64) * 0.3, torch.zeros(6, dtype=torch.float64),
               torch.randn(10, 3, dtype=torch.float64) * 0.3, torch.zeros(10, dtype=torch.float64)]
    results = []
    for lib in LIBS:
        ws = [convert(lib, w, requires_grad=True) for w in weights]
        opt = lib.optim.Adam(ws, lr=0.05)
        xb = convert(lib, x)
        d = lib.distributions
        for _ in range(3):
            h = xb @ ws[0].T + ws[1]
            loc, log_scale = h[:, :3], h[:, 3:]
            q = d.Independent(d.Normal(loc, log_scale.exp()), 1)
            z = q.rsample()
            px = d.Independent(d.Bernoulli(logits=z @ ws[2].T + ws[3]), 1)
            prior = d.Independent(d.Normal(lib.zeros_like(loc), lib.ones_like(loc)), 1)
            loss = -(px.log_prob(xb) - d.kl_divergence(q, prior)).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        results.append([loss.detach()] + [w.detach() for w in ws])
    assert_same(results[1], results[0], rtol=1e-9, atol=1e-10)


def test_reinforce_step_matches_torch():
    """A policy-gradient step: Categorical policy over logits of a linear net, actions drawn in torch and scored
    in both, loss -(log_prob * advantage) - 0.01 entropy; SGD updates equal torch's."""
    torch.manual_seed(1)
    obs = torch.randn(16, 5, dtype=torch.float64)
    w0 = torch.randn(4, 5, dtype=torch.float64) * 0.5
    actions = torch.distributions.Categorical(logits=obs @ w0.T).sample()
    returns = torch.randn(16, dtype=torch.float64)
    results = []
    for lib in LIBS:
        w = convert(lib, w0, requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1, momentum=0.9)
        for _ in range(3):
            policy = lib.distributions.Categorical(logits=convert(lib, obs) @ w.T)
            adv = convert(lib, returns) - convert(lib, returns).mean()
            loss = -(policy.log_prob(convert(lib, actions)) * adv).mean() - 0.01 * policy.entropy().mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        results.append([loss.detach(), w.detach()])
    assert_same(results[1], results[0], rtol=1e-9, atol=1e-10)

