"""Samplers flowlike has no op for, written with flowlike ops and drawing from flowlike's generator (so that
manual_seed makes them reproducible): standard Gamma (Marsaglia-Tsang, as torch) with torch's implicit
reparameterization gradient (_standard_gamma_grad), and Binomial (inversion for small means, BTRS above, as
torch)."""
import math

from .. import arange, digamma, empty, exp, finfo, float64, log, log1p, lgamma, sqrt, where, zeros_like
from ..autograd import Function
from ..autograd.function import once_differentiable


def _uniform(like):
    return empty(like.shape, dtype=float64).uniform_()


def _draw_gamma(alpha):
    """Standard Gamma(alpha) draws (alpha flat, float64): Marsaglia-Tsang; alpha < 1 is boosted to alpha + 1 with
    a factor u^(1/alpha). Each round redraws only the elements not accepted yet."""
    small = alpha < 1
    scale = where(small, _uniform(alpha) ** (1.0 / alpha), 1.0)
    d = where(small, alpha + 1, alpha) - 1.0 / 3
    c = 1.0 / sqrt(9 * d)
    result, index = zeros_like(alpha), arange(alpha.numel())
    while index.numel():
        dd, cc = d[index], c[index]
        x = empty(index.shape, dtype=float64).normal_()
        y = 1 + cc * x
        v = y ** 3
        u = _uniform(x)
        accepted = (y > 0) & ((u < 1 - 0.0331 * x ** 4) |
                              (log(u) < 0.5 * x * x + dd * (1 - v + log(v.clamp(min=finfo(float64).tiny)))))
        result[index[accepted]] = (dd * v)[accepted]
        index = index[~accepted]
    return (result * scale).clamp(min=finfo(float64).tiny)


def _standard_gamma_grad(alpha, x):
    """d x / d alpha of a standard Gamma(alpha) draw x at fixed CDF value (torch._standard_gamma_grad): a series in
    x for x < 0.8, Rice's saddle point expansion for alpha > 8, a rational approximation otherwise."""
    a, x = alpha.detach().double(), x.detach().double()
    # x < 0.8: differentiate the series of the regularized lower incomplete gamma function
    numer, denom = 1.0, a
    series1, series2 = numer / denom, numer / (denom * denom)
    for i in range(1, 6):
        numer = numer * (-x / i)
        denom = denom + 1
        series1, series2 = series1 + numer / denom, series2 + numer / (denom * denom)
    pow_x_alpha = x ** a
    gamma_pdf = x ** (a - 1) * exp(-x)
    gamma_cdf = pow_x_alpha * series1
    small = -((log(x) - digamma(a)) * gamma_cdf - pow_x_alpha * series2) / gamma_pdf
    small = where(small.isnan(), 0.0, small)
    # alpha > 8: saddle point, with its own form near the mode
    near = (1 + 24 * a * (1 + 12 * a)) * (1440 * a * a + 6 * x * (53 - 120 * x) - 65 * x * x / a +
                                          a * (107 + 3600 * x)) / (1244160 * a * a * a * a)
    den = sqrt(8 * a)
    term2 = den / (a - x)
    term3 = (x - a - a * log(x / a)) ** -1.5
    term23 = where(x < a, term2 - term3, term2 + term3)
    term1 = log(x / a) * term23 - sqrt(2 / a) * (a + x) / ((a - x) * (a - x))
    stirling = 1 + 1 / (12 * a) * (1 + 1 / (24 * a))
    far = -stirling * x * term1 / den
    large = where((0.9 * a <= x) & (x <= 1.1 * a), near, far)
    # otherwise: bivariate rational approximation in log(x / alpha) and log(alpha)
    u, v = log(x / a), log(a)
    coef = [[0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089, 0.0014179084],
            [0.53487893, 0.1298071, 0.065735949, -0.0015649758, 0.16639465, 0.020070113, -0.0035938915,
             -0.00058392623],
            [0.040121004, -0.0065914022, -0.0026286047, -0.0013441777, 0.017050642, -0.0021309326, 0.00085092367,
             -1.5247877e-07]]
    cv = [coef[0][i] + u * (coef[1][i] + u * coef[2][i]) for i in range(8)]
    p = cv[0] + v * (cv[1] + v * (cv[2] + v * cv[3]))
    q = cv[4] + v * (cv[5] + v * (cv[6] + v * cv[7]))
    rational = exp(p / q)
    return where(x < 0.8, small, where(a > 8.0, large, rational)).to(alpha.dtype)


