"""The Tensor type's Python-side methods, Size and device."""
import builtins
import functools
import operator

import numpy as np

from . import _C
from . import _dtype as D
from . import _meta
from ._tensor_str import tensor_repr

Tensor = _C.Tensor


class Size(tuple):
    """The shape of a tensor: a tuple of ints, as torch.Size."""

    def __repr__(self):
        return f"torch.Size({list(self)!r})"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, item):
        r = tuple.__getitem__(self, item)
        return Size(r) if isinstance(item, slice) else r

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))

    def __radd__(self, other):
        return Size(tuple(other) + tuple(self))

    def __reduce__(self):
        return (Size, (tuple(self),))


class device:
    """A device, as torch.device: 'cpu' (CUDA devices are recognized and refused for now)."""

    def __init__(self, type, index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, builtins.int):
            type, index = "cuda", type
        elif not isinstance(type, str):
            raise TypeError(f"device() received an invalid combination of arguments - got ({builtins.type(type).__name__})"
                            f", but expected one of: (torch.device device), (str type, int index = -1)")
        elif ":" in type:
            type, idx = type.split(":", 1)
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}:{idx}'")
            index = builtins.int(idx)
        if type not in ("cpu", "cuda", "meta", "mps"):
            raise RuntimeError(
                f"Expected one of cpu, cuda, meta, mps device type at start of device string: {type}")
        self.type, self.index = type, index

    def __repr__(self):
        return f"device(type='{self.type}')" if self.index is None else f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __enter__(self):
        """`with torch.device(d):` makes d the device of the factories called inside (cpu or meta here)."""
        check_device(self, allow_meta=True)
        _meta.context_stack().append(self)
        _meta._open_contexts[0] += 1
        return self

    def __exit__(self, *exc):
        _meta.context_stack().pop()
        _meta._open_contexts[0] -= 1
        return False


_CPU = device("cpu")
_META = device("meta")
_C._set_python_classes(Size, _CPU)


def check_device(d, allow_meta=False):
    """Accepts cpu devices (and meta with allow_meta); anything else raises the error PyTorch raises without
    CUDA."""
    if d is None:
        return
    d = device(d)
    if d.type != "cpu" and not (allow_meta and d.type == "meta"):
        raise RuntimeError(f"Attempting to use device '{d}' but flowlike has no {d.type} backend in this build; "
                           "use device='cpu'")


# ---- methods written in Python ---------------------------------------------------------------

def _print_values(self):
    # numpy has neither bfloat16 nor the float8 types: their float32 widenings are exact
    return self.detach()._to_dtype(D.float32, False)._numpy_unchecked() \
        if self.dtype == D.bfloat16 or self.dtype in D.FLOAT8_DTYPES else self._numpy_unchecked()


def _repr(self, *, tensor_contents=None):
    if _meta.is_meta(self) and tensor_contents is None and self.numel():
        tensor_contents = "..."  # torch shows no values for meta tensors, and always their size
        return tensor_repr(self, tensor_contents=tensor_contents).replace(
            "device='meta'", f"device='meta', size={tuple(self.shape)}", 1)
    return tensor_repr(self, tensor_contents=tensor_contents)


