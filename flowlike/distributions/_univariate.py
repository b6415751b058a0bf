"""Continuous univariate families (and Poisson): Normal, Uniform, Exponential, Laplace, Cauchy, Gamma, Chi2,
StudentT, FisherSnedecor, VonMises, GeneralizedPareto, ContinuousBernoulli, Poisson. Samplers and formulas are
torch's, so that rsample gradients are the same."""
import math

from .. import (Size, arange, atan, digamma, empty, erf, erfinv, exp, expm1, finfo, float64, full, isclose, lgamma, log,
                log1p, no_grad, ones_like, poisson, rsqrt, special, tan, tensor, where, xlogy, zeros_like)
from ..nn.functional import binary_cross_entropy_with_logits
from . import constraints
from ._base import _Broadcast, _ProbsOrLogits
from .exp_family import ExponentialFamily
from ._sampling import _standard_gamma
from .distribution import Distribution
from .utils import _standard_normal, broadcast_all, clamp_probs, lazy_property, logits_to_probs


class _LocScale(_Broadcast):
    _params = ("loc", "scale")
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self._set_params(loc, scale, validate_args=validate_args)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc


class Normal(_LocScale, ExponentialFamily):
    """Normal(loc, scale): the Gaussian with mean loc and standard deviation scale."""
    _mean_carrier_measure = 0

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def rsample(self, sample_shape=Size()):
        eps = _standard_normal(self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -((value - self.loc) ** 2) / (2 * self.scale ** 2) - self.scale.log() - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value):
        return self.loc + self.scale * erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + log(self.scale)

    @property
    def _natural_params(self):
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * log(-math.pi / y)


class Laplace(_LocScale):
    """Laplace(loc, scale): density exp(-|x - loc| / scale) / (2 scale)."""

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return 2 ** 0.5 * self.scale

    def rsample(self, sample_shape=Size()):
        eps = finfo(self.loc.dtype).eps
        u = empty(self._extended_shape(sample_shape), dtype=self.loc.dtype).uniform_(eps - 1, 1)
        return self.loc - self.scale * u.sign() * log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -log(2 * self.scale) - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * expm1(-(value - self.loc).abs() / self.scale)

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * log1p(-2 * term.abs())

    def entropy(self):
        return 1 + log(2 * self.scale)


class Cauchy(_LocScale):
    """Cauchy(loc, scale): the Lorentz distribution (no mean, infinite variance)."""

    @property
    def mean(self):
        return full(self._extended_shape(), math.nan, dtype=self.loc.dtype)

    @property
    def variance(self):
        return full(self._extended_shape(), math.inf, dtype=self.loc.dtype)

    def rsample(self, sample_shape=Size()):
        eps = empty(self._extended_shape(sample_shape), dtype=self.loc.dtype).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()


class Uniform(_Broadcast):
    """Uniform(low, high): uniform on the half-open interval [low, high)."""
    _params = ("low", "high")
    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        self._set_params(low, high, validate_args=validate_args)

    @property
    def arg_constraints(self):
        return {"low": constraints.less_than(self.high), "high": constraints.greater_than(self.low)}

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return math.nan * self.high

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=Size()):
        rand = empty(self._extended_shape(sample_shape), dtype=self.low.dtype).uniform_()
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        lb = self.low.le(value).type_as(self.low)
        ub = self.high.gt(value).type_as(self.low)
        return log(lb.mul(ub)) - log(self.high - self.low)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return log(self.high - self.low)


class Exponential(_Broadcast, ExponentialFamily):
    """Exponential(rate): density rate * exp(-rate x) on x >= 0."""
    _params = ("rate",)
    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate, validate_args=None):
        self._set_params(rate, validate_args=validate_args)

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=Size()):
        return empty(self._extended_shape(sample_shape), dtype=self.rate.dtype).exponential_() / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - exp(-self.rate * value)

    def icdf(self, value):
        return -log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - log(self.rate)

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -log(-x)


