"""flowlike.compile (torch.compile under mock_torch): graph mode behind torch's contract.

A compiled function or module captures its first call per guard key (argument structure and non-tensor values,
tensor shapes, dtypes and requires_grad, grad mode, the train/eval flags and plain attribute values of the
modules it runs, the Python numbers and strings it reads from its globals and closure) with the dispatcher's
tracer (flowlike.graph.capture), and later calls with that key run the captured program in C++.

Training: when the call's outputs need gradients, the program holds the forward only; the outputs get one
autograd node (CompiledFunctionBackward). At the first backward through it the ops the autograd engine issues for
the captured region are captured as a second program; later backwards run that program with the forward's values
it reads (the saved activations: exactly the forward values the backward program takes as inputs, so the forward
run keeps those and releases the rest). The gradients reach the parameters and the inputs through the engine, so
loss.backward() and opt.step() outside the compiled call work as with eager modules. A saved value that a cheap
elementwise op made from another value the backward reads anyway is recomputed by the backward program instead.
Every program goes through nn.Graph's IR passes, fusion and memory plan (graph/passes.py; a training plan's forward
once its backward is captured, keeping the values the backward reads).
A compiled step that runs its backward and the step of an optimizer it holds (its parameters change in place)
hands back its outputs without that node: the call's backward already ran, and the whole step is one program.

Shapes that vary (dynamic=None): the second size of a dimension makes it symbolic (graph/_symbolic.py): one
program, its size-derived integer arguments recomputed per size, then serves every size without a capture;
dynamic=False captures each size. The fit compares the programs as captured; a program instantiated at a new size
first runs as a replay, whose values give its geometry at that size, and then goes through the IR passes. The
recompile limit (torch._dynamo.config.recompile_limit) bounds the guard keys a compiled call captures; past it the
call runs eagerly, after a warning.

Graph breaks (fullgraph=False, torch's default): a capture that reads a tensor on the host (.item(), .tolist(),
bool(t), .numpy()) or that uses a tensor made outside the dispatcher is abandoned: the state it changed is put
back. A function whose own statement broke is split there (graph/_split.py): the statements before and after it
run as compiled segments, the statement itself eagerly. Otherwise the call runs its own Python eagerly, with the
modules it calls compiled as pieces of their own (a module's children, a function's modules; a piece may break in
turn). A torch.compiler.disable'd function called during a capture breaks it the same way, and so does a backward
that reaches the call's inputs (it would go on into their history outside the call). explain() lists the breaks with reason and source line; with
fullgraph=True the first break raises Unsupported naming the line.
"""
import copy
import functools
import logging
import operator
import types
import warnings
import weakref
from collections import OrderedDict
from itertools import chain

from .. import _C, _dtype, _random
from ..nn.modules import module as _module
from ..nn.modules.module import Module
from ..optim.optimizer import Optimizer
from . import _split, passes
from ._symbolic import SymbolicProgram, at_geometry, export, masked, shape_difference
from ._common import flatten, locator, resolve, sources, trace_begin, trace_end, tracing, unflatten, user_frame

__all__ = ["compile", "CompiledCode", "OptimizedModule", "Unsupported", "is_compiling", "reset", "disable", "explain"]

_log = logging.getLogger("flowlike.compile")
_SIMPLE = (bool, int, float, str, type(None))
_ARG_OBJECTS = (Module, Optimizer)  # objects a compiled call may take as arguments, guarded as those it holds
_BACKENDS = ("inductor", "eager", "aot_eager", "cudagraphs", "flowlike")
_warned = set()
_capturing = 0  # depth of the compiled calls now being captured
_all = weakref.WeakSet()  # every CompiledCode, for reset()
_dynamo_config = None  # flowlike._dynamo.config, once a call has imported it
_TENSOR_SPECS = {}  # number of arguments -> flatten's structure of a call with that many tensors and no keywords


class Unsupported(RuntimeError):
    """A graph break under fullgraph=True (torch._dynamo.exc.Unsupported)."""


def is_compiling():
    """True while flowlike.compile captures a call (torch.compiler.is_compiling)."""
    return _capturing > 0


def _config():
    global _dynamo_config
    from .._dynamo import config  # imported at the first call: flowlike._dynamo imports this module
    _dynamo_config = config
    return config


def _warn_once(key, message):
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, UserWarning, stacklevel=4)


class GraphBreak:
    """Why a capture could not become a program (reason) and the user's source line of it (where, 'file:line');
    line: the line of the compiled function's own code that was running (None when unknown)."""

    def __init__(self, reason, where, line=None):
        self.reason, self.where, self.line = reason, where, line

    def __repr__(self):
        return f"GraphBreak({self.where}: {self.reason})"


def _settings_holder(v):
    """Whether v is an object whose plain attributes code reads as settings (a config object, a namespace of
    arguments): an instance with a __dict__ that is no module, tensor, optimizer, class, function or package."""
    return (hasattr(v, "__dict__") and not callable(v) and not isinstance(v, (Module, _C.Tensor, Optimizer, type))
            and not isinstance(v, types.ModuleType))


def _plain_attributes(obj):
    return tuple([v for v in obj.__dict__.values() if type(v) in _SIMPLE])


