"""What the fuzzer calls and how it draws arguments: the op database (parity_tests/opdb.py, which imports no torch),
every Tensor method, and the functions of flowlike, flowlike.nn.functional, flowlike.linalg and flowlike.special.
Arguments are drawn with Hypothesis from the parameter names (a `dim` gets dim forms, a `size` gets sizes with
overflowing entries, an `other` gets tensors), mixed with arguments of any kind."""
import importlib.util
import inspect
import os
import re
import sys

from hypothesis import strategies as st

from fuzz_cases import DTYPES, FLOAT_DTYPES

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_OPDB = None


def opdb():
    global _OPDB
    if _OPDB is None:
        parity = os.path.join(ROOT, "parity_tests")
        if parity not in sys.path:  # opdb imports the parity harness (parity_tests/helpers.py)
            sys.path.insert(0, parity)
        spec = importlib.util.spec_from_file_location("fuzz_opdb", os.path.join(parity, "opdb.py"))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        entries = {}
        for op in mod.DATABASE:
            key = op.id
            while key in entries:
                key += "+"
            entries[key] = op
        _OPDB = (mod, entries)
    return _OPDB


def opdb_entry(key):
    return opdb()[1][key]


# ---- targets ---------------------------------------------------------------------------------------------------

# global state, files, processes, callables, and what runs forever by design (tolist of 2**31 elements)
EXCLUDED = {
    "set_default_dtype", "set_default_device", "set_default_tensor_type", "set_num_threads", "set_num_interop_threads",
    "set_printoptions", "use_deterministic_algorithms", "set_grad_enabled", "save", "load", "from_file", "compile",
    "set_warn_always", "set_flush_denormal", "set_float32_matmul_precision", "set_rng_state", "manual_seed", "seed",
    "vmap", "cond", "empty_cache", "share_memory_", "register_hook", "register_post_accumulate_grad_hook", "apply_",
    "map_", "map2_", "pin_memory", "set_anomaly_enabled", "printoptions", "inference_mode", "no_grad", "enable_grad",
    "set_autocast_enabled", "from_dlpack", "frombuffer", "set_deterministic_debug_mode", "load_state_dict",
    "tolist",
}
DUNDERS = ["__add__", "__radd__", "__iadd__", "__sub__", "__rsub__", "__isub__", "__mul__", "__rmul__", "__imul__",
           "__truediv__", "__rtruediv__", "__itruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__",
           "__pow__", "__rpow__", "__ipow__", "__matmul__", "__rmatmul__", "__and__", "__or__", "__xor__",
           "__iand__", "__ior__", "__lshift__", "__rshift__", "__neg__", "__pos__", "__abs__", "__invert__",
           "__getitem__", "__setitem__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__len__",
           "__bool__", "__float__", "__int__", "__index__", "__repr__", "__format__", "__contains__", "__array__",
           "__deepcopy__", "__reversed__", "__hash__", "__complex__", "__dlpack__"]


def _public_callables(obj, prefix):
    out = []
    for name in sorted(dir(obj)):
        if name.startswith("_") or name in EXCLUDED:
            continue
        try:
            f = getattr(obj, name)
        except Exception:  # noqa: BLE001 - a placeholder that raises is not a target
            continue
        if inspect.ismodule(f) or not callable(f) or inspect.isclass(f):
            continue
        out.append(prefix + name)
    return out


def all_targets(fl):
    targets = ["opdb:" + k for k in opdb()[1]]
    for name in sorted(dir(fl.Tensor)):
        if name.startswith("_") or name in EXCLUDED:
            continue
        attr = inspect.getattr_static(fl.Tensor, name, None)
        if isinstance(attr, property) or type(attr).__name__ in ("getset_descriptor", "property", "member_descriptor"):
            continue
        if callable(getattr(fl.Tensor, name, None)):
            targets.append("Tensor." + name)
    targets += ["Tensor." + d for d in DUNDERS if hasattr(fl.Tensor, d)]
    targets += _public_callables(fl, "fl.")
    for sub in ("nn.functional", "linalg", "special"):
        mod = fl
        for p in sub.split("."):
            mod = getattr(mod, p)
        targets += _public_callables(mod, f"fl.{sub}.")
    seen, unique = set(), []
    for t in targets:
        if t not in seen:
            seen.add(t)
            unique.append(t)
    return unique


