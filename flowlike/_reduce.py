"""Reductions, scans and sorting with PyTorch's signatures.

The C++ ops (`_C._sum`, `_C._max`, ...) take fixed arguments; this module parses PyTorch's
overloaded forms (dim as int, tuple or None; max(x) / max(x, dim) / max(x, other); legacy
`unbiased`), wraps (values, indices) results in named tuples, and writes the few composites
(std, aminmax, argsort, msort, bucketize, ...) once in terms of those ops.
"""
import builtins
import collections
import math
import types
import warnings

from . import _C
from . import _dtype as D
from ._out import inplace_method, write_out
from ._tensor import Tensor, int_arg, int_list_arg
from . import _autocast

# ---- named-tuple results (torch.return_types) ------------------------------------------------


def _return_type(name, fields=("values", "indices")):
    cls = collections.namedtuple(name, fields)

    def __repr__(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"torch.return_types.{name}(\n{body})"

    cls.__repr__ = __repr__
    cls.__module__ = "flowlike.return_types"
    return cls


return_types = types.SimpleNamespace(**{
    n: _return_type(n) for n in ("max", "min", "sort", "topk", "kthvalue", "median", "nanmedian", "mode", "cummax",
                                 "cummin")})
return_types.aminmax = _return_type("aminmax", ("min", "max"))
return_types.frexp = _return_type("frexp", ("mantissa", "exponent"))
return_types.histogram = _return_type("histogram", ("hist", "bin_edges"))
return_types.histogramdd = _return_type("histogramdd", ("hist", "bin_edges"))

# ---- argument helpers ------------------------------------------------------------------------


def _dims(dim):
    """dim as None, an int, or a sequence of ints -> a list (empty: every dim)."""
    if dim is None:
        return []
    if isinstance(dim, (builtins.int, Tensor)) and not isinstance(dim, builtins.bool):
        return [int_arg(dim, "reduction", "dim")]
    if isinstance(dim, (tuple, list)):
        return int_list_arg(dim, "reduction", "dim")
    raise TypeError(f"dim must be an int, a tuple of ints or None, but got {type(dim).__name__}")


def _numpy_names(name, dim, keepdim, axis, keepdims):
    """(dim, keepdim) with numpy's spellings axis= / keepdims= read as torch's parser does: only where dim / keepdim
    are not given. (The wrappers take them as keyword-only arguments and call this only when one is given, so the
    common call pays nothing.)"""
    if axis is not None:
        if dim is not None:
            raise TypeError(f"{name}() got an unexpected keyword argument 'axis'")
        dim = axis
    if keepdims is not None:
        if keepdim:
            raise TypeError(f"{name}() got an unexpected keyword argument 'keepdims'")
        keepdim = keepdims
    return dim, keepdim


def _as_tensor(x, like=None):
    if isinstance(x, Tensor):
        return x
    from ._creation import tensor
    return tensor(x, dtype=like.dtype if like is not None else None)


def _reducer(name, doc, has_dtype=True):
    prim = getattr(_C, "_" + name)

    if has_dtype:
        def fn(input, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None):
            if axis is not None or keepdims is not None:
                dim, keepdim = _numpy_names(name, dim, keepdim, axis, keepdims)
            return prim(input, _dims(dim), keepdim, dtype=dtype)
    else:  # amax, amin: with out=, whose dtype must be input's (torch)
        def fn(input, dim=None, keepdim=False, *, out=None, axis=None, keepdims=None):
            if axis is not None or keepdims is not None:
                dim, keepdim = _numpy_names(name, dim, keepdim, axis, keepdims)
            if out is not None and out.dtype != input.dtype:
                raise RuntimeError(f"Expected the dtype for input and out to match, but got "
                                   f"{D.c10_name(input.dtype)} for input's dtype and "
                                   f"{D.c10_name(out.dtype)} for out's dtype.")
            return write_out(out, prim(input, _dims(dim), keepdim), name)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


sum = _reducer("sum", "Sum over `dim` (all dims when None); integers and bool sum to int64 unless dtype= is given.")
nansum = _reducer("nansum", "Sum treating NaN as zero.")
mean = _reducer("mean", "Mean over `dim`; integer inputs need a floating dtype=.")
nanmean = _reducer("nanmean", "Mean over the non-NaN elements.")


@_autocast.fp32
def prod(input, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None):
    """Product over one `dim` (all dims when None); integers and bool multiply to int64 unless dtype= is given."""
    if axis is not None or keepdims is not None:
        dim, keepdim = _numpy_names("prod", dim, keepdim, axis, keepdims)
    if dim is not None and (not isinstance(dim, builtins.int) or isinstance(dim, builtins.bool)):
        raise TypeError(f"prod(): argument 'dim' (position 2) must be int, not {type(dim).__name__}")
    return _C._prod(input, _dims(dim), keepdim, dtype=dtype)


amax = _reducer("amax", "Maximum over `dim` (a NaN propagates); no indices.", has_dtype=False)
amin = _reducer("amin", "Minimum over `dim` (a NaN propagates); no indices.", has_dtype=False)


def _logical_reducer(name, doc):
    prim = getattr(_C, "_" + name)

    def fn(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
        if axis is not None or keepdims is not None:
            dim, keepdim = _numpy_names(name, dim, keepdim, axis, keepdims)
        if isinstance(dim, (tuple, list)) and not dim:  # torch reduces nothing here (unlike sum)
            r = _C.ne(input, 0)
            return r._to_dtype(D.uint8, False) if input.dtype == D.uint8 else r
        return prim(input, _dims(dim), keepdim)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


all = _logical_reducer("all", "True where every element over `dim` is nonzero (uint8 in, uint8 out).")
any = _logical_reducer("any", "True where some element over `dim` is nonzero (uint8 in, uint8 out).")


def logsumexp(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    """log(sum(exp(input))) over `dim`, computed stably by shifting by the maximum."""
    if axis is not None or keepdims is not None:
        dim, keepdim = _numpy_names("logsumexp", dim, keepdim, axis, keepdims)
    if isinstance(input, Tensor) and input.dtype.is_complex:
        dims = _dims(dim) or list(builtins.range(input.dim()))
        if input.numel() == 0:
            return input.exp().sum(dims, keepdim=keepdim).log()
        r = _complex_shifted(input, dims, lambda e: e.sum(dims, keepdim=True))
        return r if keepdim or not dims else r.squeeze(dims)
    return _C._logsumexp(input, _dims(dim), keepdim)


def _complex_shifted(input, dims, accumulate):
    """log(accumulate(exp(input))) of a complex input as torch computes it: shifted by the largest real part over
    dims (|exp(z)| depends on it alone), an infinite shift replaced by 0. The shift is a constant to autograd: its
    derivative cancels."""
    m = input.real.detach().amax(dims, keepdim=True)
    m = m.masked_fill(m.abs() == math.inf, 0)
    return accumulate((input - m).exp()).log() + m


def count_nonzero(input, dim=None):
    """The number of nonzero elements over `dim` (int64)."""
    return _C._count_nonzero(input, _dims(dim), False)


def _max_min(name, prim_dim, full, pair):
    rt = getattr(return_types, name)

    def fn(input, dim=None, keepdim=False, *, out=None, axis=None, keepdims=None):
        if axis is not None or keepdims is not None:
            dim, keepdim = _numpy_names(name, dim, keepdim, axis, keepdims)
        if isinstance(dim, Tensor):  # max(input, other): elementwise
            return pair(input, dim, out=out) if out is not None else pair(input, dim)
        if dim is None:
            if input.numel() == 0:
                raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                                   "Specify the reduction dim with the 'dim' argument.")
            return full(input)
        return rt(*prim_dim(input, int_arg(dim, name, "dim"), keepdim))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"{name}(input) -> the {name}imum element; {name}(input, dim, keepdim=False) -> (values, indices); "
                  f"{name}(input, other) -> elementwise {name}imum.")
    return fn


max = _max_min("max", _C._max, lambda t: _C._amax(t, [], False), _C.maximum)
min = _max_min("min", _C._min, lambda t: _C._amin(t, [], False), _C.minimum)


def aminmax(input, *, dim=None, keepdim=False, out=None):
    """(min, max) over `dim` (all dims when None) as a named tuple; out= a (min, max) pair of input's dtype."""
    if input.numel() == 0 and dim is None:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.")
    if dim is not None and input.dim() and input.shape[dim] == 0:
        raise IndexError(f"aminmax: Expected reduction dim {dim} to have non-zero size.")
    if out is not None:
        if not isinstance(out, (tuple, list)):
            raise TypeError(f"aminmax(): argument 'out' must be tuple of Tensors, not {type(out).__name__}")
        for o in out:
            if isinstance(o, Tensor) and o.dtype != input.dtype:
                raise RuntimeError(f"Expected out tensor to have dtype {D.c10_name(input.dtype).lower()}, but got "
                                   f"{D.c10_name(o.dtype).lower()} instead")
    dims = _dims(dim)
    result = (_C._amin(input, dims, keepdim), _C._amax(input, dims, keepdim))
    return return_types.aminmax(*write_out(out, result, "aminmax", inputs=(input,)))


def argmax(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    """Index of the first maximum over `dim`, or into the flattened tensor when dim is None."""
    if axis is not None or keepdims is not None:
        dim, keepdim = _numpy_names("argmax", dim, keepdim, axis, keepdims)
    return _C._argmax(input, None if dim is None else int_arg(dim, "argmax", "dim"), keepdim)


def argmin(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    """Index of the first minimum over `dim`, or into the flattened tensor when dim is None."""
    if axis is not None or keepdims is not None:
        dim, keepdim = _numpy_names("argmin", dim, keepdim, axis, keepdims)
    return _C._argmin(input, None if dim is None else int_arg(dim, "argmin", "dim"), keepdim)


def _correction(dim, unbiased, correction):
    """Resolves torch's var/std argument forms: var(x, unbiased), var(x, dim, unbiased, keepdim), correction=."""
    if isinstance(dim, builtins.bool):  # var(x, False): the legacy positional `unbiased`
        dim, unbiased = None, dim
    if correction is not None and unbiased is not None:
        raise RuntimeError("Cannot specify both unbiased and correction")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    return _dims(dim), builtins.float(correction)


def _var_mean(name, input, dim, unbiased, keepdim, correction, axis=None, keepdims=None):
    if axis is not None or keepdims is not None:
        dim, keepdim = _numpy_names(name, dim, keepdim, axis, keepdims)
    dims, c = _correction(dim, unbiased, correction)
    v, m = _C._var_mean(input, dims, c, keepdim)
    if v.numel() and input.numel() // v.numel() - c <= 0:
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction "
                      "factor (input numel divided by output numel).", UserWarning, stacklevel=3)
    return v, m


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None, keepdims=None):
    """(variance, mean) over `dim`; the variance divides by N - correction (default 1)."""
    return _var_mean("var_mean", input, dim, unbiased, keepdim, correction, axis, keepdims)


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None, keepdims=None):
    """Variance over `dim`, dividing by N - correction (default 1, Bessel's correction)."""
    return _var_mean("var", input, dim, unbiased, keepdim, correction, axis, keepdims)[0]


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None, keepdims=None):
    """(standard deviation, mean) over `dim`."""
    v, m = _var_mean("std_mean", input, dim, unbiased, keepdim, correction, axis, keepdims)
    return _C.sqrt(v), m


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None, keepdims=None):
    """Standard deviation over `dim`: sqrt(var)."""
    return _C.sqrt(_var_mean("std", input, dim, unbiased, keepdim, correction, axis, keepdims)[0])


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """Vector p-norm over `dim` (all dims when None): p a number, inf, -inf or 'fro' (= 2); another string ('nuc')
    is the matrix norm over `dim` (all dims when None, so a 2-D input), as torch."""
    if p is None or p == "fro":
        p = 2
    elif isinstance(p, str):
        from .linalg import matrix_norm
        dims = list(range(input.dim())) if dim is None else dim
        return write_out(out, matrix_norm(input, p, dims, keepdim, dtype=dtype), "norm", exact_dtype=True)
    return write_out(out, _C._norm(input, builtins.float(p), _dims(dim), keepdim, dtype), "norm", exact_dtype=True)


