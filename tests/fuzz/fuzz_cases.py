"""Fuzz cases as plain data: a case names a target (an op-database entry, a Tensor method or a function of the
flowlike namespace) and describes its arguments (tensors by shape, dtype, layout, values seed and requires_grad;
ints, floats, dims, sizes, dtypes, None, nested tuples/lists, aliases of earlier tensors), what to do with the
result (backward, double backward) and whether an argument is written through `out=`.

A case is a dict of builtins, so it pickles to the worker process, prints as a reproducer and renders as a
self-contained flowlike program (`to_code`). `run_case` builds the arguments and runs the case in this process:
only the worker calls it (fuzz_worker.py), where a crash kills nothing but the worker.

No torch here: tests/ run without PyTorch.
"""
import numpy as np

ALLOWED = ("RuntimeError", "IndexError", "TypeError", "ValueError", "NotImplementedError")

FLOAT_DTYPES = ("float32", "float64", "float16", "bfloat16")
COMPLEX_DTYPES = ("complex64", "complex128")
# storage types: most ops refuse them (NotImplementedError), which is what the fuzzer checks they do cleanly
FLOAT8_DTYPES = ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu")
DTYPES = FLOAT_DTYPES + ("int64", "int32", "int16", "int8", "uint8", "bool") + COMPLEX_DTYPES + FLOAT8_DTYPES


def _values(shape_numel, dtype, seed, special):
    """Deterministic values: floats with nan/inf/-0/huge mixed in when `special`; ints in a small range with the
    extremes mixed in when `special` (index ops then see out-of-range indices)."""
    rng = np.random.default_rng(seed)
    n = shape_numel
    if dtype == "bool":
        return rng.random(n) > 0.5
    if dtype in COMPLEX_DTYPES:  # real and imaginary parts drawn as floats
        return _values(n, "float64", seed, special) + 1j * _values(n, "float64", seed + 1, special)
    if dtype in FLOAT_DTYPES or dtype in FLOAT8_DTYPES:
        v = rng.standard_normal(n) * 2
        if special and n:
            pool = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e30, 1e-40, 65504.0, 3.0e38])
            pick = rng.random(n) < 0.3
            v[pick] = rng.choice(pool, pick.sum())
        return v
    info = np.iinfo(np.dtype(dtype))
    v = rng.integers(max(info.min, -3), 6, n)
    if special and n:
        pool = np.array([info.min, info.max, -1, 0, 1 << 20 if info.max > 1 << 20 else info.max], dtype=np.int64)
        pick = rng.random(n) < 0.3
        v[pick] = rng.choice(pool, pick.sum())
    return v


def numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


class Built:
    """The flowlike objects of one case: its args/kwargs and the leaves that require grad."""

    def __init__(self):
        self.tensors = []
        self.leaves = []


def _make_tensor(fl, spec, built):
    _, shape, dtype, layout, grad, seed, special = spec
    shape = tuple(shape)
    grad = grad and (dtype in FLOAT_DTYPES or dtype in COMPLEX_DTYPES)
    if layout == "huge":
        # a stride-0 view whose element count is past int32 (or an empty one with a huge dim): no memory behind it
        base_shape = tuple(1 if s else 0 for s in shape)
        base = _leaf(fl, base_shape, dtype, seed, special, grad, built)
        return base.expand(*shape)
    n = numel(shape)
    if layout == "contiguous" or len(shape) == 0:
        return _leaf(fl, shape, dtype, seed, special, grad, built)
    if layout == "transposed":
        base = _leaf(fl, tuple(reversed(shape)), dtype, seed, special, grad, built)
        return base.permute(*reversed(range(len(shape))))
    if layout == "sliced":
        # every other element of the last dim
        base = _leaf(fl, shape[:-1] + (shape[-1] * 2,), dtype, seed, special, grad, built)
        return base[..., ::2]
    if layout == "offset":
        base = _leaf(fl, (n + 3,), dtype, seed, special, grad, built)
        strides, acc = [], 1
        for s in reversed(shape):
            strides.append(acc)
            acc *= max(s, 1)
        return base.as_strided(shape, tuple(reversed(strides)), 3)
    if layout == "expanded":
        base_shape = tuple(1 if (i % 2 == 0) else s for i, s in enumerate(shape))
        base = _leaf(fl, base_shape, dtype, seed, special, grad, built)
        return base.expand(*shape)
    if layout == "conjugate":  # a view with the conjugate bit (a plain view for real dtypes)
        return _leaf(fl, shape, dtype, seed, special, grad, built).conj()
    if layout == "overlapping":
        # stride 1 in every dim: neighbouring rows share elements
        need = sum(max(s - 1, 0) for s in shape) + 1 if n else 0
        base = _leaf(fl, (need,), dtype, seed, special, grad, built)
        return base.as_strided(shape, (1,) * len(shape), 0)
    raise ValueError(layout)


