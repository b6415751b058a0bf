"""The functional op namespace: C++ ops re-exported under PyTorch's names, plus the few written here."""
import builtins as _b

from . import _C
from . import _dtype as _D

# Every pointwise op of the C++ op lists (csrc/ops/pointwise.h), under its own name.
globals().update({name: getattr(_C, name) for name in _C._pointwise_ops})
__all__ = list(_C._pointwise_ops)

# ---- composites: written once in terms of the ops above ---------------------------------------

_wrap = _C._wrap_scalar
divide = _C.divide


def _as_operand(x):
    return x if isinstance(x, _C.Tensor) else _wrap(x)


def true_divide(input, other, *, out=None):
    """input / other (true division)."""
    return _C.div(input, other, out=out)


def floor_divide(input, other, *, out=None):
    """Division rounded toward negative infinity."""
    return _C.div(input, other, rounding_mode="floor", out=out)


multiply = _C.mul
subtract = _C.sub
negative = _C.neg
absolute = _C.abs
arctan2 = _C.atan2
greater, greater_equal, less, less_equal, not_equal = _C.gt, _C.ge, _C.lt, _C.le, _C.ne
arcsin, arccos, arctan, arcsinh, arccosh, arctanh = _C.asin, _C.acos, _C.atan, _C.asinh, _C.acosh, _C.atanh
fix = _C.trunc
sgn = _C.sign


def positive(input):
    """Returns input; bool tensors are rejected as in PyTorch."""
    if input.dtype == _D.bool:
        raise TypeError("The `+` operator, on a bool tensor is not supported.")
    return input