# ---- scans -----------------------------------------------------------------------------------

def cumsum(input, dim, *, dtype=None):
    """Cumulative sum along `dim`; integers and bool accumulate in int64 unless dtype= is given."""
    return _C._cumsum(input, dim, dtype=dtype)


def cumprod(input, dim, *, dtype=None):
    """Cumulative product along `dim`; integers and bool accumulate in int64 unless dtype= is given."""
    return _C._cumprod(input, dim, dtype=dtype)


def logcumsumexp(input, dim):
    """log(cumsum(exp(input))) along `dim`, computed stably."""
    if isinstance(input, Tensor) and input.dtype.is_complex and input.numel():
        # term by term as torch's kernel: its imaginary parts are not reduced to (-pi, pi] (log(cumsum(exp)) would
        # differ from them by multiples of 2 pi), and each step is stable on its own
        from ._joining import stack
        from ._ops import _complex_logaddexp
        d = int_arg(dim, "logcumsumexp", "dim")
        if input.dim() == 0:
            if d not in (-1, 0):
                raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got {d})")
            return input.clone()
        steps = [input.select(d, 0)]
        for k in builtins.range(1, input.shape[d]):
            steps.append(_complex_logaddexp(input.select(d, k), steps[-1]))
        return stack(steps, d)
    return _C._logcumsumexp(input, dim)


