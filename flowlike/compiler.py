"""flowlike.compiler (torch.compiler): the switches libraries use around compiled code, served by flowlike's
graph mode (flowlike.graph.compile): is_compiling() is True while a compiled call is being captured, disable()
keeps a function eager even when compiled code calls it, reset() forgets every captured program, explain() lists
a function's graph breaks."""
from .jit import _compile as compile

__all__ = ["compile", "is_compiling", "is_dynamo_compiling", "is_exporting", "disable", "allow_in_graph",
           "assume_constant_result", "reset", "cudagraph_mark_step_begin", "explain"]


def is_compiling():
    """True while flowlike.compile captures a call (the code runs once then, with the tracer recording it)."""
    from .graph.compile import is_compiling
    return is_compiling()


is_dynamo_compiling = is_compiling


def is_exporting():
    """True while torch.export traces code: never in flowlike."""
    return False


def disable(fn=None, recursive=True, *, reason=None):
    """Excludes fn from compilation (a decorator, with or without arguments): it runs eagerly, also when compiled
    code calls it."""
    from .graph.compile import disable
    return disable(fn, recursive, reason=reason)


def allow_in_graph(fn):
    """Lets the compiler put fn into graphs: every op fn issues is captured anyway; returns fn."""
    return fn


def assume_constant_result(fn):
    """Tells the compiler fn's result is a constant; returns fn."""
    return fn


def reset():
    """Forgets every captured program of flowlike.compile: compiled calls capture again."""
    from .graph.compile import reset
    reset()


def explain(fn, *args, **kwargs):
    """The graphs and graph breaks of fn run once compiled (torch._dynamo.explain): explain(fn, *args) or
    explain(fn)(*args)."""
    from .graph.compile import explain
    return explain(fn, *args, **kwargs)


def cudagraph_mark_step_begin():
    """Marks the start of a step for CUDA graphs (flowlike has none)."""
