"""torch._dynamo: the names user code touches around torch.compile (reset, config, explain, disable, mark_dynamic
and friends), served by flowlike's graph mode (flowlike.graph.compile)."""
from . import config, exc
from ..compiler import allow_in_graph, assume_constant_result
from ..graph.compile import OptimizedModule, disable, explain, is_compiling, reset
from .._missing import module_getattr

__all__ = ["config", "exc", "reset", "explain", "disable", "is_compiling", "mark_dynamic", "mark_static",
           "maybe_mark_dynamic", "mark_static_address", "allow_in_graph", "assume_constant_result", "OptimizedModule"]


def mark_dynamic(t, index, *, min=None, max=None):
    """Marks dimension(s) of t as varying; flowlike's compile makes a dimension symbolic on its own."""


maybe_mark_dynamic = mark_dynamic


def mark_static(t, index=None):
    """Marks dimension(s) of t as fixed (a hint; flowlike's guards see every shape)."""


def mark_static_address(t, guard=True):
    """Marks t's memory as the same on every call (torch uses it to keep CUDA graphs' inputs in place). flowlike's
    programs take their inputs by reference on every call, so on the CPU there is nothing to do; a non-tensor is
    refused as torch refuses it."""
    from .. import Tensor
    if not isinstance(t, Tensor):
        raise TypeError(f"mark_static_address expects a tensor but received {type(t)}")


__getattr__ = module_getattr(__name__, "torch._dynamo")
