"""skip_init: building a module without running its parameter initialization (torch.nn.utils.skip_init)."""
import contextlib
import inspect

from .. import init as _init
from ..modules.module import Module

__all__ = ["skip_init"]

# nn.init's in-place initializers; each returns its tensor
_INITIALIZERS = ("uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_", "eye_", "dirac_",
                 "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "orthogonal_", "sparse_")


def _keep(tensor, *args, **kwargs):
    return tensor


@contextlib.contextmanager
def _initializers_disabled():
    saved = {name: getattr(_init, name) for name in _INITIALIZERS}
    try:
        for name in _INITIALIZERS:
            setattr(_init, name, _keep)
        yield
    finally:
        for name, fn in saved.items():
            setattr(_init, name, fn)


def skip_init(module_cls, *args, **kwargs):
    """An instance of module_cls(*args, **kwargs) whose parameters and buffers are left uninitialized (as
    flowlike.empty), skipping the cost and the random draws of nn.init.

    As in torch, module_cls must accept a `device` argument. torch builds the module on the meta device and then
    allocates it; flowlike has no meta device, so it builds it with nn.init's initializers turned off instead.
    """
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    kwargs.setdefault("device", "cpu")
    with _initializers_disabled():
        return module_cls(*args, **kwargs)
