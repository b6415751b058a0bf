"""flowlike.autograd: backward, grad and the grad-mode switches (the engine is in C++)."""
from .. import _C
from .grad_mode import no_grad, enable_grad, set_grad_enabled, inference_mode  # noqa: F401

is_grad_enabled = _C.is_grad_enabled
is_inference_mode_enabled = _C.is_inference_mode_enabled


def _tensors(x):
    if x is None:
        return None
    return [x] if isinstance(x, _C.Tensor) else list(x)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulates into .grad the gradients of tensors with respect to the graph leaves."""
    tensors = _tensors(tensors)
    grads = _tensors(grad_tensors) or [None] * len(tensors)
    if retain_graph is None:
        retain_graph = create_graph
    inputs = _tensors(inputs)
    if inputs is not None and len(inputs) == 0:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    _C._run_backward(tensors, grads, retain_graph, create_graph, inputs, False, inputs is not None)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of outputs with respect to inputs, returned as a tuple (no .grad is touched)."""
    if is_grads_batched:
        raise NotImplementedError("autograd.grad(is_grads_batched=True) is not supported by flowlike yet")
    outputs = _tensors(outputs)
    inputs_list = _tensors(inputs)
    grads = _tensors(grad_outputs) or [None] * len(outputs)
    if retain_graph is None:
        retain_graph = create_graph
    if allow_unused is None:
        allow_unused = materialize_grads
    result = _C._run_backward(outputs, grads, retain_graph, create_graph, inputs_list, allow_unused, False)
    if materialize_grads:
        from .._creation import zeros_like
        result = tuple(zeros_like(i) if r is None else r for r, i in zip(result, inputs_list))
    return tuple(result)


def _tensor_backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Computes the gradient of this tensor with respect to the graph leaves."""
    backward(self, gradient, retain_graph, create_graph, inputs)


_C.Tensor.backward = _tensor_backward


# ---- tensor hooks --------------------------------------------------------------------------------------------

class _TensorHookHandle:
    """Returned by Tensor.register_hook and register_post_accumulate_grad_hook; remove() unregisters."""

    def __init__(self, tensor, hook_id):
        import weakref
        self._tensor = weakref.ref(tensor)
        self.id = hook_id

    def remove(self):
        t = self._tensor()
        if t is not None:
            t._remove_hook(self.id)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _register_hook(self, hook):
    """Registers hook(grad) -> Tensor or None, called with this tensor's gradient each time it is computed;
    a returned tensor replaces the gradient."""
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    return _TensorHookHandle(self, self._register_grad_hook(hook))


def _register_post_accumulate_grad_hook(self, hook):
    """Registers hook(tensor), called after a gradient was accumulated into this leaf's .grad."""
    return _TensorHookHandle(self, self._register_post_accumulate_hook(hook))


_C.Tensor.register_hook = _register_hook
_C.Tensor.register_post_accumulate_grad_hook = _register_post_accumulate_grad_hook

from .function import Function, FunctionCtx, once_differentiable  # noqa: E402,F401
from .anomaly_mode import detect_anomaly, set_detect_anomaly, is_anomaly_enabled  # noqa: E402,F401
from .variable import Variable  # noqa: E402,F401
from . import function, graph, functional, grad_mode, anomaly_mode, profiler, variable  # noqa: E402,F401
from .gradcheck import gradcheck, gradgradcheck, GradcheckError  # noqa: E402,F401