def _to(self, *args, **kwargs):
    """to(dtype), to(device), to(device, dtype), to(other), with non_blocking and copy keywords."""
    dtype = kwargs.pop("dtype", None)
    dev = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    for a in args:
        if isinstance(a, D.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype, dev = a.dtype, a.device
        elif isinstance(a, (str, device)):
            dev = a
        elif isinstance(a, builtins.bool):
            continue  # positional non_blocking
        else:
            raise TypeError(f"to() received an invalid combination of arguments: {type(a).__name__}")
    check_device(dev, allow_meta=True)
    if _meta.is_meta(self) or (dev is not None and device(dev).type == "meta"):
        return _to_meta_device(self, dev, dtype)
    if dtype is None:
        return self.clone() if copy else self
    return self._to_dtype(dtype, copy)


def _to_meta_device(self, dev, dtype):
    """to() where self or the target is on meta: meta stays meta; the CPU has no data to copy out of meta."""
    if dev is not None and device(dev).type != "meta":
        raise NotImplementedError(_meta.NO_DATA)
    return _meta.empty(self.shape, dtype or self.dtype, self.requires_grad)


def _cpu(self, memory_format=None):
    if _meta.is_meta(self):
        raise NotImplementedError(_meta.NO_DATA)
    return self


def _no_data(name, error, message):
    """Tensor.<name>, refusing meta tensors (which have no values) with torch's error."""
    method = getattr(Tensor, name)

    def guarded(self, *args, **kwargs):
        if _meta.is_meta(self):
            raise error(message)
        return method(self, *args, **kwargs)
    guarded.__name__, guarded.__doc__ = name, method.__doc__
    return guarded


def _conversion(d):
    def convert(self, memory_format=None):
        return self._to_dtype(d, False)
    convert.__doc__ = f"self.to({d})"
    return convert


def _type(self, dtype=None, non_blocking=False):
    if dtype is None:
        return _TYPE_NAMES[self.dtype]
    if isinstance(dtype, type) and isinstance(getattr(dtype, "dtype", None), D.dtype):  # torch.FloatTensor & co.
        dtype = dtype.dtype
    if isinstance(dtype, str):
        for d, name in _TYPE_NAMES.items():
            if name == dtype:
                return self._to_dtype(d, False)
        raise ValueError(f"invalid type: '{dtype}'")
    return self._to_dtype(dtype, False)


_TYPE_NAMES = {D.float32: "torch.FloatTensor", D.float64: "torch.DoubleTensor", D.float16: "torch.HalfTensor",
               D.bfloat16: "torch.BFloat16Tensor", D.uint8: "torch.ByteTensor", D.int8: "torch.CharTensor",
               D.int16: "torch.ShortTensor", D.int32: "torch.IntTensor", D.int64: "torch.LongTensor",
               D.bool: "torch.BoolTensor", D.complex64: "torch.ComplexFloatTensor",
               D.complex128: "torch.ComplexDoubleTensor",
               **{d: f"torch.{D.c10_name(d)}Tensor" for d in D.FLOAT8_DTYPES}}


def _len(self):
    if self.dim() == 0:
        raise TypeError("len() of a 0-d tensor")
    return self.shape[0]


def _iter(self):
    if self.dim() == 0:
        raise TypeError("iteration over a 0-d tensor")
    return (self.select(0, i) for i in range(self.shape[0]))


def _bool(self):
    if self.numel() != 1:
        raise RuntimeError(f"Boolean value of Tensor with more than one value is ambiguous" if self.numel() > 1
                           else "Boolean value of Tensor with no values is ambiguous")
    return builtins.bool(self.item())


def _scalar_conv(kind):
    def conv(self):
        if self.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return kind(self.item())
    return conv


_INT64 = range(-(1 << 63), 1 << 63)


def int_arg(value, op, name):
    """An int argument as torch's parser takes it: ints, numpy ints and one-element integer tensors (__index__);
    TypeError for anything else (a float, inf, a float tensor) instead of a silent or overflowing int(), and
    ValueError for an int past int64."""
    if isinstance(value, builtins.bool):
        return builtins.int(value)
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError(f"{op}(): argument '{name}' must be int, not {builtins.type(value).__name__}") from None
    if v not in _INT64:
        raise ValueError("Overflow when unpacking long long")
    return v


def scalar_arg(value):
    """A number argument as torch's Scalar takes it: Python's OverflowError for an int outside [-2^63, 2^64) (torch
    reads [2^63, 2^64) as uint64), as the C++ bindings raise it."""
    if isinstance(value, builtins.int) and not -(1 << 63) <= value < (1 << 64):
        raise OverflowError("int too big to convert" if value > 0 else "can't convert negative int to unsigned")
    return value


def int_list_arg(values, op, name):
    """An int-list argument (a size) as torch's parser takes it: a TypeError for any element that is not an int,
    overflowing int64 included."""
    out = []
    for i, value in enumerate(values):
        try:
            out.append(int_arg(value, op, name))
        except (TypeError, ValueError) as e:
            raise TypeError(f"{op}(): argument '{name}' failed to unpack the object at pos {i + 1} with error "
                            f"\"{e}\"") from None
    return out


def _index(self):
    if self.numel() != 1 or self.dtype.is_floating_point:
        raise TypeError("only integer tensors of a single element can be converted to an index")
    return builtins.int(self.item())


def _array(self, dtype=None, copy=None):
    a = self.detach()._numpy_unchecked() if self.dtype != D.bfloat16 else _print_values(self)
    return a if dtype is None else a.astype(dtype, copy=False)


def _new_tensor(self, data, dtype=None, device=None, requires_grad=False):
    from ._creation import tensor
    return tensor(data, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)


def _new_factory(name):
    """new_zeros/new_ones/new_empty: the factory with self's dtype by default."""
    def new(self, *size, dtype=None, device=None, requires_grad=False, **layout_args):
        from . import _creation
        return getattr(_creation, name)(*size, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)
    new.__name__ = f"new_{name}"
    return new


def _new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False, **layout_args):
    from ._creation import full
    return full(size, fill_value, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)


