"""torch.testing: assert_close with PyTorch's default tolerances, rules and failure messages."""
import collections.abc as _abc
import math as _math
import numbers as _numbers
import warnings as _warnings

import numpy as _np

from . import _C
from . import _dtype as _D

__all__ = ["assert_close", "make_tensor"]

# (rtol, atol) per dtype, as torch.testing uses; dtypes not listed (integers, bool) compare exactly.
_DEFAULT_TOLERANCES = {_D.float16: (1e-3, 1e-5), _D.bfloat16: (1.6e-2, 1e-5), _D.float32: (1.3e-6, 1e-5),
                       _D.float64: (1e-7, 1e-7)}
_NUMBER_DTYPES = {bool: _D.bool, int: _D.int64, float: _D.float64}


class _Mismatch(Exception):
    """A failed comparison: the exception type to raise, its message, and where in the nested inputs it happened."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind, self.message, self.path = kind, message, []


def _tolerances(dtypes, rtol, atol):
    if rtol is not None:
        return rtol, atol
    pairs = [_DEFAULT_TOLERANCES.get(d, (0.0, 0.0)) for d in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _diff_line(kind, diff, idx, tol, equality):
    line = f"{kind.title()} difference: {diff}" if idx is None else f"Greatest {kind} difference: {diff} at index {idx}"
    return line if equality else line + f" (up to {tol} allowed)"


def _mismatch_msg(identifier, extra, abs_diff, abs_idx, rel_diff, rel_idx, rtol, atol):
    equality = rtol == 0 and atol == 0
    return "\n".join([f"{identifier} are not {'equal' if equality else 'close'}!", "", extra,
                      _diff_line("absolute", abs_diff, abs_idx, atol, equality),
                      _diff_line("relative", rel_diff, rel_idx, rtol, equality)])


def _scalar_msg(actual, expected, rtol, atol):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg("Scalars", f"Expected {expected} but got {actual}.", abs_diff, None, rel_diff, None, rtol,
                         atol)


def _isclose(a, b, rtol, atol, equal_nan):
    """numpy arrays a, b of one dtype: torch.isclose's rule (equal values, incl. infinities, always match)."""
    with _np.errstate(invalid="ignore", over="ignore"):
        close = a == b
        if a.dtype.kind in "fc" and equal_nan:
            close |= _np.isnan(a) & _np.isnan(b)
        if (rtol or atol) and a.dtype.kind != "b":
            if a.dtype.kind not in "fc":  # integers under explicit tolerances: compare in float64
                a, b = a.astype(_np.float64), b.astype(_np.float64)
            diff = _np.abs(a - b)
            close |= _np.isfinite(diff) & (diff <= atol + rtol * _np.abs(b))
    return close


def _tensor_msg(a, b, matches, rtol, atol):
    n = matches.size
    mismatches = n - int(matches.sum())
    extra = f"Mismatched elements: {mismatches} / {n} ({mismatches / n:.1%})"
    a, b, matches = a.reshape(-1), b.reshape(-1), matches.reshape(-1)
    if a.dtype.kind not in "fc":
        a, b = a.astype(_np.int64), b.astype(_np.int64)  # exact differences for integers and bools
    with _np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        abs_diff = _np.abs(a - b)
        abs_diff[matches] = 0
        rel_diff = abs_diff / _np.abs(b) if a.dtype.kind in "fc" else (
            abs_diff.astype(_np.float32) / _np.abs(b).astype(_np.float32))
        rel_diff[matches] = 0
    abs_idx, rel_idx = int(_np.argmax(abs_diff)), int(_np.argmax(rel_diff))
    return extra, abs_diff[abs_idx].item(), abs_idx, rel_diff[rel_idx].item(), rel_idx


def _to_numpy(t):
    """A numpy view of a tensor; bfloat16 (which numpy lacks) is widened to float32."""
    if isinstance(t, _np.ndarray):
        return t
    return (t.float() if t.dtype == _D.bfloat16 else t).numpy()


