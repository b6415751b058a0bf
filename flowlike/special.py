"""torch.special: the special functions, written in terms of flowlike's pointwise ops."""
import math as _math

from . import _C
from . import _ops
from ._missing import module_getattr

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


def _out(result, out):
    return out.copy_(result) if out is not None else result


def _float(input):
    """input as a floating tensor (integers and bools promote to the default dtype, as in torch)."""
    return input if input.dtype.is_floating_point else input.to(_C.get_default_dtype())


def sinc(input, *, out=None):
    """sin(pi x) / (pi x), with sinc(0) = 1."""
    x = _float(input)
    px = x * _math.pi
    return _out(_C.where(x == 0, 1.0, _C.sin(px) / px), out)


def xlog1py(input, other, *, out=None):
    """input * log1p(other), and 0 where input is 0 (unless other is nan)."""
    result = input * _C.log1p(other)
    return _out(_C.where((input == 0) & ~_C.isnan(other * 1.0), 0.0, result), out)


def entr(input, *, out=None):
    """-x ln(x) for x > 0, 0 at 0, -inf for x < 0."""
    x = _float(input)
    result = _C.where(x > 0, -x * _C.log(x), _C.where(x == 0, 0.0, -_math.inf))
    return _out(_C.where(_C.isnan(x), x, result), out)


def ndtr(input, *, out=None):
    """The standard normal cumulative distribution function."""
    return _out(0.5 * _C.erfc(_float(input) * -_math.sqrt(0.5)), out)


def ndtri(input, *, out=None):
    """The inverse of ndtr."""
    return _out(_math.sqrt(2.0) * _C.erfinv(2.0 * _float(input) - 1.0), out)


def multigammaln(input, p, *, out=None):
    """The multivariate log-gamma function of dimension p."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    x = _float(input)
    result = (p * (p - 1) / 4.0) * _math.log(_math.pi)
    for j in range(p):
        result = result + _C.lgamma(x - j / 2.0)
    return _out(result, out)


__getattr__ = module_getattr(__name__, "torch.special")