def _leaf(fl, shape, dtype, seed, special, grad, built):
    vals = _values(numel(shape), dtype, seed, special)
    if dtype == "bool":
        t = fl.from_numpy(np.ascontiguousarray(vals).reshape(shape))
    elif dtype in FLOAT_DTYPES or dtype in FLOAT8_DTYPES:
        t = fl.from_numpy(vals.astype(np.float64).reshape(shape)).to(getattr(fl, dtype))
    elif dtype in COMPLEX_DTYPES:
        t = fl.from_numpy(vals.astype(np.complex128).reshape(shape)).to(getattr(fl, dtype))
    else:
        t = fl.from_numpy(vals.astype(np.int64).reshape(shape)).to(getattr(fl, dtype))
    if grad:
        t.requires_grad_(True)
        built.leaves.append(t)
    return t


def build(fl, spec, built):
    kind = spec[0]
    if kind == "tensor":
        t = _make_tensor(fl, spec, built)
        built.tensors.append(t)
        return t
    if kind == "alias":
        return built.tensors[spec[1] % len(built.tensors)] if built.tensors else None
    if kind == "view_of":  # a view of an earlier tensor (partial overlap between arguments)
        if not built.tensors:
            return None
        t = built.tensors[spec[1] % len(built.tensors)]
        return t.reshape(-1)[1:] if t.numel() > 1 else t
    if kind == "dtype":
        return getattr(fl, spec[1])
    if kind == "tuple":
        return tuple(build(fl, s, built) for s in spec[1])
    if kind == "list":
        return [build(fl, s, built) for s in spec[1]]
    if kind == "lit":
        return spec[1]
    if kind == "slice":
        return slice(*spec[1])
    if kind == "ellipsis":
        return Ellipsis
    raise ValueError(kind)


def resolve(fl, target):
    """The callable of a target: 'Tensor.<m>' (called with self first), 'fl.<path>', or 'opdb:<id>'."""
    if target.startswith("opdb:"):
        from fuzz_targets import opdb_entry
        op = opdb_entry(target[5:])
        return lambda *a, **k: op.call(fl, *a, **k)
    head, _, rest = target.partition(".")
    obj = fl.Tensor if head == "Tensor" else fl
    for part in rest.split("."):
        obj = getattr(obj, part)
    return obj


def run_case(fl, case):
    """Runs one case; returns (status, detail): 'ok', or 'raised' with the exception type and message."""
    built = Built()
    try:
        args = [build(fl, s, built) for s in case["args"]]
        kwargs = {k: build(fl, s, built) for k, s in case.get("kwargs", {}).items()}
    except Exception as e:  # noqa: BLE001 - a case whose inputs cannot be built is vacuous (e.g. a huge base)
        return "setup", f"{type(e).__name__}: {e}"
    fn = resolve(fl, case["target"])
    try:
        out = fn(*args, **kwargs)
        _touch(fl, out)
        if case.get("backward") and built.leaves:
            _backward(fl, out, built.leaves, case["backward"])
    except Exception as e:  # noqa: BLE001 - the type is what the caller judges
        # the class and its bases: torch's own subclasses (LinAlgError is a RuntimeError) count as their base
        return "raised", (type(e).__name__, str(e)[:300], [c.__name__ for c in type(e).__mro__])
    return "ok", None