def cummax(input, dim):
    """Running maximum along `dim` and the index where it was found."""
    return return_types.cummax(*_C._cummax(input, dim))


def cummin(input, dim):
    """Running minimum along `dim` and the index where it was found."""
    return return_types.cummin(*_C._cummin(input, dim))


# ---- sorting and order statistics ------------------------------------------------------------

def sort(input, dim=-1, descending=False, *, stable=False):
    """Sorts along `dim` (stably; NaN sorts as the largest value); returns (values, indices)."""
    return return_types.sort(*_C._sort(input, dim, descending, builtins.bool(stable)))


def argsort(input, dim=-1, descending=False, stable=False):
    """The indices that sort `input` along `dim`."""
    return sort(input, dim, descending, stable=stable).indices


def msort(input):
    """Sorts along the first dim: sort(input, dim=0).values."""
    return sort(input, 0).values


def topk(input, k, dim=-1, largest=True, sorted=True):
    """The k largest (or smallest) elements along `dim` and their indices."""
    return return_types.topk(*_C._topk(input, k, dim, largest, sorted))


def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    """The k-th smallest element along `dim` (k counts from 1) and its index; out= a (values, indices) pair."""
    if out is not None:
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TypeError(f"kthvalue(): argument 'out' must be tuple of Tensors, not {type(out).__name__}")
        if out[0].dtype != input.dtype:
            raise RuntimeError("output values must be of same type as input")
        if out[1].dtype != D.int64:
            raise RuntimeError("output indices must be of scalar type Long")
    result = _C._kthvalue(input, k, dim, keepdim)
    return return_types.kthvalue(*write_out(out, result, "kthvalue", inputs=(input,)))


