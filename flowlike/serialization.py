"""flowlike.save / flowlike.load: torch.save's formats and torch 2.6+'s weights-only loading.

Every checkpoint -- written by flowlike or by torch, in the zip format or torch's legacy (non-zip) format -- goes
through one loader. Under weights_only (the default, as in torch 2.6+) its pickles are run by a restricted
opcode-level unpickler that builds only tensors, storages and the objects torch's weights-only unpickler allows,
plus the globals the user allowed (add_safe_globals / safe_globals); anything else is a pickle.UnpicklingError and
nothing from the file runs. weights_only=False unpickles arbitrary objects, as torch does: that runs code from the
file. Archives, records and tensor geometry are checked against the real data before any tensor is made, so a
corrupt or lying file is an error, never a crash or a huge allocation. `.safetensors` paths are read by the
hardened reader at the end of this module, as torch.load hands them to safetensors.
"""
import _codecs
import _compat_pickle
import io
import json
import os
import pickle
import pickletools
import struct
import sys
import types
import warnings
import zipfile
from collections import Counter, OrderedDict

import numpy as np

from . import _dtype as D
from ._tensor import Tensor, Size, device

__all__ = ["save", "load", "add_safe_globals", "clear_safe_globals", "get_safe_globals", "safe_globals",
           "get_unsafe_globals_in_checkpoint", "UNSAFE_MESSAGE"]

_BF16 = "bfloat16"

UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` "
    "from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will likely succeed, "
    "but it can result in arbitrary code execution. Do it only if you got the file from a trusted source."
)


# ---- tensor pickling by plain pickle (DataLoader workers sending batches, copy) -----------------------------

def _tensor_payload(t):
    t = t.detach()
    if t.dtype == D.bfloat16:
        # numpy has no bfloat16: ship the float32 widening, which converts back exactly.
        return t._to_dtype(D.float32, False).contiguous()._numpy_unchecked().copy(), _BF16
    name = str(t.dtype).split(".")[-1]
    if t.dtype in D.FLOAT8_DTYPES:  # nor float8: ship the bytes
        return t.contiguous().view(D.uint8)._numpy_unchecked().copy(), name
    return t.contiguous()._numpy_unchecked().copy(), name


def _rebuild_tensor(array, dtype_name, requires_grad):
    from ._creation import from_numpy
    t = from_numpy(np.ascontiguousarray(array))
    if dtype_name == _BF16:
        t = t._to_dtype(D.bfloat16, False)
    elif dtype_name.startswith("float8_"):
        t = t.view(getattr(D, dtype_name))
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


# ---- storages and the rebuild functions that checkpoints call -------------------------------------------------

class _StorageType:
    """What a checkpoint's `torch.FloatStorage` (etc.) global stands for: the dtype of the storage it names."""

    def __init__(self, name, dtype):
        self.name, self.dtype = name, dtype

    def __reduce__(self):
        return self.name

    def __repr__(self):
        return f"torch.{self.name}"


_STORAGE_TYPES = {t.name: t for t in (
    _StorageType("FloatStorage", D.float32), _StorageType("DoubleStorage", D.float64),
    _StorageType("HalfStorage", D.float16), _StorageType("BFloat16Storage", D.bfloat16),
    _StorageType("LongStorage", D.int64), _StorageType("IntStorage", D.int32),
    _StorageType("ShortStorage", D.int16), _StorageType("CharStorage", D.int8),
    _StorageType("ByteStorage", D.uint8), _StorageType("BoolStorage", D.bool),
    _StorageType("ComplexFloatStorage", D.complex64), _StorageType("ComplexDoubleStorage", D.complex128),
    _StorageType("UntypedStorage", D.uint8))}
_STORAGE_TYPE_OF = {t.dtype: t for t in _STORAGE_TYPES.values() if t.name != "UntypedStorage"}

_INT64_MAX = 2 ** 63 - 1


class _LoadedStorage:
    """A storage read from a checkpoint: `nbytes` bytes from byte `start` of the flowlike UntypedStorage `data`,
    holding elements of `dtype` (legacy files may name a slice of another storage)."""

    def __init__(self, data, dtype, start, nbytes):
        self.data, self.dtype, self.start, self.nbytes = data, dtype, start, nbytes


def _storage_from_bytes(raw, dtype, byteorder="little"):
    """A flowlike UntypedStorage holding a copy of raw, whose elements of dtype are stored in byteorder."""
    from ._creation import from_numpy
    array = np.frombuffer(bytearray(raw), dtype=np.uint8)
    if dtype == D.bool:
        array = (array != 0).astype(np.uint8)  # a bool storage holds 0 or 1 whatever bytes the file has
    elif byteorder != sys.byteorder and dtype.itemsize > 1:
        array = array.view(f"u{dtype.itemsize}").byteswap().view(np.uint8)
    return from_numpy(array).untyped_storage()


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def _check_geometry(storage_offset, size, stride, capacity):
    """Raises RuntimeError unless the tensor (size, stride) at storage_offset lies inside `capacity` elements."""
    if not (_is_int(storage_offset) and isinstance(size, (tuple, list)) and isinstance(stride, (tuple, list))
            and all(_is_int(s) for s in size) and all(_is_int(s) for s in stride)):
        raise RuntimeError(f"invalid tensor geometry in checkpoint: storage_offset={storage_offset!r}, "
                           f"size={size!r}, stride={stride!r} (expected integers)")
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: size {list(size)} has {len(size)} dimensions "
                           f"but stride {list(stride)} has {len(stride)}")
    if storage_offset < 0 or any(s < 0 for s in size) or any(s < 0 for s in stride):
        raise RuntimeError(f"negative size, stride or storage offset in checkpoint: storage_offset={storage_offset}, "
                           f"size={list(size)}, stride={list(stride)}")
    numel = 1
    for s in size:
        numel *= s
    if numel > _INT64_MAX or any(s > _INT64_MAX for s in stride) or storage_offset > _INT64_MAX:
        raise RuntimeError(f"tensor of size {list(size)} in checkpoint is too large")
    if numel and storage_offset + sum((n - 1) * s for n, s in zip(size, stride)) >= capacity:
        raise RuntimeError("Trying to resize storage that is not resizable: "
                           f"size {list(size)}, stride {list(stride)} and storage offset {storage_offset} reach "
                           f"beyond the {capacity} elements of the storage in the checkpoint")


def _tensor_on(storage, storage_offset, size, stride, dtype=None):
    """The tensor (size, stride, storage_offset) of dtype (default: the storage's) on a loaded storage, sharing it."""
    from ._creation import empty
    if not isinstance(storage, _LoadedStorage):
        raise RuntimeError(f"expected a storage from the checkpoint to rebuild a tensor, got {type(storage).__name__}")
    dtype = storage.dtype if dtype is None else dtype
    if not isinstance(dtype, D.dtype):
        raise RuntimeError(f"flowlike cannot hold tensors of dtype {dtype}")
    itemsize = dtype.itemsize
    if storage.start % itemsize:
        raise RuntimeError(f"storage view at byte {storage.start} is not aligned to {dtype}")
    _check_geometry(storage_offset, size, stride, storage.nbytes // itemsize)
    return empty(0, dtype=dtype).set_(storage.data, storage.start // itemsize + storage_offset, tuple(size),
                                      tuple(stride))


def _rebuild_tensor_v1(storage, storage_offset, size, stride):
    return _tensor_on(storage, storage_offset, size, stride)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None,
                       metadata=None):
    t = _tensor_on(storage, storage_offset, size, stride)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None):
    t = _tensor_on(storage, storage_offset, size, stride, dtype)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _set_obj_state(obj, state):
    """Sets the Python attributes a checkpoint saved for a tensor: a dict, or a (dict, slots) pair."""
    dict_state, slots_state = state if isinstance(state, tuple) and len(state) == 2 else (state, None)
    for part in (dict_state, slots_state):
        if not part:
            continue
        if not isinstance(part, dict) or not all(isinstance(k, str) and not k.startswith("__") for k in part):
            raise RuntimeError(f"Invalid serialized state: {state!r}")
        for k, v in part.items():
            setattr(obj, k, v)
    return obj


def _rebuild_parameter(data, requires_grad, backward_hooks=None):
    from .nn.parameter import Parameter
    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return _set_obj_state(_rebuild_parameter(data, requires_grad), state)


def _rebuild_from_type_v2(func, new_type, args, state):
    from .nn.parameter import Parameter
    if not isinstance(args, tuple):
        raise RuntimeError(f"_rebuild_from_type_v2 expects a tuple of arguments, got {type(args).__name__}")
    _refuse_size_arguments(func, args)
    ret = func(*args)
    if type(ret) is not new_type:
        if new_type is not Parameter or not isinstance(ret, Tensor):
            raise RuntimeError(f"flowlike cannot rebuild a tensor of type {new_type} from the checkpoint")
        ret = Parameter(ret, ret.requires_grad)
    return _set_obj_state(ret, state)


def _unsupported_rebuild(name):
    def rebuild(*args, **kwargs):
        raise RuntimeError(f"flowlike.load cannot rebuild the tensor in this checkpoint: {name} (quantized, sparse, "
                           "nested, meta or device-only tensors are not supported)")
    rebuild.__name__ = rebuild.__qualname__ = name.rpartition(".")[2]
    return rebuild


# ---- the globals a weights-only load may use --------------------------------------------------------------

_torch_globals_cache = {}


def _torch_globals():
    """torch's names (as torch-written pickles spell them) -> the flowlike objects loads build for them: exactly
    the globals torch's weights-only unpickler allows, the rebuild functions flowlike cannot honour mapping to
    functions that raise. The first name of an object is the one save writes for it."""
    if not _torch_globals_cache:
        from .nn.parameter import Parameter
        table = {
            "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
            "torch._utils._rebuild_tensor": _rebuild_tensor_v1,
            "torch._utils._rebuild_tensor_v3": _rebuild_tensor_v3,
            "torch._utils._rebuild_parameter": _rebuild_parameter,
            "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
            "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
            "collections.OrderedDict": OrderedDict,
            "collections.Counter": Counter,
            "torch.nn.parameter.Parameter": Parameter,
            "torch.Size": Size,
            "torch.Tensor": Tensor,
            "torch.device": device,
            "_codecs.encode": _codecs.encode,
            "builtins.bytearray": bytearray,
            "builtins.set": set,
            "builtins.complex": complex,
        }
        for d in D.ALL_DTYPES + D.FLOAT8_DTYPES + (D.complex32,):
            table[repr(d)] = d
        # (first, so that saving names it so: torch's weights_only loader allows this spelling, not torch.UntypedStorage)
        table["torch.storage.UntypedStorage"] = _STORAGE_TYPES["UntypedStorage"]
        for t in _STORAGE_TYPES.values():
            table[f"torch.{t.name}"] = t
        for name in ("torch._utils._rebuild_qtensor", "torch._utils._rebuild_sparse_tensor",
                     "torch._utils._rebuild_meta_tensor_no_storage", "torch._utils._rebuild_nested_tensor",
                     "torch._utils._rebuild_wrapper_subclass", "torch._utils._rebuild_device_tensor_from_numpy",
                     "torch._utils._rebuild_device_tensor_from_cpu_tensor", "torch.serialization._get_layout"):
            table[name] = _unsupported_rebuild(name)
        _torch_globals_cache.update(table)
    return _torch_globals_cache


# Modules whose globals are never allowed, even when the user allowlists them (as torch).
_BLOCKED_MODULES = ("sys", "os", "posix", "nt")

_marked_safe_globals = []


def add_safe_globals(safe_globals):
    """Marks globals as safe for weights_only loads, as torch.serialization.add_safe_globals.

    Each item is a class or function (allowed under its `module.qualname`) or a (object, "module.name") pair
    naming it as the checkpoint spells it."""
    for g in safe_globals:
        if g not in _marked_safe_globals:
            _marked_safe_globals.append(g)


def get_safe_globals():
    """The list of globals the user marked safe for weights_only loads."""
    return list(_marked_safe_globals)


def clear_safe_globals():
    """Forgets every global marked safe with add_safe_globals."""
    _marked_safe_globals.clear()


class safe_globals:
    """Context manager marking globals safe for weights_only loads inside the block (as add_safe_globals), and
    forgetting them again at its end."""

    def __init__(self, safe_globals):
        self.safe_globals = list(safe_globals)

    def __enter__(self):
        self._added = [g for g in self.safe_globals if g not in _marked_safe_globals]
        add_safe_globals(self._added)

    def __exit__(self, exc_type, exc_value, tb):
        for g in self._added:
            if g in _marked_safe_globals:
                _marked_safe_globals.remove(g)


def _user_allowed_globals():
    allowed = {}
    for g in _marked_safe_globals:
        if isinstance(g, tuple):
            if len(g) != 2:
                raise ValueError(f"Expected tuple of length 2 (global, str of callable full path), but got tuple of "
                                 f"length: {len(g)}")
            if type(g[1]) is not str:
                raise TypeError(f"Expected second item in tuple to be str of callable full path, but got: "
                                f"{type(g[1])}")
            allowed[g[1]] = g[0]
        else:
            allowed[f"{g.__module__}.{g.__qualname__}"] = g
    return allowed


def _global_name(module, name):
    """module.name as a checkpoint's GLOBAL names it, with Python 2's names mapped as pickle maps them."""
    if (module, name) in _compat_pickle.NAME_MAPPING:
        module, name = _compat_pickle.NAME_MAPPING[(module, name)]
    elif module in _compat_pickle.IMPORT_MAPPING:
        module = _compat_pickle.IMPORT_MAPPING[module]
    return f"{module}.{name}"


def _unsupported_global_message(full_path):
    if full_path.startswith("builtins."):
        full_path = full_path[len("builtins."):]
    return (f"Unsupported global: GLOBAL {full_path} was not an allowed global by default. Please use "
            f"`torch.serialization.add_safe_globals([{full_path}])` or the "
            f"`torch.serialization.safe_globals([{full_path}])` context manager to allowlist this global if you "
            "trust this class/function.")


# ---- the weights-only unpickler ---------------------------------------------------------------------------

class _WeightsOnlyUnpickler:
    """Interprets a pickle opcode by opcode, as torch's weights-only unpickler: it knows only the opcodes
    torch.save's protocol 2 pickles use, imports nothing, and calls (REDUCE), instantiates (NEWOBJ) or sets the
    state of (BUILD) only the allowed globals; persistent ids must name storages. Everything else raises
    pickle.UnpicklingError before anything of the file runs."""

    def __init__(self, file, persistent_load, encoding="utf-8"):
        self._file, self._persistent_load, self._encoding = file, persistent_load, encoding

    def _read(self, n):
        data = self._file.read(n)
        if len(data) < n:
            raise pickle.UnpicklingError("pickle data was truncated")
        return data

    def _readline(self):
        line = self._file.readline()
        if not line.endswith(b"\n"):
            raise pickle.UnpicklingError("pickle data was truncated")
        try:
            return line[:-1].decode("utf-8")
        except UnicodeDecodeError:
            raise pickle.UnpicklingError("GLOBAL name is not valid UTF-8") from None

    def _pop(self):
        if not self._stack:
            raise pickle.UnpicklingError("unpickling stack underflow")
        return self._stack.pop()

    def _top(self):
        if not self._stack:
            raise pickle.UnpicklingError("unpickling stack underflow")
        return self._stack[-1]

    def _pop_mark(self):
        if not self._marks:
            raise pickle.UnpicklingError("could not find MARK")
        items, self._stack = self._stack, self._marks.pop()
        return items

    def _allowed(self, obj):
        return any(obj is v for v in self._globals.values())

    def load(self):
        """Reads one pickle from the file and returns the object it builds."""
        self._stack, self._marks, self._memo = [], [], {}
        self._globals = {**_user_allowed_globals(), **_torch_globals()}
        while True:
            key = self._file.read(1)
            if not key:
                raise EOFError
            op = key[0]
            if op == pickle.STOP[0]:
                return self._pop()
            handler = self._OPS.get(op)
            if handler is None:
                raise pickle.UnpicklingError(f"Unsupported operand {op}")
            handler(self)

    # risky opcodes: the only ones that reach code
    def _global(self):
        module = self._readline()
        full_path = _global_name(module, self._readline())
        module = full_path.rpartition(".")[0]
        if module in _BLOCKED_MODULES:
            raise pickle.UnpicklingError(f"Trying to load unsupported GLOBAL {full_path} whose module {module} is "
                                         "blocked.")
        if full_path not in self._globals:
            raise pickle.UnpicklingError(_unsupported_global_message(full_path))
        self._stack.append(self._globals[full_path])

    def _newobj(self):
        from .nn.parameter import Parameter
        args, cls = self._pop(), self._pop()
        if not isinstance(args, tuple):
            raise pickle.UnpicklingError(f"NEWOBJ arguments must be a tuple, got {type(args).__name__}")
        if cls is Parameter:
            self._stack.append(Parameter(*args))
        elif self._allowed(cls):
            if not isinstance(cls, type):
                raise TypeError(f"NEWOBJ of {cls!r}, which is not a class")
            _refuse_size_arguments(cls, args)
            self._stack.append(cls.__new__(cls, *args))
        else:
            raise pickle.UnpicklingError("Can only create new object for nn.Parameter or classes allowlisted via "
                                         f"`add_safe_globals` but got {cls}")

    def _reduce(self):
        args, func = self._pop(), self._top()
        if not self._allowed(func):
            message = f"Trying to call reduce for unrecognized function {func}"
            if hasattr(func, "__self__"):
                message += f" which belongs to {func.__self__}"
            raise pickle.UnpicklingError(message)
        if not isinstance(args, tuple):
            raise pickle.UnpicklingError(f"REDUCE arguments must be a tuple, got {type(args).__name__}")
        _refuse_size_arguments(func, args)
        self._stack[-1] = func(*args)

    def _build(self):
        from .nn.parameter import Parameter
        state, inst = self._pop(), self._top()
        if type(inst) is Tensor:  # legacy: a tensor given its storage and geometry
            if not (isinstance(state, tuple) and len(state) == 4):
                raise pickle.UnpicklingError("BUILD of a Tensor needs (storage, storage_offset, size, stride)")
            self._stack[-1] = _tensor_on(*state)
        elif type(inst) is OrderedDict or type(inst) is Parameter or self._allowed(type(inst)):
            if hasattr(inst, "__setstate__") and type(inst) is not OrderedDict:
                inst.__setstate__(state)
            else:
                dict_state, slot_state = state if isinstance(state, tuple) and len(state) == 2 else (state, None)
                if dict_state:
                    if not hasattr(inst, "__dict__"):
                        raise pickle.UnpicklingError(f"BUILD cannot set attributes of a {type(inst).__name__}")
                    if not isinstance(dict_state, dict):
                        raise pickle.UnpicklingError(f"BUILD state must be a dict, got {type(dict_state).__name__}")
                    inst.__dict__.update(dict_state)
                if slot_state:
                    _set_obj_state(inst, slot_state)
        else:
            raise pickle.UnpicklingError("Can only build Tensor, Parameter, OrderedDict or types allowlisted via "
                                         f"`add_safe_globals`, but got {type(inst)}")

    def _binpersid(self):
        pid = self._pop()
        if type(pid) is not tuple and type(pid) is not int:
            raise pickle.UnpicklingError(f"persistent_load id must be tuple or int, but got {type(pid)}")
        if type(pid) is tuple and pid and _decode_ascii(pid[0]) != "storage":
            raise pickle.UnpicklingError(f"Only persistent_load of storage is allowed, but got {type(pid[0])}")
        self._stack.append(self._persistent_load(pid))

    # containers
    def _append(self):
        item, target = self._pop(), self._top()
        if type(target) is not list:
            raise pickle.UnpicklingError(f"Can only append to lists, but got {type(target)}")
        target.append(item)

    def _appends(self):
        items, target = self._pop_mark(), self._top()
        if type(target) is not list:
            raise pickle.UnpicklingError(f"Can only extend lists, but got {type(target)}")
        target.extend(items)

    def _set_items(self, items, opcode):
        target = self._top()
        if type(target) not in (dict, OrderedDict, Counter):
            raise pickle.UnpicklingError(f"Can only {opcode} for dict, collections.OrderedDict, collections.Counter, "
                                         f"but got {type(target)}")
        if len(items) % 2:
            raise pickle.UnpicklingError(f"{opcode} needs key/value pairs, got {len(items)} items")
        for i in range(0, len(items), 2):
            target[items[i]] = items[i + 1]

    def _setitem(self):
        value, key = self._pop(), self._pop()
        self._set_items([key, value], "SETITEM")

    def _setitems(self):
        self._set_items(self._pop_mark(), "SETITEMS")

    def _mark(self):
        self._marks.append(self._stack)
        self._stack = []

    def _tuple(self):
        items = tuple(self._pop_mark())
        self._stack.append(items)

    def _tuple_n(self, n):
        if len(self._stack) < n:
            raise pickle.UnpicklingError("unpickling stack underflow")
        items = tuple(self._stack[len(self._stack) - n:])
        del self._stack[len(self._stack) - n:]
        self._stack.append(items)

    # memo
    def _get(self, idx):
        if idx not in self._memo:
            raise pickle.UnpicklingError(f"Memo value not found at index {idx}")
        self._stack.append(self._memo[idx])

    def _put(self, idx):
        self._memo[idx] = self._top()

    # values
    def _binunicode(self):
        n = struct.unpack("<I", self._read(4))[0]
        try:
            self._stack.append(str(self._read(n), "utf-8", "surrogatepass"))
        except UnicodeDecodeError:
            raise pickle.UnpicklingError("BINUNICODE string is not valid UTF-8") from None

    def _short_binstring(self):
        data = self._read(self._read(1)[0])
        if self._encoding != "bytes":
            try:
                data = data.decode(self._encoding, "strict")
            except (UnicodeDecodeError, LookupError) as e:
                raise pickle.UnpicklingError(f"SHORT_BINSTRING cannot be decoded: {e}") from None
        self._stack.append(data)

    def _proto(self):
        proto = self._read(1)[0]
        if proto != 2:
            warnings.warn(f"Detected pickle protocol {proto} in the checkpoint, which was not the default pickle "
                          "protocol used by `torch.load` (2). The weights_only Unpickler might not support all "
                          "instructions implemented by this protocol, please file an issue for adding support if you "
                          "encounter this.", stacklevel=4)

    _OPS = {
        pickle.GLOBAL[0]: _global, pickle.NEWOBJ[0]: _newobj, pickle.REDUCE[0]: _reduce, pickle.BUILD[0]: _build,
        pickle.BINPERSID[0]: _binpersid, pickle.APPEND[0]: _append, pickle.APPENDS[0]: _appends,
        pickle.SETITEM[0]: _setitem, pickle.SETITEMS[0]: _setitems, pickle.MARK[0]: _mark, pickle.TUPLE[0]: _tuple,
        pickle.TUPLE1[0]: lambda self: self._tuple_n(1), pickle.TUPLE2[0]: lambda self: self._tuple_n(2),
        pickle.TUPLE3[0]: lambda self: self._tuple_n(3),
        pickle.NONE[0]: lambda self: self._stack.append(None),
        pickle.NEWFALSE[0]: lambda self: self._stack.append(False),
        pickle.NEWTRUE[0]: lambda self: self._stack.append(True),
        pickle.EMPTY_TUPLE[0]: lambda self: self._stack.append(()),
        pickle.EMPTY_LIST[0]: lambda self: self._stack.append([]),
        pickle.EMPTY_DICT[0]: lambda self: self._stack.append({}),
        pickle.EMPTY_SET[0]: lambda self: self._stack.append(set()),
        pickle.BININT[0]: lambda self: self._stack.append(struct.unpack("<i", self._read(4))[0]),
        pickle.BININT1[0]: lambda self: self._stack.append(self._read(1)[0]),
        pickle.BININT2[0]: lambda self: self._stack.append(struct.unpack("<H", self._read(2))[0]),
        pickle.BINFLOAT[0]: lambda self: self._stack.append(struct.unpack(">d", self._read(8))[0]),
        pickle.LONG1[0]: lambda self: self._stack.append(pickle.decode_long(self._read(self._read(1)[0]))),
        pickle.BINUNICODE[0]: _binunicode, pickle.SHORT_BINSTRING[0]: _short_binstring,
        pickle.BINGET[0]: lambda self: self._get(self._read(1)[0]),
        pickle.LONG_BINGET[0]: lambda self: self._get(struct.unpack("<I", self._read(4))[0]),
        pickle.BINPUT[0]: lambda self: self._put(self._read(1)[0]),
        pickle.LONG_BINPUT[0]: lambda self: self._put(struct.unpack("<I", self._read(4))[0]),
        pickle.PROTO[0]: _proto,
    }


def _refuse_size_arguments(func, args):
    """bytearray(n) and Tensor(n) allocate n elements: a file must not make a weights-only load allocate at will."""
    if (func is bytearray or func is Tensor) and any(_is_int(a) for a in args):
        raise pickle.UnpicklingError(f"weights_only load refuses to call {func.__name__} with an integer size "
                                     f"{args!r} from the checkpoint")


def _decode_ascii(s):
    return s.decode("ascii") if isinstance(s, bytes) else s


def _weights_only_message(message):
    """torch.load's explanation around an error of the weights-only unpickler."""
    docs = ("\n\nCheck the documentation of torch.load to learn more about types accepted by default with "
            "weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")
    if "was not an allowed global by default." in message:
        return ("Weights only load failed. This file can still be loaded, to do so you have two options, "
                "\033[1mdo those steps only if you trust the source of the checkpoint\033[0m. "
                f"\n\t(1) {UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with `weights_only=True` please check the "
                "recommended steps in the following error message.\n\tWeightsUnpickler error: " + message + docs)
    text = f"Weights only load failed. {UNSAFE_MESSAGE}\n"
    if "is blocked" not in message:
        text += ("Please file an issue with the following so that we can make `weights_only=True` compatible with "
                 "your use case: WeightsUnpickler error: ")
    return text + "\n\n" + message + docs


# ---- unpickling with weights_only=False -------------------------------------------------------------------

def _full_unpickler_factory(pickle_module, load_args):
    """Makes unpicklers of pickle_module that build anything the pickle names (weights_only=False), with torch's
    globals mapped to flowlike."""

    class _Unpickler(pickle_module.Unpickler):
        def find_class(self, module, name):
            full_path = _global_name(module, name)
            if full_path in _torch_globals():
                return _torch_globals()[full_path]
            if module == "torch" or module.startswith("torch."):
                try:
                    return super().find_class("flowlike" + module[len("torch"):], name)
                except (ImportError, AttributeError):
                    raise pickle.UnpicklingError(f"flowlike.load cannot rebuild {module}.{name}: flowlike has no "
                                                 "counterpart of it") from None
            return super().find_class(module, name)

    def make(file, persistent_load):
        unpickler = _Unpickler(file, **load_args)
        unpickler.persistent_load = persistent_load
        return unpickler

    return make


# ---- reading torch.save's zip format: <archive>/data.pkl + <archive>/data/<key> raw storages ----------------

def _zip_error(e):
    return RuntimeError(f"PytorchStreamReader failed reading zip archive: {e}")


def _load_zip(data, make_unpickler, weights_only):
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, EOFError, ValueError, OSError) as e:
        raise RuntimeError("PytorchStreamReader failed reading zip archive: failed finding central directory "
                           f"({e})") from None
    with archive:
        names = archive.namelist()
        if not names or "/" not in names[0]:
            raise _zip_error(f"file in archive is not in a subdirectory: {names[0] if names else '(no records)'}")
        prefix = names[0].split("/", 1)[0] + "/"
        records = {info.filename: info for info in archive.infolist()}

        def read(name, expected_size=None, describe=""):
            info = records.get(prefix + name)
            if info is None:
                raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not found")
            if expected_size is not None and info.file_size != expected_size:
                raise RuntimeError(f"record size ({info.file_size} bytes) does not match expected size "
                                   f"({expected_size} bytes{describe}) for record {name}")
            try:
                raw = archive.read(info)
            except (zipfile.BadZipFile, EOFError, ValueError, OSError, NotImplementedError, RuntimeError) as e:
                raise _zip_error(f"cannot read record {name}: {e}") from None
            except Exception as e:  # zlib.error and friends of a corrupt compressed record
                raise _zip_error(f"cannot read record {name}: {type(e).__name__}: {e}") from None
            if len(raw) != info.file_size:
                raise _zip_error(f"record {name} holds {len(raw)} bytes, its header says {info.file_size}")
            return raw

        if prefix + "constants.pkl" in records:
            if weights_only:
                raise RuntimeError("Cannot use ``weights_only=True`` with TorchScript archives passed to "
                                   "``torch.load``. " + UNSAFE_MESSAGE)
            raise RuntimeError("flowlike.load cannot load TorchScript archives (the file holds constants.pkl)")
        byteorder = "little"
        if prefix + "byteorder" in records:
            mark = read("byteorder")
            if mark not in (b"little", b"big"):
                raise ValueError("Unknown endianness type: " + mark.decode("utf-8", "replace"))
            byteorder = mark.decode()
        pkl = read("data.pkl")
        storages = {}

        def persistent_load(pid):
            if not (isinstance(pid, tuple) and len(pid) == 5):
                raise RuntimeError(f"malformed storage reference in data.pkl: {pid!r} (expected ('storage', type, "
                                   "key, location, numel))")
            _, storage_type, key, location, numel = pid
            if not isinstance(storage_type, _StorageType):
                raise RuntimeError(f"storage reference in data.pkl names {storage_type!r}, not a storage type")
            if not (isinstance(key, str) and _is_int(numel) and numel >= 0):
                raise RuntimeError(f"malformed storage reference in data.pkl: key {key!r}, numel {numel!r}")
            if key not in storages:
                dtype = storage_type.dtype
                nbytes = numel * dtype.itemsize
                raw = read(f"data/{key}", nbytes, f" = {numel} elements * {dtype.itemsize} bytes/element of "
                                                  f"{storage_type.name}")
                storages[key] = _LoadedStorage(_storage_from_bytes(raw, dtype, byteorder), dtype, 0, nbytes)
            return storages[key]

        return make_unpickler(io.BytesIO(pkl), persistent_load).load()


# ---- reading torch's legacy format: pickles of magic, version, sys_info, the object, storage keys; raw data ----

_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
_LEGACY_PROTOCOL = 1001


def _load_legacy(data, make_unpickler, weights_only):
    if len(data) > 262 and data[257:262] == b"ustar":
        if weights_only:
            raise RuntimeError("Cannot use ``weights_only=True`` with files saved in the legacy .tar format. "
                               + UNSAFE_MESSAGE)
        raise RuntimeError("flowlike.load does not read torch's legacy .tar checkpoints (torch < 0.1.10); load the "
                           "file with torch and save it again")
    f = io.BytesIO(data)
    roots, views, root_bytes = {}, {}, [0]

    def no_persistent_ids(pid):
        raise pickle.UnpicklingError("unsupported persistent id encountered")

    def plain():
        return make_unpickler(f, no_persistent_ids).load()

    if plain() != _LEGACY_MAGIC:
        raise RuntimeError("Invalid magic number; corrupt file?")
    version = plain()
    if version != _LEGACY_PROTOCOL:
        raise RuntimeError(f"Invalid protocol version: {version}")
    plain()  # sys_info

    def persistent_load(pid):
        if not isinstance(pid, tuple) or not pid:
            raise RuntimeError(f"malformed persistent id in checkpoint: {pid!r}")
        kind = _decode_ascii(pid[0])
        if kind == "module" and not weights_only and len(pid) == 4:
            return pid[1]  # a whole nn.Module saved by torch: its class
        if kind != "storage" or len(pid) != 6:
            raise RuntimeError(f"Unknown saved id type: {pid[0]!r}")
        _, storage_type, key, location, numel, view = pid
        if not isinstance(storage_type, _StorageType) or not _is_int(numel) or numel < 0:
            raise RuntimeError(f"malformed storage reference in checkpoint: {pid!r}")
        dtype = storage_type.dtype
        if key not in roots:
            from ._creation import empty
            nbytes = numel * dtype.itemsize
            root_bytes[0] += nbytes
            if root_bytes[0] > len(data):
                raise RuntimeError(f"storages of {root_bytes[0]} bytes declared in a checkpoint of {len(data)} "
                                   "bytes; the file is corrupt")
            roots[key] = _LoadedStorage(empty(nbytes, dtype=D.uint8).untyped_storage(), dtype, 0, nbytes)
        root = roots[key]
        if view is None:
            return root
        if not (isinstance(view, tuple) and len(view) == 3 and _is_int(view[1]) and _is_int(view[2])):
            raise RuntimeError(f"malformed storage view in checkpoint: {view!r}")
        view_key, offset, size = view
        if view_key not in views:
            item = root.dtype.itemsize
            if offset < 0 or size < 0 or (offset + size) * item > root.nbytes:
                raise RuntimeError(f"storage view of {size} elements at {offset} lies outside its storage of "
                                   f"{root.nbytes // item} elements")
            views[view_key] = _LoadedStorage(root.data, root.dtype, offset * item, size * item)
        return views[view_key]

    result = make_unpickler(f, persistent_load).load()
    keys = plain()
    if not isinstance(keys, list):
        raise RuntimeError(f"corrupt checkpoint: expected the list of storage keys, got {type(keys).__name__}")
    for key in keys:
        if key not in roots:
            raise RuntimeError(f"storage key {key!r} not found in the checkpoint's object")
        root = roots[key]
        head = f.read(8)
        if len(head) < 8:
            raise RuntimeError(f"unexpected EOF, expected {8 - len(head)} more bytes. The file might be corrupted.")
        numel = struct.unpack("<q", head)[0]
        if numel * root.dtype.itemsize != root.nbytes:
            raise RuntimeError(f"storage has wrong byte size: expected {root.nbytes} got "
                               f"{numel * root.dtype.itemsize}")
        raw = f.read(root.nbytes)
        if len(raw) < root.nbytes:
            raise RuntimeError(f"unexpected EOF, expected {root.nbytes - len(raw)} more bytes. The file might be "
                               "corrupted.")
        root.data.copy_(_storage_from_bytes(raw, root.dtype))
    unfilled = set(roots) - set(keys)
    if unfilled:
        raise RuntimeError(f"storages {sorted(unfilled)} used by the checkpoint's object have no data in the file")
    return result


# ---- load ---------------------------------------------------------------------------------------------------

def _resolve_weights_only(weights_only, pickle_module):
    """torch.load's rule: weights_only=None means True (unless a pickle_module is given), and the environment
    variables TORCH_FORCE_WEIGHTS_ONLY_LOAD / TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD override it."""
    not_set = weights_only is None
    if not_set:
        weights_only = pickle_module is None
    true_values = ("1", "y", "yes", "true")
    force = os.getenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in true_values
    force_no = os.getenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() in true_values
    if force and force_no:
        raise RuntimeError("Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or `TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` should "
                           "be set, but both were set.")
    if force:
        return True
    if force_no and not_set:
        warnings.warn("Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since the`weights_only` "
                      "argument was not explicitly passed to `torch.load`, forcing weights_only=False.",
                      UserWarning, stacklevel=3)
        return False
    return bool(weights_only)


def _is_path(f):
    return isinstance(f, (str, os.PathLike))


def _read_all(f):
    """The bytes of a path, or of a binary file object from its current position."""
    if _is_path(f):
        with open(f, "rb") as fh:
            return fh.read()
    return f.read()


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Loads an object saved by flowlike.save or torch.save (zip or legacy format; a `.safetensors` path through
    flowlike's safetensors reader), as torch.load.

    weights_only (default True, as torch 2.6+; see TORCH_FORCE_WEIGHTS_ONLY_LOAD and
    TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD) restricts the file to tensors, storages, primitive containers, numbers,
    strings, OrderedDict, Size, dtypes, devices and the globals marked with add_safe_globals/safe_globals; anything
    else raises pickle.UnpicklingError. weights_only=False unpickles arbitrary objects, which runs code from the
    file: only do it for files from a trusted source. Tensors always load on the CPU (map_location may name it, or
    be a callable/dict)."""
    weights_only = _resolve_weights_only(weights_only, pickle_module)
    if weights_only:
        if pickle_module is not None:
            raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
        if pickle_load_args:
            warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
    pickle_load_args.setdefault("encoding", "utf-8")
    if _is_path(f) and os.fspath(f).endswith(".safetensors"):
        if isinstance(map_location, dict) or callable(map_location):
            kind = "dict" if isinstance(map_location, dict) else "callable"
            raise RuntimeError(f"Loading safetensors file with {kind} map_location is not supported. Use a device "
                               "string or torch.device instead.")
        return _load_safetensors(os.fspath(f))
    if mmap and not _is_path(f):
        raise ValueError("f must be a file path in order to use the mmap argument")
    data = _read_all(f)
    is_zip = data[:4] == b"PK\x03\x04"
    if mmap and not is_zip:
        name = f"{f}, " if isinstance(f, str) else ""
        raise RuntimeError(f"mmap can only be used with files saved with `torch.save({name}"
                           "_use_new_zipfile_serialization=True), please torch.save your checkpoint with this option "
                           "in order to use mmap.")
    reader = _load_zip if is_zip else _load_legacy
    if not weights_only:
        return reader(data, _full_unpickler_factory(pickle_module or pickle, pickle_load_args), False)
    encoding = pickle_load_args["encoding"]
    try:
        return reader(data, lambda file, persistent_load: _WeightsOnlyUnpickler(file, persistent_load, encoding),
                      True)
    except pickle.UnpicklingError as e:
        raise pickle.UnpicklingError(_weights_only_message(str(e))) from None


