"""Tensor creation: tensor, as_tensor, zeros/ones/full/empty (and _like), arange, linspace, ..."""
import builtins
import math
import warnings

import numpy as np

from . import _C
from . import _dtype as D
from ._out import write_out
from . import _meta
from ._tensor import Tensor, check_device, int_arg, scalar_arg

from_numpy = _C.from_numpy


def _shape(size, op):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    out = []
    for s in size:
        if isinstance(s, Tensor):
            s = s.item()
        if not isinstance(s, (builtins.int, np.integer)) or isinstance(s, builtins.bool):
            raise TypeError(f"{op}(): argument 'size' must be tuple of ints, but found element of type "
                            f"{type(s).__name__}")
        out.append(builtins.int(s))
    return out


def _sizes(sizes, size, op):
    """The shape of empty/zeros/ones, given positionally (sizes) or as the size= keyword."""
    if size is None:
        return _shape(sizes, op)
    if sizes:
        raise TypeError(f"{op}() received an invalid combination of arguments: the size was given both positionally "
                        f"and as size=")
    return _shape((size,), op)


def _finish(t, requires_grad, out=None, op=None):
    """A factory's result: a leaf that requires grad when asked, written into `out` when one is given (resized
    without out='s usual warning, as torch's factories)."""
    if requires_grad:
        t.requires_grad_(True)
    return write_out(out, t, op, exact_dtype=True, warn_resize=False)


def _dtype_of(dtype, out):
    """A factory's dtype: the one asked for, else out's (torch's factories fill out= in its own dtype)."""
    if dtype is not None and not isinstance(dtype, _C.dtype):
        raise TypeError(f"argument 'dtype' must be torch.dtype, not {type(dtype).__name__}")
    return out.dtype if dtype is None and out is not None else dtype


@_meta.factory
def empty(*sizes, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, memory_format=None):
    """Returns an uninitialized tensor of the given shape."""
    dtype = _dtype_of(dtype, out)
    check_device(device)
    return _finish(_C._empty(_sizes(sizes, size, "empty"), dtype or D.get_default_dtype()), requires_grad, out,
                   "empty")


@_meta.factory
def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """Returns a tensor of the given shape filled with fill_value (dtype inferred from the value)."""
    dtype = _dtype_of(dtype, out)
    check_device(device)
    if dtype is None:
        dtype = D.bool if isinstance(fill_value, builtins.bool) else D.int64 if isinstance(
            fill_value, (builtins.int, np.integer)) else D.get_default_dtype().to_complex() if isinstance(
            fill_value, (builtins.complex, np.complexfloating)) else D.get_default_dtype()
    t = _C._empty(_shape((size,) if isinstance(size, (builtins.int, np.integer)) else size, "full"), dtype)
    return _finish(t.fill_(fill_value), requires_grad, out, "full")


