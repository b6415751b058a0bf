"""torch.xpu for a build without Intel GPU support, as torch's CPU wheels answer: no device, seeding and freeing
caches are no-ops, calls that need a device raise AssertionError."""
from ._missing import module_getattr

_NO_XPU = "Torch not compiled with XPU enabled"


def is_available():
    """False: flowlike has no XPU backend."""
    return False


def device_count():
    """0: no XPU devices."""
    return 0


def is_initialized():
    """False: there is no XPU state to initialize."""
    return False


def manual_seed(seed):
    """Seeds the (absent) XPU generators: nothing to do."""


manual_seed_all = manual_seed


def empty_cache():
    """Frees the (absent) XPU caching allocator's blocks: nothing to do."""


def _needs_device(name):
    def unavailable(*args, **kwargs):
        raise AssertionError(_NO_XPU)
    unavailable.__name__ = unavailable.__qualname__ = name
    unavailable.__doc__ = f"Raises AssertionError, as torch.xpu.{name} does on a build without XPU."
    return unavailable


for _name in ["current_device", "set_device", "synchronize", "get_device_name", "get_device_properties",
              "get_device_capability", "current_stream", "mem_get_info"]:
    globals()[_name] = _needs_device(_name)
del _name

__getattr__ = module_getattr(__name__, "torch.xpu")
