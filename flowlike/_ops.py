"""The functional op namespace: C++ ops re-exported under PyTorch's names, plus the few written here."""
import builtins as _b
import math as _math

from . import _C
from . import _dtype as _D
from ._out import inplace_method, write_out
from ._tensor import int_arg

# Every pointwise op of the C++ op lists (csrc/ops/pointwise.h), under its own name; the special_* ones exist in
# torch only as torch.special functions (flowlike/special.py), so they are neither here nor Tensor methods.
_PUBLIC_POINTWISE = [name for name in _C._pointwise_ops if not name.startswith("special_")]
globals().update({name: getattr(_C, name) for name in _PUBLIC_POINTWISE})
__all__ = list(_PUBLIC_POINTWISE)
# Every op declared with a function face (`python: [function]` in csrc/ops/*.yaml); a Python module imported
# after this one may replace a name with a composite that parses more argument forms.
globals().update({name: getattr(_C, name) for name in _C._function_faces})
__all__ += list(_C._function_faces)
for _name in _C._pointwise_ops:
    if _name.startswith("special_"):
        delattr(_C.Tensor, _name)
        delattr(_C.Tensor, _name + "_")

# ---- composites: written once in terms of the ops above ---------------------------------------

def _complex_logaddexp(a, b):
    # torch's complex kernel: the operand with the larger real part (a on a tie) is the shift; two equal infinite
    # real parts give the other one (-inf) or the plain formula (+inf)
    take = a.real >= b.real
    hi, lo = _C.where(take, a, b), _C.where(take, b, a)
    r = hi + _C.log1p(_C.exp(lo - hi))
    same_inf = (lo.real == hi.real) & _C.isinf(lo.real)
    return _C.where(same_inf, _C.where(lo.real < 0, lo, _C.log(_C.exp(lo) + _C.exp(hi))), r)


def logaddexp(input, other, *, out=None):
    """log(exp(input) + exp(other)), computed stably."""
    if _b.any(isinstance(v, _C.Tensor) and v.is_complex() for v in (input, other)):
        return write_out(out, _complex_logaddexp(input, other), "logaddexp")  # (the C++ kernel is real-valued)
    return _C.logaddexp(input, other, out=out)


_C.Tensor.logaddexp = logaddexp

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


def positive(input):
    """Returns input; bool tensors are rejected as in PyTorch."""
    if input.dtype == _D.bool:
        raise TypeError("The `+` operator, on a bool tensor is not supported.")
    return input