@_meta.factory
def zeros(*sizes, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """Returns a tensor of zeros."""
    dtype = _dtype_of(dtype, out)
    check_device(device)
    return _finish(_C._empty(_sizes(sizes, size, "zeros"), dtype or D.get_default_dtype()).zero_(), requires_grad,
                   out, "zeros")


@_meta.factory
def ones(*sizes, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """Returns a tensor of ones."""
    dtype = _dtype_of(dtype, out)
    check_device(device)
    return _finish(_C._empty(_sizes(sizes, size, "ones"), dtype or D.get_default_dtype()).fill_(1), requires_grad,
                   out, "ones")


def _like(factory):
    def like(input, *args, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
        if device is None and _meta.is_meta(input):
            device = "meta"  # a _like result is on input's device
        return factory(input.shape, *args, dtype=dtype or input.dtype, device=device, requires_grad=requires_grad)
    like.__name__ = factory.__name__ + "_like"
    like.__doc__ = f"{factory.__name__} with the shape (and by default the dtype) of input."
    return like


empty_like = _like(empty)
zeros_like = _like(zeros)
ones_like = _like(ones)
full_like = _like(full)


def _infer_dtype(arr):
    if arr.dtype == np.bool_:
        return D.bool
    if np.issubdtype(arr.dtype, np.integer):
        return D.int64
    if np.issubdtype(arr.dtype, np.floating):
        return D.get_default_dtype()
    if np.issubdtype(arr.dtype, np.complexfloating):
        return D.get_default_dtype().to_complex()
    raise TypeError(f"Could not infer dtype of {arr.dtype}")


def _flat(data):
    """The leaves of nested lists and tuples."""
    if isinstance(data, (list, tuple)):
        for x in data:
            yield from _flat(x)
    else:
        yield data


def _to_numpy_data(data):
    if isinstance(data, Tensor):
        return data.detach()
    if isinstance(data, np.ndarray):
        return data
    if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in data):
        return np.array([x.item() if isinstance(x, Tensor) else x for x in data])
    try:
        arr = np.array(data)
    except ValueError as e:
        raise ValueError(f"expected sequence of equal lengths: {e}") from None
    # data of Python ints only is read as int64 by torch, with floats as double; numpy makes uint64, float64 (values
    # of 2^63 or more) or object arrays of ints past int64
    if arr.dtype == np.uint64 or arr.dtype == object or (
            arr.dtype == np.float64 and arr.size and float(np.abs(arr).max(initial=0.0)) >= 2.0 ** 63):
        numbers = list(_flat(data))
        if all(isinstance(x, builtins.int) for x in numbers) and any(not -(1 << 63) <= x < (1 << 63) for x in numbers):
            raise ValueError("Overflow when unpacking long long")
        if arr.dtype == object and all(isinstance(x, (builtins.int, builtins.float)) for x in numbers):
            arr = np.array(data, dtype=np.float64)
    if arr.dtype == object or arr.dtype.kind in "USV":
        bad = type(data).__name__ if arr.ndim == 0 else "str" if arr.dtype.kind in "USV" else "object"
        raise TypeError(f"new(): invalid data type '{bad}'")
    return arr


@_meta.factory
def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """Creates a tensor holding a copy of data (a number, nested sequence, numpy array or tensor)."""
    check_device(device)
    src = _to_numpy_data(data)
    if isinstance(src, Tensor):
        t = src._to_dtype(dtype or src.dtype, True)
    else:
        inferred = D.from_numpy_dtype(src.dtype) if isinstance(data, np.ndarray) else _infer_dtype(src)
        if src.dtype.kind in "fc" and not isinstance(data, np.ndarray) and dtype is None:
            inferred = D.get_default_dtype() if src.dtype.kind == "f" else D.get_default_dtype().to_complex()
        target = dtype or inferred
        t = from_numpy(np.array(src, dtype=D.to_numpy_dtype(target), order="C", copy=True))
        if t.dtype != target:  # bfloat16 and the float8 types, which numpy lacks, come from float32
            t = t._to_dtype(target, True)
    return _finish(t, requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Converts data to a tensor, sharing memory with a tensor or numpy array when it can."""
    check_device(device)
    if isinstance(data, Tensor):
        return data if dtype is None or data.dtype == dtype else data.to(dtype)
    if isinstance(data, np.ndarray) and data.dtype.kind in "biufc" and (dtype is None or
                                                                      D.to_numpy_dtype(dtype) == data.dtype):
        try:
            return from_numpy(data)
        except ValueError:
            pass
    return tensor(data, dtype=dtype)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """torch.asarray: shares memory with tensors, numpy arrays and buffers unless copy=True."""
    from ._tensor import UntypedStorage
    if isinstance(obj, UntypedStorage):  # its bytes, reinterpreted as dtype
        t = obj._all_bytes() if dtype in (None, D.uint8) else obj._all_bytes().view(dtype)
        return _finish(t.clone() if copy else t, requires_grad)
    if copy:
        t = tensor(obj, dtype=dtype, device=device)
    else:
        if not isinstance(obj, (Tensor, np.ndarray)) and hasattr(obj, "__array_interface__"):
            obj = np.asarray(obj)
        t = as_tensor(obj, dtype=dtype, device=device)
    return _finish(t, requires_grad)


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor viewing a Python buffer (shares memory)."""
    itemsize = dtype.itemsize
    raw = np.frombuffer(buffer, dtype=np.uint8, offset=offset)
    if count >= 0:
        raw = raw[:count * itemsize]
    elif len(raw) % itemsize:
        raise ValueError(f"buffer length ({len(raw)} bytes) after offset ({offset} bytes) must be a multiple of "
                         f"element size ({itemsize})")
    arr = raw
    if not arr.flags.writeable:
        warnings.warn("The given buffer is not writable, and PyTorch does not support non-writable tensors. "
                      "Writing to this tensor will result in undefined behavior.", UserWarning, stacklevel=2)
    t = from_numpy(arr)
    return _finish(t if dtype == D.uint8 else t.view(dtype), requires_grad)


@_meta.factory
def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    check_device(device)
    return _finish(_C._scalar_tensor(s, dtype or D.get_default_dtype()), requires_grad)


def _number(x):
    return x.item() if isinstance(x, Tensor) else scalar_arg(x)


def _refuse_float8(kernel, dtype):
    """torch's CPU build has no range kernels for the float8 types: its NotImplementedError."""
    if dtype in D.FLOAT8_DTYPES:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{D.c10_name(dtype)}\'')


def _oom_as_runtime_error(fn):
    """numpy's MemoryError (a huge arange or linspace) as torch's allocator raises it: a RuntimeError."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except MemoryError as e:
            raise RuntimeError(f"{fn.__name__}(): not enough memory ({e})") from None
    return wrapper


@_meta.factory
@_oom_as_runtime_error
def arange(start, end=None, step=1, *, out=None, dtype=None, device=None, requires_grad=False):
    """Values from start to end (exclusive) by step, as torch.arange."""
    dtype = _dtype_of(dtype, out)
    check_device(device)
    start, end, step = _number(start), _number(end), _number(step)
    if end is None:
        start, end = 0, start
    if not all(math.isfinite(v) for v in (start, end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if dtype is None and out is not None:
        dtype = out.dtype
    _refuse_float8("arange_cpu", dtype)
    if dtype is not None and not dtype.is_floating_point and any(
            isinstance(v, (builtins.float, np.floating)) for v in (start, end, step)):
        # an integral result: start, end and step are cast to it first (truncated), as torch's accumulate type
        start, end, step = builtins.int(start), builtins.int(end), builtins.int(step)
        if step == 0:
            raise ValueError("step must be nonzero")
    if (end - start) / step < 0 and end != start:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    n = builtins.max(0, math.ceil((end - start) / step))
    if dtype is None:
        is_float = any(isinstance(v, (builtins.float, np.floating)) for v in (start, end, step))
        dtype = D.get_default_dtype() if is_float else D.int64
    # (numpy would wrap these silently: arange(2**63) was empty)
    if not dtype.is_floating_point and any(isinstance(v, builtins.int) and not -(1 << 63) <= v < (1 << 63)
                                           for v in (start, end, step)):
        raise RuntimeError("value cannot be converted to type int64_t without overflow")
    if n >= 1 << 63:
        raise RuntimeError(f"arange: {n} elements, more than a tensor can hold (int64 sizes)")
    if dtype.is_floating_point:
        vals = start + np.arange(n, dtype=np.float64) * step
    else:
        vals = builtins.int(start) + np.arange(n, dtype=np.int64) * builtins.int(step) if all(
            isinstance(v, (builtins.int, np.integer)) for v in (start, step)) else np.floor(
            start + np.arange(n, dtype=np.float64) * step)
    if out is not None and out.numel() and out.numel() != n:  # torch's own warning, on the count of elements
        warnings.warn(f"The number of elements in the out tensor of shape {list(out.shape)} is {out.numel()} which "
                      f"does not match the computed number of elements {n}. Note that this may occur as a result of "
                      f"rounding error. The out tensor will be resized to a tensor of shape ({n},).", UserWarning,
                      stacklevel=2)
    return _finish(tensor(vals, dtype=dtype), requires_grad, out, "arange")


def _linspace_values(start, end, steps, np_dtype=np.dtype(np.float64)):
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if steps == 1:
        return np.array([start], dtype=np.complex128 if np_dtype.kind == "c" else np.float64)
    # PyTorch rounds the step to the result's precision, then forms each value with one fused
    # multiply-add (exact in float64 here, rounded once by the final cast)
    wide = np.complex128 if np_dtype.kind == "c" else np.float64
    step = wide((np_dtype.type(end) - np_dtype.type(start)) / np_dtype.type(steps - 1))
    i = np.arange(steps, dtype=np.float64)
    half = steps // 2
    # the second half is filled backwards from `end` so both endpoints are exact
    return np.where(i < half, wide(start) + i * step, wide(end) - (steps - 1 - i) * step)


def _check_steps(op, steps):
    if isinstance(steps, (builtins.float, builtins.bool, str)) or steps is None:
        raise TypeError(f"{op}() received an invalid combination of arguments: argument 'steps' must be int, not "
                        f"{type(steps).__name__}")


@_meta.factory
@_oom_as_runtime_error
def linspace(start, end, steps, *, out=None, dtype=None, device=None, requires_grad=False):
    """steps evenly spaced values from start to end inclusive."""
    dtype = _dtype_of(dtype, out)
    check_device(device)
    _check_steps("linspace", steps)
    start, end = _number(start), _number(end)
    if dtype is None:  # a complex endpoint gives the default dtype's complex counterpart, as torch's
        cplx = isinstance(start, builtins.complex) or isinstance(end, builtins.complex)
        dtype = D.get_default_dtype().to_complex() if cplx else D.get_default_dtype()
    _refuse_float8("linspace_cpu", dtype)
    vals = _linspace_values(start, end, steps,
                            np.dtype({D.float64: np.float64, D.complex64: np.complex64,
                                      D.complex128: np.complex128}.get(dtype, np.float32)))
    if not (dtype.is_floating_point or dtype.is_complex):
        vals = np.trunc(vals)
    return _finish(tensor(vals, dtype=dtype), requires_grad, out, "linspace")


@_meta.factory
@_oom_as_runtime_error
def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, device=None, requires_grad=False):
    """steps values base**x for x evenly spaced from start to end."""
    dtype = _dtype_of(dtype, out)
    check_device(device)
    _check_steps("logspace", steps)
    _refuse_float8("logspace_cpu", dtype)
    vals = np.power(base, _linspace_values(_number(start), _number(end), steps))
    return _finish(tensor(vals, dtype=dtype or D.get_default_dtype()), requires_grad, out, "logspace")


@_meta.factory
@_oom_as_runtime_error
def eye(n, m=None, *, out=None, dtype=None, device=None, requires_grad=False):
    """A 2-D tensor with ones on the diagonal."""
    dtype = _dtype_of(dtype, out)
    check_device(device)
    if n < 0 or (m is not None and m < 0):
        raise RuntimeError(f"n must be greater or equal to 0, got {n if n < 0 else m}")
    return _finish(tensor(np.eye(n, n if m is None else m), dtype=dtype or D.get_default_dtype()), requires_grad, out,
                   "eye")


@_meta.factory
@_oom_as_runtime_error
def range(start, end, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """Deprecated torch.range: values from start to end *inclusive* by step, in the default dtype."""
    dtype = _dtype_of(dtype, out)
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).", UserWarning, stacklevel=2)
    check_device(device)
    start, end, step = _number(start), _number(end), _number(step)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) / step < 0 and end != start:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    n = builtins.int(math.floor((end - start) / step)) + 1
    dtype = dtype or D.get_default_dtype()
    return _finish(tensor(start + np.arange(n, dtype=np.float64) * step, dtype=dtype), requires_grad, out,
                   "range")


@_meta.factory
def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """An uninitialized tensor with the given sizes and strides (over a storage just large enough)."""
    check_device(device)
    size, stride = _shape((size,), "empty_strided"), _shape((stride,), "empty_strided")
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    numel = 0 if 0 in size else 1 + builtins.sum((s - 1) * st for s, st in zip(size, stride))
    base = _C._empty([numel], dtype or D.get_default_dtype())
    return _finish(base.as_strided(size, stride), requires_grad)


def _new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                       pin_memory=False):
    """Tensor.new_empty_strided: empty_strided with self's dtype by default."""
    return empty_strided(size, stride, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)


Tensor.new_empty_strided = _new_empty_strided


def get_default_device():
    """The device factories use when none is given: the innermost `with torch.device(...)` block's, else the one
    set by set_default_device, else the CPU."""
    from ._tensor import device
    return device(_meta.default_device() or "cpu")


def set_default_device(device):
    """Sets the device factories use when none is given: the CPU or meta (None restores the CPU)."""
    check_device(device, allow_meta=True)
    _meta.set_default(device)


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, requires_grad=False,
                   pin_memory=False):
    """An uninitialized tensor of shape `size` whose dims lie in memory in the order physical_layout (outermost
    first): empty_permuted((2, 3, 4), (0, 2, 1)) has strides (12, 1, 3)."""
    size = _shape((size,), "empty_permuted")
    order = [int_arg(d, "empty_permuted", "physical_layout") for d in physical_layout]
    if sorted(order) != builtins.list(builtins.range(len(size))):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the physical_layout; or "
                           f"physical_layout is not a permutation: {order} for size {size}")
    inverse = [0] * len(order)
    for position, d in enumerate(order):
        inverse[d] = position
    physical = empty([size[d] for d in order], dtype=dtype, device=device)
    return _finish(physical.permute(inverse), requires_grad)