def _median(name, ignore_nan):
    rt = getattr(return_types, name)

    def fn(input, dim=None, keepdim=False):
        if dim is None:
            return _C._median_all(input, ignore_nan)
        return rt(*_C._median_dim(input, int_arg(dim, name, "dim"), keepdim, ignore_nan))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"{name}(input) -> the lower median; {name}(input, dim, keepdim=False) -> (values, indices). "
                  + ("NaNs are ignored." if ignore_nan else "A NaN in the row makes the result NaN."))
    return fn


median = _median("median", False)
nanmedian = _median("nanmedian", True)


def mode(input, dim=-1, keepdim=False):
    """The most frequent value along `dim` (the smallest among ties) and its last index."""
    return return_types.mode(*_C._mode(input, dim, keepdim))


def _quantile(name, ignore_nan):
    def fn(input, q, dim=None, keepdim=False, *, interpolation="linear"):
        if isinstance(q, Tensor):
            if q.dtype != input.dtype:
                raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        else:
            if not 0 <= q <= 1:
                raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
            q = _as_tensor(builtins.float(q), like=input)  # in the input's dtype, as torch: 0.3 in float32 is not 0.3
        return _C._quantile(input, q, None if dim is None else int_arg(dim, name, "dim"), keepdim, interpolation, ignore_nan)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"The q-th quantiles along `dim` (all elements when None); a 1-D q adds a leading dim. "
                  f"interpolation: linear, lower, higher, midpoint or nearest."
                  + (" NaNs are ignored." if ignore_nan else ""))
    return fn


