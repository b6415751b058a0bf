"""autograd.Function: custom differentiable operations written in Python.

The backward runs inside the C++ engine: apply() records one node (see `_C._function_node`) whose
backward calls the class's `backward(ctx, *grads)`. Tensors given to ctx.save_for_backward are
kept as SavedVariables, so modifying them in place before backward raises PyTorch's error and
they are freed after backward.
"""
import functools

from .. import _C
from .grad_mode import no_grad

__all__ = ["Function", "FunctionCtx", "once_differentiable", "InplaceFunction", "NestedIOFunction"]


class FunctionCtx:
    """The `ctx` of a custom Function: what forward leaves for backward."""

    _materialize_grads = True

    def save_for_backward(self, *tensors):
        """Saves tensors (or None) for backward; read them back with ctx.saved_tensors."""
        for t in tensors:
            if t is not None and not isinstance(t, _C.Tensor):
                raise TypeError("save_for_backward can only save variables, but argument "
                                f"{tensors.index(t)} is of type {type(t).__name__}")
        self._to_save = tensors

    def save_for_forward(self, *tensors):
        self._saved_for_forward = tensors

    @property
    def saved_tensors(self):
        """The tensors given to save_for_backward, checked against in-place changes since."""
        values = getattr(self, "_fl_saved_values", None)
        if values is not None:
            return values
        if hasattr(self, "_to_save"):
            return tuple(self._to_save)
        raise RuntimeError("Trying to backward through the graph a second time (or directly access saved tensors after "
                           "they have already been freed). Saved intermediate values of the graph are freed when you "
                           "call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward "
                           "through the graph a second time or if you need to access saved tensors after calling "
                           "backward.")

    saved_variables = saved_tensors

    def mark_dirty(self, *tensors):
        """Declares the inputs that forward modified in place (they are returned as outputs)."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        """Declares outputs that carry no gradient (indices, masks, ...)."""
        self._non_differentiable = tensors

    def set_materialize_grads(self, value):
        """With False, backward receives None (not zeros) for outputs that got no gradient."""
        self._materialize_grads = bool(value)


class _FunctionMeta(type):
    def __init__(cls, name, bases, attrs):
        # Each Function gets its own ctx class, named like PyTorch's backward nodes ("MyFnBackward").
        cls._backward_cls = type(name + "Backward", (FunctionCtx,), {"_forward_cls": cls})
        super().__init__(name, bases, attrs)


class Function(metaclass=_FunctionMeta):
    """Base class of custom autograd operations: define staticmethods forward and backward (and optionally
    setup_context), then call MyFn.apply(*args)."""

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. Please use new-style "
                           "autograd function with static forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it with "
                                  "forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Runs forward without recording, then records one backward node for the outputs."""
        ctx = cls._backward_cls()
        ctx.needs_input_grad = tuple(isinstance(a, _C.Tensor) and a.requires_grad for a in args)
        setup_style = cls.setup_context is not Function.setup_context
        with no_grad():
            if setup_style:
                outputs = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, outputs)
            else:
                outputs = cls.forward(ctx, *args, **kwargs)
        to_save = getattr(ctx, "_to_save", ())
        if hasattr(ctx, "_to_save"):
            del ctx._to_save
        if not (_C.is_grad_enabled() and any(ctx.needs_input_grad)):
            return outputs
        is_tuple = isinstance(outputs, tuple)
        outs = list(outputs) if is_tuple else [outputs]
        dirty = {id(t) for t in getattr(ctx, "_dirty", ())}
        non_diff = {id(t) for t in getattr(ctx, "_non_differentiable", ())}
        node_outputs = []
        for i, o in enumerate(outs):
            if not isinstance(o, _C.Tensor):
                node_outputs.append(None)
                continue
            if id(o) in dirty:
                if o.is_leaf and o.requires_grad:
                    raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
            elif any(o is a for a in args) and id(o) not in non_diff:
                with no_grad():
                    o = outs[i] = o.view_as(o)  # an input returned unchanged: its alias gets the new history
            differentiable = id(o) not in non_diff and (o.dtype.is_floating_point or o.dtype.is_complex)
            node_outputs.append(o if differentiable else None)
        _C._function_node(cls._backward_cls.__name__, ctx, cls.backward, args, node_outputs, list(to_save),
                          ctx._materialize_grads)
        return tuple(outs) if is_tuple else outs[0]


class InplaceFunction(Function):
    """A Function that may work in place (kept for API compatibility)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


NestedIOFunction = Function


def once_differentiable(fn):
    """Decorates a backward that is not itself differentiable: it runs without recording."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            return fn(ctx, *args)
    return wrapper
