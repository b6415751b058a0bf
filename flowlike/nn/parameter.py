"""nn.Parameter and nn.Buffer: tensors that modules register when assigned as attributes."""
from .._tensor import Tensor
from .._creation import empty


class Parameter(Tensor):
    """A tensor that is a module parameter: registered when assigned to a Module attribute.

    It shares storage with `data` and requires grad by default (even under no_grad), as torch.nn.Parameter.
    """

    def __init__(self, data=None, requires_grad=True):
        if data is None:
            data = empty(0)
        Tensor.__init__(self, data.detach())
        self.requires_grad = requires_grad

    def __repr__(self):
        return "Parameter containing:\n" + Tensor.__repr__(self)

    __str__ = __repr__

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.detach().clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, proto):
        return (_rebuild_parameter, (self.detach().clone(), self.requires_grad))


def _rebuild_parameter(data, requires_grad):
    return Parameter(data, requires_grad)


class Buffer(Tensor):
    """Marks a tensor as a buffer when assigned to a Module attribute (persistent by default), as torch.nn.Buffer.

    Like torch, the result is a plain Tensor carrying the marks `_is_buffer` and `persistent`.
    """

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t


def is_lazy(param):
    """flowlike has no lazy (uninitialized) parameters."""
    return False


def _get_data(self):
    return self.detach()


def _set_data(self, value):
    # torch's semantics: the tensor object stays, it takes value's memory, shape and dtype.
    if not isinstance(value, Tensor):
        raise TypeError(f"data must be a Tensor, not {type(value).__name__}")
    self._set_data(value)


if not hasattr(Tensor, "data"):
    # torch's Tensor.data: the same values without autograd history (used as `param.data.normal_()`).
    Tensor.data = property(_get_data, _set_data, doc="The tensor's values, detached from autograd.")