def get_unsafe_globals_in_checkpoint(f):
    """The `module.name` globals in a torch.save zip checkpoint that a weights_only load would refuse (neither
    allowed by default nor marked with add_safe_globals), found by reading the pickle's opcodes without running
    them. Sorted."""
    data = _read_all(f)
    if data[:4] != b"PK\x03\x04":
        raise ValueError("Expected input to be a checkpoint returned by torch.save")
    found = set()

    def collect(file, persistent_load):
        class Scanner:
            def load(self):
                strings, memo = [], {}
                try:
                    for opcode, arg, _ in pickletools.genops(file):
                        if opcode.name == "GLOBAL":
                            found.add(_global_name(*arg.split(" ", 1)))
                        elif opcode.name == "STACK_GLOBAL" and len(strings) >= 2:
                            found.add(_global_name(strings[-2], strings[-1]))
                        elif opcode.name in ("BINPUT", "LONG_BINPUT", "PUT", "MEMOIZE"):
                            memo[len(memo) if arg is None else arg] = strings[-1] if strings else None
                        elif opcode.name in ("BINGET", "LONG_BINGET", "GET"):
                            strings.append(memo.get(arg))
                        elif isinstance(arg, str):
                            strings.append(arg)
                except ValueError as e:
                    raise pickle.UnpicklingError(f"corrupt data.pkl: {e}") from None
        return Scanner()

    _load_zip(data, collect, True)
    safe = set(_torch_globals()) | set(_user_allowed_globals())
    return sorted(found - safe)