def _requires_grad_(self, requires_grad=True):
    self.requires_grad = requires_grad
    return self


def _detach(self):
    return _C._detach(self)


def _contains(self, element):
    """`element in tensor`: whether any element equals it (torch's rule; no iteration over rows)."""
    if isinstance(element, (Tensor, builtins.int, builtins.float, builtins.bool)):
        return builtins.bool((self == element).any().item())
    raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a {builtins.type(element)}.")


def _as_subclass(self, cls):
    """A `cls` instance sharing self's memory and staying attached to its autograd graph (torch's as_subclass)."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from Tensor is not possible. "
                        "Make sure your class inherits from Tensor.")
    out = Tensor.__new__(cls)
    Tensor.__init__(out, self, "__as_subclass__")
    return out


def _is_nonzero(self):
    if self.numel() != 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous" if self.numel() > 1
                           else "Boolean value of Tensor with no values is ambiguous")
    return builtins.bool(self.item() != 0)


def _legacy_new(self, *args, device=None):
    """Tensor.new (legacy): a tensor of self's dtype from a size (uninitialized), from data, or empty."""
    from ._creation import legacy_construct
    return legacy_construct(self.dtype, args, device)


_METHODS = {
    "__repr__": _repr, "__str__": _repr, "_print_values": _print_values, "to": _to, "type": _type,
    "float": _conversion(D.float32), "double": _conversion(D.float64), "half": _conversion(D.float16),
    "bfloat16": _conversion(D.bfloat16), "long": _conversion(D.int64), "int": _conversion(D.int32),
    "short": _conversion(D.int16), "char": _conversion(D.int8), "byte": _conversion(D.uint8),
    "bool": _conversion(D.bool), "cfloat": _conversion(D.complex64), "cdouble": _conversion(D.complex128),
    "cpu": _cpu,
    "__len__": _len, "__iter__": _iter, "__bool__": _bool, "__float__": _scalar_conv(builtins.float),
    "__int__": _scalar_conv(builtins.int), "__complex__": _scalar_conv(builtins.complex), "__index__": _index, "__hash__": lambda self: id(self),
    "__array__": _array, "new_tensor": _new_tensor, "new_zeros": _new_factory("zeros"),
    "new_ones": _new_factory("ones"), "new_empty": _new_factory("empty"), "new_full": _new_full,
    "requires_grad_": _requires_grad_, "detach": _detach, "as_subclass": _as_subclass,
    "__contains__": _contains,
    "is_floating_point": lambda self: self.dtype.is_floating_point,
    "is_signed": lambda self: self.dtype.is_signed,
    "get_device": lambda self: -1, "is_nonzero": _is_nonzero,
    "is_same_size": lambda self, other: tuple(self.shape) == tuple(other.shape),
    "type_as": lambda self, other: self.type(other.type()), "new": _legacy_new,
    "__array_priority__": 1000,
}
for _name, _fn in _METHODS.items():
    setattr(Tensor, _name, _fn)