# ---- parameters ------------------------------------------------------------------------------------------------

TENSOR_NAMES = {"input", "self", "other", "tensor", "weight", "bias", "index", "src", "mask", "target", "grad",
                "gradient", "x", "y", "x1", "x2", "values", "end", "exponent", "boundaries", "sorted_sequence", "vec",
                "vec1", "vec2", "mat", "mat1", "mat2", "batch1", "batch2", "tensor1", "tensor2", "A", "B", "input1",
                "input2", "running_mean", "running_var", "query", "key", "attn_mask", "grid", "theta", "log_probs",
                "targets", "fweights", "aweights", "anchor", "positive", "negative", "offsets", "per_sample_weights",
                "test_elements", "elements", "condition", "source", "indices", "weights", "start", "lengths", "LU",
                "pivots", "b", "a", "hx", "cx", "h", "c", "w_ih", "w_hh", "b_ih", "b_hh", "q", "k", "v", "var",
                "mean", "std", "label", "labels", "p", "n", "bins"}
TENSORLIST_NAMES = {"tensors", "operands", "seq", "tensor_list", "inputs", "tensor_or_tensors"}
DIM_NAMES = {"dim", "dim0", "dim1", "dim2", "axis", "axis0", "axis1", "start_dim", "end_dim", "dims", "destination",
             "offset", "diagonal", "shifts", "dimension", "dims_self", "dims_other"}
SIZE_NAMES = {"size", "sizes", "shape", "stride", "output_size", "kernel_size", "padding", "split_size_or_sections",
              "repeats", "sections", "normalized_shape", "pad", "output_padding", "dilation", "scale_factor",
              "upscale_factor", "downscale_factor", "split_size", "indices_or_sections", "s", "storage_offset",
              "unflattened_size", "chunks", "num_classes", "groups", "num_groups", "minlength", "steps"}
BOOL_NAMES = {"keepdim", "largest", "sorted", "descending", "stable", "inplace", "unbiased", "return_inverse",
              "return_counts", "upper", "right", "training", "align_corners", "ceil_mode", "count_include_pad",
              "return_indices", "equal_nan", "requires_grad", "non_blocking", "copy", "exclusive", "check_errors",
              "is_causal", "left", "transpose", "as_tuple", "unitriangular", "full_matrices", "compute_uv", "some",
              "hermitian", "log_target", "full", "increasing", "retain_graph", "create_graph", "sparse_grad", "wrap",
              "periodic", "enable_gqa", "assume_unique", "invert", "batch_first", "scale_grad_by_freq", "sparse",
              "include_self", "accumulate", "unsafe", "out_int32", "normalized", "center", "onesided"}
NUMBER_NAMES = {"alpha", "beta", "value", "eps", "min", "max", "lambd", "negative_slope", "momentum", "margin",
                "threshold", "rtol", "atol", "step", "fill_value", "scalar", "decimals", "ord", "correction",
                "dropout_p", "scale", "lower", "upper_bound", "nan", "posinf", "neginf", "beta1", "min_val", "max_val",
                "low", "high", "maxnorm", "delta", "label_smoothing", "reduce_range", "base", "weight_decay", "lr",
                "max_norm", "norm_type", "padding_value", "dx", "sigma", "spacing", "interpolation", "q_", "rcond",
                "tol", "num_samples", "replacement", "generator"}