def clamp(input, min=None, max=None, *, out=None):
    """Limits input to [min, max]; bounds may be numbers or broadcastable tensors."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if input.is_complex():
        raise NotImplementedError("clamp is not supported for complex types")
    lo = None if min is None else _as_operand(min)
    hi = None if max is None else _as_operand(max)
    result = input
    if _C.is_grad_enabled() and _b.any(t is not None and t.requires_grad for t in (input, lo, hi)):
        # PyTorch's gradient: a bound gets it only where it wins strictly; at a tie it goes to input (maximum
        # and minimum would split it)
        # NaNs (in input or a bound) come out NaN and, as in PyTorch, pass no gradient to any operand
        if lo is not None:
            result = _C.where(_C.lt(result, lo), lo, result)
        if hi is not None:
            result = _C.where(_C.gt(result, hi), hi, result)
        for t in (input, lo, hi):
            if t is not None and t.dtype.is_floating_point:
                result = _C.where(_C.isnan(t), t.detach(), result)
    else:
        if lo is not None:
            result = _C.maximum(result, lo)
        if hi is not None:
            result = _C.minimum(result, hi)
    return write_out(out, result, "clamp", exact_dtype=True)


clip = clamp


def _require_tensor(op, value, name, position):
    """TypeError (as torch's argument parser) when an argument that must be a tensor is not one."""
    if not isinstance(value, _C.Tensor):
        raise TypeError(f"{op}(): argument '{name}' (position {position}) must be Tensor, not {type(value).__name__}")


def clamp_min(input, min):
    _require_tensor("clamp_min", input, "input", 1)
    return clamp(input, min=min)


def clamp_max(input, max):
    _require_tensor("clamp_max", input, "input", 1)
    return clamp(input, max=max)


def float_power(input, exponent, *, out=None):
    """pow computed in float64 (complex128 when either operand is complex)."""
    cplx = _b.any(v.is_complex() if isinstance(v, _C.Tensor) else isinstance(v, _b.complex) for v in (input, exponent))
    dt = _D.complex128 if cplx else _D.float64
    a = input.to(dt) if isinstance(input, _C.Tensor) else input
    b = exponent.to(dt) if isinstance(exponent, _C.Tensor) else (_b.complex if cplx else _b.float)(exponent)
    return _C.pow(a, b, out=out)


def lerp(input, end, weight, *, out=None):
    """input + weight * (end - input)."""
    for name, t in (("end", end), ("weight", weight)):
        if isinstance(t, _C.Tensor) and t.dtype != input.dtype:
            raise RuntimeError(f"expected dtype {_D.c10_name(input.dtype).lower()} for `{name}` but got dtype "
                               f"{_D.c10_name(t.dtype).lower()}")
    result = input + weight * (end - input)
    return write_out(out, result, "lerp")


def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    """input + value * tensor1 * tensor2."""
    for position, (name, t) in enumerate((("input", input), ("tensor1", tensor1), ("tensor2", tensor2))):
        _require_tensor("addcmul", t, name, position + 1)
    result = input + value * tensor1 * tensor2
    return write_out(out, result, "addcmul")


def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    """input + value * tensor1 / tensor2."""
    for position, (name, t) in enumerate((("input", input), ("tensor1", tensor1), ("tensor2", tensor2))):
        _require_tensor("addcdiv", t, name, position + 1)
    if not any(t.dtype.is_floating_point or t.dtype.is_complex for t in (tensor1, tensor2)):
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a future release addcdiv "
                           "will perform a true division of tensor1 and tensor2.")
    result = input + value * (tensor1 / tensor2)
    return write_out(out, result, "addcdiv")


def round(input, *, decimals=0, out=None):
    """Rounds half to even, optionally to a number of decimals."""
    decimals = int_arg(decimals, "round", "decimals")
    if decimals == 0:
        return _C.round(input, out=out)
    def power_of_ten(n):  # past float range: inf, so that the result is nan as torch's
        try:
            return 10.0 ** n
        except OverflowError:
            return _math.inf
    scale = power_of_ten(decimals)
    result = _C.round(input * scale) / scale if decimals > 0 else _C.round(input / power_of_ten(-decimals)) * (
        power_of_ten(-decimals))
    result = result.to(input.dtype)
    return write_out(out, result, "round")


