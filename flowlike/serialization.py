"""flowlike.save / flowlike.load, tensor pickling, and reading checkpoints written by torch.save (zip format)."""
import io
import os
import pickle
import struct
import zipfile
from collections import OrderedDict

import numpy as np

from . import _dtype as D
from ._tensor import Tensor, Size, device

__all__ = ["save", "load"]

_BF16 = "bfloat16"


# ---- tensor pickling (also what DataLoader workers use to send batches) ------------------------------------

def _tensor_payload(t):
    t = t.detach()
    if t.dtype == D.bfloat16:
        # numpy has no bfloat16: ship the float32 widening, which converts back exactly.
        return t._to_dtype(D.float32, False).contiguous()._numpy_unchecked().copy(), _BF16
    return t.contiguous()._numpy_unchecked().copy(), str(t.dtype).split(".")[-1]


def _rebuild_tensor(array, dtype_name, requires_grad):
    from ._creation import from_numpy
    t = from_numpy(np.ascontiguousarray(array))
    if dtype_name == _BF16:
        t = t._to_dtype(D.bfloat16, False)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _tensor_reduce_ex(self, protocol):
    array, dtype_name = _tensor_payload(self)
    return (_rebuild_tensor, (array, dtype_name, self.requires_grad))


def _tensor_deepcopy(self, memo):
    if not self.is_leaf:
        raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol "
                           "at the moment.  If you were attempting to deepcopy a module, this may be because of a "
                           "torch.nn.utils.weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001")
    if id(self) in memo:
        return memo[id(self)]
    result = self.detach().clone()
    if self.requires_grad:
        result.requires_grad_(True)
    if self.grad is not None:
        import copy
        result.grad = copy.deepcopy(self.grad, memo)
    memo[id(self)] = result
    return result


# Installed unless the core already provides them.
if "__reduce_ex__" not in Tensor.__dict__:
    Tensor.__reduce_ex__ = _tensor_reduce_ex
if "__deepcopy__" not in Tensor.__dict__:
    Tensor.__deepcopy__ = _tensor_deepcopy


# ---- save / load -------------------------------------------------------------------------------------------