STR_CHOICES = {"mode": ["bilinear", "nearest", "reflect", "constant", "replicate", "circular", "reduced", "complete",
                        "r", "sum", "mean", "max", "linear", "bicubic", "area", "trilinear", "bogus"],
               "reduction": ["mean", "sum", "none", "bogus", "batchmean"],
               "reduce": ["sum", "prod", "mean", "amax", "amin", "add", "multiply", "bogus"],
               "approximate": ["none", "tanh", "bogus"], "indexing": ["ij", "xy", "bogus"],
               "rounding_mode": ["trunc", "floor", None, "bogus"], "side": ["left", "right", "bogus"],
               "padding_mode": ["zeros", "border", "reflection", "bogus"], "norm": ["forward", "backward", "ortho", 2],
               "UPLO": ["L", "U", "bogus"], "equation": ["ij,jk->ik", "ii->i", "i,i->", "...,...->...", "ij->", "bad",
                                                          "a" * 60 + "->"],
               "interpolation": ["linear", "lower", "higher", "midpoint", "nearest", "bogus"],
               "driver": [None, "gelsd", "bogus"], "memory_format": [None], "layout": [None]}

EDGE_INTS = [0, 1, -1, 2, -2, 3, 4, 5, 7, 64, -100, 1000, 2 ** 31 - 1, 2 ** 31, -(2 ** 31), 2 ** 32 + 1, 2 ** 62,
             2 ** 63 - 1, -(2 ** 63), 2 ** 64]
EDGE_FLOATS = [0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -3.5, 1e-12, 1e30, -1e30, 1e308, float("inf"), float("-inf"),
               float("nan"), 3.0e38, 2.0 ** 31, 2.0 ** 64]
LAYOUTS = ["contiguous", "contiguous", "contiguous", "transposed", "sliced", "offset", "expanded", "overlapping",
           "conjugate"]
HUGE_SHAPES = [(2 ** 31 + 1,), (65537, 32769), (2, 2 ** 30 + 1), (0, 2 ** 40), (3, 0, 2 ** 62), (2 ** 62, 0),
               (1, 2 ** 31 + 7, 1)]


def _signature_params(fn):
    """[(name, kind)] of fn's parameters after self (kind: 'pos', 'kw', 'var' for *args); None when unknown."""
    try:
        sig = inspect.signature(fn)
        params = []
        for p in sig.parameters.values():
            if p.kind == p.VAR_KEYWORD:
                continue
            kind = "var" if p.kind == p.VAR_POSITIONAL else ("kw" if p.kind == p.KEYWORD_ONLY else "pos")
            params.append((p.name, kind, p.default is not p.empty))
        return params
    except (TypeError, ValueError):
        pass
    doc = (getattr(fn, "__doc__", None) or "").strip().split("\n")[0]
    m = re.match(r"[\w.]+\((.*)\)", doc)
    if not m:
        return None
    params, depth, cur, kwonly = [], 0, "", False
    for ch in m.group(1) + ",":
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            item = cur.strip()
            cur = ""
            if item == "*":
                kwonly = True
                continue
            if item.startswith("**"):
                continue
            if item.startswith("*"):
                params.append((item[1:].split(":")[0], "var", True))
                continue
            name = item.split(":")[0].split("=")[0].strip()
            params.append((name, "kw" if kwonly else "pos", "=" in item))
        else:
            cur += ch
    return params


def target_params(fl, target):
    """The parameter plan of a target: the op database entries take tensors; the rest their signature."""
    if target.startswith("opdb:"):
        op = opdb_entry(target[5:])
        code = op.call.__code__
        n = code.co_argcount - 1 - len(op.call.__defaults__ or ())
        return [(f"t{i}", "tensor", False) for i in range(n)]
    from fuzz_cases import resolve
    params = _signature_params(resolve(fl, target))
    if params is None:
        return [("args", "var", True)]
    if target.startswith("Tensor."):
        params = [("self", "self", False)] + params[1:] if params and params[0][0] == "self" else \
            [("self", "self", False)] + params
    return params


def opdb_sample_shapes(fl, key):
    """The shapes of the entry's first sample (drawn with flowlike, which has the same generator API)."""
    mod, entries = opdb()
    op = entries[key]
    try:
        samples = op.samples(fl, op.dtypes[0])
        return [tuple(t.shape) for t in samples[0][1]], op.dtypes
    except Exception:  # noqa: BLE001
        return None, op.dtypes


# ---- strategies ------------------------------------------------------------------------------------------------