Tensor.__module__ = "flowlike"
_cpu_device = Tensor.device.fget


def _device_of(self):
    """The tensor's device: cpu, or meta for a tensor without data."""
    return _META if _meta._addresses and self.data_ptr() in _meta._addresses else _cpu_device(self)


Tensor.device = property(_device_of, doc=_device_of.__doc__)
Tensor.is_meta = property(_meta.is_meta, doc="Whether the tensor is on the meta device (has no data).")
Tensor.numpy = _no_data("numpy", TypeError, "can't convert meta device type tensor to numpy. Use Tensor.cpu() to "
                        "copy the tensor to host memory first.")
Tensor.tolist = _no_data("tolist", NotImplementedError, _meta.NO_DATA)
_item = Tensor.item


def _meta_item(self):
    if _meta.is_meta(self) and self.numel() == 1:
        raise RuntimeError("Tensor.item() cannot be called on meta tensors")
    return _item(self)


Tensor.item = functools.wraps(_item)(_meta_item)


class layout:
    """A tensor memory layout (flowlike tensors are all strided)."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"torch.{self._name}"

    def __reduce__(self):
        return self._name


class memory_format(layout):
    """A memory format requested from .contiguous(), .to(), clone() and the *_like creators. flowlike keeps every
    tensor in the row-major (contiguous) format; the values are the same in any format."""


strided = layout("strided")
contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
Tensor.layout = property(lambda self: strided)


def _storage_index(index, size):
    """index (an int, negative counting from the end) checked against a storage of `size` elements."""
    if not isinstance(index, builtins.int):
        raise RuntimeError(f"can't index a storage with {builtins.type(index).__name__}")
    if not -size <= index < size:
        raise IndexError(f"index {index} out of range for storage of size {size}")
    return index + size if index < 0 else index


def _storage_str(storage, info):
    # torch's storage repr: one element a line, then the type line
    return " " + "\n ".join(str(x) for x in storage.tolist()) + f"\n[{info} of size {len(storage)}]"


class UntypedStorage:
    """The bytes behind a tensor (shared by all its views), as torch.UntypedStorage. It holds them as `_bytes`, a
    1-D uint8 tensor over exactly this storage (a slice of a storage is a storage of its own sharing the memory)."""

    is_sparse = False

    def __init__(self, _bytes):
        self._bytes = _bytes

    @classmethod
    def from_file(cls, filename, shared=False, nbytes=0, *, size=None):
        """A storage over the first nbytes of a file, memory-mapped (shared=True writes go to the file;
        otherwise the mapping is copy-on-write)."""
        import numpy as np
        n = nbytes or size or 0
        arr = np.memmap(filename, dtype=np.uint8, mode="r+" if shared else "c", shape=(n,)) if n else \
            np.zeros(0, dtype=np.uint8)
        from ._creation import from_numpy
        return cls(from_numpy(arr)._storage_bytes())

    def untyped(self):
        return self

    _untyped = untyped

    def _all_bytes(self):
        # re-read: set_ may have grown the storage since _bytes was made
        return self._bytes._storage_bytes()

    def _slice(self, index):
        start, stop, step = index.indices(self.nbytes())
        if step != 1:
            raise RuntimeError(f"Trying to slice with a step of {step}, but only a step of 1 is supported")
        return start, max(stop - start, 0)

    def __getitem__(self, index):
        """A byte (an int), or for a slice a storage over those bytes sharing this one's memory, as torch."""
        if isinstance(index, slice):
            return UntypedStorage(self._bytes._storage_bytes(*self._slice(index)))
        return builtins.int(self._all_bytes()[_storage_index(index, self.nbytes())])

    def __setitem__(self, index, value):
        """Sets one byte, or every byte of a slice, to value."""
        if isinstance(index, slice):
            start, n = self._slice(index)
            self._all_bytes()[start:start + n] = value
        else:
            self._all_bytes()[_storage_index(index, self.nbytes())] = value

    def __iter__(self):
        return iter(self.tolist())

    def tolist(self):
        """The bytes as a list of ints."""
        return self._all_bytes().tolist()

    def fill_(self, value):
        """Sets every byte to value; returns self."""
        self._all_bytes().fill_(value)
        return self

    def clone(self):
        """A storage holding a copy of these bytes."""
        return UntypedStorage(self._all_bytes().clone()._storage_bytes())

    def data_ptr(self):
        return self._bytes._storage_ptr()

    def nbytes(self):
        return self._bytes._storage_nbytes()

    def size(self):
        return self.nbytes()

    __len__ = size

    def element_size(self):
        return 1

    @property
    def device(self):
        return _CPU

    is_cuda = False

    def cpu(self):
        """This storage itself (it is on the CPU already), as torch."""
        return self

    def copy_(self, src, non_blocking=None):
        """Copies the bytes of storage src, of the same size, into this one."""
        src = src._untyped_storage if isinstance(src, TypedStorage) else src
        if not isinstance(src, UntypedStorage):
            raise TypeError(f"copy_(): argument 'src' (position 1) must be torch.Storage, not {type(src).__name__}")
        if src.nbytes() != self.nbytes():
            raise RuntimeError(f"size does not match, self was {self.nbytes()} bytes but src was {src.nbytes()} bytes")
        self._all_bytes().copy_(src._all_bytes())
        return self

    def __repr__(self):
        return _storage_str(self, "torch.storage.UntypedStorage(device=cpu)")


