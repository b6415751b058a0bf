"""The parity harness, shared by every parity suite: the same body runs with torch and with flowlike
(`body(lib, *inputs)`), and what comes out is compared: values, dtypes, shapes, gradients and the classes of
raised exceptions. Inputs are given once (numpy arrays, torch tensors, numbers, containers of them) and built
for each library."""
import importlib.util
import pathlib
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402

LIBS = (torch, fl)


def dtype_name(d):
    return str(d).split(".")[-1]


def is_tensor(x):
    return isinstance(x, (torch.Tensor, fl.Tensor))


def resolve(lib, path):
    """The function at a torch path ("sum", "linalg.inv", "Tensor.add_") in lib, or None when lib lacks it."""
    obj = lib
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def to_flowlike(t):
    """A flowlike copy of a torch tensor (same dtype, values, shape; no history)."""
    if dtype_name(t.dtype) == "bfloat16":
        return fl.from_numpy(t.detach().float().numpy().copy()).to(fl.bfloat16)
    return fl.from_numpy(t.detach().resolve_conj().numpy().copy())


def to_numpy(x):
    """A numpy array of a tensor of either library (bfloat16 widened to float32), a number or an array."""
    if not is_tensor(x):
        return np.asarray(x)
    x = x.detach().resolve_conj().resolve_neg()  # numpy() refuses a tensor with the conjugate or negative bit
    if dtype_name(x.dtype) == "bfloat16":
        x = x.float()
    return x.numpy()


def convert(lib, value, dtype=None, requires_grad=False):
    """`value` built for `lib`: numpy arrays and torch tensors become lib tensors (cast to `dtype`, a name, when
    given; leaves requiring grad when asked and floating), containers are converted item by item, anything
    else passes unchanged."""
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(convert(lib, v, dtype, requires_grad) for v in value)
    if isinstance(value, dict):
        return {k: convert(lib, v, dtype, requires_grad) for k, v in value.items()}
    if isinstance(value, (np.ndarray, np.generic)):
        t = lib.from_numpy(np.array(value))  # a C-ordered copy; numpy scalars become 0-d tensors
    elif isinstance(value, torch.Tensor):
        t = value.detach().clone() if lib is torch else to_flowlike(value)
    else:
        return value
    if dtype is not None:
        t = t.to(getattr(lib, dtype))
    if requires_grad and (t.dtype.is_floating_point or t.dtype.is_complex):
        t.requires_grad_(True)
    return t


def leaf(lib, array, dtype="float64"):
    """A leaf tensor of `lib` that requires grad, from a numpy array."""
    return convert(lib, np.asarray(array), dtype, requires_grad=True)


def run_both(body, *args, **kwargs):
    """body(torch, ...) and body(flowlike, ...): the two results, torch's first."""
    return body(torch, *args, **kwargs), body(fl, *args, **kwargs)


