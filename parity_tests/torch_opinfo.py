"""torch's own op database (torch.testing._internal.common_methods_invocations.op_db) run against flowlike.

For each OpInfo with a flowlike counterpart: every `error_inputs` sample must raise in flowlike the exception class
torch raises; every CPU `sample_inputs` sample (float32 and float64) must give torch's values, dtypes and shapes, and
torch's gradients (float64, when the OpInfo supports autograd). Torch tensors cross over through numpy (strides
are kept, so non-contiguous samples stay non-contiguous).

The entries that do not pass yet are listed in KNOWN_FAILURES (one place, a reason each); the parity test skips
exactly those (counted as skipped, not passing) and `python parity_tests/coverage.py` prints the table.
"""
import inspect
import os
import types

import numpy as np

from helpers import resolve

# ---- the table of entries that do not pass yet: OpInfo id -> reason -----------------------------------------------
# An id is the OpInfo's name, plus "." and its variant_test_name when it has one. "errors:" entries skip only the
# error-input check, "samples:" entries only the sample check, "complex:" entries only the complex samples of a
# linear-algebra entry; a bare id skips all.
COMPLEX = ("complex32 (chalf) is not a flowlike dtype: the core has no half-precision complex type (no storage "
           "type, kernels, promotion entries or printing for it)")
SPARSE = ("sparse=True: torch gives weight a sparse COO gradient (layout torch.sparse_coo, _indices/_values, coalesce, "
          "sparse + sparse accumulation by concatenation, sparse updates in SGD/Adagrad/SparseAdam). flowlike "
          "tensors are strided only (csrc/core/tensor.h has no layout; Tensor.layout is always strided) and the "
          "engine's gradient accumulation (csrc/autograd/engine.cpp) adds dense tensors, so a correct sparse "
          "gradient needs a sparse layout in the core, the engine and the optimizers, not a change to embedding. "
          "flowlike raises NotImplementedError rather than return a dense gradient where torch returns a sparse one")
KNOWN_FAILURES = {
    "samples:nn.functional.embedding": SPARSE,
    "samples:nn.functional.embedding_bag": SPARSE,
    "samples:matrix_exp": "float32 5x5x5 sample (1-norms ~27, entries up to 9.3e4), 0.043 apart: flowlike uses "
                          "torch's method (degrees, bounds, batch rule; float64 agrees to 1e-14), so the rest is "
                          "float32 GEMM rounding: torch's MKL and flowlike's OpenBLAS round 11 of the 25 entries of "
                          "a 5x5 product 1 ulp apart, and 4 squarings carry that to the small entries (torch is 0.050 "
                          "from the float64 value, flowlike 0.016)",
    "samples:as_strided_scatter": "torch 2.13's input gradient is wrong: as_strided_scatter_backward "
                                  "(FunctionsManual.cpp) copies grad at the scattered positions and zeros the rest, "
                                  "the complement of the derivative (torch.autograd.gradcheck of torch's own "
                                  "as_strided_scatter(x, src, (2, 2), (1, 3), 1) w.r.t. a (3, 4) x fails); flowlike "
                                  "gives the derivative (grad with the scattered positions zeroed)",
    "samples:special.bessel_j0": "a torch bug: for |x| <= 5 torch's bessel_j0_forward (ATen/native/Math.h) evaluates "
                                 "Cephes's monic denominator p1evl(x^2, RQ, 8) as a plain polynomial started at 0, "
                                 "dropping its x^16 term; its float64 values equal that truncated formula to the last "
                                 "bit and are up to 3.8e-7 off the true J0 (x = 4.99: torch -0.1808669123, Cephes and "
                                 "mpmath -0.1808669025); flowlike keeps the true value (3e-16)",
    "samples:special.bessel_y1": "a torch bug: for 0 < x <= 5 torch's bessel_y1_forward drops the x^16 term of Cephes's "
                                 "monic denominator p1evl(x^2, YQ, 8) (and its j1 the same term of RQ): up to 8.7e-7 "
                                 "off the true Y1 (x = 4.99: torch 0.1512402842, Cephes and mpmath 0.1512402755); "
                                 "flowlike keeps the true value (1.4e-14)",
    "samples:chalf": COMPLEX,
}