class Gamma(_Broadcast, ExponentialFamily):
    """Gamma(concentration, rate): density rate^a x^(a-1) exp(-rate x) / Gamma(a); rsample differentiates
    through the draw as torch does (implicit reparameterization)."""
    _params = ("concentration", "rate")
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self._set_params(concentration, rate, validate_args=validate_args)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        value = _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        value.detach().clamp_(min=finfo(value.dtype).tiny)
        return value

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (xlogy(self.concentration, self.rate) + xlogy(self.concentration - 1, value) - self.rate * value -
                lgamma(self.concentration))

    def entropy(self):
        return (self.concentration - log(self.rate) + lgamma(self.concentration) +
                (1.0 - self.concentration) * digamma(self.concentration))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return special.gammainc(self.concentration, self.rate * value)

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return lgamma(x + 1) + (x + 1) * log(-y.reciprocal())


class Chi2(Gamma):
    """Chi2(df): Gamma(df / 2, 1 / 2)."""
    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    @property
    def df(self):
        return self.concentration * 2


class StudentT(_Broadcast):
    """StudentT(df, loc, scale): Student's t with df degrees of freedom, shifted and scaled."""
    _params = ("df", "loc", "scale")
    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def _expand_extra(self, new, batch_shape):
        new._chi2 = self._chi2.expand(batch_shape)

    @property
    def mean(self):
        return where(self.df <= 1, math.nan, self.loc)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        finite = self.scale.pow(2) * self.df / (self.df - 2)
        return where(self.df > 2, finite, where(self.df > 1, math.inf, math.nan))

    def rsample(self, sample_shape=Size()):
        x = _standard_normal(self._extended_shape(sample_shape), dtype=self.df.dtype)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * (x * rsqrt(z / self.df))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi) + lgamma(0.5 * self.df) -
             lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * log1p(y ** 2.0 / self.df) - z

    def entropy(self):
        lbeta = lgamma(0.5 * self.df) + math.lgamma(0.5) - lgamma(0.5 * (self.df + 1))
        return (self.scale.log() + 0.5 * (self.df + 1) * (digamma(0.5 * (self.df + 1)) - digamma(0.5 * self.df)) +
                0.5 * self.df.log() + lbeta)


class FisherSnedecor(_Broadcast):
    """FisherSnedecor(df1, df2): the F distribution, (X1 / df1) / (X2 / df2) for chi-squared X1, X2."""
    _params = ("df1", "df2")
    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self._set_params(df1, df2, validate_args=validate_args)
        self._gamma1, self._gamma2 = Gamma(self.df1 * 0.5, self.df1), Gamma(self.df2 * 0.5, self.df2)

    def _expand_extra(self, new, batch_shape):
        new._gamma1, new._gamma2 = self._gamma1.expand(batch_shape), self._gamma2.expand(batch_shape)

    @property
    def mean(self):
        return where(self.df2 <= 2, math.nan, self.df2 / (self.df2 - 2))

    @property
    def mode(self):
        return where(self.df1 <= 2, math.nan, (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2))

    @property
    def variance(self):
        df2 = where(self.df2 <= 4, math.nan, self.df2)
        return 2 * df2.pow(2) * (self.df1 + df2 - 2) / (self.df1 * (df2 - 2).pow(2) * (df2 - 4))

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        tiny = finfo(self.df1.dtype).tiny
        x1 = self._gamma1.rsample(sample_shape).view(shape)
        x2 = self._gamma2.rsample(sample_shape).view(shape).clamp(min=tiny)
        return (x1 / x2).clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        ct1, ct2, ct3 = self.df1 * 0.5, self.df2 * 0.5, self.df1 / self.df2
        t1 = (ct1 + ct2).lgamma() - ct1.lgamma() - ct2.lgamma()
        t2 = ct1 * ct3.log() + (ct1 - 1) * log(value)
        t3 = (ct1 + ct2) * log1p(ct3 * value)
        return t1 + t2 - t3


class Poisson(_Broadcast, ExponentialFamily):
    """Poisson(rate): counts with mean rate."""
    _params = ("rate",)
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        self._set_params(rate, validate_args=validate_args)

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=Size()):
        with no_grad():
            return poisson(self.rate.expand(self._extended_shape(sample_shape)))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self):
        return (log(self.rate),)

    def _log_normalizer(self, x):
        return exp(x)


# Abramowitz and Stegun's polynomial approximations of I0 and I1, small and large arguments (torch uses these)
_BESSEL_SMALL = ([1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.0360768, 0.0045813],
                 [0.5, 0.87890594, 0.51498869, 0.15084934, 0.02658733, 0.00301532, 0.00032411])
