"""torch._dynamo: the names transformers uses at import (the compile branch provides the full module)."""
from ..compiler import allow_in_graph, assume_constant_result
from .._missing import module_getattr

__all__ = ["allow_in_graph", "assume_constant_result"]

__getattr__ = module_getattr(__name__, "torch._dynamo")
