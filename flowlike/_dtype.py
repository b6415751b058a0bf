"""dtypes, their PyTorch aliases, the default dtype, finfo and iinfo."""
import builtins

import numpy as np

from . import _C

dtype = _C.dtype
bool = _C.bool
uint8 = _C.uint8
int8 = _C.int8
int16 = _C.int16
int32 = _C.int32
int64 = _C.int64
float16 = _C.float16
bfloat16 = _C.bfloat16
float32 = _C.float32
float64 = _C.float64
complex64 = _C.complex64
complex128 = _C.complex128
# The float8 formats (OCP FP8, AMD's "fnuz" variants, the MX scale e8m0): storage types, as in torch's CPU build
float8_e4m3fn = _C.float8_e4m3fn
float8_e5m2 = _C.float8_e5m2
float8_e4m3fnuz = _C.float8_e4m3fnuz
float8_e5m2fnuz = _C.float8_e5m2fnuz
float8_e8m0fnu = _C.float8_e8m0fnu
# PyTorch's aliases
short = int16
int = int32
long = int64
half = float16
float = float32
double = float64
cfloat = complex64
cdouble = complex128



class _UnsupportedDType:
    """A torch dtype flowlike names but cannot hold yet (complex32, uint16-64): code that only refers to it
    (dtype tables in libraries such as safetensors and transformers) and finfo/iinfo work; making a tensor of it
    raises. `limits` are torch's iinfo values (bits, min, max)."""

    def __init__(self, name, itemsize, kind, limits=None):
        self._name, self.itemsize, self._limits = name, itemsize, limits
        self.is_floating_point, self.is_complex = False, kind == "complex"
        self.is_signed = kind != "uint"

    def __repr__(self):
        return f"torch.{self._name}"

    def __reduce__(self):
        return self._name


complex32 = chalf = _UnsupportedDType("complex32", 4, "complex")
uint16 = _UnsupportedDType("uint16", 2, "uint", (16, 0, 2 ** 16 - 1))
uint32 = _UnsupportedDType("uint32", 4, "uint", (32, 0, 2 ** 32 - 1))
uint64 = _UnsupportedDType("uint64", 8, "uint", (64, 0, 2 ** 64 - 1))


ALL_DTYPES = (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64, complex128)
FLOAT8_DTYPES = (float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu)
# torch's finfo of the float8 formats: bits, eps, max, min, tiny (= smallest_normal), resolution
_FLOAT8_FINFO = {float8_e4m3fn: (8, 0.125, 448.0, -448.0, 2.0 ** -6, 1.0),
                 float8_e5m2: (8, 0.25, 57344.0, -57344.0, 2.0 ** -14, 1.0),
                 float8_e4m3fnuz: (8, 0.125, 240.0, -240.0, 2.0 ** -7, 1.0),
                 float8_e5m2fnuz: (8, 0.125, 57344.0, -57344.0, 2.0 ** -15, 1.0),
                 float8_e8m0fnu: (8, 1.0, 2.0 ** 127, 2.0 ** -127, 2.0 ** -127, 1.0)}

_NUMPY_NAMES = {float16: "float16", float32: "float32", float64: "float64", bool: "bool", uint8: "uint8",
                int8: "int8", int16: "int16", int32: "int32", int64: "int64", complex64: "complex64",
                complex128: "complex128"}


_C10_NAMES = {bool: "Bool", uint8: "Byte", int8: "Char", int16: "Short", int32: "Int", int64: "Long",
              float16: "Half", bfloat16: "BFloat16", float32: "Float", float64: "Double", complex64: "ComplexFloat",
              complex128: "ComplexDouble", float8_e4m3fn: "Float8_e4m3fn", float8_e5m2: "Float8_e5m2",
              float8_e4m3fnuz: "Float8_e4m3fnuz", float8_e5m2fnuz: "Float8_e5m2fnuz",
              float8_e8m0fnu: "Float8_e8m0fnu"}


def c10_name(d):
    """The scalar type name PyTorch's messages use: Float, Double, Long, ..."""
    return _C10_NAMES[d]


def to_numpy_dtype(d):
    """The numpy dtype holding the same values (float32 for bfloat16 and the float8 types, which numpy lacks)."""
    return np.dtype(_NUMPY_NAMES.get(d, "float32"))


def from_numpy_dtype(nd):
    """The flowlike dtype of a numpy dtype; TypeError for types flowlike does not have."""
    nd = np.dtype(nd)
    for fl, name in _NUMPY_NAMES.items():
        if nd == np.dtype(name):
            return fl
    raise TypeError(f"can't convert np.ndarray of type {nd}. The only supported types are: float64, float32, "
                    "float16, complex64, complex128, int64, int32, int16, int8, uint8, and bool.")


get_default_dtype = _C.get_default_dtype
promote_types = _C.promote_types
can_cast = _C.can_cast


def set_default_dtype(d):
    """Sets the dtype of floating point tensors created from Python floats (float32 or float64)."""
    if not isinstance(d, dtype):
        raise TypeError(f"invalid dtype object: only floating-point types are supported as the default type, got {d}")
    _C._set_default_dtype(d)


class finfo:
    """Machine limits of a floating point dtype, as torch.finfo."""

    def __init__(self, type=None):
        type = get_default_dtype() if type is None else type
        if type.is_complex and not isinstance(type, _UnsupportedDType):  # the limits of the real and imaginary parts
            type = type.to_real()
        if not type.is_floating_point:
            raise TypeError(f"torch.finfo() requires a floating point input type. Use torch.iinfo to handle '{type}'")
        self.dtype = str(type).split(".")[-1]
        if type in _FLOAT8_FINFO:
            self.bits, self.eps, self.max, self.min, self.tiny, self.resolution = _FLOAT8_FINFO[type]
            self.smallest_normal = self.tiny
            return
        if type == bfloat16:
            self.bits, self.eps, self.max, self.tiny = 16, 0.0078125, 3.3895313892515355e38, 1.1754943508222875e-38
            self.smallest_normal, self.resolution = self.tiny, 0.01
        else:
            info = np.finfo(to_numpy_dtype(type))
            self.bits = info.bits
            self.eps = builtins.float(info.eps)
            self.max = builtins.float(info.max)
            self.tiny = self.smallest_normal = builtins.float(info.tiny)
            self.resolution = 10.0 ** -info.precision  # as torch: 1e-06, not float32(1e-06) widened
        self.min = -self.max

    def __repr__(self):
        return (f"finfo(resolution={self.resolution}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype, as torch.iinfo."""

    def __init__(self, type):
        if type.is_floating_point:
            raise TypeError(f"torch.iinfo() requires an integer input type. Use torch.finfo to handle '{type}'")
        self.dtype = str(type).split(".")[-1]
        if type == bool:
            self.bits, self.min, self.max = 8, 0, 1
        elif isinstance(type, _UnsupportedDType):
            self.bits, self.min, self.max = type._limits
        else:
            info = np.iinfo(to_numpy_dtype(type))
            self.bits, self.min, self.max = info.bits, builtins.int(info.min), builtins.int(info.max)

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"