# OpInfos whose name resolves in flowlike but that call what flowlike does not provide (not counted as runnable)
NOT_PROVIDED = {
    "max_pool2d_with_indices_backward": "calls torch.ops.aten directly",
    "svd_lowrank": "torch.svd_lowrank is not provided by flowlike",
    "pca_lowrank": "torch.pca_lowrank is not provided by flowlike",
    "to_sparse": "sparse layouts are not provided by flowlike",
}

# ops whose output is random: values are not compared (dtype and shape are)
RANDOM_OPS = {"bernoulli", "multinomial", "normal", "normal.number_mean", "normal.in_place", "uniform", "rand_like",
              "randn_like", "randint_like", "randint", "randn", "rand", "randperm", "nn.functional.dropout",
              "nn.functional.dropout2d", "nn.functional.dropout3d", "nn.functional.alpha_dropout",
              "nn.functional.feature_alpha_dropout.with_train", "nn.functional.feature_alpha_dropout.without_train",
              "nn.functional.rrelu", "nn.functional.fractional_max_pool2d", "nn.functional.fractional_max_pool3d",
              "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "empty_permuted",
              "nn.functional.multi_head_attention_forward", "cauchy", "exponential", "geometric", "log_normal",
              "poisson", "nn.functional.scaled_dot_product_attention", "native_dropout_backward"}

# The linear-algebra entries whose complex64/complex128 samples run too (test_complex_linalg_samples): torch.linalg.*
# and the torch.* spellings of linear algebra.
LINALG_NAMES = {"det", "logdet", "inverse", "cholesky", "cholesky_solve", "cholesky_inverse", "qr", "svd", "pinverse",
                "matrix_exp", "triangular_solve", "lu", "lu_solve", "lu_unpack", "matrix_power", "geqrf", "ormqr",
                "norm", "vdot", "dot", "mv", "mm", "bmm", "matmul", "addmm", "inner", "outer", "kron", "tensordot"}
COMPLEX_DTYPES = ("complex64", "complex128")


def is_linalg(op):
    return op.name.startswith("linalg.") or op.name in LINALG_NAMES


MAX_SAMPLES = int(os.environ.get("FLOWLIKE_OPINFO_SAMPLES", "12"))  # per OpInfo and dtype (0: all)


def op_id(op):
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def flowlike_callable(fl, torch, op):
    """flowlike's counterpart of op.op, or None. Functions written in torch's test modules (lambdas like
    `lambda x, *a: x.expand(*a)`) are re-bound to a globals dict where `torch` is flowlike."""
    f = op.op
    if isinstance(f, types.FunctionType) and (f.__module__ or "").startswith("torch.testing"):
        g = dict(f.__globals__)
        g["torch"] = fl
        if "F" in g:
            g["F"] = fl.nn.functional
        return types.FunctionType(f.__code__, g, f.__name__, f.__defaults__, f.__closure__)
    if type(f).__name__ in ("method_descriptor", "wrapper_descriptor") and getattr(fl.Tensor, op.name, None) is not None:
        return getattr(fl.Tensor, op.name)  # torch.Tensor.__radd__ and the like: the unbound method itself
    found = resolve(fl, op.name)
    if found is not None and not inspect.ismodule(found):
        return found
    if "." not in op.name and getattr(fl.Tensor, op.name, None) is not None:
        name = op.name
        return lambda x, *a, **k: getattr(x, name)(*a, **k)
    return None


# ---- moving values from torch to flowlike ------------------------------------------------------------------------

class Unsupported(Exception):
    """A sample flowlike cannot even receive (complex32, sparse, a torch-only object)."""