small_dim = st.sampled_from([0, 1, 1, 2, 2, 3, 3, 4, 5, 7])


@st.composite
def shapes(draw, ndim=None):
    if ndim is None:
        ndim = draw(st.integers(0, 4))
    shape = tuple(draw(small_dim) for _ in range(ndim))
    if draw(st.integers(0, 30)) == 30:  # now and then a larger one (blocked kernels, vector tails)
        shape = tuple(draw(st.sampled_from([1, 17, 33, 65, 129, 257])) for _ in range(draw(st.integers(1, 2))))
    return shape


@st.composite
def tensors(draw, shape=None, dtype=None, allow_huge=True):
    if allow_huge and draw(st.integers(0, 40)) == 40:  # (Hypothesis starts from 0: the plain case)
        return ("tensor", draw(st.sampled_from(HUGE_SHAPES)), draw(st.sampled_from(["float32", "int64", "bool"])),
                "huge", draw(st.booleans()), 0, False)
    shape = draw(shapes()) if shape is None else shape
    dtype = dtype or draw(st.sampled_from(FLOAT_DTYPES * 3 + DTYPES))
    layout = draw(st.sampled_from(LAYOUTS))
    grad = dtype in FLOAT_DTYPES and draw(st.integers(0, 2)) > 0
    return ("tensor", shape, dtype, layout, grad, draw(st.integers(0, 3)), draw(st.integers(0, 3)) == 3)


def lit(v):
    return ("lit", v)


@st.composite
def dims(draw):
    form = draw(st.integers(0, 5))
    d = st.sampled_from([0, 1, -1, 2, -2, 3, -4, 4, 7, -9, 2 ** 31, 2 ** 63 - 1, -(2 ** 63)])
    if form <= 2:
        return lit(draw(d))
    if form == 3:
        return ("tuple", [lit(draw(d)) for _ in range(draw(st.integers(0, 4)))])  # repeats happen
    if form == 4:
        return ("list", [lit(draw(d)) for _ in range(draw(st.integers(0, 3)))])
    return lit(None)


@st.composite
def sizes(draw):
    e = st.sampled_from([0, 1, 2, 3, 4, -1, -1, -2, 6, 2 ** 31, 2 ** 62, 2 ** 63 - 1, 2 ** 32 + 1])
    form = draw(st.integers(0, 3))
    if form == 0:
        return lit(draw(e))
    items = [lit(draw(e)) for _ in range(draw(st.integers(0, 4)))]
    return ("tuple" if form < 3 else "list", items)


@st.composite
def any_arg(draw, depth=0):
    kind = draw(st.integers(0, 12 if depth == 0 else 9))
    if kind <= 3:
        return draw(tensors())
    if kind == 4:
        return lit(draw(st.sampled_from(EDGE_INTS)))
    if kind == 5:
        return lit(draw(st.sampled_from(EDGE_FLOATS)))
    if kind == 6:
        return lit(draw(st.sampled_from([True, False, None, "bogus", "", "sum", 1j])))
    if kind == 7:
        return ("dtype", draw(st.sampled_from(DTYPES)))
    if kind == 8:
        return draw(dims())
    if kind == 9:
        return draw(sizes())
    if kind == 10:
        return ("list", [draw(any_arg(depth + 1)) for _ in range(draw(st.integers(0, 3)))])
    if kind == 11:
        return ("alias", draw(st.integers(0, 3)))
    return ("view_of", draw(st.integers(0, 3)))


