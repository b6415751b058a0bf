"""The divergence finder: run the same PyTorch code under real torch and under flowlike, record what every op
returns, and report the first op whose outputs differ beyond tolerance, with the user's source line.

    python -m flowlike.compat.diff script.py [args...]

or from Python, with a function that takes the torch-like module and runs a model or a training step:

    >>> from flowlike.compat.diff import find_divergence
    >>> report = find_divergence(lambda torch: (torch.randn(4, 3) @ torch.randn(3, 2)).tanh().sum())
    >>> report.diverged
    False

How it works. On the torch side a TorchFunctionMode records each top-level torch call (calls made inside
another recorded call are not recorded). On the flowlike side the public functions of flowlike (top level,
nn.functional, nn.init, linalg, special) and the Tensor methods and operators are wrapped for the duration
of the run, with the same top-level rule. Calls are matched by (source file, line, op name, occurrence at
that line) of the user's frame, so the two runs need not issue the same internal calls. Random ops (randn,
uniform_, nn.init.*, ...) take their values from the torch run, so both runs start from identical weights and
inputs; dropout draws differ, so compare in eval mode or with p=0.
"""
import importlib
import linecache
import os
import runpy
import sys
from dataclasses import dataclass, field

import numpy as np

__all__ = ["find_divergence", "diff_script", "Divergence", "Report"]

# Ops whose values come from a random generator: the flowlike run takes torch's values for them.
_RANDOM_OPS = {"rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like", "normal", "bernoulli",
               "multinomial", "uniform_", "normal_", "random_", "bernoulli_", "exponential_", "cauchy_",
               "log_normal_", "geometric_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
               "kaiming_normal_", "trunc_normal_", "orthogonal_", "sparse_"}
_LIBRARY_DIRS = []  # frames inside these directories are library code, not the user's


@dataclass
class OpRecord:
    """One recorded call: its op name, where the user called it, and its tensor outputs as numpy arrays."""
    name: str
    filename: str
    lineno: int
    occurrence: int
    outputs: list = field(default_factory=list)  # (shape, dtype name, ndarray)

    @property
    def key(self):
        return (self.filename, self.lineno, self.name, self.occurrence)


@dataclass
class Divergence:
    """The first op whose flowlike outputs differ from torch's."""
    name: str
    filename: str
    lineno: int
    source: str
    torch_shapes: list
    flowlike_shapes: list
    max_abs_diff: float
    reason: str

    def __str__(self):
        where = f"{os.path.relpath(self.filename)}:{self.lineno}"
        return (f"first divergence: {self.name} at {where}\n    {self.source}\n"
                f"  {self.reason}\n  torch outputs:    {self.torch_shapes}\n  flowlike outputs: {self.flowlike_shapes}"
                + (f"\n  max |difference|: {self.max_abs_diff:.6g}" if self.max_abs_diff == self.max_abs_diff else ""))


@dataclass
class Report:
    """What find_divergence found: the number of ops compared and the first divergence (or None)."""
    compared: int
    divergence: Divergence = None
    flowlike_error: BaseException = None

    @property
    def diverged(self):
        return self.divergence is not None

    def __str__(self):
        if self.divergence is None:
            return f"no divergence: {self.compared} ops matched within tolerance"
        return f"{self.divergence}\n({self.compared} ops matched before it)"


class _Recorder:
    def __init__(self, replay=None):
        self.records = []
        self.counts = {}
        self.depth = 0
        self.replay = replay  # torch's records by key: random values are copied from them

    def user_frame(self):
        frame = sys._getframe(2)
        while frame is not None:
            path = os.path.abspath(frame.f_code.co_filename)
            if not any(path.startswith(d) for d in _LIBRARY_DIRS) and not path.startswith("<frozen"):
                return path, frame.f_lineno
            frame = frame.f_back
        return "<unknown>", 0

    def record(self, name, result, to_numpy):
        name = _canonical(name)
        filename, lineno = self.user_frame()
        k = (filename, lineno, name)
        occurrence = self.counts.get(k, 0)
        self.counts[k] = occurrence + 1
        rec = OpRecord(name, filename, lineno, occurrence)
        for t in _tensors(result):
            arr = to_numpy(t)
            rec.outputs.append((tuple(t.shape), str(t.dtype).split(".")[-1], arr))
        self.records.append(rec)
        return rec


_OPERATOR_NAMES = {"truediv": "div", "floordiv": "floor_divide", "getitem": "index", "setitem": "index_put",
                   "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor", "invert": "bitwise_not",
                   "lt": "lt", "le": "le", "gt": "gt", "ge": "ge", "eq": "eq", "ne": "ne", "abs": "abs", "neg": "neg"}