quantile = _quantile("quantile", False)
nanquantile = _quantile("nanquantile", True)


def _unique_result(values, inverse, counts, return_inverse, return_counts):
    out = (values,) + ((inverse,) if return_inverse else ()) + ((counts,) if return_counts else ())
    return out[0] if len(out) == 1 else out


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct elements (sorted), or distinct slices along `dim`, optionally with inverse indices and counts."""
    parts = _C._unique_flat(input, False) if dim is None else _C._unique_dim(input, dim, False)
    return _unique_result(*parts, return_inverse, return_counts)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapses runs of equal consecutive elements, optionally with inverse indices and run lengths."""
    parts = _C._unique_flat(input, True) if dim is None else _C._unique_dim(input, dim, True)
    return _unique_result(*parts, return_inverse, return_counts)


def bincount(input, weights=None, minlength=0):
    """Counts of each value of a 1-D non-negative integer tensor (or sums of `weights`)."""
    return _C._bincount(input, weights, minlength)


def histc(input, bins=100, min=0, max=0):
    """Histogram with `bins` equal bins over [min, max] (the data's range when both are equal)."""
    return _C._histc(input, bins, builtins.float(min), builtins.float(max))


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    """Indices at which `input` would be inserted into the innermost dim of `sorted_sequence`."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left "
                               "while right was True")
        right = side == "right"
    return _C._searchsorted(sorted_sequence, _as_tensor(input, sorted_sequence), out_int32, right, sorter)


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The bucket of each element of `input` given 1-D increasing `boundaries`."""
    if boundaries.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension but got dim({boundaries.dim()})")
    return _C._searchsorted(boundaries, _as_tensor(input, boundaries), out_int32, right, None)


# ---- statistics, histograms, integration -----------------------------------------------------


def dist(input, other, p=2):
    """The p-norm of input - other."""
    return _C._norm(input - other, builtins.float(p), [], False, None)


def renorm(input, p, dim, maxnorm):
    """Rescales each slice along dim whose p-norm exceeds maxnorm to norm maxnorm."""
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"renorm: expected a floating point tensor, got {input.dtype}")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input.dim() <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.dim()} dimensions")
    dim = dim + input.dim() if dim < 0 else dim
    others = [d for d in builtins.range(input.dim()) if d != dim]
    norm = _C._norm(input, builtins.float(p), others, True, None)
    # the 1e-7 keeps the factor finite for zero slices, as in PyTorch
    return input * _C.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)


def cov(input, *, correction=1, fweights=None, aweights=None):
    """Covariance of the variables in the rows of input (observations in the columns), optionally weighted."""
    if input.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.dim()} dimensions")
    x = input.reshape(1, -1) if input.dim() < 2 else input
    n = x.shape[1]
    w = None
    for name, weights in (("fweights", fweights), ("aweights", aweights)):
        if weights is None:
            continue
        if weights.dim() > 1:
            raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
                               f"{weights.dim()} dimensions")
        if weights.numel() != n:
            raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the "
                               f"input but got {weights.numel()} != {n}")
        if name == "fweights" and weights.dtype.is_floating_point:
            raise RuntimeError(f"cov(): expected fweights to have integral dtype but got fweights with "
                               f"{D.c10_name(weights.dtype)} dtype")
        if name == "aweights" and not weights.dtype.is_floating_point:
            raise RuntimeError(f"cov(): expected aweights to have floating point dtype but got aweights with "
                               f"{D.c10_name(weights.dtype)} dtype")
        if n and builtins.bool((weights < 0).any()):
            raise RuntimeError(f"cov(): {name} cannot be negative")
        w = weights if w is None else w * weights
    w_sum = w.sum() if w is not None else n
    avg = (x * w if w is not None else x).sum(1) / w_sum
    if w is not None and aweights is not None and correction != 0:
        norm_factor = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm_factor = w_sum - correction
    if builtins.bool(_as_tensor(norm_factor) <= 0):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                      "observations.", UserWarning, stacklevel=2)
        norm_factor = norm_factor * 0
    x = x - avg.unsqueeze(1)
    return ((x @ (x * w if w is not None else x).t().conj()) / norm_factor).squeeze()


