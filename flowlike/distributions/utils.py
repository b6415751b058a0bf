"""torch.distributions.utils: broadcasting of parameters, logits/probs conversions and lazy properties."""
import functools
import numbers

from .. import (Size, Tensor, arange, broadcast_tensors, empty, enable_grad, finfo, get_default_dtype, log, log1p,
                sigmoid, tensor)
from ..nn import functional as F

__all__ = ["broadcast_all", "logits_to_probs", "clamp_probs", "probs_to_logits", "lazy_property",
           "tril_matrix_to_vec", "vec_to_tril_matrix"]

euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant


def broadcast_all(*values):
    """The values broadcast together as tensors; numbers become tensors of the first tensor's dtype (the default
    dtype when all are numbers)."""
    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, torch.Tensor or objects implementing "
                         "__torch_function__.")
    dtype = next((v.dtype for v in values if isinstance(v, Tensor)), get_default_dtype())
    return broadcast_tensors(*[v if isinstance(v, Tensor) else tensor(v, dtype=dtype) for v in values])


def _standard_normal(shape, dtype, device=None):
    """Standard normal draws from the default generator (the hook through which Normal-based rsamples draw)."""
    return empty(shape, dtype=dtype).normal_()


def _sum_rightmost(value, dim):
    """value summed over its `dim` rightmost dimensions."""
    if dim == 0:
        return value
    return value.reshape(value.shape[:-dim] + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    """Probabilities from log-odds (is_binary) or from unnormalized log probabilities along the last dim."""
    if is_binary:
        return sigmoid(logits)
    return F.softmax(logits, dim=-1)


def clamp_probs(probs):
    """probs clamped into [eps, 1 - eps] with eps the dtype's machine epsilon."""
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """Log-odds (is_binary) or log probabilities of (clamped) probabilities."""
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return log(ps_clamped) - log1p(-ps_clamped)
    return log(ps_clamped)


class lazy_property:
    """A property computed on first access (with grad enabled) and then stored on the instance."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        functools.update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def _tril_mask(n, diag):
    r = arange(n)
    return r < r.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat, diag=0):
    """The lower-triangular entries (below diagonal `diag`) of a (batched) square matrix, in row order."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag)]


def vec_to_tril_matrix(vec, diag=0):
    """The (batched) lower-triangular matrix whose entries below diagonal `diag`, in row order, are vec."""
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > finfo(vec.dtype).eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be expressed as the lower "
                         "triangular part of a square D x D matrix.")
    n = round(n)
    mat = vec.new_zeros(vec.shape[:-1] + Size((n, n)))
    mat[..., _tril_mask(n, diag)] = vec
    return mat