def to_fl(fl, torch, v, grad=None, memo=None):
    """v with its torch tensors made flowlike tensors. Each tensor's whole storage is copied once (`memo`: torch
    storage -> flowlike copy, shared by the arguments of one sample) and viewed with the tensor's sizes, strides and
    offset, so that tensors sharing memory in torch (out= aliasing an input, partial views) share it in flowlike."""
    memo = {} if memo is None else memo
    if isinstance(v, torch.Tensor):
        if v.layout != torch.strided or v.is_quantized or v.device.type != "cpu" or v.dim() > 64:
            raise Unsupported(f"{v.dtype} {v.layout} tensor")
        name = str(v.dtype).split(".")[-1]
        if not isinstance(getattr(fl, name, None), fl.dtype):
            raise Unsupported(str(v.dtype))
        d = v.detach().resolve_conj().resolve_neg()
        if d._is_zerotensor():  # torch's ZeroTensor (e.g. sgn's gradient) has no memory to read
            d = torch.zeros(d.shape, dtype=d.dtype)
        key = (d.untyped_storage().data_ptr(), d.dtype)
        if key not in memo:
            flat = torch.as_strided(d, (d.untyped_storage().nbytes() // d.element_size(),), (1,), 0)
            flat_np = (flat.float() if name == "bfloat16" else flat).numpy()
            # a failed out= resize in torch can leave a tensor larger than its storage: zeros stand for the rest
            need = d.storage_offset() + 1 + sum((n - 1) * st for n, st in zip(d.shape, d.stride())) if d.numel() else 0
            base = fl.from_numpy(np.concatenate([flat_np, np.zeros(max(need - flat_np.size, 0), flat_np.dtype)]))
            # d is held with the copy: a resolved conjugate is a temporary whose address must not be reused
            memo[key] = (base.to(fl.bfloat16) if name == "bfloat16" else base, d)
        t = memo[key][0].as_strided(tuple(d.shape), tuple(d.stride()), d.storage_offset())
        if (v.requires_grad if grad is None else grad) and (t.dtype.is_floating_point or t.dtype.is_complex):
            t = t.detach().requires_grad_(True) if t.is_leaf or True else t
        return t
    if isinstance(v, torch.dtype):
        name = str(v).split(".")[-1]
        if not isinstance(getattr(fl, name, None), fl.dtype):
            raise Unsupported(str(v))
        return getattr(fl, name)
    if isinstance(v, torch.Size):
        return tuple(v)
    if isinstance(v, torch.device):
        return str(v)
    if isinstance(v, torch.memory_format):
        return getattr(fl, str(v).split(".")[-1])
    if isinstance(v, torch.Generator):
        raise Unsupported("torch.Generator")
    if isinstance(v, tuple):
        return tuple(to_fl(fl, torch, x, grad, memo) for x in v)
    if isinstance(v, list):
        return [to_fl(fl, torch, x, grad, memo) for x in v]
    if isinstance(v, dict):
        return {k: to_fl(fl, torch, x, grad, memo) for k, x in v.items()}
    if type(v).__module__.startswith("torch"):
        raise Unsupported(type(v).__name__)
    return v


def _leaves(v, torch):
    if isinstance(v, torch.Tensor) if torch is not None else False:
        return [v]
    if isinstance(v, (tuple, list)):
        return [t for x in v for t in _leaves(x, torch)]
    if isinstance(v, dict):
        return [t for x in v.values() for t in _leaves(x, torch)]
    return []


def _fl_leaves(fl, v):
    if isinstance(v, fl.Tensor):
        return [v]
    if isinstance(v, (tuple, list)):
        return [t for x in v for t in _fl_leaves(fl, x)]
    if isinstance(v, dict):
        return [t for x in v.values() for t in _fl_leaves(fl, x)]
    return []


def _flat_outputs(r):
    if isinstance(r, (tuple, list)):
        return [o for x in r for o in _flat_outputs(x)]
    if hasattr(r, "_fields") or type(r).__name__.startswith("torch.return_types"):
        return [o for x in tuple(r) for o in _flat_outputs(x)]
    return [r]


def _np(x, torch):
    x = x.detach().resolve_conj().resolve_neg()
    if isinstance(x, torch.Tensor) and x._is_zerotensor():
        x = torch.zeros(x.shape, dtype=x.dtype)
    if isinstance(x, torch.Tensor) and x.dtype == torch.bfloat16:
        x = x.float()
    name = str(x.dtype).split(".")[-1]
    if name == "bfloat16":
        x = x.float()
    return np.asarray(x.numpy())


def _outcome(fn):
    try:
        return fn(), None
    except Exception as e:  # noqa: BLE001 - the exception type is what is compared
        return None, e


TOL = {"float32": dict(rtol=1.3e-5, atol=1e-5), "float64": dict(rtol=1e-7, atol=1e-7),
       "complex64": dict(rtol=1.3e-5, atol=1e-5), "complex128": dict(rtol=1e-7, atol=1e-7)}


def _close(a, b, rtol, atol):
    if a.dtype == np.bool_ or b.dtype == np.bool_:
        return np.array_equal(a, b)
    wide = np.complex128 if np.iscomplexobj(a) or np.iscomplexobj(b) else np.float64
    return np.allclose(a.astype(wide), b.astype(wide), rtol=rtol, atol=atol, equal_nan=True)


def check_errors(fl, torch, op):
    """Runs op's error_inputs; returns (count checked, count unsupported, [failure lines])."""
    if op.error_inputs_func is None:
        return 0, 0, []
    f_op = flowlike_callable(fl, torch, op)
    checked = unsupported = 0
    failures = []
    for i, ei in enumerate(op.error_inputs("cpu")):
        s = ei.sample_input
        _, t_err = _outcome(lambda: op.op(s.input, *s.args, **s.kwargs))
        if t_err is None:
            continue  # torch itself raises nothing here on this build: nothing to compare with
        try:
            memo = {}
            f_in = to_fl(fl, torch, s.input, memo=memo)
            f_args = to_fl(fl, torch, s.args, memo=memo)
            f_kwargs = to_fl(fl, torch, s.kwargs, memo=memo)
        except Unsupported:
            unsupported += 1
            continue
        checked += 1
        _, f_err = _outcome(lambda: f_op(f_in, *f_args, **f_kwargs))
        want = type(t_err)
        if f_err is None:
            failures.append(f"error input {i}: torch raises {want.__name__} ({str(t_err)[:80]!r}), flowlike raises "
                            f"nothing")
        elif not isinstance(f_err, want) or (type(f_err) is not want and issubclass(want, type(f_err))):
            failures.append(f"error input {i}: torch raises {want.__name__} ({str(t_err)[:80]!r}), flowlike "
                            f"{type(f_err).__name__} ({str(f_err)[:80]!r})")
    return checked, unsupported, failures


def check_samples(fl, torch, op, dtypes=("float32", "float64")):
    """Runs op's CPU sample inputs in each dtype; returns (count checked, count unsupported, [failure lines])."""
    f_op = flowlike_callable(fl, torch, op)
    oid = op_id(op)
    checked = unsupported = 0
    failures = []
    for dname in dtypes:
        dt = getattr(torch, dname)
        if not op.supports_dtype(dt, "cpu"):
            continue
        grad = dname in ("float64", "complex128") and op.supports_autograd
        try:
            samples = list(op.sample_inputs("cpu", dt, requires_grad=grad))
        except Exception:  # noqa: BLE001 - a sample generator torch itself cannot run here
            continue
        if MAX_SAMPLES:
            samples = samples[:MAX_SAMPLES]
        for i, s in enumerate(samples):
            where = f"{dname} sample {i}"
            t_out, t_err = _outcome(lambda: op.op(s.input, *s.args, **s.kwargs))
            try:
                memo = {}
                f_in = to_fl(fl, torch, s.input, memo=memo)
                f_args = to_fl(fl, torch, s.args, memo=memo)
                f_kwargs = to_fl(fl, torch, s.kwargs, memo=memo)
            except Unsupported:
                unsupported += 1
                continue
            checked += 1
            f_out, f_err = _outcome(lambda: f_op(f_in, *f_args, **f_kwargs))
            if t_err is not None:
                if f_err is None or not isinstance(f_err, type(t_err)):
                    failures.append(f"{where}: torch raises {type(t_err).__name__}, flowlike "
                                    f"{type(f_err).__name__ if f_err else 'nothing'}")
                continue
            if f_err is not None:
                failures.append(f"{where}: flowlike raised {type(f_err).__name__}: {str(f_err)[:150]}")
                continue
            t_out, f_out = _processed(s, t_out, f_out)
            want, got = _flat_outputs(t_out), _flat_outputs(f_out)
            if len(want) != len(got):
                failures.append(f"{where}: {len(got)} outputs, torch {len(want)}")
                continue
            ok = True
            for j, (w, g) in enumerate(zip(want, got)):
                if isinstance(w, torch.Tensor):
                    if not isinstance(g, fl.Tensor):
                        failures.append(f"{where}: output {j} is {type(g).__name__}, torch a tensor")
                        ok = False
                        continue
                    if str(w.dtype).split(".")[-1] != str(g.dtype).split(".")[-1] or tuple(w.shape) != tuple(g.shape):
                        failures.append(f"{where}: output {j} {g.dtype} {tuple(g.shape)}, torch {w.dtype} "
                                        f"{tuple(w.shape)}")
                        ok = False
                        continue
                    if oid in RANDOM_OPS or op.name in RANDOM_OPS:
                        continue
                    if not _close(_np(g, torch), _np(w, torch), **TOL[dname]):
                        diff = np.abs(_np(g, torch).astype(np.complex128) - _np(w, torch).astype(np.complex128))
                        failures.append(f"{where}: output {j} values differ (max {np.nanmax(diff) if diff.size else 0:.3g})")
                        ok = False
                elif isinstance(w, (int, float, bool)) and not isinstance(g, (fl.Tensor,)):
                    if oid not in RANDOM_OPS and not (w == g or (w != w and g != g)):
                        failures.append(f"{where}: output {j} = {g!r}, torch {w!r}")
                        ok = False
            if not (ok and grad) or oid in RANDOM_OPS or op.name in RANDOM_OPS:
                continue
            failures += _check_grads(fl, torch, where, want, got, (s.input, s.args, s.kwargs),
                                     (f_in, f_args, f_kwargs))
    return checked, unsupported, failures


def _processed(sample, t_out, f_out):
    """The outputs as the sample's output_process_fn_grad gives them, as torch's own tests compare them: for
    eig/eigh, eigenvalues and |eigenvectors| (eigenvectors are defined up to a phase, which LAPACK builds choose
    differently). Raw outputs when the function cannot take flowlike's (it calls torch functions)."""
    fn = sample.output_process_fn_grad
    try:
        return fn(t_out), fn(f_out)
    except Exception:  # noqa: BLE001 - written for torch tensors only
        return t_out, f_out


def _weighted_sum(outputs, weights):
    """The real loss whose gradients are compared: the weighted outputs summed (their real part, when complex)."""
    terms = [(o * c).sum() for o, c in zip(outputs, weights)]
    return sum(t.real if t.dtype.is_complex else t for t in terms)


def _check_grads(fl, torch, where, want, got, t_inputs, f_inputs):
    pairs = [(w, g) for w, g in zip(want, got) if isinstance(w, torch.Tensor) and w.requires_grad
             and (w.dtype.is_floating_point or w.dtype.is_complex)]
    if not pairs:
        return []
    t_leaves = [t for t in _leaves(t_inputs, torch) if t.requires_grad]
    f_leaves = [t for t in _fl_leaves(fl, f_inputs) if t.requires_grad]
    if len(t_leaves) != len(f_leaves) or not t_leaves:
        return []
    gen = torch.Generator().manual_seed(7)
    weights = [torch.randn(w.shape, dtype=w.dtype, generator=gen) for w, _ in pairs]
    try:
        t_grads = torch.autograd.grad(_weighted_sum([w for w, _ in pairs], weights), t_leaves, allow_unused=True)
    except Exception:  # noqa: BLE001 - no gradient in torch either
        return []
    if not any(g is not None and g.requires_grad is not None for g in t_grads):
        return []
    try:
        if not all(g.requires_grad for _, g in pairs):
            # torch marks some outputs as requiring grad whose gradient is zero (fill, lstsq's residuals when empty)
            if all(tg is None or not bool((tg != 0).any()) for tg in t_grads):
                return []
            return [f"{where}: flowlike output does not require grad"]
        loss = _weighted_sum([g for _, g in pairs], [to_fl(fl, torch, c) for c in weights])
        f_grads = fl.autograd.grad(loss, f_leaves, allow_unused=True)
    except Exception as e:  # noqa: BLE001
        return [f"{where}: flowlike backward raised {type(e).__name__}: {str(e)[:150]}"]
    out = []
    for k, (tg, fg) in enumerate(zip(t_grads, f_grads)):
        if tg is None:
            continue
        if fg is None:
            if bool((tg != 0).any()):
                out.append(f"{where}: no gradient for input {k}")
            continue
        if tuple(tg.shape) != tuple(fg.shape) or not _close(_np(fg, torch), _np(tg, torch), rtol=1e-5, atol=1e-6):
            out.append(f"{where}: gradient of input {k} differs")
    return out