def outcome(fn):
    """The exception fn() raises, or None."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - comparing exceptions is the point
        return e
    return None


def outcome_type(fn):
    """The class of the exception fn() raises, or None."""
    e = outcome(fn)
    return None if e is None else type(e)


def error_name(e):
    """The class name an exception is compared by (torch's linalg error class is _LinAlgError)."""
    return type(e).__name__.lstrip("_")


def assert_same_error(want, got, match_message=False):
    """`got` (flowlike's exception or None) is of the same class as `want` (torch's), and with match_message
    has the same first line."""
    assert got is not None, f"torch raised {error_name(want)}: {want}; flowlike raised nothing"
    assert error_name(got) == error_name(want), f"torch: {error_name(want)}: {want}; flowlike: {error_name(got)}: {got}"
    if match_message:
        assert str(got).split("\n")[0] == str(want).split("\n")[0]


def assert_same(got, want, rtol=1.3e-6, atol=1e-5, exact=False, scale_atol=False, check_dtype=True, strides=False):
    """flowlike's `got` equals torch's `want`: tensors by dtype name, shape (with `strides`, strides and storage
    offset too) and values (nan where torch has nan; `exact`: equal values; `scale_atol`: atol relative to the
    largest magnitude of `want`), containers item by item (user container classes by name too), other values by
    ==, floats within the tolerances."""
    if want is None or isinstance(want, (str, bool, int, type)):
        assert got == want, (got, want)
        return
    if isinstance(want, dict):
        assert type(got).__name__ == type(want).__name__ and list(got) == list(want), (got.keys(), want.keys())
        for k in want:
            assert_same(got[k], want[k], rtol, atol, exact, scale_atol, check_dtype, strides)
        return
    if isinstance(want, (list, tuple)):
        if type(want).__module__.split(".")[0] != "torch":  # torch.return_types are compared by contents only
            assert type(got).__name__ == type(want).__name__, (type(got), type(want))
        assert len(got) == len(want), (len(got), len(want))
        for g, w in zip(got, want):
            assert_same(g, w, rtol, atol, exact, scale_atol, check_dtype, strides)
        return
    if is_tensor(want):
        assert is_tensor(got), f"flowlike returned {got!r}, torch a tensor"
        if check_dtype:
            assert dtype_name(got.dtype) == dtype_name(want.dtype), (got.dtype, want.dtype)
        assert tuple(got.shape) == tuple(want.shape), (tuple(got.shape), tuple(want.shape))
        if strides:
            assert (got.stride(), got.storage_offset()) == (want.stride(), want.storage_offset()), \
                ((got.stride(), got.storage_offset()), (want.stride(), want.storage_offset()))
    g, w = to_numpy(got), to_numpy(want)
    if exact:
        np.testing.assert_array_equal(g, w)
        return
    wide = np.complex128 if np.iscomplexobj(w) or np.iscomplexobj(g) else np.float64
    w = w.astype(wide)
    if scale_atol and w.size:
        atol = atol * max(1.0, float(np.nanmax(np.abs(w), initial=0.0)))
    np.testing.assert_allclose(g.astype(wide), w, rtol=rtol, atol=atol, equal_nan=True)


def float_outputs(r):
    """The outputs of a result (a tensor or a sequence) that carry gradients (floating or complex)."""
    outs = r if isinstance(r, (list, tuple)) else [r]
    return [o for o in outs if is_tensor(o) and (o.dtype.is_floating_point or o.dtype.is_complex) and o.requires_grad]


def _weights(rng, o):
    """Random weights for an output: complex for a complex output, so both of its parts get a gradient."""
    w = rng.standard_normal(tuple(o.shape))
    return np.asarray(w + 1j * rng.standard_normal(tuple(o.shape))) if o.dtype.is_complex else w


def assert_grads_same(got, want, got_inputs, want_inputs, rtol=1.3e-6, atol=1e-5, scale_atol=False, seed=9):
    """Backpropagates the same random weighting of every floating output of flowlike's `got` and torch's `want`
    (the real part of the weighted sum, for complex outputs); the gradients of the inputs must agree (None where
    torch's is None)."""
    rng = np.random.default_rng(seed)
    weights = [_weights(rng, o) for o in float_outputs(want)]
    if not weights:
        return
    for lib, r in ((torch, want), (fl, got)):
        outs = float_outputs(r)
        assert len(outs) == len(weights), f"{lib.__name__} has {len(outs)} differentiable outputs, torch {len(weights)}"
        terms = [(o * lib.from_numpy(w.copy()).to(o.dtype)).sum() for o, w in zip(outs, weights)]
        sum(t.real if t.dtype.is_complex else t for t in terms).backward()
    for f_in, t_in in zip(got_inputs, want_inputs):
        assert (f_in.grad is None) == (t_in.grad is None), (f_in.grad, t_in.grad)
        if t_in.grad is not None:
            assert_same(f_in.grad, t_in.grad, rtol, atol, scale_atol=scale_atol)


def _inputs(lib, inputs, kwargs, dtype, grad):
    """The inputs for lib; `grad` is True (every floating tensor requires grad), False, or the positions and
    keyword names that do."""
    def wants(key):
        return grad is True or (grad not in (False, None) and key in grad)
    args = [convert(lib, v, dtype, wants(i)) for i, v in enumerate(inputs)]
    kw = {k: convert(lib, v, dtype, wants(k)) for k, v in kwargs.items()}
    return args, kw


def _leaves(args, kw):
    found = []
    for v in list(args) + list(kw.values()):
        found += _leaves(v, {}) if isinstance(v, (list, tuple)) else [v] if is_tensor(v) and v.requires_grad else []
    return found


def check_both(body, *inputs, kwargs=None, dtype=None, grad=False, rtol=1.3e-6, atol=1e-5, grad_rtol=None,
               grad_atol=None, exact=False, scale_atol=False, strides=False, quiet=False, seed=9):
    """The dual run. body(lib, *inputs, **kwargs) runs with each library on the same inputs (built by `convert`,
    cast to `dtype`). When torch raises, flowlike must raise the same class (both exceptions are returned).
    Otherwise the outputs must agree (assert_same, with `exact`, `scale_atol` and `strides`), and with `grad` (see _inputs) the same random weights are
    backpropagated through every floating output and the gradients of all inputs must agree (within grad_rtol,
    grad_atol; by default the value tolerances). `quiet` silences warnings in the body. Returns (torch's result,
    flowlike's result)."""
    kwargs = kwargs or {}
    results, leaves = [], []
    for lib in LIBS:
        args, kw = _inputs(lib, inputs, kwargs, dtype, grad)
        with warnings.catch_warnings():
            if quiet:
                warnings.simplefilter("ignore")
            try:
                results.append(body(lib, *args, **kw))
            except Exception as e:  # noqa: BLE001 - compared below
                results.append(e)
        leaves.append(_leaves(args, kw))
    want, got = results
    if isinstance(want, Exception):
        assert_same_error(want, got if isinstance(got, Exception) else None)
        return want, got
    if isinstance(got, Exception):
        raise got
    assert_same(got, want, rtol, atol, exact, scale_atol, strides=strides)
    if grad:
        assert_grads_same(got, want, leaves[1], leaves[0], grad_rtol or rtol, grad_atol or atol, scale_atol, seed)
    return want, got


def assert_raises_same(body, *inputs, match_message=False, **convert_options):
    """body(lib, *inputs) raises with both libraries, exceptions of the same class (and with match_message the same
    first line). Returns (torch's exception, flowlike's)."""
    errors = []
    for lib in LIBS:
        args = [convert(lib, v, **convert_options) for v in inputs]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            errors.append(outcome(lambda: body(lib, *args)))
    want, got = errors
    assert want is not None, "torch raised nothing"
    assert_same_error(want, got, match_message)
    return want, got


def copy_state(t_module, f_module):
    """Loads a torch module's whole state (parameters and buffers) into the flowlike module."""
    f_module.load_state_dict({k: to_flowlike(v) for k, v in t_module.state_dict().items()})


EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def load_example(name):
    """The module of examples/<name>.py (the examples are scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