def _compare_tensors(actual, expected, rtol, atol, equal_nan, check_dtype, check_stride):
    is_flowlike = isinstance(actual, _C.Tensor)
    for attr in ("shape", "dtype") if check_dtype else ("shape",):
        a, b = getattr(actual, attr), getattr(expected, attr)
        if a != b:
            raise _Mismatch(AssertionError, f"The values for attribute '{attr}' do not match: {a!r} != {b!r}.")
    if check_stride and is_flowlike and actual.numel() > 0 and actual.stride() != expected.stride():
        raise _Mismatch(AssertionError, f"The values for attribute 'stride()' do not match: "
                                        f"{actual.stride()!r} != {expected.stride()!r}.")
    if is_flowlike:
        dtypes = (actual.dtype, expected.dtype)
        if actual.dtype != expected.dtype:
            common = _D.promote_types(actual.dtype, expected.dtype)
            actual, expected = actual.to(common), expected.to(common)
        rtol, atol = _tolerances(dtypes, rtol, atol)
        a, b = _to_numpy(actual), _to_numpy(expected)
    else:
        a, b = actual, expected
        if a.dtype != b.dtype:
            common = _np.promote_types(a.dtype, b.dtype)
            a, b = a.astype(common), b.astype(common)
        if rtol is None:
            rtol, atol = {"e": (1e-3, 1e-5), "f": (1.3e-6, 1e-5), "d": (1e-7, 1e-7)}.get(a.dtype.char, (0.0, 0.0))
    matches = _isclose(a, b, rtol, atol, equal_nan)
    if matches.all():
        return
    if a.ndim == 0:
        raise _Mismatch(AssertionError, _scalar_msg(a.item(), b.item(), rtol, atol))
    extra, abs_diff, abs_i, rel_diff, rel_i = _tensor_msg(a, b, matches, rtol, atol)
    unravel = lambda i: tuple(int(k) for k in _np.unravel_index(i, a.shape))  # noqa: E731
    raise _Mismatch(AssertionError, _mismatch_msg("Tensor-likes", extra, abs_diff, unravel(abs_i), rel_diff,
                                                  unravel(rel_i), rtol, atol))


def _compare_numbers(actual, expected, rtol, atol, equal_nan, check_dtype):
    if check_dtype and type(actual) is not type(expected):
        raise _Mismatch(AssertionError, f"The (d)types do not match: {type(actual)} != {type(expected)}.")
    rtol, atol = _tolerances([_NUMBER_DTYPES.get(type(x), _D.float64) for x in (actual, expected)], rtol, atol)
    if actual == expected or (equal_nan and actual != actual and expected != expected):
        return
    diff = abs(actual - expected)
    if (rtol or atol) and diff == diff and diff != float("inf") and diff <= atol + rtol * abs(expected):
        return
    raise _Mismatch(AssertionError, _scalar_msg(actual, expected, rtol, atol))


def _is_tensor_like(x):
    return isinstance(x, (_C.Tensor, _np.ndarray))


def _is_number(x):
    return isinstance(x, _numbers.Number) and not isinstance(x, (bool, _np.bool_))


def _compare(actual, expected, options):
    def is_seq(x):
        return isinstance(x, _abc.Sequence) and not isinstance(x, str)

    if is_seq(actual) and is_seq(expected):
        if len(actual) != len(expected):
            raise _Mismatch(AssertionError,
                            f"The length of the sequences mismatch: {len(actual)} != {len(expected)}")
        items = enumerate(zip(actual, expected))
    elif isinstance(actual, _abc.Mapping) and isinstance(expected, _abc.Mapping):
        a_keys, e_keys = set(actual.keys()), set(expected.keys())
        if a_keys != e_keys:
            missing = [k for k in expected if k not in a_keys]
            extra = [k for k in actual if k not in e_keys]
            raise _Mismatch(AssertionError, f"The keys of the mappings do not match:\n"
                                            f"Missing keys in the actual mapping: {sorted(missing, key=repr)}\n"
                                            f"Additional keys in the actual mapping: {sorted(extra, key=repr)}")
        items = ((k, (actual[k], expected[k])) for k in expected)
    else:
        _compare_leaves(actual, expected, options)
        return
    for key, (a, e) in items:
        try:
            _compare(a, e, options)
        except _Mismatch as failure:
            failure.path.insert(0, key)
            raise


