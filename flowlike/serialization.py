"""flowlike.save / flowlike.load, tensor pickling, and reading checkpoints written by torch.save (zip format)."""
import io
import os
import pickle
import zipfile

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


Tensor.__reduce_ex__ = _tensor_reduce_ex
Tensor.__deepcopy__ = _tensor_deepcopy


# ---- save / load -------------------------------------------------------------------------------------------

def save(obj, f, pickle_module=pickle, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Saves obj (tensors, state_dicts, nested containers) to a path or a binary file object with pickle."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            pickle_module.dump(obj, fh, protocol=pickle_protocol)
    else:
        pickle_module.dump(obj, f, protocol=pickle_protocol)


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