# ---- window functions (computed in the result dtype in PyTorch's order of operations) ---------------------------

def _window(name, window_length, periodic, dtype, requires_grad, body):
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    dtype = dtype or D.get_default_dtype()
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
    if window_length == 0:
        return _finish(empty(0, dtype=dtype), requires_grad)
    if window_length == 1:
        return _finish(ones(1, dtype=dtype), requires_grad)
    n = window_length + 1 if periodic else window_length
    window = body(arange(n, dtype=dtype), n)
    return _finish(window[:window_length] if periodic else window, requires_grad)


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   requires_grad=False):
    """alpha - beta cos(2 pi n / (N - 1)) (N = window_length, plus one when periodic)."""
    check_device(device)
    return _window("hamming_window", window_length, periodic, dtype, requires_grad,
                   lambda n, N: (n * (math.pi * 2.0 / (N - 1))).cos() * -beta + alpha)


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The Hann window: hamming_window with alpha = beta = 0.5."""
    return hamming_window(window_length, periodic, 0.5, 0.5, dtype=dtype, device=device, requires_grad=requires_grad)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    """0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))."""
    check_device(device)

    def body(n, N):
        w = n * (math.pi / (N - 1))
        return (w * 4).cos() * 0.08 - (w * 2).cos() * 0.5 + 0.42
    return _window("blackman_window", window_length, periodic, dtype, requires_grad, body)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The triangular window 1 - |2n / (N - 1) - 1|."""
    check_device(device)

    def body(n, N):
        w = n * (2.0 / (N - 1))
        first_half = ((N - 1) >> 1) + 1
        return _C.cat([w[:first_half], w[first_half:] * -1 + 2], 0)
    return _window("bartlett_window", window_length, periodic, dtype, requires_grad, body)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  requires_grad=False):
    """I0(beta sqrt(1 - ((n - (N-1)/2) / ((N-1)/2))^2)) / I0(beta)."""
    check_device(device)

    def body(n, N):
        alpha = (N - 1) / 2.0
        return _C.i0((1 - ((n - alpha) / alpha) ** 2).sqrt() * beta) / _C.i0(scalar_tensor(beta, dtype=n.dtype))
    return _window("kaiser_window", window_length, periodic, dtype, requires_grad, body)