_BESSEL_LARGE = ([0.39894228, 0.01328592, 0.00225319, -0.00157565, 0.00916281, -0.02057706, 0.02635537, -0.01647633,
                  0.00392377],
                 [0.39894228, -0.03988024, -0.00362018, 0.00163801, -0.01031555, 0.02282967, -0.02895312, 0.01787654,
                  -0.00420059])


def _eval_poly(y, coef):
    result = coef[-1]
    for c in reversed(coef[:-1]):
        result = c + y * result
    return result


def _log_modified_bessel_fn(x, order=0):
    """log I_order(x) for order 0 or 1, x >= 0."""
    y = (x / 3.75) ** 2
    small = _eval_poly(y, _BESSEL_SMALL[order])
    if order == 1:
        small = x.abs() * small
    large = x - 0.5 * x.log() + _eval_poly(3.75 / x, _BESSEL_LARGE[order]).log()
    return where(x < 3.75, small.log(), large)


class VonMises(_Broadcast):
    """VonMises(loc, concentration): the circular normal on [-pi, pi); sampled by Best and Fisher's rejection (as
    torch), in float64."""
    _params = ("loc", "concentration")
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real

    def __init__(self, loc, concentration, validate_args=None):
        self._set_params(loc, concentration, validate_args=validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * (value - self.loc).cos()
        return log_prob - math.log(2 * math.pi) - _log_modified_bessel_fn(self.concentration, order=0)

    @lazy_property
    def _proposal_r(self):
        kappa = self.concentration.double()
        tau = 1 + (1 + 4 * kappa ** 2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        return where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho ** 2) / (2 * rho))  # series form for tiny kappa

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            conc = self.concentration.double().expand(shape).reshape(-1)
            r = self._proposal_r.expand(shape).reshape(-1)
            x, index = zeros_like(conc), arange(conc.numel())
            while index.numel():  # each round redraws the elements not accepted yet
                cc, rr = conc[index], r[index]
                u = empty((3, index.numel()), dtype=float64).uniform_()
                z = (math.pi * u[0]).cos()
                f = (1 + rr * z) / (rr + z)
                c = cc * (rr - f)
                accepted = ((c * (2 - c) - u[1]) > 0) | ((c / u[1]).log() + 1 - c >= 0)
                x[index[accepted]] = ((u[2] - 0.5).sign() * f.acos())[accepted]
                index = index[~accepted]
            value = (x.reshape(shape) + math.pi + self.loc.double()) % (2 * math.pi) - math.pi
            return value.to(self.loc.dtype)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 1 - (_log_modified_bessel_fn(self.concentration, order=1) -
                    _log_modified_bessel_fn(self.concentration, order=0)).exp()


class GeneralizedPareto(_Broadcast):
    """GeneralizedPareto(loc, scale, concentration): the limit law of exceedances over a high threshold;
    concentration 0 is the exponential case, negative concentrations bound the support above."""
    _params = ("loc", "scale", "concentration")
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self._set_params(loc, scale, concentration, validate_args=validate_args)

    def _safe_concentration(self):
        """(concentration == 0 where it is close to 0, the concentration with those entries set to 1)."""
        eq_zero = isclose(self.concentration, tensor(0.0, dtype=self.concentration.dtype))
        return eq_zero, where(eq_zero, ones_like(self.concentration), self.concentration)

    def rsample(self, sample_shape=Size()):
        return self.icdf(empty(self._extended_shape(sample_shape), dtype=self.loc.dtype).uniform_())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        eq_zero, safe_conc = self._safe_concentration()
        y = 1 / safe_conc + ones_like(z)
        where_nonzero = where(y == 0, y, y * log1p(safe_conc * z))
        return -self.scale.log() - where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        eq_zero, safe_conc = self._safe_concentration()
        return where(eq_zero, -z, -log1p(safe_conc * z) / safe_conc)

    def log_cdf(self, value):
        return log1p(-exp(self.log_survival_function(value)))

    def cdf(self, value):
        return exp(self.log_cdf(value))

    def icdf(self, value):
        eq_zero, safe_conc = self._safe_concentration()
        logu = log1p(-value)
        return where(eq_zero, self.loc - self.scale * logu,
                     self.loc + self.scale / safe_conc * expm1(-safe_conc * logu))

    @property
    def mean(self):
        valid = self.concentration < 1
        safe_conc = where(valid, self.concentration, 0.5)
        return where(valid, self.loc + self.scale / (1 - safe_conc), math.nan)

    @property
    def variance(self):
        valid = self.concentration < 0.5
        safe_conc = where(valid, self.concentration, 0.25)
        return where(valid, self.scale ** 2 / ((1 - safe_conc) ** 2 * (1 - 2 * safe_conc)), math.nan)

    def entropy(self):
        return (log(self.scale) + self.concentration + 1).broadcast_to(self._batch_shape)

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        upper = where(self.concentration < 0, self.loc - self.scale / self.concentration, math.inf)
        return constraints.interval(self.loc, upper)


