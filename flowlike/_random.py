"""Random sampling: seeds, generator state and the sampling functions."""
import builtins
import math

from . import _C
from . import _dtype as D
from ._creation import empty, _dtype_of, _shape, _finish
from ._out import write_out
from . import _meta
from ._tensor import Tensor, check_device, int_arg
from ._views import broadcast_shapes

Generator = _C.Generator
default_generator = _C.default_generator


def manual_seed(seed):
    """Seeds the default generator; returns it."""
    return default_generator.manual_seed(builtins.int(seed))


def seed():
    """Seeds the default generator with a non-deterministic number and returns it."""
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state as a uint8 tensor."""
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)


def _float_dtype(dtype, op):
    dtype = dtype or D.get_default_dtype()
    if not (dtype.is_floating_point or dtype.is_complex):
        raise NotImplementedError(f"\"{op}\" not implemented for '{D.c10_name(dtype)}'")
    return dtype


@_meta.factory
def rand(*size, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """Uniform samples in [0, 1)."""
    dtype = _dtype_of(dtype, out)
    check_device(device)
    t = empty(*_shape(size, "rand"), dtype=_float_dtype(dtype, "check_uniform_bounds"))
    # complex: the real and imaginary parts each uniform in [0, 1), as torch
    (_C._view_as_real(t) if t.is_complex() else t).uniform_(0.0, 1.0, generator=generator)
    return _finish(t, requires_grad, out, "rand")


@_meta.factory
def randn(*size, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """Standard normal samples."""
    dtype = _dtype_of(dtype, out)
    check_device(device)
    t = empty(*_shape(size, "randn"), dtype=_float_dtype(dtype, "normal_kernel_cpu"))
    if t.is_complex():  # as torch: variance 1 split between the real and imaginary parts
        _C._view_as_real(t).normal_(0.0, math.sqrt(0.5), generator=generator)
    else:
        t.normal_(0.0, 1.0, generator=generator)
    return _finish(t, requires_grad, out, "randn")


@_meta.factory
def randint(low=0, high=None, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
            requires_grad=False):
    """Integers uniformly drawn from [low, high); randint(high, size) or randint(low, high, size)."""
    dtype = _dtype_of(dtype, out)
    check_device(device)
    if size is None:
        if not isinstance(high, (tuple, list)):
            raise TypeError("randint() missing required argument 'size'")
        low, high, size = 0, low, high
    for name, v in (("low", low), ("high", high)):  # ints and what has __index__ (numpy ints, int tensors)
        if isinstance(v, builtins.bool) or not hasattr(v, "__index__") or isinstance(v, builtins.float):
            raise TypeError(f"randint(): argument '{name}' must be int, not {type(v).__name__}")
    t = empty(*_shape((size,), "randint"), dtype=dtype or D.int64)
    return _finish(t.random_(builtins.int(low), builtins.int(high), generator=generator), requires_grad, out,
                   "randint")


def rand_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    return rand(input.shape, dtype=dtype or input.dtype, device=device, requires_grad=requires_grad)


def randn_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    return randn(input.shape, dtype=dtype or input.dtype, device=device, requires_grad=requires_grad)


def randint_like(input, low=0, high=None, *, dtype=None, layout=None, device=None, requires_grad=False,
                 memory_format=None):
    if high is None:
        low, high = 0, low
    return randint(low, high, input.shape, dtype=dtype or input.dtype, device=device, requires_grad=requires_grad)


@_meta.factory
def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False):
    """A random permutation of 0..n-1."""
    dtype = _dtype_of(dtype, out)
    check_device(device)
    return _finish(_C._randperm(int_arg(n, "randperm", "n"), dtype=dtype or D.int64, generator=generator), requires_grad, out, "randperm")


@_meta.factory
def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
           requires_grad=False):
    """Normal samples with the given mean and std (numbers or broadcastable tensors)."""
    check_device(device)
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        ref = mean if isinstance(mean, Tensor) else std
        shape = broadcast_shapes(mean.shape if isinstance(mean, Tensor) else (),
                                 std.shape if isinstance(std, Tensor) else ())
        z = empty(*shape, dtype=ref.dtype if ref.dtype.is_floating_point else D.get_default_dtype())
        z.normal_(0.0, 1.0, generator=generator)
        return write_out(out, z * std + mean, "normal", warn_resize=False)
    if size is None:
        raise TypeError("normal() missing required argument 'size'")
    t = empty(*_shape((size,), "normal"), dtype=_float_dtype(_dtype_of(dtype, out), "normal_kernel_cpu"))
    return _finish(t.normal_(float(mean), float(std), generator=generator), requires_grad, out, "normal")


def bernoulli(input, p=None, *, generator=None, out=None):
    """Draws 0/1 with probabilities from input (or p), in input's dtype."""
    t = empty(*input.shape, dtype=_dtype_of(None, out) or input.dtype)
    return write_out(out, t.bernoulli_(input if p is None else p, generator=generator), "bernoulli", warn_resize=False)