def corrcoef(input):
    """Pearson correlation coefficients of the variables in the rows of input."""
    c = cov(input)
    if c.dim() == 0:
        return c / c
    d = c.diagonal()
    stddev = _C.sqrt(d.real if d.dtype.is_complex else d)
    c = c / stddev.reshape(-1, 1)
    c = c / stddev.reshape(1, -1)
    if c.dtype.is_complex:  # clipped per part, as torch's
        return _C._complex(c.real.clamp(-1, 1), c.imag.clamp(-1, 1))
    return c.clamp(-1, 1)


def _histogram_edges(name, x, bins, lo_hi, dtype, dim=0):
    """The bin edges of values x (1-D): the given increasing edges (a 1-D tensor), or `bins` equal bins over lo_hi
    (the data's range by default, [0, 1] with no data; a single point p gets [p - 0.5, p + 0.5])."""
    if isinstance(bins, Tensor):
        if bins.dim() != 1:
            raise RuntimeError(f"torch.{name}: bins tensor should have one dimension, but got {bins.dim()} dimensions")
        if bins.numel() < 1:
            raise RuntimeError(f"torch.{name}: bins tensor should have at least 1 element, but got 0 elements")
        return bins.to(dtype)
    if bins <= 0:
        raise RuntimeError(f"torch.{name}(): bins must be > 0, but got {bins} for dimension {dim}")
    if lo_hi is not None:
        lo, hi = builtins.float(lo_hi[0]), builtins.float(lo_hi[1])
    elif x.numel():
        lo, hi = x.min().item(), x.max().item()
    else:
        lo, hi = 0.0, 1.0
    if lo > hi:
        raise RuntimeError(f"torch.{name}(): min should not exceed max, but got min {lo} max {hi} for dimension {dim}")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    from ._creation import linspace
    return linspace(lo, hi, bins + 1, dtype=dtype)


def _bin_index(x, edges):
    """(bin of each value, whether it falls inside): bin i holds [edges[i], edges[i+1]), the last bin also its right
    edge; values outside the edges are dropped."""
    index = _C._searchsorted(edges, x.contiguous(), False, True, None) - 1
    index = _C.where(x == edges[-1], edges.numel() - 2, index)
    return index, (x >= edges[0]) & (x <= edges[-1])


def _check_histogram_input(name, input, weight, weight_shape):
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{D.c10_name(input.dtype)}'")
    if weight is not None and tuple(weight.shape) != tuple(weight_shape):
        raise RuntimeError(f"torch.{name}: if weight tensor is provided it should have the same shape as the input "
                           f"tensor excluding its innermost dimension")


def histogram(input, bins, *, range=None, weight=None, density=False, out=None):
    """Histogram of input's values: `bins` equal-width bins over `range` (the data's range by default), or the bins
    between the increasing edges of a 1-D tensor `bins`. Returns (hist, bin_edges)."""
    _check_histogram_input("histogram", input, weight, input.shape)
    x = input.reshape(-1)
    edges = _histogram_edges("histogram", x, bins, range, input.dtype)
    index, inside = _bin_index(x, edges)
    from ._creation import ones_like, zeros
    hist = zeros(edges.numel() - 1, dtype=input.dtype)
    values = weight.reshape(-1).to(input.dtype) if weight is not None else ones_like(x)
    if hist.numel():
        hist = hist.index_add(0, index[inside], values[inside])
    if density:
        hist = hist / (hist.sum() * (edges[1:] - edges[:-1]))
    return return_types.histogram(*write_out(out, (hist, edges), "histogram", warn_resize=False))


