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
        elif not isinstance(data, Tensor):
            raise TypeError(f"_make_subclass(): argument 'data' (position 2) must be Tensor, not {type(data).__name__}")
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


class UninitializedTensorMixin:
    """Shared behaviour of UninitializedParameter and UninitializedBuffer: no shape until materialize()."""

    def materialize(self, shape, device=None, dtype=None):
        """Gives the tensor memory of `shape` (the current device and dtype unless given); a parameter becomes a
        plain Parameter, as in torch."""
        data = empty(shape, device=device or self.data.device, dtype=dtype or self.data.dtype)
        self.data = data
        if self.cls_to_become is Parameter:
            self.__class__ = Parameter
        else:
            # A C++ Tensor's class can't be assigned from a Python subclass: the owning module swaps in a plain
            # view of this memory (LazyModuleMixin._swap_materialized_buffers).
            self._materialized = True

    @property
    def shape(self):
        if getattr(self, "_materialized", False):
            return Tensor.shape.__get__(self)
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. This error usually "
                           "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
                           "initialized one. Call `forward` to initialize the parameters before accessing their "
                           "attributes.")

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call `forward` to initialize "
                           "the parameters before calling `module.share_memory()`.")

    def __repr__(self):
        return f"<{self.__class__.__name__}>"

    __str__ = __repr__

    def __reduce_ex__(self, proto):
        return (self.__class__, (self.requires_grad,))


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter whose shape is not known yet (lazy modules): it holds no data until materialize()."""

    cls_to_become = Parameter

    def __init__(self, requires_grad=True, device=None, dtype=None):
        Parameter.__init__(self, empty(0, device=device, dtype=dtype), requires_grad)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.requires_grad, self.data.device, self.data.dtype)
        memo[id(self)] = result
        return result


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet (lazy modules): it holds no data until materialize()."""

    cls_to_become = Tensor

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        Tensor.__init__(self, empty(0, device=device, dtype=dtype))
        self.requires_grad = requires_grad
        self.persistent = persistent
        self._is_buffer = True


def is_lazy(param):
    """Whether param is an uninitialized (lazy) parameter or buffer."""
    return isinstance(param, UninitializedTensorMixin) and not getattr(param, "_materialized", False)


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