def _read_values(fn):
    """The Python values of plain type a function reads from its globals and closure, and the plain attributes of
    the settings objects it holds there (a guard: a change means a new capture, as torch's guards on globals and
    attribute reads)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return lambda: ()
    glob = fn.__globals__
    names = [n for n in code.co_names if n in glob and isinstance(glob[n], _SIMPLE)]
    cells = [c for c in (fn.__closure__ or ()) if isinstance(_cell(c), _SIMPLE)]
    holders = [glob[n] for n in code.co_names if _settings_holder(glob.get(n))]
    holders += [_cell(c) for c in (fn.__closure__ or ()) if _settings_holder(_cell(c))]
    return lambda: (tuple(glob.get(n) for n in names), tuple(_cell(c) for c in cells),
                    tuple([_plain_attributes(h) for h in holders]))


def _cell(c):
    try:
        return c.cell_contents
    except ValueError:  # an empty cell
        return None


def _held(fn, kind):
    """The objects of type `kind` a function holds: its bound self, its closure, the globals it names."""
    found = []
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, kind):
        found.append(owner)
    fn = getattr(fn, "__func__", fn)
    code = getattr(fn, "__code__", None)
    if code is not None:
        found += [_cell(c) for c in (fn.__closure__ or ()) if isinstance(_cell(c), kind)]
        found += [fn.__globals__[n] for n in code.co_names if isinstance(fn.__globals__.get(n), kind)]
    return found


def _modules_of(fn, module):
    """The modules whose train/eval flag and plain attributes guard a compiled call: the compiled module's, or
    those a function holds."""
    return [module] if module is not None else _held(fn, Module)


class _HeldState:
    """The parameters' .grad and the optimizers' states before a capture. A call that rebinds them (a backward
    after zero_grad(), an optimizer's first step, a step count kept as a Python number) made objects a program
    cannot hand back on its runs: the capture breaks, and this puts them back before the eager rerun."""

    def __init__(self, params, optimizers):
        self.params, self.optimizers = params, optimizers
        self.grads = [p.grad for p in params]
        self.versions = [p._version for p in params]
        self.states = [[(k, dict(v)) for k, v in o.state.items()] for o in optimizers]

    def changed(self):
        return any(p.grad is not g for p, g in zip(self.params, self.grads)) or any(
            len(o.state) != len(state) or any(o.state.get(k) is None or o.state[k].keys() != v.keys() or
                                              any(o.state[k][n] is not x for n, x in v.items()) for k, v in state)
            for o, state in zip(self.optimizers, self.states))

    def stepped(self):
        """Whether the call, holding optimizers, updated parameters that require grad in place (a step)."""
        return bool(self.optimizers) and any(p.requires_grad and p._version != v
                                             for p, v in zip(self.params, self.versions))

    def restore(self):
        for p, g in zip(self.params, self.grads):
            p.grad = g
        for o, state in zip(self.optimizers, self.states):
            o.state.clear()
            o.state.update((k, dict(v)) for k, v in state)


class _Plan:
    """A captured forward program and how to feed it; for a training plan also its backward program (captured at
    the first backward) and what that program reads."""

    def __init__(self, program, srcs, out_spec, out_ids):
        self.program = program
        self.sources = srcs         # per program input: ("arg", i) | ("fixed", tensor)
        self.out_spec = out_spec
        self.out_ids = out_ids      # per output tensor: ("value", id) | ("input", k) | ("fixed", tensor)
        self.wanted = sorted({w for k, w in out_ids if k == "value"})
        self.diff_inputs = []       # the forward inputs that require grad (positions), a training plan's
        self.diff_outputs = []      # the outputs that carry gradients (positions in out_ids)
        self.backward = None        # the backward program once captured
        self.capture_call = None    # a weak reference to the capturing call's backward state, until then
        self.fusion = self.backward_fusion = None  # the programs' fused kernels (codegen), installed when built
        self.exported = None        # the programs as captured, before the passes (export()), for a symbolic fit
        self.fresh = set()          # of a symbolic plan at a new size: "program", "backward" until their first run
        self.who = None             # the name the logs give the programs

    def prepare(self, code):
        """Once the plan has all its programs: the IR passes, fusion and in-place reuse over each (graph/passes.py;
        the memory plan follows from the first run), as nn.Graph's. The forward's passes wait for the backward: they
        must keep the values the backward reads (`wanted`). A compiled call that may vary in size keeps the programs
        as captured, which the fit of symbolic dimensions compares (folding makes size-dependent constants)."""
        if code.dynamic is not False:
            self.exported = (export(self.program), None if self.backward is None else export(self.backward))
        self.fusion = passes.prepare(self.program, self.wanted, _log, code.name)
        if self.backward is not None:
            self.backward_fusion = passes.prepare(self.backward, self.backward_wanted, _log, f"{code.name} backward")

    def run(self, tensors):
        """Runs the forward; returns (its inputs, value id -> tensor of the values it handed back)."""
        inputs = [tensors[what] if kind == "arg" else what for kind, what in self.sources]
        return inputs, self.execute("program", inputs)

    def execute(self, which, inputs):
        """Runs the forward ("program") or the backward program; returns value id -> tensor of the values it hands
        back. A program a symbolic plan instantiated at a new size carries the geometry of the fit's first capture:
        its first run is a replay, whose values give the geometry at this size, then the passes run over it (they
        and fusion read the geometry)."""
        program, wanted = getattr(self, which), self.wanted if which == "program" else self.backward_wanted
        if which in self.fresh:
            values = program.replay(inputs)
            program = at_geometry(program, values)
            passes.run_passes(program, wanted, _log, f"{self.who} {which}")
            setattr(self, which, program)
            self.fresh.discard(which)
            if self.uses >= _FUSE_SIZE_AFTER:
                self.fuse(which)
            return {w: values[w] for w in wanted}
        fusion = self.fusion if which == "program" else self.backward_fusion
        if fusion is not None:
            fusion.poll()
        return dict(zip(wanted, program.run(inputs, wanted)))

    def fuse(self, which):
        """Fuses a symbolic plan's program at its size (and lets pointwise calls reuse operands)."""
        fusion = passes.fuse(getattr(self, which), self.wanted if which == "program" else self.backward_wanted, _log,
                             f"{self.who} {which}")
        setattr(self, "fusion" if which == "program" else "backward_fusion", fusion)


def _compiled_backward(state, *grads):
    """The backward of a compiled call's autograd node (its ctx is the call's state): the captured backward
    program."""
    if _C.is_grad_enabled():  # create_graph: the backward program's results carry no history
        raise RuntimeError("torch.compile with aot_autograd does not currently support double backward")
    return tuple(state.backward(grads))


class _CaptureCall:
    """Backward of the call that captured a training plan: the eager autograd graph the capture built is run under
    the tracer, which records the backward program the later calls run."""

    def __init__(self, code, plan, eager_outputs, leaves):
        self.code, self.plan, self.eager_outputs, self.leaves = code, plan, eager_outputs, leaves

    def backward(self, grads):
        plan = self.plan
        if plan.backward is not None:  # another call of this plan captured it meanwhile
            return _grad_of(self.eager_outputs, self.leaves, grads)
        trace_begin(forbid_host_reads=True)
        try:
            result = _grad_of(self.eager_outputs, self.leaves, grads)
        finally:
            program = trace_end()
        if program.holes:
            self.code._note_break(GraphBreak(f"the backward uses a tensor made outside the dispatcher "
                                         f"({program.holes[0]})", "backward"))
            plan.capture_call = None  # the next call captures again
            return result
        fwd = plan.program
        # what the backward reads, by the forward's value ids (a Python id would not do: the capture's tensors
        # have no Python object of their own)
        f_inputs = {vid: k for k, vid in enumerate(fwd.input_ids)}
        grad_of = {id(g): k for k, g in enumerate(grads) if g is not None}
        b_inputs, srcs, saved = program.inputs, [], set()
        for t in b_inputs:
            vid = -1 if id(t) in grad_of else _C._program_value_of(fwd, t)  # a value or the engine's alias of one
            if id(t) in grad_of:
                srcs.append(("grad", grad_of[id(t)]))
            elif vid in f_inputs:
                srcs.append(("finput", f_inputs[vid]))
            elif vid >= 0:
                srcs.append(("saved", vid))
                saved.add(vid)
            else:
                srcs.append(("fixed", t))
        locate = locator(program)
        plan.grad_ids = [None if g is None else locate(g) for g in result]
        plan.backward_wanted = sorted({w for where in plan.grad_ids if where is not None
                                       for k, w in [where] if k == "value"})
        fwd.release_capture_state()
        program.release_capture_state()
        plan.backward, plan.backward_sources = _recompute_pointwise(plan, program, srcs)
        saved = {what for kind, what in plan.backward_sources if kind == "saved"}
        plan.wanted = sorted(set(plan.wanted) | saved)  # the forward now keeps what the backward reads
        _log.debug("%s: captured the backward (%d ops, %d forward values saved for it, %d recomputed)",
                   self.code.name, len(plan.backward), len(saved), len(plan.backward) - len(program))
        plan.prepare(self.code)
        plan.capture_call = None
        self.code._completed(plan)
        return result


# elementwise ops of one tensor that are cheaper to run again in the backward than to keep between the programs
_POINTWISE = frozenset({"relu", "gelu", "silu", "tanh", "sigmoid", "elu", "leaky_relu", "hardtanh", "softplus",
                        "mish", "hardswish", "hardsigmoid", "exp", "neg", "abs", "sin", "cos", "erf", "square"})


def _recompute_pointwise(plan, backward, srcs):
    """The backward program and its sources, with each saved forward value that a cheap elementwise op made from
    a tensor the backward reads anyway (another saved value, a forward input) recomputed at the backward's start
    instead of kept from the forward: a lower peak between the programs, the same bits."""
    exported = export(plan.program)
    if exported is None:
        return backward, srcs
    calls = exported[0]
    last_write = {}  # forward value id -> index of the last call that wrote it
    for ci, call in enumerate(calls):
        for ids in call[3]:
            for vid in ids:
                last_write[vid] = ci
    b_ids = backward.input_ids
    f_input_ids = plan.program.input_ids
    read = {what if kind == "saved" else f_input_ids[what]: b_ids[k] for k, (kind, what) in enumerate(srcs)
            if kind in ("saved", "finput")}  # forward value id -> the backward's id for it
    outputs = {what for kind, what in plan.out_ids if kind == "value"}
    handed = {what for where in plan.grad_ids if where is not None for kind, what in [where] if kind == "input"}
    redo = {}  # position in srcs -> the forward call to run again
    for k, (kind, vid) in enumerate(srcs):
        ci = last_write.get(vid)
        if kind != "saved" or vid in outputs or k in handed or ci is None:
            continue
        name, _, arg_ids, result_ids = calls[ci]
        tensors = [i for ids in arg_ids for i in ids]
        if name in _POINTWISE and len(tensors) == 1 and result_ids == [[vid]] and tensors[0] in read and \
                last_write.get(tensors[0], -1) < ci:  # its input is not written after it (in place)
            redo[k] = ci
    b_exported = export(backward) if redo else None
    if b_exported is None:
        return backward, srcs
    b_calls, _, constants, num_values, meta = b_exported
    first = [(calls[ci][0], calls[ci][1], [[read[i] for i in ids] for ids in calls[ci][2]], [[b_ids[k]]])
             for k, ci in redo.items()]
    kept = [k for k in range(len(srcs)) if k not in redo]
    program = _C._program_from(first + b_calls, [b_ids[k] for k in kept], constants, num_values, meta)
    shift = {k: n for n, k in enumerate(kept)}  # the grads handed back as backward inputs move with them
    plan.grad_ids = [where if where is None or where[0] != "input" else ("input", shift[where[1]])
                     for where in plan.grad_ids]
    return program, [srcs[k] for k in kept]


def _grad_of(outputs, leaves, grads):
    # retain_graph: a user's retain_graph=True backward may come again; the graph dies with the node anyway
    from ..autograd import grad
    return grad(outputs, leaves, list(grads), retain_graph=True, allow_unused=True)


class _ReplayCall:
    """Backward of a replayed call: the backward program run on the values the forward handed back."""

    def __init__(self, plan, inputs, got):
        self.plan, self.inputs, self.got = plan, inputs, got

    def backward(self, grads):
        plan = self.plan
        binputs = []
        for kind, what in plan.backward_sources:
            if kind == "grad":
                binputs.append(grads[what])
            elif kind == "finput":
                binputs.append(self.inputs[what])
            elif kind == "saved":
                binputs.append(self.got[what])
            else:
                binputs.append(what)
        got = plan.execute("backward", binputs)
        return [None if where is None else resolve(where, got, binputs) for where in plan.grad_ids]


class _LateBackward:
    """Backward of a forward program run before its backward program exists (the capturing call's outputs died
    without a backward): the call runs once more under the tracer, from the random state the forward started from
    and with the in-place changes of the rerun put back, and that rerun's backward is recorded as the plan's
    backward program while it computes these gradients."""

    def __init__(self, code, key, modules, args, kwargs, rng, plan, diff_inputs):
        self.code, self.key, self.modules, self.args, self.kwargs, self.rng = code, key, modules, args, kwargs, rng
        self.plan, self.diff_inputs = plan, diff_inputs

    def backward(self, grads):
        from ..autograd.grad_mode import enable_grad
        code = self.code
        now = _random.get_rng_state()
        _random.set_rng_state(self.rng)
        tensors = []
        flatten((self.args, self.kwargs), tensors, who="torch.compile", objects=(_ARG_OBJECTS, []))
        try:
            with enable_grad():  # the engine runs backward functions with grad mode off
                result = code._capture(self.key, self.args, self.kwargs, tensors, self.modules)
        finally:
            _random.set_rng_state(now)
        plan = code.entries.get(self.key)
        state = plan.capture_call() if isinstance(plan, _Plan) and plan.capture_call is not None else None
        if state is not None:
            _restore(plan.program, None)  # the forward this node belongs to made the in-place changes already
            return state.backward(grads)
        # the rerun broke, and ran eagerly: its autograd graph reaches this node's inputs
        outs = []
        flatten(result, outs, "the result", who="torch.compile")
        return _grad_of([outs[i] for i in self.plan.diff_outputs], self.diff_inputs, grads)


class _Split:
    """A function whose own code broke: its statements before and after the breaking one run as compiled
    segments, the breaking statement eagerly (graph/_split.py)."""

    def __init__(self, code, segments):
        self.code = code
        self.compiled = []
        self.segments = []
        for k, (fn, compiled, reads) in enumerate(segments):
            if compiled:
                fn = CompiledCode(fn, None, fullgraph=False, dynamic=code.dynamic, name=f"{code.name}[segment {k}]")
                fn.holder = code.holder or code.fn
                self.compiled.append(fn)
            self.segments.append((fn, reads, compiled))

    @staticmethod
    def _wrapped_number(value):
        # a 0-dim float64 tensor marked as a wrapped Python number: type promotion treats it as the float itself
        return _C._call_op("scalar_tensor", value, dtype=_dtype.float64, wrapped=True)

    def __call__(self, args, kwargs):
        returned, value = _split.run_segments(self.segments, self.code.fn, args, kwargs, self._wrapped_number)
        if hasattr(self.code.fn, "_flowlike_known"):  # a segment split again answers as a segment
            return returned, value
        return value if returned else None


def _own_line(tb, fn):
    """The line of fn's own code that was running where the traceback ends (None when fn's frame is not in it)."""
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    line = None
    while tb is not None:
        if tb.tb_frame.f_code is code:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


class _Pieces:
    """A call that broke: its Python runs eagerly and the modules it calls (pieces()) run compiled on their own."""

    def __init__(self, code):
        self.code = code

    def __call__(self, args, kwargs):
        children = self.code.pieces()
        before = [child.__dict__.get("forward") for child, _ in children]  # a Module.compile'd child's
        for child, piece in children:
            child.__dict__["forward"] = piece
        try:
            return self.code.fn(*args, **kwargs)
        finally:
            for (child, _), old in zip(children, before):
                if old is None:
                    del child.__dict__["forward"]
                else:
                    child.__dict__["forward"] = old


class CompiledCode:
    """The compiled form of one function or module call: its guard keys and what runs for each (a plan, the
    pieces of a module call that broke, or eager code); callable as the function."""

    def __init__(self, fn, module=None, *, fullgraph=False, dynamic=None, name=None):
        self.fn, self.module = fn, module
        self.fullgraph, self.dynamic = fullgraph, dynamic
        self.name = name or getattr(fn, "__qualname__", type(fn).__name__)
        self.entries = OrderedDict()  # guard key -> _Plan | _Pieces | None (eager)
        self.captures = 0             # forward programs captured (a counter tests read)
        self.breaks = []              # the graph breaks met: GraphBreak
        self._read = _read_values(getattr(fn, "__func__", fn))
        self._guarded = None          # (structure version, modules, parameters, optimizers) the guards read
        self._last_values = None      # (the modules' attribute values, the plain ones among them) at the last call
        self._pieces = None
        self._limit_hit = False
        self.symbolic = None          # the _SymbolicPlan of dimensions that vary (dynamic=None)
        self.holder = None            # for a segment of a split function: that function, whose modules and
        #                               optimizers (held in its closure or globals) the segment's code reaches
        self._fit_failed = False
        _all.add(self)

    # ---- guards -----------------------------------------------------------------------------------------------
    def _modules(self):
        version = _module.structure_version()
        if self._guarded is None or self._guarded[0] != version:
            holder = self.holder or self.fn
            mods = [m for root in _modules_of(holder, self.module) for m in root.modules()]
            self._guarded = (version, mods, [p for m in mods for p in m._parameters.values() if p is not None],
                             _held(holder, Optimizer) if self.module is None else [])
        return self._guarded

    def _key(self, spec, tensors, arg_objects):
        """The guard key of a call (modules and optimizers passed as arguments, such as a compiled method's self,
        are guarded as those the code holds)."""
        version, mods, params, optimizers = self._modules()
        if arg_objects:
            arg_modules = [o for o in arg_objects if isinstance(o, Module)]
            mods = mods + [m for root in arg_modules for m in root.modules()]
            params = params + [p for root in arg_modules for p in root.parameters()]
            optimizers = optimizers + [o for o in arg_objects if isinstance(o, Optimizer)]
        return (spec, tuple((tuple(t.shape), t.dtype, t.requires_grad) for t in tensors), _C.is_grad_enabled(),
                self._plain_values(mods),
                tuple([p.requires_grad for p in params]), self._read(), version,
                # a step that runs an optimizer reads its hyperparameters and state tensors (load_state_dict
                # replaces them)
                (tuple([v for o in optimizers for g in o.param_groups for k, v in g.items()
                        if k != "params" and type(v) in _SIMPLE]),
                 tuple([id(state) for o in optimizers for state in o.state.values()])))

    def _plain_values(self, mods):
        """The modules' plain attribute values, their `training` flags among them, and the plain attributes of the
        settings objects the modules hold (a config object). This runs per call: while every attribute is the same
        object as at the last call (an identity check in C), the last answer stands, without a type test per
        attribute."""
        last = self._last_values
        dicts = [m.__dict__ for m in mods]
        values = list(chain.from_iterable(map(dict.values, dicts + (last[2] if last is not None else []))))
        if last is not None and len(last[0]) == len(values) and all(map(operator.is_, values, last[0])):
            return last[1]
        nested, seen = [], set()
        for v in chain.from_iterable(map(dict.values, dicts)):
            if id(v) not in seen and _settings_holder(v):
                seen.add(id(v))
                nested.append(v.__dict__)
        values = list(chain.from_iterable(map(dict.values, dicts + nested)))
        plain = tuple([v for v in values if type(v) in _SIMPLE])
        self._last_values = (values, plain, nested)
        return plain

    def _why(self, key):
        names = ("argument structure or values", "tensor shapes/dtypes/requires_grad", "grad mode",
                 "train/eval flags or module attributes", "parameters' requires_grad", "globals or closure values read",
                 "the modules' parameters or buffers", "optimizer hyperparameters or state")
        last = next(reversed(self.entries))
        return ", ".join(n for n, a, b in zip(names, key, last) if a != b) or "guard"

    # ---- calling ----------------------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        config = _dynamo_config or _config()
        if tracing() or config.disable:
            return self.fn(*args, **kwargs)  # inside a capture (ours or nn.Graph's) the call is part of its program
        alone = not kwargs and all([isinstance(a, _C.Tensor) for a in args])  # the common call: tensors alone
        spec = _TENSOR_SPECS.get(len(args)) if alone else None
        if spec is not None:  # its structure is the one flattened before
            tensors, modules = list(args), (_ARG_OBJECTS, [])
        else:
            tensors, modules = [], (_ARG_OBJECTS, [])
            try:
                spec = flatten((args, kwargs), tensors, who="torch.compile", objects=modules)
            except TypeError as e:
                return self._eager(GraphBreak(str(e), self.name), args, kwargs)
            if alone:
                _TENSOR_SPECS[len(args)] = spec
        key = self._key(spec, tensors, modules[1])
        entry = self.entries.get(key, False)
        if entry is not False:
            if isinstance(entry, _Plan) and entry.backward is None and entry.diff_outputs:
                if entry.capture_call is not None and entry.capture_call() is not None:
                    return self.fn(*args, **kwargs)  # the backward program comes with the capturing call's backward
                # that call's outputs died without a backward (an evaluation loop with grad mode on): the forward
                # program runs, and a backward, if one comes, records itself from a rerun of the call (a new plan:
                # this one's program then serves these runs alone, and is optimized for the outputs alone)
                if entry.fusion is None:
                    entry.prepare(self)
                self.entries.move_to_end(key)
                return self._run(entry, args, kwargs, tensors, late=(key, modules[1]))
            self.entries.move_to_end(key)
            return self._run(entry, args, kwargs, tensors)
        sym = self.symbolic
        if sym is not None and sym.verified:
            masked_key, size = masked(key, sym.positions)
            plan = sym.at(size, self.name) if masked_key == sym.masked_key and size is not None else None
            if plan is not None:
                return self._run(plan, args, kwargs, tensors)
        if len(self.entries) >= config.recompile_limit:
            if not self._limit_hit:
                self._limit_hit = True
                warnings.warn(f"torch._dynamo hit config.recompile_limit ({config.recompile_limit})\n"
                              f"   function: '{self.name}'\n   last reason: {self._why(key)}\n"
                              "To log all recompilation reasons, use TORCH_LOGS=\"recompiles\".", UserWarning,
                              stacklevel=2)
            return self.fn(*args, **kwargs)
        if self.entries:
            _log.debug("%s: recompiling (%d cached): guard failed: %s", self.name, len(self.entries), self._why(key))
        return self._capture(key, args, kwargs, tensors, modules[1])

    def _run(self, entry, args, kwargs, tensors, late=None):
        if entry is None:
            return self.fn(*args, **kwargs)
        if isinstance(entry, (_Pieces, _Split)):
            return entry(args, kwargs)
        rng = _random.get_rng_state() if late is not None else None
        inputs, got = entry.run(tensors)
        outs = [resolve(w, got, inputs) for w in entry.out_ids]
        if entry.diff_outputs:
            diff_inputs = [inputs[k] for k in entry.diff_inputs]
            state = (_ReplayCall(entry, inputs, got) if late is None else
                     _LateBackward(self, *late, args, kwargs, rng, entry, diff_inputs))
            _attach(state, entry, diff_inputs, outs)
        return unflatten(entry.out_spec, outs)

    def _eager(self, brk, args, kwargs):
        self._note_break(brk)
        return self.fn(*args, **kwargs)

    def _note_break(self, brk):
        if not any(b.where == brk.where and b.reason == brk.reason for b in self.breaks):  # each break once
            self.breaks.append(brk)
            _log.debug("%s: graph break at %s: %s", self.name, brk.where, brk.reason)
        if self.fullgraph:
            raise Unsupported(f"torch.compile(fullgraph=True): graph break in {self.name} at {brk.where}: "
                              f"{brk.reason}") from None

    # ---- capturing --------------------------------------------------------------------------------------------
    def _capture(self, key, args, kwargs, tensors, modules):
        global _capturing
        # tensors that need gradients enter as detached leaves, so the capture's backward stops at them
        leaves = [t.detach().requires_grad_() if t.requires_grad else t for t in tensors]
        call_args, call_kwargs = args, kwargs
        if any(a is not b for a, b in zip(leaves, tensors)):
            call_args, call_kwargs = unflatten(flatten((args, kwargs), [], who="torch.compile", objects=(_ARG_OBJECTS, [])),
                                               leaves)
        rng = _random.get_rng_state()
        held = _HeldState(self._modules()[2] + [p for m in modules if isinstance(m, Module) for p in m.parameters()],
                          self._modules()[3] + [o for o in modules if isinstance(o, Optimizer)])
        _capturing += 1
        try:
            trace_begin(forbid_host_reads=True)
        except RuntimeError:  # a capture this module does not know of (a bare _C._trace_begin): be part of it
            _capturing -= 1
            return self.fn(*args, **kwargs)
        try:
            result = self.fn(*call_args, **call_kwargs)
        except Exception as e:
            program = trace_end()
            _capturing -= 1
            if isinstance(e, _DisabledCall):
                reason = f"call to {e.name}, which torch.compiler.disable keeps out of graphs"
            elif isinstance(e, RuntimeError) and "reads a tensor's value on the host" in str(e):
                reason = str(e).split(" while ")[0]
            else:
                raise
            brk = GraphBreak(reason, user_frame(e.__traceback__, self.name), _own_line(e.__traceback__, self.fn))
            return self._broke(key, brk, program, rng, held, args, kwargs)
        program = trace_end()
        _capturing -= 1
        if program.holes:
            return self._broke(key, GraphBreak(f"a tensor made outside the dispatcher: {program.holes[0]}", self.name),
                               program, rng, held, args, kwargs)
        if any(leaf is not t and leaf.grad is not None for leaf, t in zip(leaves, tensors)):
            # a backward inside the call reached its inputs: eagerly it goes on into their history outside the call
            return self._broke(key, GraphBreak("a backward through the autograd history of the call's inputs "
                                               "(made outside the compiled call)", self.name),
                               program, rng, held, args, kwargs)
        if held.changed():
            return self._broke(key, GraphBreak("the call rebinds parameters' .grad or optimizer state (a backward "
                                               "after zero_grad(), an optimizer's first step): compile the model "
                                               "and keep the step eager, or use nn.Graph", self.name),
                               program, rng, held, args, kwargs)
        out_tensors = []
        try:
            out_spec = flatten(result, out_tensors, "the result", who="torch.compile")
        except TypeError as e:
            return self._broke(key, GraphBreak(str(e), self.name), program, rng, held, args, kwargs)
        self.captures += 1
        known = {id(t): ("arg", i) for i, t in enumerate(leaves)}
        locate = locator(program)
        plan = _Plan(program, sources(program, known), out_spec, [locate(t) for t in out_tensors])
        # a call that steps the optimizer ran its backward already (eagerly the outputs' graph is consumed, its
        # leaves updated in place): its outputs get no node waiting for a backward that never comes
        plan.diff_outputs = [] if held.stepped() else [
            i for i, t in enumerate(out_tensors) if t.requires_grad and t.grad_fn is not None]
        plan.diff_inputs = [k for k, t in enumerate(program.inputs) if t.requires_grad]
        _log.debug("%s: captured %d ops (%d inputs, %s)", self.name, len(program), len(program.inputs),
                   "forward of a training step" if plan.diff_outputs else "no gradients")
        plan.key = key
        self.entries[key] = plan
        outs = [t.detach() if w[0] == "value" else t for t, w in zip(out_tensors, plan.out_ids)]
        if not plan.diff_outputs:
            plan.prepare(self)
            program.release_capture_state()
            self._completed(plan)
            return unflatten(out_spec, outs)
        # the backward program is captured from this call's backward, through the autograd graph the capture built
        state = _CaptureCall(self, plan, [out_tensors[i] for i in plan.diff_outputs],
                             [program.inputs[k] for k in plan.diff_inputs])
        plan.capture_call = weakref.ref(state)
        _attach(state, plan, [tensors[w] if k == "arg" else w for k, w in (plan.sources[i] for i in plan.diff_inputs)],
                outs)
        return unflatten(out_spec, outs)

    def _broke(self, key, brk, program, rng, held, args, kwargs):
        """A capture that cannot be a program: puts back what it changed, then runs the call eagerly (a module's
        as pieces); returns its result. (The rerun also gives the result its autograd history from the call's own
        inputs, which the capture replaced by detached leaves.)"""
        held.restore()
        _restore(program, rng)
        self._note_break(brk)
        segments = _split.split(self.fn, brk.line) if self.module is None and brk.line is not None else None
        if segments is not None:  # the function's own code broke: its statements around the break run compiled
            entry = _Split(self, segments)
        else:
            entry = _Pieces(self) if self.pieces() else None
        self.entries[key] = entry
        return entry(args, kwargs) if entry is not None else self.fn(*args, **kwargs)

    def pieces(self):
        """(module, its compiled forward) for each module a call that broke runs compiled on its own: the direct
        children of a compiled module (or of a method's module), the modules a compiled function holds."""
        if self._pieces is None:
            owner = self.module if self.module is not None else getattr(self.fn, "__self__", None)
            named = (list(owner.named_children()) if isinstance(owner, Module) else
                     [(type(m).__name__, m) for m in _modules_of(self.fn, None)])
            self._pieces = [(child, CompiledCode(type(child).forward.__get__(child), child, fullgraph=False,
                                                 dynamic=self.dynamic, name=f"{self.name}.{name}"))
                            for name, child in named]
        return self._pieces

    def _parts(self):
        """The compiled codes this code's calls run on their own: its pieces and its split segments."""
        return [piece for _, piece in (self._pieces or ())] + [c for e in self.entries.values()
                                                               if isinstance(e, _Split) for c in e.compiled]

    def all_breaks(self):
        """The breaks met by this code and its parts."""
        return self.breaks + [b for part in self._parts() for b in part.all_breaks()]

    def all_captures(self):
        """The forward programs captured by this code and its parts."""
        return self.captures + sum(part.all_captures() for part in self._parts())

    def all_plans(self):
        """The captured plans of this code and its parts."""
        return ([e for e in self.entries.values() if isinstance(e, _Plan)] +
                [p for part in self._parts() for p in part.all_plans()])

    # ---- symbolic dimensions ------------------------------------------------------------------------------------
    def _completed(self, plan):
        """A plan got all its programs: the second size of a dimension makes it symbolic (a fit of the two
        captures), a third size checks the fit."""
        if self.dynamic is False or self._fit_failed:
            return
        sym = self.symbolic
        if sym is not None:
            if sym.verified:
                return
            masked_key, size = masked(plan.key, sym.positions)
            if masked_key != sym.masked_key or size in (sym.forward.s1, sym.forward.s2):
                return
            sym.verified = (_same_structure(sym.base, plan) and sym.forward.predicts(plan.exported[0], size) and
                            (sym.backward is None or sym.backward.predicts(plan.exported[1], size)))
            if not sym.verified:
                self.symbolic, self._fit_failed = None, True
            _log.debug("%s: the fit of the symbolic dimensions %s %s at size %d", self.name, sym.positions,
                       "holds" if sym.verified else "fails (each size is captured)", size)
            return
        for other in self.entries.values():
            if other is plan or not isinstance(other, _Plan) or (other.diff_outputs and other.backward is None):
                continue
            positions = shape_difference(other.key, plan.key)
            if positions is None or not _same_structure(other, plan):
                continue
            s1, s2 = masked(other.key, positions)[1], masked(plan.key, positions)[1]
            forward = SymbolicProgram.fit(other.exported[0], plan.exported[0], s1, s2)
            backward = None if plan.backward is None else SymbolicProgram.fit(other.exported[1], plan.exported[1], s1,
                                                                              s2)
            if forward is None or (plan.backward is not None and backward is None):
                continue
            self.symbolic = _SymbolicPlan(positions, masked(plan.key, positions)[0], plan, forward, backward)
            _log.debug("%s: dimensions (tensor, dim) %s made symbolic (sizes %d, %d)", self.name, positions, s1, s2)
            return

    def reset(self):
        self.symbolic = None
        self._fit_failed = False
        self.entries.clear()
        self.breaks.clear()
        self._pieces = None
        self._limit_hit = False


def _same_where(a, b):
    """Whether two lists of (kind, what) places (or None) name the same places (a fixed tensor: the same one)."""
    return len(a) == len(b) and all(x is y if x is None or y is None else
                                    x[0] == y[0] and (x[1] is y[1] if x[0] == "fixed" else x[1] == y[1])
                                    for x, y in zip(a, b))


def _same_structure(p1, p2):
    """Whether two plans feed and read their programs alike (what a symbolic fit needs besides the calls)."""
    return (_same_where(p1.sources, p2.sources) and p1.out_spec == p2.out_spec and _same_where(p1.out_ids, p2.out_ids)
            and p1.wanted == p2.wanted and p1.diff_inputs == p2.diff_inputs and p1.diff_outputs == p2.diff_outputs
            and (p1.backward is None) == (p2.backward is None)
            and (p1.backward is None or (_same_where(p1.backward_sources, p2.backward_sources) and
                                         _same_where(p1.grad_ids, p2.grad_ids) and
                                         p1.backward_wanted == p2.backward_wanted)))


_FUSE_SIZE_AFTER = 2  # the use of a size at which a symbolic plan builds that size's fused kernels


class _SymbolicPlan:
    """A plan whose programs serve every size of the symbolic dimensions (positions: (tensor, dim) pairs of the
    call's tensors), instantiated per size from the fit of two captures, checked at a third."""

    def __init__(self, positions, masked_key, base, forward, backward):
        self.positions, self.masked_key, self.base = positions, masked_key, base
        self.forward, self.backward = forward, backward
        self.verified = False
        self.sizes = OrderedDict()  # size -> the plan instantiated for it (the most recent few)

    def at(self, size, name):
        """The plan at this size (`name`: the compiled code's, for the logs)."""
        plan = self.sizes.get(size)
        if plan is None:
            program = self.forward.at(size)
            backward = self.backward.at(size) if self.backward is not None else None
            if program is None or (self.backward is not None and backward is None):
                return None
            plan = copy.copy(self.base)
            plan.program, plan.backward = program, backward
            plan.fusion = plan.backward_fusion = None
            plan.fresh = {"program", "backward"} if backward is not None else {"program"}
            plan.who = f"{name} at size {size}"
            plan.uses = 0
            self.sizes[size] = plan
            while len(self.sizes) > 16:
                self.sizes.popitem(last=False)
        self.sizes.move_to_end(size)
        plan.uses += 1
        if plan.uses == _FUSE_SIZE_AFTER:
            # a size that comes back gets its own fused kernels (built in the background like any plan's, and cached
            # on disk); a size met once runs unfused rather than paying a compiler run
            for which in {"program", "backward"} - plan.fresh:  # (a program's first run fuses it from now on)
                plan.fuse(which)
        return plan


def _attach(state, plan, diff_inputs, outs):
    """Gives the differentiable outputs (at plan.diff_outputs in outs) one CompiledFunctionBackward node over the
    inputs that need gradients, made in C++ directly (autograd.Function.apply's general work, per call, has nothing
    to do here)."""
    if not (_C.is_grad_enabled() and any([t.requires_grad for t in diff_inputs])):
        return  # as Function.apply: no input needs a gradient, no node
    # fresh aliases get the node, which holds the state: the state's values hold the tensors a run made, and a state
    # holding the node's outputs would be a cycle through C++ that no collector frees (a leak of the saved values)
    made = [outs[i].detach() for i in plan.diff_outputs]
    _C._function_node("CompiledFunctionBackward", state, _compiled_backward, diff_inputs, made, [], True)
    for i, t in zip(plan.diff_outputs, made):
        outs[i] = t


def _restore(program, rng):
    """Puts back the tensors an abandoned capture changed in place (buffers such as running statistics) and the
    random generator's state, so that the eager rerun sees what the capture saw."""
    from .. import no_grad, equal
    with no_grad():
        for t, before in zip(program.inputs, program.input_values):
            if not equal(t, before):
                t.copy_(before)
    if rng is not None:
        _random.set_rng_state(rng)


class OptimizedModule(Module):
    """A compiled module (torch._dynamo.eval_frame.OptimizedModule): behaves as the module it wraps, which it holds
    as `_orig_mod` (so its state_dict keys start with `_orig_mod.`, as torch's); calls run compiled."""

    def __init__(self, mod, code):
        super().__init__()
        self._orig_mod = mod
        self.__dict__["_compiled"] = code
        self.training = mod.training

    def forward(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.__dict__["_modules"]["_orig_mod"], name)


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,
            disable=False):
    """torch.compile: a function or module whose calls run as captured programs (see this module's docstring).
    Usable as a decorator with or without arguments. A module comes back as an OptimizedModule wrapping it.
    backend, mode and options are accepted; flowlike has one backend (an unknown name is warned about once)."""
    if model is None:
        return lambda fn: compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                  options=options, disable=disable)
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    _check_options(backend, mode, options)
    if disable:
        return model
    if isinstance(model, Module):
        return OptimizedModule(model, CompiledCode(model.__call__, model, fullgraph=fullgraph, dynamic=dynamic,
                                                   name=type(model).__name__))
    return _wraps(model, CompiledCode(model, None, fullgraph=fullgraph, dynamic=dynamic))


