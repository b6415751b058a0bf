"""The functional op namespace: C++ ops re-exported under PyTorch's names, plus the few written here."""
from . import _C

_BINARY = ["add", "sub", "mul", "remainder", "fmod", "pow", "maximum", "minimum", "fmax", "fmin", "atan2", "hypot",
           "logaddexp", "logaddexp2", "xlogy", "copysign", "nextafter", "heaviside", "bitwise_and", "bitwise_or",
           "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift", "eq", "ne", "lt", "le", "gt", "ge",
           "logical_and", "logical_or", "logical_xor"]
_UNARY = ["neg", "abs", "sign", "square", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
          "reciprocal", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
          "sigmoid", "erf", "erfc", "erfinv", "lgamma", "digamma", "floor", "ceil", "trunc", "frac", "bitwise_not",
          "logical_not", "isnan", "isinf", "isposinf", "isneginf", "isfinite", "signbit"]
globals().update({name: getattr(_C, name) for name in _BINARY + _UNARY})
__all__ = _BINARY + _UNARY