def histogramdd(input, bins, *, range=None, weight=None, density=False):
    """The D-dimensional histogram of the points in input's rows (its innermost dim holds the D coordinates): bins an
    int, one int per dim or one 1-D edge tensor per dim; range [min_0, max_0, min_1, max_1, ...]. Returns
    (hist, bin_edges)."""
    if input.dim() < 2:
        raise RuntimeError(f"torch.histogramdd: input tensor should have at least 2 dimensions, but got {input.dim()}")
    d = input.shape[-1]
    _check_histogram_input("histogramdd", input, weight, input.shape[:-1])
    points = input.reshape(-1, d)
    per_dim = list(bins) if isinstance(bins, (tuple, builtins.list)) else [bins] * d
    if len(per_dim) != d:
        raise RuntimeError(f"torch.histogramdd: expected {d} sequences of bin edges for each of the {d} dimensions of "
                           f"the input tensor, but got {len(per_dim)}")
    if range is not None and len(range) != 2 * d:
        raise RuntimeError(f"torch.histogramdd: for a {d}-dimensional histogram range should have {2 * d} elements, "
                           f"but got {len(range)}")
    edges = [_histogram_edges("histogramdd", points[:, k], per_dim[k],
                              None if range is None else range[2 * k:2 * k + 2], input.dtype, k)
             for k in builtins.range(d)]
    shape = [e.numel() - 1 for e in edges]
    flat = None
    inside = None
    for k in builtins.range(d):
        index, ok = _bin_index(points[:, k], edges[k])
        flat = index if flat is None else flat * shape[k] + index
        inside = ok if inside is None else inside & ok
    from ._creation import ones_like, zeros
    size = 1
    for s in shape:
        size *= s
    hist = zeros(size, dtype=input.dtype)
    values = weight.reshape(-1).to(input.dtype) if weight is not None else ones_like(points[:, 0])
    if size:
        hist = hist.index_add(0, flat[inside], values[inside])
    hist = hist.reshape(shape)
    if density:
        volume = None
        for k, e in enumerate(edges):
            width = (e[1:] - e[:-1]).reshape([-1 if j == k else 1 for j in builtins.range(d)])
            volume = width if volume is None else volume * width
        hist = hist / (hist.sum() * volume)
    return return_types.histogramdd(hist, tuple(edges))


def _trapezoid_dx(y, x, dx, dim, name):
    """The spacing of (y, x, dx) along dim: a broadcastable tensor of differences or a number."""
    if x is not None and dx is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments: x and dx cannot both be given")
    if x is None:
        return 1 if dx is None else dx
    if x.dim() == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        shape = [1] * y.dim()
        shape[dim] = -1
        return x.diff().reshape(shape)
    return x.diff(dim=dim)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """Integrates y along dim by the trapezoid rule, at points x or with constant spacing dx (default 1)."""
    d = _trapezoid_dx(y, x, dx, dim, "trapezoid")
    if y.shape[dim] == 0:
        return y.sum(dim) * 0
    if isinstance(d, Tensor):
        n = y.shape[dim]
        return (d * (y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1))).sum(dim) / 2.0
    return (y.sum(dim) - (y.select(dim, 0) + y.select(dim, -1)) * 0.5) * d


def trapz(y, x=None, *, dx=None, dim=-1):
    """trapezoid (the older name): trapz(y, x, dim=-1) or trapz(y, dx=1, dim=-1)."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoid-rule integral of y along dim (one element fewer than y)."""
    d = _trapezoid_dx(y, x, dx, dim, "cumulative_trapezoid")
    n = y.shape[dim]
    if n == 0:
        return y * 1.0
    pair = y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)
    if isinstance(d, Tensor):
        return cumsum(d * pair, dim) / 2.0
    return cumsum(d / 2.0 * pair, dim)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """Estimates the derivative of input along each dim (or the given ones) by central differences in the interior
    and one-sided differences of order edge_order (1 or 2) at the edges. spacing: a number, one number per dim, or
    one tensor of coordinates per dim. Returns a tuple of tensors, one per dim."""
    spacing = 1 if spacing is None else spacing
    dims = builtins.list(builtins.range(input.dim())) if dim is None else _dims(dim)
    dims = [d + input.dim() if d < 0 else d for d in dims]
    for i, d in enumerate(dims):
        if d in dims[:i]:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    if isinstance(spacing, (tuple, builtins.list)):
        if len(spacing) != len(dims):
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                               f"arguments to have the same length, but got a spacing argument of length "
                               f"{len(spacing)} and a dim argument of length {len(dims)}.")
        spacing = builtins.list(spacing)
    else:
        spacing = [spacing] * len(dims)
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    return tuple(_gradient_along(input, d, h, edge_order) for d, h in zip(dims, spacing))