def compile_forward(module, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,
                    disable=False):
    """Module.compile: the module's forward runs compiled from now on (the module itself stays what it is)."""
    _check_options(backend, mode, options)
    if not disable:
        module.__dict__["forward"] = CompiledCode(type(module).forward.__get__(module), module, fullgraph=fullgraph,
                                                  dynamic=dynamic, name=type(module).__name__)


def _check_options(backend, mode, options):
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if not isinstance(backend, str) or backend not in _BACKENDS:
        name = backend if isinstance(backend, str) else getattr(backend, "__name__", type(backend).__name__)
        _warn_once(("backend", name), f"torch.compile: backend {name!r} is not available in flowlike; the call "
                                      "is compiled by flowlike's graph mode")


def _wraps(fn, code):
    """The function the compiled code is called through (functools.wraps of fn, with torch's attribute naming the
    original)."""
    @functools.wraps(fn)
    def compiled(*args, **kwargs):
        return code(*args, **kwargs)
    compiled._torchdynamo_orig_callable = fn
    compiled._compiled_code = code
    return compiled


class _DisabledCall(Exception):
    """Raised by a torch.compiler.disable'd function called while a compiled call is captured: a graph break."""

    def __init__(self, name):
        super().__init__(name)
        self.name = name


def disable(fn=None, recursive=True, *, reason=None):
    """torch.compiler.disable: fn always runs as Python, eagerly; compiled code that calls it breaks its graph
    there (a decorator, with or without arguments)."""
    if fn is None:
        return lambda f: disable(f, recursive, reason=reason)
    if getattr(fn, "_torchdynamo_disable", False):
        return fn  # disabled already

    @functools.wraps(fn)
    def eager_only(*args, **kwargs):
        if _capturing:
            raise _DisabledCall(getattr(fn, "__qualname__", repr(fn)))
        return fn(*args, **kwargs)
    eager_only._torchdynamo_disable = True
    return eager_only


