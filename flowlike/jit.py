"""torch.jit: script and trace return their input unchanged (flowlike.compile is the way to graph mode).

Code that scripts or traces a model for speed keeps working and computes the same results eagerly; a
one-time warning says so.
"""
import warnings
from ._missing import module_getattr

_warned = set()


def _warn_once(api):
    if api not in _warned:
        _warned.add(api)
        warnings.warn(f"{api} is not implemented by flowlike yet: it returns its input unchanged and the code "
                      f"runs eagerly (flowlike's graph mode will replace this).", UserWarning, stacklevel=3)


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """Returns obj unchanged (after a one-time warning)."""
    _warn_once("torch.jit.script")
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-05,
          strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None,
          example_kwarg_inputs=None, _store_inputs=True):
    """Returns func unchanged (after a one-time warning); example_inputs are not run."""
    _warn_once("torch.jit.trace")
    return func


def trace_module(mod, inputs, *args, **kwargs):
    """Returns mod unchanged (after a one-time warning)."""
    _warn_once("torch.jit.trace_module")
    return mod


def ignore(drop=False, **kwargs):
    """Decorator marking a function TorchScript should skip: a no-op here, usable with or without arguments."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    return fn


def export(fn):
    return fn


def is_scripting():
    """False: code never runs under TorchScript in flowlike."""
    return False


def is_tracing():
    return False


def annotate(the_type, the_value):
    return the_value


def _compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,
             disable=False):
    """torch.compile: the function or module, compiled by flowlike's graph mode (flowlike.graph.compile); usable
    as a decorator with or without arguments."""
    from .graph.compile import compile  # graph mode builds on nn, which imports after this module
    return compile(model, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode, options=options,
                   disable=disable)


__getattr__ = module_getattr(__name__, "torch.jit")
