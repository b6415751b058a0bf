"""torch.distributions on flowlike, in Python over flowlike ops: the Distribution base (shapes, validation with
torch's ValueErrors, sample/rsample drawing from flowlike's generator so that manual_seed makes runs
reproducible), the families, transforms with biject_to/transform_to, and kl_divergence with register_kl."""
import sys

from . import _composite, _discrete, _multivariate, _univariate, constraints, transforms
from ._composite import (ExpRelaxedCategorical, Gumbel, HalfCauchy, HalfNormal, Independent, InverseGamma,
                         Kumaraswamy, LogisticNormal, LogitRelaxedBernoulli, LogNormal, MixtureSameFamily, Pareto,
                         RelaxedBernoulli, RelaxedOneHotCategorical, TransformedDistribution, Weibull)
from ._discrete import (Bernoulli, Binomial, Categorical, Geometric, Multinomial, NegativeBinomial, OneHotCategorical,
                        OneHotCategoricalStraightThrough)
from ._multivariate import Beta, Dirichlet, LKJCholesky, LowRankMultivariateNormal, MultivariateNormal, Wishart
from ._univariate import (Cauchy, Chi2, ContinuousBernoulli, Exponential, FisherSnedecor, Gamma, GeneralizedPareto,
                          Laplace, Normal, Poisson, StudentT, Uniform, VonMises)
from .constraint_registry import biject_to, transform_to
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .kl import kl_divergence, register_kl
from .transforms import *  # noqa: F401,F403 - torch.distributions re-exports every transform
from .._missing import module_getattr

__all__ = ["Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "ContinuousBernoulli", "Dirichlet",
           "Distribution", "Exponential", "ExponentialFamily", "ExpRelaxedCategorical", "FisherSnedecor", "Gamma",
           "GeneralizedPareto", "Geometric", "Gumbel", "HalfCauchy", "HalfNormal", "Independent", "InverseGamma",
           "Kumaraswamy", "Laplace", "LKJCholesky", "LogNormal", "LogisticNormal", "LogitRelaxedBernoulli",
           "LowRankMultivariateNormal", "MixtureSameFamily", "Multinomial", "MultivariateNormal", "NegativeBinomial",
           "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough", "Pareto", "Poisson", "RelaxedBernoulli",
           "RelaxedOneHotCategorical", "StudentT", "TransformedDistribution", "Uniform", "VonMises", "Weibull",
           "Wishart", "biject_to", "kl_divergence", "register_kl", "transform_to", "constraints"]
__all__.extend(transforms.__all__)

# torch keeps one module per family (torch.distributions.normal, ...); those names are the module defining the
# family here, so that `from torch.distributions.normal import Normal` works
_FAMILY_MODULES = {
    _univariate: ["normal", "laplace", "cauchy", "uniform", "exponential", "gamma", "chi2", "studentT", "poisson",
                  "von_mises", "fishersnedecor", "generalized_pareto", "continuous_bernoulli"],
    _discrete: ["bernoulli", "geometric", "binomial", "negative_binomial", "categorical", "one_hot_categorical",
                "multinomial"],
    _multivariate: ["dirichlet", "beta", "multivariate_normal", "lowrank_multivariate_normal",
                    "lkj_cholesky", "wishart"],
    _composite: ["independent", "mixture_same_family", "transformed_distribution", "log_normal", "half_normal",
                 "half_cauchy", "gumbel", "pareto", "weibull", "inverse_gamma", "kumaraswamy", "logistic_normal",
                 "relaxed_bernoulli", "relaxed_categorical"],
}
for _module, _names in _FAMILY_MODULES.items():
    for _name in _names:
        sys.modules[f"{__name__}.{_name}"] = _module
        globals()[_name] = _module

__getattr__ = module_getattr(__name__, "torch.distributions")
