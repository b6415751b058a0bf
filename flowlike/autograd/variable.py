"""Variable: the pre-0.4 autograd wrapper, kept as torch keeps it (torch.autograd.Variable)."""
import warnings

from .._tensor import Tensor
from .._creation import empty

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """Variable(data, requires_grad=False) returns a tensor: data detached (sharing its memory) with requires_grad
    set. Every tensor is an instance of Variable, as in torch since 0.4."""

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                          stacklevel=2)
        if data is None:
            data = empty(0)
        elif not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.detach().requires_grad_(bool(requires_grad))
