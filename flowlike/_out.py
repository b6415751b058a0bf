"""Writing a computed result into the caller's tensor, with torch's rules, in one place: `out=` arguments
(write_out) and in-place forms (write_inplace, inplace_method). Python composites compute out of place and hand
the result here."""
import warnings

from . import _C
from . import _dtype as _D


def _check_no_overlap(out, inputs, partial=()):
    # torch's assert_no_overlap: an out= written in another order than its inputs are read may not alias them; for
    # `partial` (assert_no_partial_overlap) an exact alias is allowed (csrc/kernels/overlap.h)
    _C._check_out_overlap(out, list(inputs), list(partial))


def write_out(out, result, op, exact_dtype=False, warn_resize=True, inputs=(), partial=()):
    """Writes `result` into `out` and returns out (the result itself when out is None), as torch's out= does: no
    autograd through out=; the result's dtype must cast to out's (with `exact_dtype`, as torch's products
    require, equal it); an out of another shape is resized, with torch's deprecation warning when it had
    elements (not for the ops that torch resizes silently: factories, histogram); an out of the right shape may
    not be expanded (several results per element), and out may not share memory with any of `inputs`, nor share
    part of it with any of `partial` (checked before the resize, which must not resize an input, and after it). A
    tuple result goes into a tuple of outs, which is returned."""
    if out is None:
        return result
    if isinstance(result, tuple):
        if not isinstance(out, (tuple, list)) or len(out) != len(result):
            raise TypeError(f"{op}(): argument 'out' must be a tuple of {len(result)} Tensors")
        return tuple(write_out(o, r, op, exact_dtype, warn_resize, inputs, partial) for o, r in zip(out, result))
    if not isinstance(out, _C.Tensor):  # (torch's argument parser)
        raise TypeError(f"{op}(): argument 'out' must be Tensor, not {type(out).__name__}")
    _check_no_overlap(out, inputs, partial)
    if result.requires_grad and _C.is_grad_enabled():
        raise RuntimeError(f"{op}(): functions with out=... arguments don't support automatic differentiation, but "
                           "one of the arguments requires grad.")
    if exact_dtype and out.dtype != result.dtype:
        raise RuntimeError(f"{op}(): expected out tensor to have dtype {_D.c10_name(result.dtype)}, but got "
                           f"{_D.c10_name(out.dtype)} instead")
    if not _D.can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"{op}: result type {_D.c10_name(result.dtype)} can't be cast to the desired output type "
                           f"{_D.c10_name(out.dtype)}")
    if tuple(out.shape) != tuple(result.shape):
        if out.numel() and warn_resize:
            warnings.warn(f"An output with one or more elements was resized since it had shape {list(out.shape)}, "
                          f"which does not match the required output shape {list(result.shape)}. This behavior is "
                          "deprecated, and in a future PyTorch release outputs will not be resized unless they have "
                          "zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero "
                          "elements with t.resize_(0).", UserWarning, stacklevel=3)
        out.resize_(result.shape)
        _check_no_overlap(out, inputs, partial)
    elif any(n > 1 and st == 0 for n, st in zip(out.shape, out.stride())):
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a single "
                           "memory location. Please clone() the tensor before performing the operation.")
    return out.copy_(result)


def write_inplace(self, result, op):
    """Writes `result` over `self` and returns self, as torch's in-place ops do: the result must keep self's shape
    (no broadcasting self up) and its dtype must cast to self's."""
    if tuple(result.shape) != tuple(self.shape):
        raise RuntimeError(f"{op}: output with shape {list(self.shape)} doesn't match the broadcast shape "
                           f"{list(result.shape)}")
    if not _D.can_cast(result.dtype, self.dtype):
        raise RuntimeError(f"{op}: result type {_D.c10_name(result.dtype)} can't be cast to the desired output type "
                           f"{_D.c10_name(self.dtype)}")
    return self.copy_(result)


def inplace_method(fn, name):
    """The in-place Tensor method `name` of the out-of-place `fn` (self as its first argument)."""
    def method(self, *args, **kwargs):
        # under autograd the composite reads a copy, so that overwriting self leaves the values it saved intact
        source = self.clone() if self.requires_grad and _C.is_grad_enabled() else self
        return write_inplace(self, fn(source, *args, **kwargs), name)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"In-place version of {fn.__name__}."
    return method


# The in-place forms that op declarations ask for (`python: [inplace]` in csrc/ops/*.yaml).
for _name in _C._inplace_faces:
    setattr(_C.Tensor, _name + "_", inplace_method(getattr(_C.Tensor, _name), _name + "_"))
