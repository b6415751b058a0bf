"""torch.autocast / torch.amp.autocast: mixed precision regions. On the CPU the ops flowlike marks (see
flowlike._autocast) run in bfloat16 or float16; CUDA autocast disables itself with torch's warning, as on a
build without CUDA."""
import functools
import warnings

from .. import _autocast
from .. import _dtype as D

__all__ = ["autocast", "is_autocast_enabled", "get_autocast_dtype", "set_autocast_enabled", "set_autocast_dtype",
           "is_autocast_cpu_enabled", "get_autocast_cpu_dtype"]

_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia",
                 "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")


def _device_type(device_type):
    if device_type not in _DEVICE_TYPES:
        raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of device string: "
                           f"{device_type}")
    return device_type


def is_autocast_enabled(device_type="cuda"):
    """Whether autocast is on for device_type on this thread (torch's default device_type is cuda)."""
    return _autocast.state(_device_type(device_type))[0]


def get_autocast_dtype(device_type):
    """The dtype autocast runs lower precision ops in on device_type (bfloat16 on the CPU by default)."""
    return _autocast.state(_device_type(device_type))[1]


def set_autocast_enabled(device_type, enabled):
    """Turns autocast on or off for device_type on this thread."""
    _autocast.set_enabled(_device_type(device_type), enabled)


def set_autocast_dtype(device_type, dtype):
    """Sets the dtype autocast uses for device_type on this thread."""
    _autocast.state(_device_type(device_type))[1] = dtype


def is_autocast_cpu_enabled():
    """Whether CPU autocast is on (torch's deprecated spelling)."""
    warnings.warn("torch.is_autocast_cpu_enabled() is deprecated. Please use torch.is_autocast_enabled('cpu') "
                  "instead.", DeprecationWarning, stacklevel=2)
    return is_autocast_enabled("cpu")


def get_autocast_cpu_dtype():
    """The CPU autocast dtype (torch's deprecated spelling)."""
    warnings.warn("torch.get_autocast_cpu_dtype() is deprecated. Please use torch.get_autocast_dtype('cpu') "
                  "instead.", DeprecationWarning, stacklevel=2)
    return get_autocast_dtype("cpu")


class autocast:
    """Context manager and decorator: inside, ops run in mixed precision on device_type ("cpu": bfloat16 by
    default, or float16); the state on entry comes back on exit, so regions nest."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = _device_type(device_type)
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self._enabled = bool(enabled)
        if not self._enabled:
            return
        if device_type == "cpu" and self.fast_dtype not in (D.bfloat16, D.float16):
            warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling autocast.\nCPU Autocast "
                          "only supports dtypes of torch.bfloat16, torch.float16 currently.", UserWarning, stacklevel=2)
            self._enabled = False
        elif device_type != "cpu":
            # flowlike computes on the CPU only: other devices' autocast has nothing to run on, as torch without them
            name = "CUDA" if device_type == "cuda" else device_type.upper()
            warnings.warn(f"{name} is not available or torch_xla is imported. Disabling autocast.", UserWarning,
                          stacklevel=2)
            self._enabled = False

    def __enter__(self):
        self._previous = list(_autocast.state(self.device))
        _autocast.set_enabled(self.device, self._enabled)
        _autocast.state(self.device)[1] = self.fast_dtype
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        enabled, dtype = self._previous
        _autocast.set_enabled(self.device, enabled)
        _autocast.state(self.device)[1] = dtype
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorated(*args, **kwargs):
            with autocast(self.device, self.fast_dtype, self._enabled):
                return func(*args, **kwargs)
        return decorated