def _compare_leaves(actual, expected, options):
    rtol, atol, equal_nan, check_dtype, check_stride, allow_subclasses = options
    if actual is None or expected is None:
        if actual is not expected:
            raise _Mismatch(AssertionError, f"None mismatch: {actual} is not {expected}")
    elif isinstance(actual, (bool, _np.bool_)) and isinstance(expected, (bool, _np.bool_)):
        if actual != expected:
            raise _Mismatch(AssertionError, f"Booleans mismatch: {actual} is not {expected}")
    elif _is_number(actual) and _is_number(expected):
        _compare_numbers(actual, expected, rtol, atol, equal_nan, check_dtype)
    elif _is_tensor_like(actual) and _is_tensor_like(expected) and (
            type(actual) is type(expected) if not allow_subclasses else
            isinstance(actual, type(expected)) or isinstance(expected, type(actual))):
        _compare_tensors(actual, expected, rtol, atol, equal_nan, check_dtype, check_stride)
    else:
        raise _Mismatch(TypeError, f"No comparison pair was able to handle inputs of type {type(actual)} and "
                                   f"{type(expected)}.")


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Raises AssertionError unless actual and expected are close, as torch.testing.assert_close.

    actual and expected may be tensors, numpy arrays, Python numbers, None, or sequences and mappings nesting
    them. Floating values match when |actual - expected| <= atol + rtol * |expected|, with per-dtype defaults
    (float16 1e-3/1e-5, bfloat16 1.6e-2/1e-5, float32 1.3e-6/1e-5, float64 1e-7/1e-7, exact otherwise).
    msg replaces the message, or, when callable, maps the generated message to the one raised.
    """
    if (rtol is None) ^ (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, "
                         f"but got no {'rtol' if rtol is None else 'atol'}.")
    try:
        _compare(actual, expected, (rtol, atol, equal_nan, check_dtype, check_stride, allow_subclasses))
    except _Mismatch as failure:
        message = failure.message
        if failure.kind is AssertionError:
            if callable(msg):
                message = msg(message)
            elif msg is not None:
                message = msg
            if failure.path:
                message += "\n\nThe failure occurred for item " + "".join(f"[{k!r}]" for k in failure.path)
        raise failure.kind(message) from None


def _low_high(dtype, low, high, lowest, highest, default_low, default_high):
    """make_tensor's bounds: defaults, validation and clamping to what dtype holds, as torch does."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and _math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and dtype.is_floating_point:
        _warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or complex types is "
                       "deprecated since 2.1 and will be removed in 2.3. Use `torch.full(...)` instead.",
                       FutureWarning, stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), "
                         f"but {dtype} only supports [{lowest}, {highest})")
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    if not dtype.is_floating_point:
        return _math.ceil(low), _math.ceil(high)
    return low, high


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False, memory_format=None):
    """A random tensor for tests, as torch.testing.make_tensor: values in [low, high) (defaults -9 and 9/10),
    optionally non-contiguous (every other element of a wider tensor) and without zeros."""
    from . import _random

    if len(shape) == 1 and isinstance(shape[0], _abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError(f"The parameters `noncontiguous` and `memory_format` are mutually exclusive, but got "
                         f"noncontiguous={noncontiguous} and memory_format={memory_format}")
    if requires_grad and not dtype.is_floating_point:
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral dtypes, but got "
                         f"dtype={dtype}")
    noncontiguous = noncontiguous and _math.prod(shape) > 1
    if noncontiguous:
        shape = (*shape[:-1], 2 * shape[-1])  # then every other element is taken, with distinct values
    if dtype == _D.bool:
        low, high = _low_high(dtype, low, high, 0, 2, 0, 2)
        result = _random.randint(low, high, shape, device=device, dtype=dtype)
    elif dtype.is_floating_point:
        info = _D.finfo(dtype)
        low, high = _low_high(dtype, low, high, info.min, info.max, -9, 9)
        # halved bounds keep high - low finite for the widest float64 range
        unit = _random.rand(*shape, device=device, dtype=_D.float64)
        result = ((unit * (high / 2 - low / 2) + low / 2) * 2).to(dtype)
    else:
        info = _D.iinfo(dtype)
        # randint cannot sample int64's maximum (its bound is exclusive and held in an int64)
        low, high = _low_high(dtype, low, high, info.min, info.max + (dtype != _D.int64), -9, 10)
        result = _random.randint(low, high, shape, device=device, dtype=dtype)
    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if not dtype.is_floating_point else _D.finfo(dtype).tiny
    if requires_grad:
        result.requires_grad_(True)
    return result
