"""torch.special: the special functions, written in terms of flowlike's pointwise ops."""
import math as _math

from . import _C
from . import _dtype as _D
from . import _ops
from ._out import write_out
from ._missing import module_getattr
from ._tensor import Tensor, _no_grad  # noqa: F401  (torch.special.Tensor is torch.Tensor too)

expit = _C.sigmoid
logit = _ops.logit
erf = _C.erf
erfc = _C.erfc
erfinv = _C.erfinv
expm1 = _C.expm1
exp2 = _C.exp2
log1p = _C.log1p
digamma = psi = _C.digamma
gammaln = _C.lgamma
xlogy = _C.xlogy
round = _ops.round
i0 = modified_bessel_i0 = _C.i0
i0e = _C.special_i0e
i1 = modified_bessel_i1 = _C.special_i1
i1e = _C.special_i1e
erfcx = _C.special_erfcx
airy_ai = _C.special_airy_ai
bessel_j0 = _C.special_bessel_j0
bessel_j1 = _C.special_bessel_j1
bessel_y0 = _C.special_bessel_y0
bessel_y1 = _C.special_bessel_y1
modified_bessel_k0 = _C.special_modified_bessel_k0
modified_bessel_k1 = _C.special_modified_bessel_k1
scaled_modified_bessel_k0 = _C.special_scaled_modified_bessel_k0
scaled_modified_bessel_k1 = _C.special_scaled_modified_bessel_k1
zeta = _C.special_zeta
gammainc = _C.igamma
gammaincc = _C.igammac
polygamma = _ops.polygamma
multigammaln = _ops.mvlgamma
sinc = _ops.sinc


_float = _ops._float


def xlog1py(input, other, *, out=None):
    """input * log1p(other), and 0 where input is 0 (unless other is nan)."""
    result = input * _C.log1p(other)
    return write_out(out, _C.where((input == 0) & ~_C.isnan(other * 1.0), 0.0, result), "xlog1py")


def entr(input, *, out=None):
    """-x ln(x) for x > 0, 0 at 0, -inf for x < 0."""
    x = _float(input)
    result = _C.where(x > 0, -x * _C.log(x), _C.where(x == 0, 0.0, -_math.inf))
    return write_out(out, _C.where(_C.isnan(x), x, result), "entr")


def ndtr(input, *, out=None):
    """The standard normal cumulative distribution function."""
    return write_out(out, 0.5 * _C.erfc(_float(input) * -_math.sqrt(0.5)), "ndtr")


def ndtri(input, *, out=None):
    """The inverse of ndtr."""
    return write_out(out, _math.sqrt(2.0) * _C.erfinv(2.0 * _float(input) - 1.0), "ndtri")


def log_ndtr(input, *, out=None):
    """log(ndtr(x)), accurate in both tails (through erfcx where ndtr underflows)."""
    x = _float(input)
    is_left = x < -1.0
    # x < -1: log(erfc(-t) / 2) = log(erfcx(-t) / 2) - t^2, which stays finite far into the left tail; each branch
    # sees only its own inputs, so that the other's infinities do not leak into the gradient
    t = _C.where(is_left, x, -1.0) * _math.sqrt(0.5)
    left = _C.log(_C.special_erfcx(-t) * 0.5) - t * t
    right = _C.log1p(-0.5 * _C.erfc(_C.where(is_left, 0.0, x) * _math.sqrt(0.5)))
    return write_out(out, _C.where(is_left, left, right), "log_ndtr")


def spherical_bessel_j0(input, *, out=None):
    """The spherical Bessel function of the first kind of order 0, sin(x) / x."""
    x = _float(input)
    # near 0, the Taylor series 1 - x^2/6 (1 - x^2/20 (1 - x^2/42 ...)) avoids 0/0 and cancellation
    small = _C.abs(x) < 0.5
    x2 = _C.where(small, x, 0.0) ** 2
    series = 1 - x2 / 6 * (1 - x2 / 20 * (1 - x2 / 42 * (1 - x2 / 72 * (1 - x2 / 110 * (1 - x2 / 156)))))
    result = _C.where(small, series, _C.sin(x) / _C.where(small, 1.0, x))
    return write_out(out, _C.where(_C.isinf(x), 0.0, result), "spherical_bessel_j0")


def softmax(input, dim, *, dtype=None):
    """softmax along dim (torch.special.softmax)."""
    from .nn._functional_activation import _softmax_call
    return _softmax_call(_C._softmax, input, dim, dtype)


def log_softmax(input, dim, *, dtype=None):
    """log_softmax along dim (torch.special.log_softmax)."""
    from .nn._functional_activation import _softmax_call
    return _softmax_call(_C._log_softmax, input, dim, dtype)


def logsumexp(input, dim, keepdim=False):
    """log(sum(exp(input))) over dim, computed stably."""
    from ._reduce import logsumexp as _logsumexp
    return _logsumexp(input, dim, keepdim)


# ---- orthogonal polynomials: (x, n) -> P_n(x) by the three-term recurrence, for every degree up to the largest n ----