@st.composite
def index_arg(draw):
    """__getitem__/__setitem__ keys: ints, slices (negative steps too), None, Ellipsis, bool and int tensors."""
    def one():
        k = draw(st.integers(0, 6))
        if k == 0:
            return lit(draw(st.sampled_from([0, -1, 1, 5, -7, 2 ** 62, True, False])))
        if k == 1:
            return ("slice", [draw(st.sampled_from([None, 0, 1, -1, 5, -2 ** 62])),
                              draw(st.sampled_from([None, 0, 2, -1, 2 ** 63 - 1])),
                              draw(st.sampled_from([None, 1, 2, 3, -1, 0]))])
        if k == 2:
            return lit(None)
        if k == 3:
            return ("ellipsis",)
        if k == 4:
            return draw(tensors(dtype=draw(st.sampled_from(["int64", "int32", "bool", "uint8", "float32"]))))
        if k == 5:
            return ("list", [lit(draw(st.sampled_from([0, 1, -1, 3]))) for _ in range(draw(st.integers(0, 3)))])
        return draw(any_arg(1))
    if draw(st.booleans()):
        return one()
    return ("tuple", [one() for _ in range(draw(st.integers(0, 4)))])


def arg_for(draw, name):
    if draw(st.integers(0, 9)) < 3:
        return draw(any_arg())
    if name in TENSOR_NAMES:
        return draw(tensors())
    if name in TENSORLIST_NAMES:
        return ("list" if draw(st.booleans()) else "tuple", [draw(tensors()) for _ in range(draw(st.integers(0, 4)))])
    if name in DIM_NAMES:
        return draw(dims())
    if name in SIZE_NAMES:
        return draw(sizes())
    if name in BOOL_NAMES:
        return lit(draw(st.booleans()))
    if name in NUMBER_NAMES:
        return lit(draw(st.sampled_from(EDGE_INTS[:8] + EDGE_FLOATS)))
    if name in ("dtype", "out_dtype"):
        return ("dtype", draw(st.sampled_from(DTYPES)))
    if name in STR_CHOICES:
        return lit(draw(st.sampled_from(STR_CHOICES[name])))
    if name in ("out",):
        return draw(st.sampled_from([("alias", 0), ("alias", 1), ("view_of", 0)])) if draw(st.booleans()) \
            else draw(tensors())
    return draw(any_arg())


@st.composite
def cases(draw, fl, target, params, sample_shapes=None, sample_dtypes=None):
    args, kwargs = [], {}
    if target.startswith("opdb:"):
        use_sample = sample_shapes is not None and draw(st.integers(0, 3)) < 3
        dt = draw(st.sampled_from(list(sample_dtypes or FLOAT_DTYPES) + list(DTYPES)))
        for i, _ in enumerate(params):
            if use_sample and i < len(sample_shapes):
                shape = sample_shapes[i]
                if draw(st.integers(0, 4)) == 4:  # an edge shape in place of one dim
                    j = draw(st.integers(0, max(len(shape) - 1, 0)))
                    shape = shape[:j] + (draw(st.sampled_from([0, 1])),) + shape[j + 1:]
                args.append(draw(tensors(shape=shape, dtype=dt, allow_huge=False)))
            else:
                args.append(draw(tensors()))
    else:
        for name, kind, has_default in params:
            if kind == "self":
                args.append(draw(tensors()))
            elif kind == "var":
                if target.endswith(("__getitem__", "__setitem__")):
                    continue
                n = draw(st.integers(0, 4))
                mode = draw(st.integers(0, 2))
                for _ in range(n):  # *size / *dims: ints mostly, anything now and then
                    args.append(lit(draw(st.sampled_from(EDGE_INTS))) if mode < 2 else draw(any_arg()))
            elif kind == "kw":
                if draw(st.integers(0, 3)) == 3:
                    kwargs[name] = arg_for(draw, name)
            else:
                if has_default and draw(st.integers(0, 2)) == 0:
                    continue  # leave this and the later optional ones out
                args.append(arg_for(draw, name))
        if target.endswith(("__getitem__", "__setitem__")):
            args = args[:1] + [draw(index_arg())]
            if target.endswith("__setitem__"):
                args.append(draw(st.sampled_from([lit(1.5), lit(-1)])) if draw(st.booleans()) else draw(tensors()))
        if draw(st.integers(0, 12)) == 12 and "out" not in kwargs and not target.startswith("Tensor."):
            kwargs["out"] = arg_for(draw, "out")
    backward = draw(st.sampled_from([None, None, "backward", "backward", "double"]))
    return {"target": target, "args": args, "kwargs": kwargs, "backward": backward}
