"""Indexing ops (index_select, gather, scatter*, index_*, masked_*, take, nonzero, where); their kernels,
bindings and Tensor methods (including __getitem__/__setitem__) are in C++ (csrc/ops/index*.cpp)."""
from . import _C

__all__ = ["index_select", "gather", "scatter", "scatter_add", "scatter_reduce", "index_add", "index_copy", "index_fill",
           "index_put", "index_put_", "masked_fill", "masked_select", "masked_scatter", "take", "take_along_dim", "nonzero",
           "argwhere", "where"]
globals().update({name: getattr(_C, name) for name in __all__})
