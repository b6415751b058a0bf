"""torch._dynamo.config: the settings user code reads and sets around torch.compile. flowlike's compile reads
recompile_limit (how many guard keys a compiled function captures before it runs eagerly, with a warning) and
disable; the others are kept for code that sets them. cache_size_limit is the old name of recompile_limit."""
import contextlib
import sys
import types

recompile_limit = 8
accumulated_recompile_limit = 256
disable = False
suppress_errors = False
verbose = False
capture_scalar_outputs = False
capture_dynamic_output_shape_ops = False
automatic_dynamic_shapes = True
assume_static_by_default = True
optimize_ddp = True
inline_inbuilt_nn_modules = True
force_parameter_static_shapes = True

_ALIASES = {"cache_size_limit": "recompile_limit", "accumulated_cache_size_limit": "accumulated_recompile_limit"}


@contextlib.contextmanager
def _patch(changes):
    config = sys.modules[__name__]
    old = {k: getattr(config, k) for k in changes}
    for k, v in changes.items():
        setattr(config, k, v)
    try:
        yield
    finally:
        for k, v in old.items():
            setattr(config, k, v)


def patch(arg=None, value=None, **kwargs):
    """Sets options for a block (a context manager or decorator): patch("name", value), patch({...}) or
    patch(name=value)."""
    changes = dict(kwargs)
    if isinstance(arg, dict):
        changes.update(arg)
    elif arg is not None:
        changes[arg] = value
    for k in changes:
        if not hasattr(sys.modules[__name__], k):
            raise AttributeError(f"torch._dynamo.config has no option {k!r}")
    return _patch(changes)


class _Config(types.ModuleType):
    """The module, with cache_size_limit (torch's old name) reading and writing recompile_limit."""

    def __getattr__(self, name):
        if name in _ALIASES:
            return getattr(self, _ALIASES[name])
        raise AttributeError(f"torch._dynamo.config has no option {name!r}")

    def __setattr__(self, name, value):
        super().__setattr__(_ALIASES.get(name, name), value)


sys.modules[__name__].__class__ = _Config