def _outputs(out):
    if isinstance(out, (tuple, list)):
        return [o for x in out for o in _outputs(x)]
    return [out]


def _touch(fl, out):
    """Reads the results (as a user printing them would): repr of small results, sum of all others."""
    for o in _outputs(out)[:8]:
        if isinstance(o, fl.Tensor):
            if o.numel() <= 64:
                repr(o)
            elif o.numel() < (1 << 24) and o.dtype != fl.bool:
                o.detach().float().sum().item()


def _backward(fl, out, leaves, mode):
    outs = [o for o in _outputs(out) if isinstance(o, fl.Tensor) and o.requires_grad and o.dtype.is_floating_point
            and o.numel() < (1 << 24)]
    if not outs:
        return
    loss = sum((o.float() * (0.5 + i)).sum() for i, o in enumerate(outs))
    if mode == "backward":
        loss.backward()
        return
    grads = fl.autograd.grad(loss, leaves, create_graph=True, allow_unused=True)
    second = [g.float().pow(2).sum() for g in grads if g is not None and g.requires_grad]
    if second:
        sum(second).backward()


# ---- reproducers -----------------------------------------------------------------------------------------------

def _code_arg(spec, lines, names):
    kind = spec[0]
    if kind == "tensor":
        name = f"t{len(names)}"
        names.append(name)
        lines.append(f"{name} = make_tensor(fl, {spec!r}, built)")
        return name
    if kind == "alias":
        return names[spec[1] % len(names)] if names else "None"
    if kind == "view_of":
        if not names:
            return "None"
        n = names[spec[1] % len(names)]
        return f"({n}.reshape(-1)[1:] if {n}.numel() > 1 else {n})"
    if kind == "dtype":
        return f"fl.{spec[1]}"
    if kind == "tuple":
        items = [_code_arg(s, lines, names) for s in spec[1]]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if kind == "list":
        return "[" + ", ".join(_code_arg(s, lines, names) for s in spec[1]) + "]"
    if kind == "lit":
        return repr(spec[1])
    if kind == "slice":
        return f"slice{tuple(spec[1])!r}"
    if kind == "ellipsis":
        return "..."
    return repr(spec)


def to_code(case):
    """A flowlike program that replays the case (run it from tests/fuzz, where fuzz_cases is importable)."""
    lines = ["import flowlike as fl", "from fuzz_cases import Built, build, run_case",
             "built = Built()", "make_tensor = lambda fl, spec, built: build(fl, spec, built)"]
    names = []
    args = [_code_arg(s, lines, names) for s in case["args"]]
    kwargs = [f"{k}={_code_arg(s, lines, names)}" for k, s in case.get("kwargs", {}).items()]
    target = case["target"]
    if target.startswith("opdb:"):
        call = f"opdb_entry({target[5:]!r}).call(fl, {', '.join(args + kwargs)})"
        lines.insert(1, "from fuzz_targets import opdb_entry")
    elif target.startswith("Tensor."):
        call = f"fl.{target}({', '.join(args + kwargs)})"
    else:
        call = f"{target}({', '.join(args + kwargs)})".replace("fl.", "fl.", 1)
    lines.append(f"out = {call}")
    if case.get("backward"):
        lines.append("from fuzz_cases import _backward")
        lines.append(f"_backward(fl, out, built.leaves, {case['backward']!r})")
    lines.append(f"# or, in one call: run_case(fl, {case!r})")
    return "\n".join(lines)