_MAX_DEGREE = 100_000


def _polynomial(name, first, step, doc):
    """P_n(x) with P_0 = 1, P_1 = first(x) and P_{k+1} = step(k, x, P_k, P_{k-1}); n is truncated to an integer
    (as torch does), and P_n = 0 for n < 0. x and n are tensors or numbers, broadcast together. Not
    differentiable, as torch's: the recurrence records no history."""
    def fn(input, n, *, out=None):
        with _no_grad():
            return evaluate(input, n, out)

    def evaluate(input, n, out):
        if not isinstance(input, _C.Tensor) and not isinstance(n, _C.Tensor):
            raise TypeError(f"{name}(): expected at least one of input and n to be a Tensor")
        dtype = _C.result_type(_ops._as_operand(input), _ops._as_operand(n))
        dtype = dtype if dtype.is_floating_point or dtype.is_complex else _C.get_default_dtype()
        if dtype not in (_C.float32, _C.float64):  # (torch's CPU kernels: float and double only)
            raise NotImplementedError(f'"{name}_cpu" not implemented for \'{_D.c10_name(dtype)}\'')
        x = (input if isinstance(input, _C.Tensor) else _C._wrap_scalar(float(input))).to(dtype)
        if isinstance(n, _C.Tensor):
            degree = n.to(_C.int64) if n.dtype.is_floating_point else n.long()  # truncation toward zero
            top = int(degree.max().item()) if degree.numel() else 0
        else:
            # (a non-finite n converts to int64's minimum, as torch's cast: a negative degree, P_n = 0)
            degree, top = None, int(n) if _math.isfinite(n) else -1
        if top > _MAX_DEGREE:  # the recurrence runs once per degree: refuse rather than run for hours
            raise RuntimeError(f"{name}(): flowlike evaluates degrees up to {_MAX_DEGREE} by recurrence, got n = {top}")
        if degree is not None:  # broadcast x and degree
            x = x + degree.to(dtype) * 0
        prev, cur = x * 0 + 1, first(x)
        result = None if degree is None else _C.where(degree == 0, prev, _C.where(degree == 1, cur, 0.0))
        if degree is None and top <= 1:
            return write_out(out, prev * 0 if top < 0 else prev if top == 0 else cur, name)
        for k in range(1, top):
            prev, cur = cur, step(k, x, cur, prev)
            if degree is not None:
                result = _C.where(degree == k + 1, cur, result)
        return write_out(out, cur if degree is None else result, name)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _shifted(first):
    return lambda x: first(2 * x - 1)


def _shifted_step(step):
    return lambda k, x, cur, prev: step(k, 2 * x - 1, cur, prev)


def _chebyshev_step(k, x, cur, prev):
    return 2 * x * cur - prev


_CHEBYSHEV_FIRST = {"t": lambda x: x, "u": lambda x: 2 * x, "v": lambda x: 2 * x - 1, "w": lambda x: 2 * x + 1}
for _kind, _first in _CHEBYSHEV_FIRST.items():
    globals()[f"chebyshev_polynomial_{_kind}"] = _polynomial(
        f"chebyshev_polynomial_{_kind}", _first, _chebyshev_step, f"The Chebyshev polynomial {_kind.upper()}_n(x).")
    globals()[f"shifted_chebyshev_polynomial_{_kind}"] = _polynomial(
        f"shifted_chebyshev_polynomial_{_kind}", _shifted(_first), _shifted_step(_chebyshev_step),
        f"The shifted Chebyshev polynomial {_kind.upper()}*_n(x) = {_kind.upper()}_n(2x - 1).")
hermite_polynomial_h = _polynomial("hermite_polynomial_h", lambda x: 2 * x,
                                   lambda k, x, cur, prev: 2 * x * cur - 2 * k * prev,
                                   "The physicists' Hermite polynomial H_n(x).")


def _hermite_he_step(k, x, cur, prev):
    # torch's CPU kernel contracts x * cur - k * prev into one FMA (k * prev rounded first): in float32 the exact
    # product in float64 and one subtraction there give its values (the float32 sums differ by up to 2 otherwise)
    if x.dtype == _C.float32:
        return (x.double() * cur - k * prev).float()
    return x * cur - k * prev


hermite_polynomial_he = _polynomial("hermite_polynomial_he", lambda x: x, _hermite_he_step,
                                    "The probabilists' Hermite polynomial He_n(x).")
laguerre_polynomial_l = _polynomial("laguerre_polynomial_l", lambda x: 1 - x,
                                    lambda k, x, cur, prev: ((2 * k + 1 - x) * cur - k * prev) / (k + 1),
                                    "The Laguerre polynomial L_n(x).")
legendre_polynomial_p = _polynomial("legendre_polynomial_p", lambda x: x,
                                    lambda k, x, cur, prev: ((2 * k + 1) * x * cur - k * prev) / (k + 1),
                                    "The Legendre polynomial P_n(x).")


__getattr__ = module_getattr(__name__, "torch.special")