def _canonical(name):
    """One name per op on both sides: `x @ w`, `x.matmul(w)` and `torch.matmul(x, w)` are all matmul."""
    if name.startswith("__") and name.endswith("__"):
        core = name[2:-2]
        if core not in _OPERATOR_NAMES and core[:1] in ("r", "i") and core[1:] in (
                "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor"):
            core = core[1:]
        return _OPERATOR_NAMES.get(core, core)
    return name


def _tensors(result):
    if isinstance(result, (tuple, list)):
        out = []
        for r in result:
            out.extend(_tensors(r))
        return out
    return [result] if hasattr(result, "shape") and hasattr(result, "dtype") and hasattr(result, "detach") else []


def _torch_numpy(t):
    t = t.detach()
    if t.dtype.is_floating_point and t.dtype.itemsize < 4:
        t = t.float()
    return t.cpu().numpy().copy()


def _flowlike_numpy(t):
    t = t.detach()
    if t.dtype.is_floating_point and t.dtype.itemsize < 4:
        t = t.float()
    return t.numpy().copy()


def _run_torch(step):
    # real torch is needed only here, when a comparison is asked for (flowlike itself never imports it)
    torch = importlib.import_module("torch")
    TorchFunctionMode = importlib.import_module("torch.overrides").TorchFunctionMode

    rec = _Recorder()
    _LIBRARY_DIRS[:] = _library_dirs(torch)

    class Mode(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            result = func(*args, **(kwargs or {}))
            name = getattr(func, "__name__", str(func))
            if name == "__get__":  # attribute reads (shape, grad, ...)
                return result
            rec.record(name, result, _torch_numpy)
            return result

    with Mode():
        step(torch)
    return rec


def _library_dirs(torch_module):
    import flowlike
    dirs = [os.path.dirname(os.path.abspath(flowlike.__file__)) + os.sep, os.path.dirname(os.path.abspath(__file__)) + os.sep]
    if torch_module is not None and getattr(torch_module, "__file__", None):
        dirs.append(os.path.dirname(os.path.abspath(torch_module.__file__)) + os.sep)
    return dirs


_TENSOR_OPERATORS = ["__add__", "__radd__", "__iadd__", "__sub__", "__rsub__", "__isub__", "__mul__", "__rmul__",
                     "__imul__", "__truediv__", "__rtruediv__", "__itruediv__", "__floordiv__", "__rfloordiv__",
                     "__mod__", "__rmod__", "__pow__", "__rpow__", "__matmul__", "__rmatmul__", "__neg__", "__abs__",
                     "__getitem__", "__setitem__", "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__",
                     "__and__", "__or__", "__xor__", "__invert__"]
_SKIP_METHODS = {"numpy", "tolist", "item", "size", "dim", "numel", "stride", "storage_offset", "is_contiguous",
                 "data_ptr", "element_size", "nelement", "ndimension", "untyped_storage", "backward", "register_hook",
                 "requires_grad_", "retain_grad", "type", "is_floating_point", "is_complex", "get_device", "__repr__",
                 "__str__", "__format__", "__len__", "__iter__", "__bool__", "__float__", "__int__", "__index__",
                 "__hash__", "__reduce_ex__", "__dlpack__", "__dlpack_device__", "__array__"}


def _wrap(rec, name, fn, flowlike):
    def wrapper(*args, **kwargs):
        if rec.depth:
            return fn(*args, **kwargs)
        rec.depth += 1  # held while recording too: reading the outputs calls wrapped methods
        try:
            result = fn(*args, **kwargs)
            r = rec.record(name, result, _flowlike_numpy)
            if name in _RANDOM_OPS and rec.replay is not None:
                _take_torch_values(rec, r, result, flowlike)
        finally:
            rec.depth -= 1
        return result
    wrapper.__wrapped__ = fn
    wrapper.__name__ = getattr(fn, "__name__", name)
    return wrapper


def _take_torch_values(rec, r, result, flowlike):
    want = rec.replay.get(r.key)
    if want is None:
        return
    outs = _tensors(result)
    for t, (shape, _dtype, arr) in zip(outs, want.outputs):
        if tuple(t.shape) == tuple(shape) and arr is not None:
            with flowlike.no_grad():
                t.copy_(flowlike.from_numpy(arr).to(t.dtype))
    r.outputs = [(tuple(t.shape), str(t.dtype).split(".")[-1], _flowlike_numpy(t)) for t in outs]


def _patch_flowlike(rec):
    """Wraps flowlike's public functions and Tensor methods; returns the undo list."""
    import flowlike
    import flowlike.nn.functional
    modules = [flowlike, flowlike.nn.functional]
    for extra in ("linalg", "special", "nn.init", "fft"):
        try:
            mod = flowlike
            for part in extra.split("."):
                mod = getattr(mod, part)
            modules.append(mod)
        except (AttributeError, NotImplementedError):
            pass
    undo = []
    for mod in modules:
        for name, value in list(vars(mod).items()):
            if name.startswith("_") or not callable(value) or isinstance(value, type):
                continue
            if getattr(value, "__module__", "") and not str(getattr(value, "__module__", "")).startswith("flowlike"):
                continue
            undo.append((mod, name, value))
            setattr(mod, name, _wrap(rec, name, value, flowlike))
    cls = flowlike.Tensor
    for name in list(dir(cls)):
        if name in _SKIP_METHODS or (name.startswith("_") and name not in _TENSOR_OPERATORS):
            continue
        value = cls.__dict__.get(name)
        if value is None or isinstance(value, property) or not callable(value):
            continue
        undo.append((cls, name, value))
        setattr(cls, name, _wrap(rec, name, value, flowlike))
    return undo


def _run_flowlike(step, replay):
    import flowlike
    rec = _Recorder(replay)
    _LIBRARY_DIRS[:] = _library_dirs(None)
    undo = _patch_flowlike(rec)
    error = None
    try:
        step(flowlike)
    except Exception as e:  # noqa: BLE001 - a crash of the flowlike run is itself the divergence
        error = e
    finally:
        for owner, name, value in reversed(undo):
            setattr(owner, name, value)
    return rec, error


def _compare(torch_rec, fl_rec, rtol, atol, error):
    got = {r.key: r for r in fl_rec.records}
    compared = 0
    for want in torch_rec.records:
        have = got.get(want.key)
        src = linecache.getline(want.filename, want.lineno).strip()
        shapes_t = [(s, d) for s, d, _ in want.outputs]
        if have is None:
            if error is not None or not want.outputs:
                if error is None:
                    continue
                reason = f"flowlike raised {type(error).__name__}: {error}"
            else:
                reason = "flowlike made no matching call here"
            return compared, Divergence(want.name, want.filename, want.lineno, src, shapes_t, [], float("nan"), reason)
        shapes_f = [(s, d) for s, d, _ in have.outputs]
        if [s for s, _ in shapes_t] != [s for s, _ in shapes_f]:
            return compared, Divergence(want.name, want.filename, want.lineno, src, shapes_t, shapes_f, float("nan"),
                                        "output shapes differ")
        worst = 0.0
        for (_, _, a), (_, _, b) in zip(want.outputs, have.outputs):
            if a is None or b is None or a.size == 0:
                continue
            a64, b64 = a.astype(np.float64), b.astype(np.float64)
            both_nan = np.isnan(a64) & np.isnan(b64)
            diff = np.where(both_nan, 0.0, np.abs(a64 - b64))
            bad = diff > atol + rtol * np.abs(a64)
            bad |= np.isnan(a64) != np.isnan(b64)
            if bad.any():
                worst = float(np.nanmax(np.where(np.isnan(diff), np.inf, diff)))
                return compared, Divergence(want.name, want.filename, want.lineno, src, shapes_t, shapes_f, worst,
                                            f"values differ beyond rtol={rtol}, atol={atol}")
        compared += 1
    if error is not None:
        return compared, Divergence("<after the last recorded op>", "<unknown>", 0, "", [], [], float("nan"),
                                    f"flowlike raised {type(error).__name__}: {error}")
    return compared, None


def find_divergence(step, rtol=1e-4, atol=1e-5):
    """Runs step(torch) and step(flowlike) and returns a Report naming the first op whose outputs differ
    beyond tolerance (or that flowlike lacks or fails on), with the user's file, line and source text."""
    torch_rec = _run_torch(step)
    fl_rec, error = _run_flowlike(step, {r.key: r for r in torch_rec.records})
    compared, div = _compare(torch_rec, fl_rec, rtol, atol, error)
    return Report(compared, div, error)


def diff_script(path, argv=(), rtol=1e-4, atol=1e-5):
    """find_divergence for a script: runs it as __main__ under real torch, then under mock_torch."""
    from .mock_torch import mock_torch
    path = os.path.abspath(path)

    def step(lib):
        old_argv, old_path0 = sys.argv, sys.path[0]
        sys.argv = [path] + list(argv)
        sys.path[0] = os.path.dirname(path)
        try:
            if lib.__name__ == "flowlike":
                with mock_torch():
                    runpy.run_path(path, run_name="__main__")
            else:
                runpy.run_path(path, run_name="__main__")
        finally:
            sys.argv, sys.path[0] = old_argv, old_path0
    return find_divergence(step, rtol, atol)


def main(argv=None):
    """python -m flowlike.compat.diff [--rtol R] [--atol A] script.py [args...]"""
    import argparse
    parser = argparse.ArgumentParser(prog="python -m flowlike.compat.diff",
                                     description="Find the first op where a PyTorch script diverges on flowlike.")
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--atol", type=float, default=1e-5)
    parser.add_argument("script")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    ns = parser.parse_args(argv)
    report = diff_script(ns.script, ns.args, ns.rtol, ns.atol)
    print(report)
    return 1 if report.diverged else 0


if __name__ == "__main__":
    sys.exit(main())
