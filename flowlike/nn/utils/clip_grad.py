"""Gradient clipping: clip_grad_norm_, clip_grad_value_ and get_total_norm."""
import types
import warnings

from ..._tensor import Tensor
from ...autograd import no_grad

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]


def _as_list(tensors):
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


@no_grad()
def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The norm of the norms of tensors (as if they were concatenated into one vector)."""
    from ..._creation import tensor
    from ..._joining import stack
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return tensor(0.0)
    total_norm = stack([t.norm(norm_type) for t in tensors]).norm(norm_type)
    if error_if_nonfinite and bool(total_norm.isnan() | total_norm.isinf()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it "
                           "cannot be clipped. To disable this error and scale the gradients by the non-finite norm "
                           "anyway, set `error_if_nonfinite=False`")
    return total_norm


@no_grad()
def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scales the gradients by min(1, max_norm / (total_norm + 1e-6))."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    clip_coef = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(clip_coef.to(g.dtype))


@no_grad()
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Clips the gradients' total norm to max_norm in place; returns the total norm before clipping."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and not parameters:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=3)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated alias of clip_grad_norm_."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@no_grad()
def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamps every gradient to [-clip_value, clip_value] in place."""
    clip_value = float(clip_value)
    for p in _as_list(parameters):
        if p.grad is not None:
            p.grad.clamp_(min=-clip_value, max=clip_value)
