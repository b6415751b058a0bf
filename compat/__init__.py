"""flowlike.compat: running unmodified PyTorch code on flowlike.

`with mock_torch():` makes `import torch` (and `torch.*`) resolve to flowlike inside the block
(`mock_torch` is the module flowlike.compat.mock_torch, callable as the context manager);
`python -m flowlike.compat script.py args...` runs a whole script that way.
"""
from . import mock_torch
from .mock_torch import disable, enable, is_enabled

__all__ = ["mock_torch", "enable", "disable", "is_enabled"]