class _StandardGamma(Function):
    @staticmethod
    def forward(ctx, concentration):
        x = _draw_gamma(concentration.detach().double().reshape(-1)).reshape(concentration.shape)
        x = x.to(concentration.dtype).clamp(min=finfo(concentration.dtype).tiny)
        ctx.save_for_backward(concentration, x)
        return x

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        concentration, x = ctx.saved_tensors
        return grad * _standard_gamma_grad(concentration, x)


def _standard_gamma(concentration):
    """Standard Gamma draws with concentration's shape and dtype, differentiable in concentration (torch's
    _standard_gamma)."""
    if not concentration.dtype.is_floating_point:
        raise RuntimeError(f"\"gamma_cpu\" not implemented for '{concentration.dtype}'")
    return _StandardGamma.apply(concentration)


def _binomial_inversion(n, p):
    """The number of geometric(p) waiting times that fit in n trials (fast when n * p is small)."""
    log_q = log1p(-p)
    count, total, index = zeros_like(n), zeros_like(n), arange(n.numel())
    while index.numel():
        geom = (log(1 - _uniform(index)) / log_q[index]).ceil()
        total[index] += geom
        going = total[index] <= n[index]
        count[index[going]] += 1
        index = index[going]
    return count


def _binomial_btrs(n, p):
    """Transformed rejection with squeeze (Hormann 1993) for n * p >= 10; each round redraws the elements not
    accepted yet."""
    q = 1 - p
    spq = sqrt(n * p * q)
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = n * p + 0.5
    v_r = 0.92 - 4.2 / b
    r = p / q
    alpha = (2.83 + 5.1 / b) * spq
    m = ((n + 1) * p).floor()
    result, index = zeros_like(n), arange(n.numel())
    while index.numel():
        nn, aa, bb, cc, vr, rr, al, mm = (t[index] for t in (n, a, b, c, v_r, r, alpha, m))
        u = _uniform(nn) - 0.5
        v = _uniform(nn)
        us = 0.5 - u.abs()
        k = ((2 * aa / us + bb) * u + cc).floor()
        valid = (k >= 0) & (k <= nn)
        quick = valid & (us >= 0.07) & (v <= vr)
        v2 = log(v * al / (aa / (us * us) + bb))
        upperbound = ((mm + 0.5) * log((mm + 1) / (rr * (nn - mm + 1))) + (nn + 1) * log((nn - mm + 1) / (nn - k + 1)) +
                      (k + 0.5) * log(rr * (nn - k + 1) / (k + 1)) + _stirling_tail(mm) + _stirling_tail(nn - mm) -
                      _stirling_tail(k) - _stirling_tail(nn - k))
        accepted = quick | (valid & (v2 <= upperbound))
        result[index[accepted]] = k[accepted]
        index = index[~accepted]
    return result


def _stirling_tail(k):
    """log(k!) - (Stirling's approximation of it)."""
    k = k.clamp(min=0)
    return lgamma(k + 1) - ((k + 0.5) * log(k + 1) - (k + 1) + 0.5 * math.log(2 * math.pi))


def _binomial(count, prob):
    """Binomial(count, prob) draws of their (broadcast) shape and prob's dtype (torch.binomial)."""
    n, p = (t.detach().double().reshape(-1) for t in (count, prob))
    flip = p > 0.5  # sample the rarer outcome
    q = where(flip, 1 - p, p)
    out = zeros_like(n)
    small, valid = n * q < 10, (n > 0) & (q > 0)
    for mask, sampler in ((small & valid, _binomial_inversion), (~small & valid, _binomial_btrs)):
        if bool(mask.any()):
            out[mask] = sampler(n[mask], q[mask])
    out = where(flip, n - out, out)
    return out.reshape(prob.shape).to(prob.dtype)
