"""flowlike.autograd: backward, grad and the grad-mode switches (the engine is in C++)."""
import functools

from .. import _C

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


class _GradMode:
    """Base of the grad-mode context managers; instances also work as decorators."""

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(*self._args):
                return fn(*args, **kwargs)
        return wrapper

    _args = ()

    def __enter__(self):
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(self._enabled)
        return self

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False


class no_grad(_GradMode):
    """Disables gradient recording inside the block (or the decorated function)."""
    _enabled = False

    def __init__(self, orig_func=None):
        if orig_func is not None and callable(orig_func):
            self._wrapped = orig_func


class enable_grad(_GradMode):
    """Enables gradient recording inside the block (or the decorated function)."""
    _enabled = True


class set_grad_enabled(_GradMode):
    """Sets gradient recording on or off: immediately, and restores it when used as a context manager."""

    def __init__(self, mode):
        self._prev = _C.is_grad_enabled()
        self._enabled = bool(mode)
        self._args = (mode,)
        _C._set_grad_enabled(self._enabled)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False


class inference_mode(_GradMode):
    """Like no_grad; tensors made inside are meant for inference only."""

    def __init__(self, mode=True):
        self._mode = bool(mode)
        self._args = (mode,)
        self._enabled = not self._mode

    def __enter__(self):
        self._prev_inf = _C.is_inference_mode_enabled()
        _C._set_inference_mode(self._mode)
        return super().__enter__()

    def __exit__(self, *exc):
        _C._set_inference_mode(self._prev_inf)
        return super().__exit__(*exc)


def _tensor_backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Computes the gradient of this tensor with respect to the graph leaves."""
    backward(self, gradient, retain_graph, create_graph, inputs)


_C.Tensor.backward = _tensor_backward
