"""Automatic mixed precision on the CPU (torch.autocast("cpu", dtype=torch.bfloat16)): the state per thread and
the two casting rules ops declare, as torch's CPU autocast lists them.

An op marked lower_precision (linear, matmul, conv, bmm, scaled_dot_product_attention, ...) runs with its floating
tensor arguments cast to the autocast dtype; an op marked fp32 (the losses, prod, cdist, ...) runs with them cast
to float32. float64 tensors are left alone, as torch leaves them. The op itself runs with autocast off, so the
ops it is built from are not cast again (torch's autocast kernels exclude their key the same way). Every other op
runs in the dtypes it is given.
"""
import functools
import threading

from . import _C

_DEFAULT_DTYPE = {"cpu": _C.bfloat16, "cuda": _C.float16}
_local = threading.local()
_cpu_on = [0]  # threads with CPU autocast on: while none, marked ops skip the per-thread lookup


def set_enabled(device_type, enabled):
    """Turns autocast on device_type on or off on this thread."""
    current = state(device_type)
    if device_type == "cpu" and bool(enabled) != current[0]:
        _cpu_on[0] += 1 if enabled else -1
    current[0] = bool(enabled)


def state(device_type):
    """[enabled, dtype] of device_type on this thread (set enabled with set_enabled)."""
    states = getattr(_local, "states", None)
    if states is None:
        states = _local.states = {}
    found = states.get(device_type)
    if found is None:
        found = states[device_type] = [False, _DEFAULT_DTYPE.get(device_type, _C.float32)]
    return found


def _cast(value, dtype):
    if isinstance(value, _C.Tensor):
        d = value.dtype
        return value.to(dtype) if d.is_floating_point and d != dtype and d != _C.float64 else value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, dtype) for v in value)
    return value


def _casting(fn, target):
    """fn with its floating arguments cast to target(autocast dtype) while CPU autocast is on."""
    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        if not _cpu_on[0]:
            return fn(*args, **kwargs)
        cpu = state("cpu")
        if not cpu[0]:
            return fn(*args, **kwargs)
        dtype = target(cpu[1])
        cpu[0] = False
        try:
            return fn(*_cast(args, dtype), **{k: _cast(v, dtype) for k, v in kwargs.items()})
        finally:
            cpu[0] = True
    return wrapped


def lower_precision(fn):
    """Marks an op that autocast runs in its lower precision dtype (bfloat16 or float16)."""
    return _casting(fn, lambda dtype: dtype)


def fp32(fn):
    """Marks an op that autocast runs in float32."""
    return _casting(fn, lambda dtype: _C.float32)