def save(obj, f, pickle_module=pickle, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Saves obj to a path or a binary file object.

    Tensors, Parameters, numbers, strings and dict/OrderedDict/list/tuple nests of them (state_dicts, optimizer
    state, checkpoints) are written in torch.save's zip format, so torch.load reads them; any other object is
    pickled as is."""
    try:
        data = _torch_zip_bytes(obj) if _use_new_zipfile_serialization else None
    except _NotTorchWritable:
        data = None
    if data is None:
        data = pickle_module.dumps(obj, protocol=pickle_protocol)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            fh.write(data)
    else:
        f.write(data)


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Loads an object saved by flowlike.save, or by torch.save (its zip format) when the torch file is given.

    map_location may name the CPU (or be a callable/dict); tensors always load on the CPU. weights_only is accepted
    (flowlike files only hold the pickled objects)."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            data = fh.read()
    else:
        data = f.read()
    if data[:2] == b"PK":
        return _load_torch_zip(io.BytesIO(data))
    return (pickle_module or pickle).loads(data, **pickle_load_args)


# ---- torch.save's zip format: data.pkl + data/<key> raw storages -------------------------------------------

_STORAGE_DTYPES = {
    "FloatStorage": (np.float32, D.float32), "DoubleStorage": (np.float64, D.float64),
    "HalfStorage": (np.float16, D.float16), "BFloat16Storage": (np.uint16, D.bfloat16),
    "LongStorage": (np.int64, D.int64), "IntStorage": (np.int32, D.int32), "ShortStorage": (np.int16, D.int16),
    "CharStorage": (np.int8, D.int8), "ByteStorage": (np.uint8, D.uint8), "BoolStorage": (np.bool_, D.bool),
}


class _TorchStorage:
    """A storage read from a torch zip: a flat numpy array plus the flowlike dtype it holds."""

    def __init__(self, array, dtype):
        self.array, self.dtype = array, dtype


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None,
                       metadata=None):
    from ._creation import from_numpy
    arr = storage.array
    item = arr.itemsize
    if len(size):
        view = np.lib.stride_tricks.as_strided(arr[storage_offset:], shape=tuple(size),
                                               strides=tuple(s * item for s in stride))
    else:
        view = arr[storage_offset:storage_offset + 1].reshape(())
    view = np.array(view)
    if storage.dtype == D.bfloat16:
        t = from_numpy((view.astype(np.uint32) << 16).view(np.float32))._to_dtype(D.bfloat16, False)
    else:
        t = from_numpy(view)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_parameter(data, requires_grad, backward_hooks=None, state=None):
    from .nn.parameter import Parameter
    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return _rebuild_parameter(data, requires_grad)


class _TorchUnpickler(pickle.Unpickler):
    """Maps torch globals to flowlike and storages to the raw bytes in the archive."""

    def __init__(self, file, archive, prefix):
        super().__init__(file)
        self._archive, self._prefix = archive, prefix
        self._storages = {}

    def find_class(self, module, name):
        if module == "torch._utils":
            if name == "_rebuild_tensor_v2":
                return _rebuild_tensor_v2
            if name == "_rebuild_parameter":
                return _rebuild_parameter
            if name == "_rebuild_parameter_with_state":
                return _rebuild_parameter_with_state
        if module == "torch":
            if name in _STORAGE_DTYPES:
                return name
            if name == "Size":
                return Size
            if name == "device":
                return device
            import flowlike
            if hasattr(flowlike, name):
                return getattr(flowlike, name)
        if module.startswith("torch"):
            raise pickle.UnpicklingError(f"flowlike.load cannot rebuild {module}.{name} from a torch checkpoint")
        return super().find_class(module, name)

    def persistent_load(self, pid):
        kind, storage_type, key, location, numel = pid
        if kind != "storage":
            raise pickle.UnpicklingError(f"unknown persistent id {kind!r}")
        if key not in self._storages:
            np_dtype, dtype = _STORAGE_DTYPES[storage_type if isinstance(storage_type, str) else
                                              storage_type.__name__]
            raw = self._archive.read(f"{self._prefix}data/{key}")
            self._storages[key] = _TorchStorage(np.frombuffer(raw, dtype=np_dtype)[:numel], dtype)
        return self._storages[key]


def _load_torch_zip(fileobj):
    with zipfile.ZipFile(fileobj) as archive:
        pkl = next(n for n in archive.namelist() if n.endswith("data.pkl"))
        prefix = pkl[:-len("data.pkl")]
        return _TorchUnpickler(io.BytesIO(archive.read(pkl)), archive, prefix).load()


# ---- writing torch.save's zip format ------------------------------------------------------------------------

class _NotTorchWritable(Exception):
    """obj holds something the torch-format writer does not cover: save falls back to plain pickle."""


_STORAGE_NAMES = {dtype: name for name, (_, dtype) in _STORAGE_DTYPES.items()}


class _TorchPickleWriter:
    """A minimal protocol-2 pickler that emits the globals torch.load expects (without importing torch)."""

    def __init__(self):
        self.out = bytearray(b"\x80\x02")
        self.storages = []

    def global_(self, module, name):
        self.out += b"c" + module.encode() + b"\n" + name.encode() + b"\n"

    def str_(self, s):
        b = s.encode("utf-8")
        self.out += b"X" + struct.pack("<I", len(b)) + b

    def tuple_(self, items):
        self.out += b"("
        for item in items:
            self.dump(item)
        self.out += b"t"

    def ordered_dict(self):
        self.global_("collections", "OrderedDict")
        self.out += b")R"

    def tensor(self, t):
        array, dtype_name = _tensor_payload(t)
        if dtype_name == _BF16:
            array = (array.view(np.uint32) >> 16).astype(np.uint16)
        key = str(len(self.storages))
        self.storages.append((key, array.tobytes()))
        self.global_("torch._utils", "_rebuild_tensor_v2")
        self.out += b"("
        self.out += b"("
        self.str_("storage")
        self.global_("torch", _STORAGE_NAMES[t.dtype])
        self.str_(key)
        self.str_("cpu")
        self.dump(int(array.size))
        self.out += b"tQ"
        self.dump(0)
        self.tuple_(tuple(t.shape))
        self.tuple_(tuple(int(s) for s in np.asarray(array.strides) // max(array.itemsize, 1)) if array.ndim else ())
        self.dump(bool(t.requires_grad) and type(t) is Tensor)
        self.ordered_dict()
        self.out += b"tR"

    def dump(self, obj):
        from .nn.parameter import Parameter
        if obj is None:
            self.out += b"N"
        elif obj is True or obj is False:
            self.out += b"\x88" if obj else b"\x89"
        elif isinstance(obj, int) and not isinstance(obj, bool):
            if -2 ** 31 <= obj < 2 ** 31:
                self.out += b"J" + struct.pack("<i", obj)
            else:
                n = (obj.bit_length() + 8) // 8
                self.out += b"\x8a" + bytes([n]) + obj.to_bytes(n, "little", signed=True)
        elif isinstance(obj, float):
            self.out += b"G" + struct.pack(">d", obj)
        elif isinstance(obj, str):
            self.str_(obj)
        elif isinstance(obj, Parameter):
            self.global_("torch._utils", "_rebuild_parameter")
            self.out += b"("
            self.tensor(obj)
            self.dump(bool(obj.requires_grad))
            self.ordered_dict()
            self.out += b"tR"
        elif isinstance(obj, Tensor):
            if obj.dtype not in _STORAGE_NAMES:
                raise _NotTorchWritable(str(obj.dtype))
            self.tensor(obj)
        elif type(obj) in (dict, OrderedDict):
            if type(obj) is dict:
                self.out += b"}"
            else:
                self.ordered_dict()
            if obj:
                self.out += b"("
                for k, v in obj.items():
                    self.dump(k)
                    self.dump(v)
                self.out += b"u"
        elif type(obj) is list:
            self.out += b"]"
            if obj:
                self.out += b"("
                for v in obj:
                    self.dump(v)
                self.out += b"e"
        elif type(obj) is tuple:
            self.tuple_(obj)
        else:
            raise _NotTorchWritable(type(obj).__name__)


def _torch_zip_bytes(obj):
    writer = _TorchPickleWriter()
    writer.dump(obj)
    writer.out += b"."
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", bytes(writer.out))
        z.writestr("archive/byteorder", "little")
        for key, raw in writer.storages:
            z.writestr(f"archive/data/{key}", raw)
        z.writestr("archive/version", "3\n")
    return buf.getvalue()