def clamp(input, min=None, max=None, *, out=None):
    """Limits input to [min, max]; bounds may be numbers or broadcastable tensors."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    lo = None if min is None else _as_operand(min)
    hi = None if max is None else _as_operand(max)
    result = input
    if _C.is_grad_enabled() and _b.any(t is not None and t.requires_grad for t in (input, lo, hi)):
        # PyTorch's gradient: a bound gets it only where it wins strictly; at a tie it goes to input (maximum
        # and minimum would split it)
        if lo is not None:
            result = _C.where(_C.logical_or(_C.lt(result, lo), _C.isnan(lo)), lo, result)
        if hi is not None:
            result = _C.where(_C.logical_or(_C.gt(result, hi), _C.isnan(hi)), hi, result)
    else:
        if lo is not None:
            result = _C.maximum(result, lo)
        if hi is not None:
            result = _C.minimum(result, hi)
    if out is not None:
        return out.copy_(result)
    return result


clip = clamp


def clamp_min(input, min):
    return clamp(input, min=min)


def clamp_max(input, max):
    return clamp(input, max=max)


def float_power(input, exponent, *, out=None):
    """pow computed in float64."""
    a = input.double() if isinstance(input, _C.Tensor) else input
    b = exponent.double() if isinstance(exponent, _C.Tensor) else _b.float(exponent)
    return _C.pow(a, b, out=out)


def lerp(input, end, weight, *, out=None):
    """input + weight * (end - input)."""
    result = input + weight * (end - input)
    return out.copy_(result) if out is not None else result


def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    """input + value * tensor1 * tensor2."""
    result = input + value * tensor1 * tensor2
    return out.copy_(result) if out is not None else result


def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    """input + value * tensor1 / tensor2."""
    if not tensor1.dtype.is_floating_point and not tensor2.dtype.is_floating_point:
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a future release addcdiv "
                           "will perform a true division of tensor1 and tensor2.")
    result = input + value * (tensor1 / tensor2)
    return out.copy_(result) if out is not None else result


def round(input, *, decimals=0, out=None):
    """Rounds half to even, optionally to a number of decimals."""
    if decimals == 0:
        return _C.round(input, out=out)
    scale = 10.0 ** decimals
    result = _C.round(input * scale) / scale if decimals > 0 else _C.round(input / (10.0 ** -decimals)) * (
        10.0 ** -decimals)
    result = result.to(input.dtype)
    return out.copy_(result) if out is not None else result


def logit(input, eps=None, *, out=None):
    """log(p / (1 - p)), with p clamped to [eps, 1 - eps] when eps is given."""
    p = input if eps is None else clamp(input, eps, 1 - eps)
    result = _C.log(p / (1 - p))
    return out.copy_(result) if out is not None else result


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    """Replaces nan, +inf and -inf with finite numbers (by default the dtype's extremes)."""
    if not input.dtype.is_floating_point:
        result = input.clone()
    else:
        info = _D.finfo(input.dtype)
        result = _C.where(_C.isnan(input), nan, input)
        result = _C.where(_C.isposinf(result), info.max if posinf is None else posinf, result)
        result = _C.where(_C.isneginf(result), info.min if neginf is None else neginf, result)
    return out.copy_(result) if out is not None else result


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise |input - other| <= atol + rtol * |other| (with PyTorch's inf and nan rules)."""
    if input.dtype != other.dtype:
        raise RuntimeError(f"{input.dtype} did not match {other.dtype}")
    if input.dtype == _D.bool:
        return _C.eq(input, other)
    close = _C.eq(input, other)
    if equal_nan:
        close = close | (_C.isnan(input) & _C.isnan(other))
    if input.dtype.is_floating_point:
        diff = _C.abs(input - other)
        finite = _C.isfinite(diff)
        close = close | (finite & (diff <= atol + rtol * _C.abs(other)))
    else:
        a, b = input.double(), other.double()
        close = close | (_C.abs(a - b) <= atol + rtol * _C.abs(b))
    return close


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True when every element is close (see isclose)."""
    return _b.bool(isclose(input, other, rtol, atol, equal_nan).numpy().all())


def equal(input, other):
    """True when both tensors have the same shape and elements."""
    if input.shape != other.shape:
        return False
    return _b.bool(_C.eq(input, other).numpy().all())


def isreal(input):
    """Always true for the real dtypes flowlike has."""
    return _C._empty(list(input.shape), _D.bool).fill_(True)


__all__ += ["divide", "true_divide", "floor_divide", "multiply", "subtract", "negative", "absolute", "arctan2",
            "greater", "greater_equal", "less", "less_equal", "not_equal", "arcsin", "arccos", "arctan", "arcsinh",
            "arccosh", "arctanh", "fix", "sgn", "positive", "clamp", "clip", "clamp_min", "clamp_max", "float_power",
            "lerp", "addcmul", "addcdiv", "logit", "nan_to_num", "isclose", "allclose", "equal", "isreal"]


def _operand_of_inplace(self):
    # The composite saves its operand for backward; copy_ then overwrites self, so under autograd it
    # reads a copy (otherwise backward would find the saved tensor modified in place).
    return self.clone() if self.requires_grad and _C.is_grad_enabled() else self


def _attach_methods():
    def method(fn):
        return lambda self, *args, **kwargs: fn(self, *args, **kwargs)

    for name in ["clamp", "clip", "clamp_min", "clamp_max", "float_power", "lerp", "addcmul", "addcdiv", "round",
                 "logit", "nan_to_num", "isclose", "allclose", "equal", "isreal", "true_divide", "floor_divide",
                 "multiply", "subtract", "negative", "absolute", "arctan2", "greater", "greater_equal", "less",
                 "less_equal", "not_equal", "fix", "sgn", "positive"]:
        setattr(_C.Tensor, name, method(globals()[name]))
    for name in ["clamp", "clip", "clamp_min", "clamp_max", "lerp", "addcmul", "addcdiv", "round", "logit",
                 "nan_to_num", "true_divide", "floor_divide", "float_power"]:
        fn = globals()[name]
        setattr(_C.Tensor, name + "_",
                lambda self, *a, _fn=fn, **k: self.copy_(_fn(_operand_of_inplace(self), *a, **k)))


_attach_methods()