def reset():
    """torch.compiler.reset / torch._dynamo.reset: forgets every captured program (calls capture again)."""
    for code in list(_all):
        code.reset()


class ExplainOutput:
    """What explain() found (torch._dynamo.backends.debugging.ExplainOutput): the graphs, the breaks with their
    reasons and source lines."""

    def __init__(self, graph_count, break_reasons, ops_per_graph):
        self.graph_count = graph_count
        self.graph_break_count = len(break_reasons)
        self.break_reasons = break_reasons
        self.ops_per_graph = ops_per_graph
        self.op_count = sum(ops_per_graph)

    def __str__(self):
        lines = [f"Graph Count: {self.graph_count}", f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}", "Break Reasons:"]
        for i, b in enumerate(self.break_reasons, 1):
            lines += [f"  Break Reason {i}:", f"    Reason: {b.reason}", f"    User Stack: {b.where}"]
        return "\n".join(lines) + "\n"


def explain(fn, *args, **kwargs):
    """torch._dynamo.explain: runs fn once compiled (fresh, without cached programs) and reports its graphs and
    graph breaks. explain(fn)(*args) and explain(fn, *args) both work."""
    def run(*args, **kwargs):
        if isinstance(fn, OptimizedModule):
            target = fn._orig_mod
        else:
            target = getattr(fn, "_torchdynamo_orig_callable", fn)
        module = target if isinstance(target, Module) else None
        code = CompiledCode(target.__call__ if module is not None else target, module, name=getattr(
            target, "__qualname__", type(target).__name__))
        code(*args, **kwargs)
        plans = code.all_plans()
        return ExplainOutput(len(plans), code.all_breaks(), [len(p.program) for p in plans])
    return run(*args, **kwargs) if args or kwargs else run
