"""The meta device: tensors with a shape, dtype and requires_grad but no data, as libraries build a model's
skeleton before loading its weights (transformers' from_pretrained does, under `with torch.device("meta")`).

A meta tensor is a zero-stride view of one sentinel element per dtype, so it holds no memory for its elements,
and every view of it (slicing, expand, view, transpose, nn.Parameter of it) points at the same sentinel: being on
the meta device is having the sentinel's address, which views keep by construction. In-place fills and inits on
meta tensors write only the sentinel, which nothing reads: reading a meta tensor's values (item, tolist, numpy,
copying it to the CPU) raises torch's errors. flowlike has no meta kernels: an out-of-place op other than a view
runs on the CPU and returns a CPU tensor computed from the sentinel (NaN for floating dtypes, 0 for the others)
where torch would return another meta tensor, so meta tensors are for building modules, not for computing.
"""
import functools
import threading

from . import _C

_sentinels = {}   # dtype -> the 1-element tensor meta tensors of that dtype view
_addresses = set()  # their data pointers: a tensor is on meta when its data_ptr is one of them
_local = threading.local()  # the device-context stack of this thread (`with torch.device(...)`)

NO_DATA = "Cannot copy out of meta tensor; no data!"


def empty(shape, dtype, requires_grad=False):
    """A meta tensor of shape and dtype."""
    sentinel = _sentinels.get(dtype)
    if sentinel is None:
        if not _sentinels:
            _guard_in_place_methods()
        sentinel = _sentinels[dtype] = _C._empty([1], dtype)
        # NaN, so that floating results computed from meta tensors by mistake show as no numbers
        sentinel.fill_(float("nan") if dtype.is_floating_point else 0)
        _addresses.add(sentinel.data_ptr())
    t = sentinel.as_strided(tuple(shape), (0,) * len(shape))
    return t.requires_grad_(True) if requires_grad else t


def is_meta(t):
    """Whether tensor t is on the meta device (no data_ptr call while no meta tensor was ever made)."""
    return bool(_addresses) and t.data_ptr() in _addresses


def like(t):
    """A meta tensor with t's shape, dtype and requires_grad."""
    return empty(t.shape, t.dtype, t.requires_grad)


_open_contexts = [0]  # `with torch.device(...)` blocks open on any thread: none lets factories skip the lookup


def context_stack():
    """The devices of the `with torch.device(...)` blocks open on this thread, innermost last."""
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


_default = [None]  # set_default_device's device (None: the CPU)


def default_device():
    """The device factories use when given none: the innermost `with torch.device(...)`, else the default."""
    stack = context_stack()
    return stack[-1] if stack else _default[0]


def set_default(device):
    _default[0] = device


def _is_meta_device(d):
    return d is not None and str(d).split(":", 1)[0] == "meta"


def factory(make):
    """Wraps a factory taking device=: on the meta device (given, or from the device context) it returns a meta
    tensor. The factory runs on the CPU for the result's shape, dtype and requires_grad, with the default
    generator's state put back after it, since torch's meta factories draw no random numbers."""
    @functools.wraps(make)
    def wrapped(*args, device=None, **kwargs):
        if device is None and not _open_contexts[0] and _default[0] is None:
            return make(*args, **kwargs)
        if not _is_meta_device(device if device is not None else default_device()):
            return make(*args, device=device, **kwargs)
        state = _C.default_generator.get_state()
        try:
            made = make(*args, **kwargs)
        finally:
            _C.default_generator.set_state(state)
        return like(made)
    return wrapped


def _in_place(method):
    @functools.wraps(method)
    def wrapped(self, *args, **kwargs):
        return self if is_meta(self) else method(self, *args, **kwargs)
    return wrapped


def _guard_in_place_methods():
    """Makes the in-place fills module initialisation calls do nothing on meta tensors and draw no random numbers,
    as torch's meta kernels. Installed with the first meta tensor, so programs that never make one pay nothing."""
    for name in ("fill_", "zero_", "copy_", "uniform_", "normal_", "bernoulli_", "random_"):
        setattr(_C.Tensor, name, _in_place(getattr(_C.Tensor, name)))