def logit(input, eps=None, *, out=None):
    """log(p / (1 - p)), with p clamped to [eps, 1 - eps] when eps is given."""
    _require_tensor("logit", input, "input", 1)
    p = input if eps is None else clamp(input, eps, 1 - eps)
    result = _C.log(p / (1 - p))
    return write_out(out, result, "logit")


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    """Replaces nan, +inf and -inf with finite numbers (by default the dtype's extremes)."""
    if not input.dtype.is_floating_point:
        result = input.clone()
    else:
        info = _D.finfo(input.dtype)
        result = _C.where(_C.isnan(input), nan, input)
        result = _C.where(_C.isposinf(result), info.max if posinf is None else posinf, result)
        result = _C.where(_C.isneginf(result), info.min if neginf is None else neginf, result)
    return write_out(out, result, "nan_to_num", exact_dtype=True)


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise |input - other| <= atol + rtol * |other| (with PyTorch's inf and nan rules)."""
    _require_tensor("isclose", input, "input", 1)
    _require_tensor("isclose", other, "other", 2)
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
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
    """Whether each element is real: a complex element whose imaginary part is zero counts (as in torch)."""
    if input.is_complex():
        return _C.eq(_C._imag(input), 0)
    return _C._empty(list(input.shape), _D.bool).fill_(True)


__all__ += ["divide", "true_divide", "floor_divide", "multiply", "subtract", "negative", "absolute", "arctan2",
            "greater", "greater_equal", "less", "less_equal", "not_equal", "arcsin", "arccos", "arctan", "arcsinh",
            "arccosh", "arctanh", "fix", "positive", "clamp", "clip", "clamp_min", "clamp_max", "float_power",
            "lerp", "addcmul", "addcdiv", "logit", "nan_to_num", "isclose", "allclose", "equal", "isreal"]


# ---- more math composites ----------------------------------------------------------------------

def _float(input):
    """input as a floating tensor (integers and bools promote to the default dtype, as torch's float ops do)."""
    return input if input.dtype.is_floating_point else input.to(_D.get_default_dtype())


def deg2rad(input, *, out=None):
    """Converts angles from degrees to radians."""
    return write_out(out, _float(input) * (_math.pi / 180.0), "deg2rad")


def rad2deg(input, *, out=None):
    """Converts angles from radians to degrees."""
    return write_out(out, _float(input) * (180.0 / _math.pi), "rad2deg")


def ldexp(input, other, *, out=None):
    """input * 2 ** other."""
    _require_tensor("ldexp", input, "input", 1)
    _require_tensor("ldexp", other, "other", 2)
    return write_out(out, _C.mul(input, _C.pow(_wrap(2.0), _as_operand(other))), "ldexp", exact_dtype=True)


def frexp(input, *, out=None):
    """Splits input into a mantissa in [0.5, 1) (in magnitude) and an int32 exponent: input = mantissa * 2**exponent."""
    if not input.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    x = input.detach().double()
    special = (x == 0) | ~_C.isfinite(x)
    e = _C.where(special, 0.0, _C.floor(_C.log2(_C.abs(_C.where(special, 1.0, x)))) + 1)
    m = _C.abs(_ldexp_exact(x, -e))
    # log2 may round across the edge of a binade: move e by one where the mantissa left [0.5, 1)
    e = _C.where(special, e, e - (m < 0.5).double() + (m >= 1).double())
    # input * 2**-e is exact, and differentiable in input as torch's mantissa is
    mantissa = _C.where(special, input, _ldexp_exact(input, -e))
    exponent = e.to(_D.int32)
    mantissa, exponent = write_out(out, (mantissa, exponent), "frexp", exact_dtype=True)
    from ._reduce import return_types
    return return_types.frexp(mantissa, exponent)


def _ldexp_exact(x, e):
    """x * 2**e for an integral float64 tensor e, scaled in two halves so that neither factor overflows x's dtype."""
    half = _C.floor(e * 0.5)
    return x * _C.exp2(half).to(x.dtype) * _C.exp2(e - half).to(x.dtype)


def _trigamma(x):
    """torch's calc_trigamma step for step, in x's dtype: below 1/2 the reflection pi^2 / sin^2(pi x) - trigamma(1 - x),
    then six terms of the recurrence and the asymptotic series. (Near a pole float32's sin(pi x) keeps few digits:
    these are torch's float32 values there.)"""
    low = x < 0.5
    s = _C.sin(x * _math.pi)
    result = _C.where(low, -(_math.pi * _math.pi) / (s * s), 0.0)
    y = _C.where(low, 1 - x, x)
    for _ in range(6):
        result = result + 1 / (y * y)
        y = y + 1
    ixx = 1 / (y * y)
    result = result + (1 + 1 / (2 * y) + ixx * (1.0 / 6 - ixx * (1.0 / 30 - ixx * (1.0 / 42)))) / y
    return _C.where(low, -result, result)


def polygamma(n, input, *, out=None):
    """The n-th derivative of the digamma function: (-1)^(n+1) n! zeta(n+1, input) for n >= 1."""
    if not isinstance(n, _b.int) or isinstance(n, _b.bool) or n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    if n == 0:
        return _C.digamma(input, out=out)
    x = _float(input)
    if n == 1:
        return write_out(out, _trigamma(x), "polygamma")
    result = _C.special_zeta(_wrap(_b.float(n + 1)), x)
    # n! past 170 is beyond float64 (and math.factorial of a huge n runs for ever): inf, as torch's gamma
    factorial = _b.float(_math.factorial(n)) if n <= 170 else _math.inf
    return write_out(out, result * ((-1.0 if n % 2 == 0 else 1.0) * factorial), "polygamma")


def mvlgamma(input, p, *, out=None):
    """The multivariate log-gamma function of dimension p (inf or nan where an element is at most (p - 1) / 2)."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    x = _float(input)
    if x.numel() == 0:
        return write_out(out, x * 1, "mvlgamma")
    # all p terms at once (as torch: one lgamma over x - j / 2 for j < p, summed); a huge p fails to allocate
    # instead of running a Python loop for ever
    from ._creation import arange
    halves = arange(p, dtype=x.dtype) * 0.5
    result = _C.lgamma(x.unsqueeze(-1) - halves).sum(-1) + (p * (p - 1) / 4.0) * _math.log(_math.pi)
    return write_out(out, result, "mvlgamma")


def sinc(input, *, out=None):
    """sin(pi x) / (pi x), with sinc(0) = 1."""
    x = input if input.dtype.is_complex else _float(input)
    px = x * _math.pi
    return write_out(out, _C.where(x == 0, 1.0, _C.sin(px) / _C.where(x == 0, 1.0, px)), "sinc")


def rsub(input, other, *, alpha=1):
    """other - alpha * input."""
    _require_tensor("rsub", input, "input", 1)
    return _C.sub(_as_operand(other), input, alpha=alpha)


def angle(input, *, out=None):
    """The elementwise argument: atan2(imag, real) for complex input (a real result); for real input pi for
    negative values, 0 otherwise (nan stays nan)."""
    if input.is_complex():
        return write_out(out, _C.atan2(_C._imag(input), _C._real(input)), "angle")
    x = _float(input)
    return write_out(out, _C.where(_C.isnan(x), x, _C.where(x < 0, _math.pi, 0.0).to(x.dtype)), "angle")


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The n-th forward difference along dim (logical xor for bool tensors)."""
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    parts = [p for p in (prepend, input, append) if p is not None]
    x = _C.cat(parts, dim) if len(parts) > 1 else input
    for _ in range(n):
        length = x.shape[dim]
        if length == 0:
            break
        hi, lo = x.narrow(dim, 1, length - 1), x.narrow(dim, 0, length - 1)
        x = _C.logical_xor(hi, lo) if x.dtype == _D.bool else hi - lo
    return x


__all__ += ["deg2rad", "rad2deg", "ldexp", "frexp", "polygamma", "mvlgamma", "sinc", "rsub", "angle", "diff"]


# ---- the sym_* helpers, for plain Python numbers (flowlike has no symbolic shapes) ---------------------------------

def _check_number(*values):
    for v in values:
        if not isinstance(v, (_b.int, _b.float)) or isinstance(v, _b.bool):
            raise AssertionError(f"expected (int, float), got {type(v)}")


def sym_int(a):
    """int(a), truncating a float toward zero."""
    return _math.trunc(a) if isinstance(a, _b.float) else _b.int(a)


def sym_float(a):
    """float(a)."""
    return _b.float(a)


def sym_max(a, b):
    """max(a, b), a float when either is a float."""
    _check_number(a, b)
    return _b.float(_b.max(a, b)) if isinstance(a, _b.float) or isinstance(b, _b.float) else _b.max(a, b)


def sym_min(a, b):
    """min(a, b), a float when either is a float."""
    _check_number(a, b)
    return _b.float(_b.min(a, b)) if isinstance(a, _b.float) or isinstance(b, _b.float) else _b.min(a, b)


def sym_not(a):
    """not a."""
    return not a


def sym_sqrt(a):
    """math.sqrt(a)."""
    return _math.sqrt(a)


def sym_ite(b, t, f):
    """t if b else f."""
    return t if b else f


def sym_sum(args):
    """sum(args)."""
    return _b.sum(args)


__all__ += ["sym_int", "sym_float", "sym_max", "sym_min", "sym_not", "sym_sqrt", "sym_ite", "sym_sum"]


# ---- Tensor methods and the in-place forms (Tensor.x_ and torch.x_) -------------------------------------------

# aliases torch also has as Tensor methods (and their in-place forms): alias -> op
_ALIASES = {"absolute": "abs", "arccos": "acos", "arccosh": "acosh", "arcsin": "asin", "arcsinh": "asinh",
            "arctan": "atan", "arctanh": "atanh", "arctan2": "atan2", "negative": "neg", "fix": "trunc",
            "multiply": "mul", "subtract": "sub", "greater": "gt", "greater_equal": "ge", "less": "lt",
            "less_equal": "le", "not_equal": "ne"}


def _method(fn):
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    method.__name__ = method.__qualname__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


def _attach_methods():
    for name in ["clamp", "clip", "clamp_min", "clamp_max", "float_power", "lerp", "addcmul", "addcdiv", "round",
                 "logit", "nan_to_num", "isclose", "allclose", "equal", "isreal", "true_divide", "floor_divide",
                 "positive", "deg2rad", "rad2deg", "ldexp", "frexp", "mvlgamma", "sinc", "angle", "diff"]:
        setattr(_C.Tensor, name, _method(globals()[name]))
    for name in ["clamp", "clip", "clamp_min", "clamp_max", "lerp", "addcmul", "addcdiv", "round", "logit",
                 "nan_to_num", "true_divide", "floor_divide", "float_power", "deg2rad", "rad2deg", "ldexp",
                 "mvlgamma", "sinc"]:
        setattr(_C.Tensor, name + "_", inplace_method(globals()[name], name + "_"))
    # Tensor.polygamma(n) takes self second in torch.polygamma's order
    _C.Tensor.polygamma = lambda self, n: polygamma(n, self)
    _C.Tensor.polygamma_ = inplace_method(lambda self, n: polygamma(n, self), "polygamma_")
    for alias, op in _ALIASES.items():
        setattr(_C.Tensor, alias, getattr(_C.Tensor, op))
        setattr(_C.Tensor, alias + "_", getattr(_C.Tensor, op + "_"))


_attach_methods()

# torch.x_(input, ...) for every in-place Tensor method torch also has as a function
_INPLACE_FUNCTIONS = ["abs", "acos", "acosh", "addmv", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh",
                      "asin", "asinh", "atan", "atanh", "ceil", "clamp", "clamp_max", "clamp_min", "clip",
                      "conj_physical", "cos", "cosh", "deg2rad", "detach", "erf", "erfc", "exp", "exp2", "expm1", "fix", "floor",
                      "frac", "gcd", "i0", "lcm", "ldexp", "log", "log10", "log1p", "log2", "logit", "nan_to_num",
                      "neg", "negative", "rad2deg", "reciprocal", "round", "rsqrt", "sigmoid", "sin", "sinc", "sinh",
                      "sqrt", "square", "tan", "tanh", "trunc", "xlogy"]


def _tensor_input(name, input):
    if not isinstance(input, _C.Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")


def _inplace_function(name):
    def fn(input, *args, **kwargs):
        _tensor_input(name, input)
        return getattr(input, name)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"In-place version of torch.{name[:-1]} (input.{name}(...))."
    return fn


globals().update({name + "_": _inplace_function(name + "_") for name in _INPLACE_FUNCTIONS})
__all__ += [name + "_" for name in _INPLACE_FUNCTIONS]


def is_inference(input):
    """Whether input is an inference tensor (made under inference_mode)."""
    _tensor_input("is_inference", input)
    return input.is_inference()


__all__ += ["is_inference"]