# ---- save: torch.save's zip (or legacy) format, any object; tensors as torch's rebuild calls on storages -----

class _SavedStorage:
    """A storage being written: its record key, dtype and flowlike UntypedStorage."""

    def __init__(self, key, dtype, data):
        self.key, self.dtype, self.data = key, dtype, data

    def numel(self):
        return self.data.nbytes() // self.dtype.itemsize

    def raw(self):
        return self.data._all_bytes().numpy().tobytes() if self.data.nbytes() else b""


class _Pickler(pickle._Pickler):
    """pickle's Python pickler writing tensors as torch does -- calls of torch._utils' rebuild functions on
    storages that are persistent ids, one per underlying storage, so views stay shared -- and torch's names for
    the flowlike objects torch knows (dtypes, Size, device, Parameter)."""

    def __init__(self, file, protocol, legacy):
        super().__init__(file, protocol)
        self.storages, self._legacy = {}, legacy

    def _storage(self, t):
        untyped = t.untyped_storage()
        key = (untyped.data_ptr(), untyped.nbytes()) if untyped.nbytes() else ("empty", len(self.storages))
        saved = self.storages.get(key)
        if saved is None:
            saved = self.storages[key] = _SavedStorage(str(len(self.storages)), t.dtype, untyped)
        elif saved.dtype != t.dtype:
            raise RuntimeError("Cannot save multiple tensors or storages that view the same data as different types")
        return saved

    def reducer_override(self, obj):
        from .nn.parameter import Parameter
        if type(obj) is Tensor:
            float8 = obj.dtype in D.FLOAT8_DTYPES
            if obj.dtype not in _STORAGE_TYPE_OF and not float8:
                raise RuntimeError(f"flowlike.save cannot write tensors of dtype {obj.dtype}")
            if obj.is_conj():  # the file holds values: a conjugate view is written resolved
                obj = obj.resolve_conj()
            args = (self._storage(obj), obj.storage_offset(), tuple(obj.size()), obj.stride(), obj.requires_grad,
                    OrderedDict())
            rebuild = _rebuild_tensor_v2
            if float8:  # torch has no typed storage class for them: an untyped storage, and the dtype in v3's call
                rebuild, args = _rebuild_tensor_v3, args + (obj.dtype,)
            state = obj.__dict__
            return (_rebuild_from_type_v2, (rebuild, Tensor, args, state)) if state else (rebuild, args)
        if type(obj) is Parameter:
            if obj.__dict__:
                return (_rebuild_parameter_with_state, (obj.detach(), obj.requires_grad, OrderedDict(), obj.__dict__))
            return (_rebuild_parameter, (obj.detach(), obj.requires_grad, OrderedDict()))
        if type(obj) is device:
            return (device, (obj.type,) if obj.index is None else (obj.type, obj.index))
        return NotImplemented

    def persistent_id(self, obj):
        if type(obj) is not _SavedStorage:
            return None
        pid = ("storage", _STORAGE_TYPE_OF.get(obj.dtype, _STORAGE_TYPES["UntypedStorage"]), obj.key, "cpu",
               obj.numel())
        return pid + (None,) if self._legacy else pid

    def save_global(self, obj, name=None):
        torch_name = _torch_name_of(obj)
        if torch_name is None:
            return super().save_global(obj, name)
        module, _, qualname = torch_name.rpartition(".")
        self.write(pickle.GLOBAL + f"{module}\n{qualname}\n".encode("utf-8"))
        self.memoize(obj)

    # pickle's dispatch table holds the base class's save_global for functions and classes
    dispatch = {**pickle._Pickler.dispatch, types.FunctionType: save_global, type: save_global}