def _gradient_along(f, d, h, edge_order):
    def part(start, stop=None):
        n = f.shape[d]
        start = start + n if start < 0 else start
        stop = n if stop is None else stop + n if stop < 0 else stop
        return f.narrow(d, start, stop - start)

    if isinstance(h, Tensor):  # coordinates: non-uniform differences
        dx = h.diff()
        shape = [1] * f.dim()
        shape[d] = -1
        dx1, dx2 = dx[:-1], dx[1:]
        a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
        b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
        c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
        center = a * part(0, -2) + b * part(1, -1) + c * part(2)
        if edge_order == 1:
            first = (part(1, 2) - part(0, 1)) / dx[0]
            last = (part(-1) - part(-2, -1)) / dx[-1]
        else:
            a = -(2.0 * dx[0] + dx[1]) / (dx[0] * (dx[0] + dx[1]))
            b = (dx[0] + dx[1]) / (dx[0] * dx[1])
            c = -dx[0] / (dx[1] * (dx[0] + dx[1]))
            first = a * part(0, 1) + b * part(1, 2) + c * part(2, 3)
            a = dx[-1] / (dx[-2] * (dx[-1] + dx[-2]))
            b = -(dx[-1] + dx[-2]) / (dx[-1] * dx[-2])
            c = (2 * dx[-1] + dx[-2]) / (dx[-1] * (dx[-1] + dx[-2]))
            last = a * part(-3, -2) + b * part(-2, -1) + c * part(-1)
    else:
        center = (part(2) - part(0, -2)) / h / 2
        if edge_order == 1:
            first = (part(1, 2) - part(0, 1)) / h
            last = (part(-1) - part(-2, -1)) / h
        else:
            first = (part(0, 1) * -1.5 + part(1, 2) * 2 - part(2, 3) * 0.5) / h
            last = (part(-3, -2) * 0.5 + part(-2, -1) * -2 + part(-1) * 1.5) / h
    return _C.cat([first, center, last], d)


__all__ = ["return_types", "sum", "nansum", "mean", "nanmean", "prod", "amax", "amin", "all", "any", "logsumexp",
           "count_nonzero", "max", "min", "aminmax", "argmax", "argmin", "var", "var_mean", "std", "std_mean", "norm",
           "cumsum", "cumprod", "logcumsumexp", "cummax", "cummin", "sort", "argsort", "msort", "topk", "kthvalue",
           "median", "nanmedian", "mode", "quantile", "nanquantile", "unique", "unique_consecutive", "bincount",
           "histc", "searchsorted", "bucketize", "dist", "renorm", "cov", "corrcoef", "histogram", "histogramdd",
           "trapezoid", "trapz", "cumulative_trapezoid", "gradient"]

# ---- Tensor methods --------------------------------------------------------------------------


def _method(fn):
    def m(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    m.__name__ = m.__qualname__ = fn.__name__
    m.__doc__ = fn.__doc__
    return m


for _fn in (sum, nansum, mean, nanmean, prod, amax, amin, all, any, logsumexp, count_nonzero, max, min, aminmax,
            argmax, argmin, var, std, norm, cumsum, cumprod, logcumsumexp, cummax, cummin, sort, argsort, msort,
            topk, kthvalue, median, nanmedian, mode, quantile, nanquantile, unique, unique_consecutive, bincount,
            histc, dist, renorm, cov, corrcoef, histogram):
    setattr(Tensor, _fn.__name__, _method(_fn))
Tensor.renorm_ = inplace_method(renorm, "renorm_")
Tensor.cumsum_ = inplace_method(cumsum, "cumsum_")
Tensor.cumprod_ = inplace_method(cumprod, "cumprod_")
del _fn
