"""flowlike.compiler (torch.compiler): the switches libraries use around compiled code.

flowlike.compile (torch.compile) runs functions eagerly until graph mode lands, so code is never being compiled or
exported: is_compiling() is False, and disable()/allow_in_graph() return the function they are given.
"""
from .jit import _compile as compile

__all__ = ["compile", "is_compiling", "is_dynamo_compiling", "is_exporting", "disable", "allow_in_graph",
           "assume_constant_result", "reset", "cudagraph_mark_step_begin"]


def is_compiling():
    """True while code is being traced by torch.compile / export: never in flowlike's eager runs."""
    return False


def is_dynamo_compiling():
    """True while the compiler traces code: never in flowlike's eager runs."""
    return False


def is_exporting():
    """True while torch.export traces code: never in flowlike."""
    return False


def disable(fn=None, recursive=True, *, reason=None):
    """Excludes fn from compilation (a decorator, with or without arguments); flowlike runs it eagerly as always."""
    if fn is None:
        return lambda f: disable(f, recursive, reason=reason)
    return fn


def allow_in_graph(fn):
    """Lets the compiler put fn into graphs as one opaque call; returns fn."""
    return fn


def assume_constant_result(fn):
    """Tells the compiler fn's result is a constant; returns fn."""
    return fn


def reset():
    """Clears the compiler's caches (flowlike.compile keeps none)."""


def cudagraph_mark_step_begin():
    """Marks the start of a step for CUDA graphs (flowlike has none)."""