# ---- legacy tensor types: torch.FloatTensor(2, 3), torch.LongTensor([1, 2]), isinstance(t, torch.FloatTensor) -----

class _LegacyTensorType(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype

    def __call__(cls, *args, device=None):
        return legacy_construct(cls.dtype, args, device)


def legacy_construct(dtype, args, device=None):
    """The legacy constructors' forms: (), (*sizes) or (Size) -> uninitialized, (data) -> a copy of data."""
    check_device(device)
    if not args:
        return _C._empty([0], dtype)
    from ._tensor import Size
    if len(args) == 1 and not isinstance(args[0], (builtins.int, np.integer)) and not isinstance(args[0], Size):
        return tensor(args[0], dtype=dtype)
    return empty(*args, dtype=dtype)


def _legacy_type(name, dtype):
    return _LegacyTensorType(name, (), {"dtype": dtype, "__module__": "flowlike", "is_cuda": False, "is_sparse": False,
                                        "__doc__": f"Legacy constructor of {dtype} tensors (and isinstance check)."})


FloatTensor = _legacy_type("FloatTensor", D.float32)
DoubleTensor = _legacy_type("DoubleTensor", D.float64)
HalfTensor = _legacy_type("HalfTensor", D.float16)
BFloat16Tensor = _legacy_type("BFloat16Tensor", D.bfloat16)
ByteTensor = _legacy_type("ByteTensor", D.uint8)
CharTensor = _legacy_type("CharTensor", D.int8)
ShortTensor = _legacy_type("ShortTensor", D.int16)
IntTensor = _legacy_type("IntTensor", D.int32)
LongTensor = _legacy_type("LongTensor", D.int64)
BoolTensor = _legacy_type("BoolTensor", D.bool)


def set_default_tensor_type(t):
    """Deprecated: sets the default floating dtype from a legacy tensor type (or its name, 'torch.DoubleTensor')."""
    if isinstance(t, str):
        matches = [cls for cls in _LEGACY_TYPES if f"torch.{cls.__name__}" == t]
        if not matches:
            raise TypeError(f"invalid type: '{t}'")
        t = matches[0]
    if not isinstance(t, _LegacyTensorType):
        raise TypeError(f"invalid type: '{t}'")
    if not t.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    D.set_default_dtype(t.dtype)


_LEGACY_TYPES = (FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, ByteTensor, CharTensor, ShortTensor, IntTensor,
                 LongTensor, BoolTensor)