def _tensor_bernoulli(self, p=None, *, generator=None):
    return bernoulli(self, p, generator=generator)


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Samples num_samples indices from each row of the probability tensor input (out=: an int64 tensor, resized
    silently as torch's)."""
    if out is not None and out.dtype != D.int64:
        raise RuntimeError(f"multinomial expects Long tensor out, got: {D.c10_name(out.dtype)}")
    return write_out(out, _C._multinomial(input, num_samples, replacement, generator=generator), "multinomial",
                     warn_resize=False)


Tensor.bernoulli = _tensor_bernoulli
Tensor.multinomial = lambda self, num_samples, replacement=False, *, generator=None: multinomial(
    self, num_samples, replacement, generator=generator)
get_num_threads = _C.get_num_threads
set_num_threads = _C.set_num_threads


# ---- more distributions, as in-place Tensor methods (transforms of uniform draws from the same generators) --------

def _uniform64(self, generator):
    """Uniform draws in [0, 1) of self's shape, in float64 so that the transforms keep their tails."""
    return empty(*self.shape, dtype=D.float64).uniform_(0.0, 1.0, generator=generator)


def _check_float_fill(self, name):
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"{name} expects a floating point tensor, but got {D.c10_name(self.dtype)}")


def _exponential_(self, lambd=1.0, *, generator=None):
    """Fills self with exponential samples of rate lambd."""
    if not lambd > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    _check_float_fill(self, "exponential_")
    return self.copy_(_C.log1p(-_uniform64(self, generator)) * (-1.0 / lambd))


def _cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Fills self with Cauchy samples: median + sigma * tan(pi * (u - 1/2))."""
    if not sigma > 0.0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    _check_float_fill(self, "cauchy_")
    return self.copy_(_C.tan((_uniform64(self, generator) - 0.5) * math.pi) * sigma + median)


def _log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Fills self with exp(N(mean, std^2)) samples."""
    if not std > 0.0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    _check_float_fill(self, "log_normal_")
    z = empty(*self.shape, dtype=D.float64).normal_(0.0, 1.0, generator=generator)
    return self.copy_(_C.exp(z * std + mean))


def _geometric_(self, p, *, generator=None):
    """Fills self with the number of Bernoulli(p) trials up to the first success (1, 2, ...)."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    u = 1.0 - _uniform64(self, generator)  # in (0, 1]
    return self.copy_(_C.ceil(_C.log(u) / math.log1p(-p)).clamp(min=1.0))


def poisson(input, generator=None):
    """Poisson samples with the rates in input (same shape and dtype): multiplication of uniforms for rates below
    10, Hormann's transformed rejection (PTRS, as numpy) above."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"poisson_cpu\" not implemented for '{D.c10_name(input.dtype)}'")
    lam = input.detach().double().reshape(-1)
    if lam.numel() and (builtins.bool((lam < 0).any()) or builtins.bool(_C.isnan(lam).any())):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    out, small = lam * 0, lam < 10
    if builtins.bool(small.any()):
        out[small] = _poisson_small(lam[small], generator)
    if not builtins.bool(small.all()):
        out[~small] = _poisson_ptrs(lam[~small], generator)
    return out.reshape(input.shape).to(input.dtype)


def _uniform_like(t, generator):
    return empty(*t.shape, dtype=D.float64).uniform_(0.0, 1.0, generator=generator)


def _poisson_small(lam, generator):
    """The number of uniforms whose running product stays above exp(-lam); each round works on the elements still
    counting only."""
    from ._creation import arange
    count = lam * 0
    index, limit = arange(lam.numel()), _C.exp(-lam)
    product = _uniform_like(lam, generator)
    while index.numel():
        going = product > limit
        index, limit, product = index[going], limit[going], product[going]
        count[index] += 1
        product = product * _uniform_like(product, generator)
    return count


def _poisson_ptrs(lam, generator):
    """Transformed rejection with squeeze (Hormann 1993) for rates >= 10; each round redraws only the elements not
    accepted yet."""
    from ._creation import arange
    result, index = lam * 0, arange(lam.numel())
    while index.numel():
        rate = lam[index]
        slam, loglam = _C.sqrt(rate), _C.log(rate)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        u = _uniform_like(rate, generator) - 0.5
        v = _uniform_like(rate, generator)
        us = 0.5 - _C.abs(u)
        k = _C.floor((2 * a / us + b) * u + rate + 0.43)
        quick = (us >= 0.07) & (v <= vr)
        rejected = (k < 0) | ((us < 0.013) & (v > us))
        log_ratio = _C.log(v) + _C.log(invalpha) - _C.log(a / (us * us) + b)
        accepted = quick | (~rejected & (log_ratio <= -rate + k * loglam - _C.lgamma(k.clamp(min=0.0) + 1)))
        result[index[accepted]] = k[accepted]
        index = index[~accepted]
    return result


# torch's normal_ and uniform_ on a complex tensor fill its real view: each part drawn on its own, normal_'s with
# std / sqrt(2) (so that E|z - mean|^2 = std^2)
_native_normal_, _native_uniform_ = Tensor.normal_, Tensor.uniform_


def _normal_(self, mean=0.0, std=1.0, *, generator=None):
    if self.dtype.is_complex:
        _native_normal_(_C._view_as_real(self), mean, std / math.sqrt(2), generator=generator)
        return self
    return _native_normal_(self, mean, std, generator=generator)


def _uniform_(self, *args, **kwargs):
    _native_uniform_(_C._view_as_real(self) if self.dtype.is_complex else self, *args, **kwargs)
    return self


_normal_.__doc__, _uniform_.__doc__ = _native_normal_.__doc__, _native_uniform_.__doc__
Tensor.normal_ = _normal_
Tensor.uniform_ = _uniform_
Tensor.exponential_ = _exponential_
Tensor.cauchy_ = _cauchy_
Tensor.log_normal_ = _log_normal_
Tensor.geometric_ = _geometric_