class ContinuousBernoulli(_ProbsOrLogits, ExponentialFamily):
    """ContinuousBernoulli(probs=... | logits=...): density proportional to p^x (1-p)^(1-x) on [0, 1]
    (Loaiza-Ganem and Cunningham, 2019); near probs = 1/2 (inside `lims`) Taylor expansions keep it stable."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        if probs is not None and validate_args is not None:
            (checked,) = broadcast_all(probs)
            if not bool(self.arg_constraints["probs"].check(checked).all()):
                raise ValueError("The parameter probs has invalid values")
        batch_shape = self._set_probs_or_logits(probs, logits)
        if probs is not None:
            self.probs = self._param = clamp_probs(self.probs)
        self._lims = lims
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ContinuousBernoulli, _instance)
        new._lims = self._lims
        batch_shape = Size(batch_shape)
        self._expand_param(new, batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        return where(self._outside_unstable_region(), self.probs, self._lims[0] * ones_like(self.probs))

    def _cont_bern_log_norm(self):
        """The log normalizing constant, by its Taylor series around probs = 1/2 inside lims."""
        cut_probs = self._cut_probs()
        below_half = where(cut_probs <= 0.5, cut_probs, zeros_like(cut_probs))
        above_half = where(cut_probs >= 0.5, cut_probs, ones_like(cut_probs))
        log_norm = (log((log1p(-cut_probs) - log(cut_probs)).abs()) -
                    where(cut_probs <= 0.5, log1p(-2.0 * below_half), log(2.0 * above_half - 1.0)))
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut_probs = self._cut_probs()
        mus = cut_probs / (2.0 * cut_probs - 1.0) + 1.0 / (log1p(-cut_probs) - log(cut_probs))
        x = self.probs - 0.5
        return where(self._outside_unstable_region(), mus, 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x)

    @property
    def stddev(self):
        return self.variance.sqrt()

    @property
    def variance(self):
        cut_probs = self._cut_probs()
        variances = (cut_probs * (cut_probs - 1.0) / (1.0 - 2.0 * cut_probs).pow(2) +
                     1.0 / (log1p(-cut_probs) - log(cut_probs)).pow(2))
        x = (self.probs - 0.5).pow(2)
        return where(self._outside_unstable_region(), variances, 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x)

    def sample(self, sample_shape=Size()):
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()):
        return self.icdf(empty(self._extended_shape(sample_shape), dtype=self.probs.dtype).uniform_())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none") + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut_probs = self._cut_probs()
        cdfs = (cut_probs.pow(value) * (1.0 - cut_probs).pow(1.0 - value) + cut_probs - 1.0) / (2.0 * cut_probs - 1.0)
        unbounded = where(self._outside_unstable_region(), cdfs, value)
        return where(value <= 0.0, zeros_like(value), where(value >= 1.0, ones_like(value), unbounded))

    def icdf(self, value):
        cut_probs = self._cut_probs()
        return where(self._outside_unstable_region(),
                     (log1p(-cut_probs + value * (2.0 * cut_probs - 1.0)) - log1p(-cut_probs)) /
                     (log(cut_probs) - log1p(-cut_probs)), value)

    def entropy(self):
        log_probs0, log_probs1 = log1p(-self.probs), log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        outside = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = where(outside, x, (self._lims[0] - 0.5) * ones_like(x))
        log_norm = log(expm1(cut).abs()) - log(cut.abs())
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return where(outside, log_norm, taylor)
