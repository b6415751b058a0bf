"""torch.cuda for a build without CUDA: queries answer "no device", seeding and syncing are no-ops.

Code written for PyTorch commonly guards GPU use with `torch.cuda.is_available()` and seeds every device with
`torch.cuda.manual_seed_all`; those calls work here exactly as on a CPU-only PyTorch build. Calls that need a
device (current_device, get_device_properties, streams, ...) raise AssertionError as CPU-only PyTorch does.
"""
from . import amp  # noqa: F401
from .._missing import module_getattr

_NO_CUDA = "Torch not compiled with CUDA enabled"


def is_available():
    """False: flowlike has no CUDA backend yet."""
    return False


def device_count():
    """0: no CUDA devices."""
    return 0


def is_initialized():
    return False


def is_bf16_supported(including_emulation=True):
    return False


def manual_seed(seed):
    """No-op (there are no CUDA generators to seed)."""


def manual_seed_all(seed):
    """No-op (there are no CUDA generators to seed)."""


def seed():
    """No-op."""


def seed_all():
    """No-op."""


def synchronize(device=None):
    """No-op: there is no device work to wait for."""


def empty_cache():
    """No-op: no CUDA memory is ever cached."""


def _zero(device=None):
    return 0


memory_allocated = max_memory_allocated = memory_reserved = max_memory_reserved = _zero
memory_cached = max_memory_cached = _zero


def reset_peak_memory_stats(device=None):
    """No-op."""


reset_max_memory_allocated = reset_max_memory_cached = reset_accumulated_memory_stats = reset_peak_memory_stats


def memory_stats(device=None):
    """An empty dict: nothing is ever allocated on a CUDA device."""
    return {}


def _needs_device(name):
    def unavailable(*args, **kwargs):
        raise AssertionError(_NO_CUDA)

    unavailable.__name__ = unavailable.__qualname__ = name
    unavailable.__doc__ = f"Raises AssertionError, as torch.cuda.{name} does on a CPU-only build."
    return unavailable


for _name in ["init", "current_device", "set_device", "get_device_name", "get_device_capability",
              "get_device_properties", "current_stream", "default_stream", "mem_get_info", "get_rng_state",
              "set_rng_state", "get_rng_state_all", "set_rng_state_all", "ipc_collect"]:
    globals()[_name] = _needs_device(_name)
del _name


def _cuda_class(name, message):
    """A class whose construction fails as on a CPU-only PyTorch build (isinstance checks and annotations work)."""
    def __new__(cls, *args, **kwargs):
        raise RuntimeError(message)
    return type(name, (), {"__new__": __new__, "__module__": __name__,
                           "__doc__": f"torch.cuda.{name}: raises RuntimeError, as on a CPU-only PyTorch build."})


Stream = _cuda_class("Stream", "torch.cuda.Stream requires CUDA support")
ExternalStream = _cuda_class("ExternalStream", "torch.cuda.ExternalStream requires CUDA support")
Event = _cuda_class("Event", "Tried to instantiate dummy base class Event")
CUDAGraph = _cuda_class("CUDAGraph", "Tried to instantiate dummy base class CUDAGraph")
# torch.cuda.graph makes a side Stream first, so on a CPU-only build it fails with the Stream message
graph = _cuda_class("graph", "torch.cuda.Stream requires CUDA support")


class StreamContext:
    """Makes `stream` current in a `with` block; StreamContext(None) does nothing, as in torch (None is the only
    stream a build without CUDA can be given)."""

    def __init__(self, stream):
        if stream is not None:
            raise RuntimeError(_NO_CUDA)
        self.stream = stream

    def __enter__(self):
        return self.stream

    def __exit__(self, *exc):
        return False


def stream(stream):
    """torch.cuda.stream: a StreamContext for `stream`."""
    return StreamContext(stream)


__getattr__ = module_getattr(__name__, "torch.cuda")
