"""Grad-mode switches: no_grad, enable_grad, set_grad_enabled, inference_mode (context managers and decorators)."""
import functools

from .. import _C

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode"]


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