_typed_storage_warned = False


def _warn_typed_storage():
    # torch warns once a process that TypedStorage is deprecated
    global _typed_storage_warned
    if not _typed_storage_warned:
        _typed_storage_warned = True
        import warnings
        warnings.warn("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the "
                      "only storage class. This should only matter to you if you are using storages directly.  To "
                      "access UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()",
                      UserWarning, stacklevel=3)


class TypedStorage:
    """torch.TypedStorage (deprecated in torch, and what Tensor.storage() returns): an UntypedStorage read as
    elements of `dtype`. TypedStorage(wrap_storage=untyped, dtype=...) wraps a storage; TypedStorage(n, dtype=...)
    and TypedStorage(sequence, dtype=...) make a new one (dtype by default the default dtype)."""

    is_sparse = False
    is_cuda = False

    def __init__(self, *args, wrap_storage=None, dtype=None, device=None, _internal=False):
        if not _internal:
            _warn_typed_storage()
        if device is not None and str(device) != "cpu":
            raise RuntimeError(f"TypedStorage: device {device} is not supported by flowlike (CPU only)")
        self.dtype = D.get_default_dtype() if dtype is None else dtype
        if wrap_storage is not None:
            if args:
                raise TypeError("TypedStorage(): wrap_storage takes no positional arguments")
            if not isinstance(wrap_storage, UntypedStorage):
                raise TypeError(f"TypedStorage(): argument 'wrap_storage' must be UntypedStorage, but got "
                                f"{type(wrap_storage).__name__}")
            self._untyped_storage = wrap_storage
            return
        from ._creation import tensor, zeros
        if len(args) > 1:
            raise TypeError(f"TypedStorage() takes at most one positional argument, got {len(args)}")
        data = zeros(args[0], dtype=self.dtype) if args and isinstance(args[0], builtins.int) else \
            tensor(list(args[0]) if args else [], dtype=self.dtype)
        self._untyped_storage = data.untyped_storage()

    def _tensor(self):
        """A 1-D tensor of dtype over the whole storage: writes to it write the storage."""
        return self._untyped_storage._all_bytes().view(self.dtype)

    def untyped(self):
        return self._untyped_storage

    _untyped = untyped

    def __getitem__(self, index):
        """The element at index, as a Python number (torch refuses slices of a TypedStorage)."""
        _warn_typed_storage()
        if isinstance(index, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        return self._tensor()[_storage_index(index, self.size())].item()

    def __setitem__(self, index, value):
        """Sets one element, or the elements of a slice, to value."""
        _warn_typed_storage()
        if isinstance(index, slice):
            self._tensor()[index] = value
        else:
            self._tensor()[_storage_index(index, self.size())] = value

    def __iter__(self):
        return iter(self.tolist())

    def tolist(self):
        """The elements as a list of Python numbers."""
        return self._tensor().tolist()

    def fill_(self, value):
        """Sets every element to value; returns self."""
        self._tensor().fill_(value)
        return self

    def clone(self):
        """A storage of the same dtype holding a copy of the elements."""
        return TypedStorage(wrap_storage=self._untyped_storage.clone(), dtype=self.dtype, _internal=True)

    def copy_(self, src, non_blocking=None):
        """Copies the elements of storage src (converted to this dtype) into this one."""
        src_t = src._tensor() if isinstance(src, TypedStorage) else \
            src._all_bytes() if isinstance(src, UntypedStorage) else None
        if src_t is None:
            raise TypeError(f"copy_(): argument 'src' (position 1) must be torch.Storage, not {type(src).__name__}")
        self._tensor().copy_(src_t)
        return self

    def _to(self, dtype):
        if dtype == self.dtype:
            return self
        return TypedStorage(wrap_storage=self._tensor().to(dtype).untyped_storage(), dtype=dtype, _internal=True)

    def type(self, dtype=None):
        """Without dtype, the storage type's name (torch.FloatStorage and so on)."""
        if dtype is None:
            return "torch." + self.pickle_storage_type()
        raise RuntimeError("TypedStorage.type(dtype) is not supported by flowlike; use .float(), .long() and so on")

    def pickle_storage_type(self):
        from .serialization import _STORAGE_TYPE_OF
        return _STORAGE_TYPE_OF[self.dtype].name

    def data_ptr(self):
        return self._untyped_storage.data_ptr()

    def nbytes(self):
        return self._untyped_storage.nbytes()

    def element_size(self):
        return self.dtype.itemsize

    def size(self):
        return self.nbytes() // self.element_size()

    __len__ = size

    @property
    def device(self):
        return _CPU

    def cpu(self):
        return self

    def is_shared(self):
        return False

    def __repr__(self):
        _warn_typed_storage()
        return _storage_str(self, f"torch.storage.TypedStorage(dtype={self.dtype}, device=cpu)")


for _name, _dt in (("double", D.float64), ("float", D.float32), ("half", D.float16), ("bfloat16", D.bfloat16),
                   ("long", D.int64), ("int", D.int32), ("short", D.int16), ("char", D.int8), ("byte", D.uint8),
                   ("bool", D.bool)):
    setattr(TypedStorage, _name, functools.partialmethod(TypedStorage._to, _dt))


def _storage(self):
    """The storage behind self as a TypedStorage of self's dtype (torch's deprecated Tensor.storage())."""
    _warn_typed_storage()
    return TypedStorage(wrap_storage=self.untyped_storage(), dtype=self.dtype, _internal=True)


Tensor.untyped_storage = lambda self: UntypedStorage(self._storage_bytes())
Tensor.storage = _storage

# The C++ type names in torch's set_ dtype-mismatch message.
_CPP_TYPE_NAMES = {D.bool: "bool", D.uint8: "unsigned char", D.int8: "signed char", D.int16: "short int",
                   D.int32: "int", D.int64: "long int", D.float16: "c10::Half", D.bfloat16: "c10::BFloat16",
                   D.float32: "float", D.float64: "double", D.complex64: "c10::complex<float>",
                   D.complex128: "c10::complex<double>", **{d: f"c10::{D.c10_name(d)}" for d in D.FLOAT8_DTYPES}}


def _set_(self, source=None, storage_offset=None, size=None, stride=None):
    """Makes self use the storage of source (a Tensor or an UntypedStorage) with the given geometry: by default
    all of source (a tensor's own view of it, or the whole storage as a 1-D tensor), stride by default
    contiguous, storage_offset counted from the start of a source tensor; no source: a new empty storage. Writes
    through self then land in source's memory. Returns self."""
    if storage_offset is not None and size is None or size is None and stride is not None:
        raise TypeError("set_() received an invalid combination of arguments: storage_offset and size go together "
                        "(expected (), (source), or (source, storage_offset, size, stride=None))")
    if source is None:
        if size is not None:
            raise TypeError("set_(): argument 'source' must be Tensor or Storage, not NoneType")
        from ._creation import empty
        return _C._set_(self, empty(0, dtype=self.dtype), 0, (0,), (1,))
    if isinstance(source, Tensor):
        if source.dtype != self.dtype:
            raise RuntimeError(f"Could not set tensor of type {_CPP_TYPE_NAMES[source.dtype]} to a tensor of type "
                               f"{_CPP_TYPE_NAMES[self.dtype]}")
        holder = source
        if size is None:
            storage_offset, size, stride = source.storage_offset(), source.size(), source.stride()
        else:  # as torch, an offset given with a tensor counts from where that tensor starts
            storage_offset += source.storage_offset()
    elif isinstance(source, (UntypedStorage, TypedStorage)):
        holder = source.untyped()._bytes
        if size is None:
            storage_offset, size = 0, (source.nbytes() // self.element_size(),)
    else:
        raise TypeError(f"set_(): argument 'source' must be Tensor or Storage, not {type(source).__name__}")
    if stride is None:
        stride, n = [], 1
        for s in reversed(tuple(size)):
            stride.insert(0, n)
            n *= max(s, 1)
    return _C._set_(self, holder, storage_offset, size, stride)


def _is_set_to(self, tensor):
    """Whether self and tensor share storage, storage offset, sizes and strides."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"is_set_to(): argument 'tensor' (position 1) must be Tensor, not {builtins.type(tensor).__name__}")
    return (self._is_view_of(tensor) and self.storage_offset() == tensor.storage_offset() and
            self.size() == tensor.size() and self.stride() == tensor.stride())


Tensor.set_ = _set_
Tensor.is_set_to = _is_set_to


def _resize_(self, *sizes, memory_format=None):
    """Gives self the shape `sizes` (contiguous strides), growing its storage in place when it is too small (the
    elements already there keep their values; new ones are uninitialized). The same shape leaves self as it is."""
    sizes = tuple(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else tuple(sizes)
    if any(not isinstance(s, builtins.int) or s < 0 for s in sizes):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(sizes)}")
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    return _C._resize_(self, list(sizes))


def _apply_elementwise(self, fn, *others):
    """self[i] = fn(self[i], other[i], ...) in place, others broadcast to self's shape (CPU Python callables)."""
    from ._creation import tensor
    flat = [self.detach().reshape(-1).tolist()] + [o.detach().expand(self.shape).reshape(-1).tolist() for o in others]
    values = [fn(*vals) for vals in zip(*flat)]
    return self.copy_(tensor(values, dtype=self.dtype).reshape(self.shape))


def _module_load(self, other, assign=False):
    """How nn.Module.load_state_dict loads `other` into this parameter or buffer: a detached copy into self, or
    `other` itself (detached) when assign."""
    if assign:
        return other.detach()
    with _no_grad():
        return self.copy_(other).detach()


def _no_grad():
    """flowlike.autograd.no_grad(), imported when first used (this module loads before flowlike.autograd)."""
    from .autograd import no_grad
    return no_grad()


Tensor.resize_ = _resize_
Tensor.resize_as_ = lambda self, the_template, memory_format=None: _resize_(self, tuple(the_template.shape))
Tensor.apply_ = lambda self, callable: _apply_elementwise(self, callable)
Tensor.map_ = lambda self, tensor, callable: _apply_elementwise(self, callable, tensor)
Tensor.map2_ = lambda self, x, y, callable: _apply_elementwise(self, callable, x, y)
Tensor.module_load = _module_load
Tensor.to_dense = lambda self, dtype=None, *, masked_grad=None: self if dtype in (None, self.dtype) else self.to(dtype)
Tensor.const_data_ptr = lambda self: self.data_ptr()
Tensor.is_pinned = lambda self, device=None: False  # flowlike allocates pageable host memory only