def _torch_name_of(obj):
    for name, value in _torch_globals().items():
        if value is obj:
            return name
    return None


def save(obj, f, pickle_module=pickle, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Saves obj to a path or a binary file object in torch.save's zip format (torch's legacy format when
    _use_new_zipfile_serialization=False), so torch.load reads it.

    Tensors and Parameters are written as torch writes them (views of one storage keep sharing it); state_dicts,
    optimizer state and containers of numbers and strings load with weights_only=True; other objects are pickled
    as they are and need weights_only=False. pickle_module is accepted for torch's signature: flowlike always pickles
    with its own torch-compatible pickler."""
    buf = io.BytesIO()
    pickler = _Pickler(buf, pickle_protocol, legacy=not _use_new_zipfile_serialization)
    pickler.dump(obj)
    storages = sorted(pickler.storages.values(), key=lambda s: int(s.key))
    out = io.BytesIO()
    if _use_new_zipfile_serialization:
        with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
            z.writestr("archive/data.pkl", buf.getvalue())
            if not _disable_byteorder_record:
                z.writestr("archive/byteorder", sys.byteorder)
            for s in storages:
                z.writestr(f"archive/data/{s.key}", s.raw())
            z.writestr("archive/version", "3\n")
    else:
        for header in (_LEGACY_MAGIC, _LEGACY_PROTOCOL,
                       {"protocol_version": _LEGACY_PROTOCOL, "little_endian": sys.byteorder == "little",
                        "type_sizes": {"short": 2, "int": 4, "long": 4}}):
            pickle.dump(header, out, protocol=pickle_protocol)
        out.write(buf.getvalue())
        pickle.dump([s.key for s in storages], out, protocol=pickle_protocol)
        for s in storages:
            out.write(struct.pack("<q", s.numel()))
            out.write(s.raw())
    if _is_path(f):
        with open(f, "wb") as fh:
            fh.write(out.getvalue())
    else:
        f.write(out.getvalue())


# ---- .safetensors files: 8-byte header length, JSON header, tensor bytes -----------------------------------

_SAFETENSORS_DTYPES = {"BOOL": D.bool, "U8": D.uint8, "I8": D.int8, "I16": D.int16, "I32": D.int32, "I64": D.int64,
                       "F16": D.float16, "BF16": D.bfloat16, "F32": D.float32, "F64": D.float64,
                       "F8_E4M3": D.float8_e4m3fn, "F8_E5M2": D.float8_e5m2, "F8_E4M3FNUZ": D.float8_e4m3fnuz,
                       "F8_E5M2FNUZ": D.float8_e5m2fnuz, "F8_E8M0": D.float8_e8m0fnu}
_SAFETENSORS_MAX_HEADER = 100_000_000  # the safetensors library's limit


def _save_safetensors(tensors, path, metadata=None):
    """Writes a dict of tensors as a .safetensors file (the layout _load_safetensors reads and checks)."""
    names = {v: k for k, v in _SAFETENSORS_DTYPES.items()}
    header, chunks, offset = {}, [], 0
    for name, t in tensors.items():
        raw = t.detach().contiguous().reshape(-1).view(D.uint8).numpy().tobytes() if t.numel() else b""
        header[name] = {"dtype": names[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    if metadata:
        header["__metadata__"] = dict(metadata)
    head = json.dumps(header, separators=(",", ":")).encode("utf-8")
    head += b" " * (-len(head) % 8)  # the data starts 8-byte aligned, as the safetensors library writes it
    with open(path, "wb") as fh:
        fh.write(struct.pack("<Q", len(head)))
        fh.write(head)
        for raw in chunks:
            fh.write(raw)


def _safetensors_error(path, what):
    return RuntimeError(f"invalid safetensors file {path}: {what}")


def _load_safetensors(path):
    """The tensors of a .safetensors file as a dict, after checking its header against the file: header length,
    JSON, dtypes, shapes, and data offsets that cover the data exactly once (no gaps, overlaps or overruns)."""
    from ._creation import empty
    with open(path, "rb") as fh:
        data = fh.read()
    if len(data) < 8:
        raise _safetensors_error(path, f"{len(data)} bytes cannot hold the 8-byte header length")
    n = struct.unpack("<Q", data[:8])[0]
    if n > _SAFETENSORS_MAX_HEADER:
        raise _safetensors_error(path, f"header length {n} exceeds the limit of {_SAFETENSORS_MAX_HEADER} bytes")
    if 8 + n > len(data):
        raise _safetensors_error(path, f"header length {n} is larger than the {len(data) - 8} bytes after it")

    def no_duplicates(pairs):
        keys = [k for k, _ in pairs]
        if len(set(keys)) != len(keys):
            raise ValueError(f"duplicate keys {sorted(k for k in set(keys) if keys.count(k) > 1)}")
        return dict(pairs)

    try:
        header = json.loads(data[8:8 + n].decode("utf-8"), object_pairs_hook=no_duplicates)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise _safetensors_error(path, f"header is not valid JSON: {type(e).__name__}: {e}") from None
    if not isinstance(header, dict):
        raise _safetensors_error(path, f"header is a JSON {type(header).__name__}, not an object")
    metadata = header.pop("__metadata__", None)
    if metadata is not None and not (isinstance(metadata, dict) and
                                     all(isinstance(v, str) for v in metadata.values())):
        raise _safetensors_error(path, "__metadata__ must map strings to strings")
    body = memoryview(data)[8 + n:]
    spans = []
    for name, entry in header.items():
        if not (isinstance(entry, dict) and set(entry) == {"dtype", "shape", "data_offsets"}):
            raise _safetensors_error(path, f"entry {name!r} must hold exactly dtype, shape and data_offsets")
        dtype, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
        if dtype not in _SAFETENSORS_DTYPES:
            raise _safetensors_error(path, f"tensor {name!r} has dtype {dtype!r}, which flowlike does not support")
        if not (isinstance(shape, list) and all(_is_int(s) and s >= 0 for s in shape)):
            raise _safetensors_error(path, f"tensor {name!r} has invalid shape {shape!r}")
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(_is_int(o) for o in offsets)
                and 0 <= offsets[0] <= offsets[1] <= len(body)):
            raise _safetensors_error(path, f"tensor {name!r} has data_offsets {offsets!r} outside the "
                                           f"{len(body)} data bytes")
        numel = 1
        for s in shape:
            numel *= s
        nbytes = numel * _SAFETENSORS_DTYPES[dtype].itemsize
        if offsets[1] - offsets[0] != nbytes:
            raise _safetensors_error(path, f"tensor {name!r} of shape {shape} and dtype {dtype} needs {nbytes} "
                                           f"bytes, its data_offsets span {offsets[1] - offsets[0]}")
        spans.append((offsets[0], offsets[1], name))
    end = 0
    for begin, stop, name in sorted(spans):
        if begin != end:
            raise _safetensors_error(path, f"tensor {name!r} starts at byte {begin}: data "
                                           f"{'overlaps' if begin < end else 'has a gap'} after byte {end}")
        end = stop
    if end != len(body):
        raise _safetensors_error(path, f"tensors cover {end} of the {len(body)} data bytes")
    result = {}
    for name, entry in header.items():  # each checked above to fill its bytes exactly
        dtype = _SAFETENSORS_DTYPES[entry["dtype"]]
        begin, stop = entry["data_offsets"]
        result[name] = empty(0, dtype=dtype).set_(_storage_from_bytes(body[begin:stop], dtype), 0,
                                                  tuple(entry["shape"]))
    return result
