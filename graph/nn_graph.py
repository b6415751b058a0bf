"""flowlike.nn.Graph: OneFlow's static-graph face over eager modules.

A subclass assigns modules in __init__, registers optimizers with add_optimizer, and writes build() in eager
style: an inference step that returns outputs, or a training step that calls loss.backward() (and the
optimizer, through add_optimizer) and returns the loss. Calling the graph runs build.

The first call with a new signature (tensor shapes, dtypes and requires_grad, the other argument values, the
modules' train/eval flags, grad mode, which gradients and optimizer states exist, the hyperparameters) runs
build eagerly while the dispatcher's tracer records every op it issues: forward, the backward ops of the
autograd engine, the optimizer's fused updates (flowlike.graph.capture, Note [Tracer] in csrc/core/dispatch.h).
Later calls with that signature replay the recorded program in C++, one boxed call per op, with no Python per op:
the parameters, buffers, gradients and optimizer states are the program's inputs and are updated in place, so
eager and graph steps can alternate and give the same numbers as all-eager steps. Random ops draw from the
generator at run time, so a graph step draws what the eager step would. Tensors a step makes that outlive it
(gradients created by backward, outputs) are handed back from the replay.

A value read on the host during capture (.item(), bool(t), .tolist(), .numpy()) would be frozen into the
program: it is an error naming the line of build (or of the model code) that read it.
"""
import collections
import contextlib
import json
import logging
import math
import os
import time

from .. import _C, _dtype, _random
from .. import codegen
from . import passes
from .. import serialization as _serialization
from ..autograd.grad_mode import no_grad
from ..nn.modules import module as _module
from ..nn.modules.module import Module
from ..optim.optimizer import Optimizer
from ._common import (flatten as _flatten, locator, resolve, sources as _sources, trace_begin, trace_end,
                      unflatten as _unflatten, user_frame)

__all__ = ["Graph"]

_log = logging.getLogger("flowlike.nn.Graph")


def _to_json(value):
    """A program argument as JSON (dtypes by name)."""
    if isinstance(value, _dtype.dtype):
        return {"dtype": str(value).split(".")[-1]}
    if isinstance(value, float) and not math.isfinite(value):
        return {"float": repr(value)}
    return value


def _from_json(value):
    if isinstance(value, dict):
        return getattr(_dtype, value["dtype"]) if "dtype" in value else float(value["float"])
    return value


def _spec_to_json(spec):
    kind, body = spec
    if kind in ("T", "V"):
        return [kind, body]
    if kind == "dict":
        return [kind, [[k, _spec_to_json(v)] for k, v in body]]
    return ["tuple" if isinstance(kind, type) else kind, [_spec_to_json(v) for v in body]]  # a namedtuple: a tuple


def _spec_from_json(spec):
    kind, body = spec
    if kind in ("T", "V"):
        return (kind, body)
    if kind == "dict":
        return (kind, tuple((k, _spec_from_json(v)) for k, v in body))
    return (kind, tuple(_spec_from_json(v) for v in body))


class _LoadedGraph:
    """A saved inference graph: its program and weights, run on new inputs (Graph.load)."""

    def __init__(self, path):
        with open(os.path.join(path, "program.json")) as fh:
            doc = json.load(fh)
        if doc.get("format") != "flowlike.nn.Graph/1":
            raise RuntimeError(f"{path}: not a saved flowlike nn.Graph (format {doc.get('format')!r})")
        weights = _serialization._load_safetensors(os.path.join(path, "weights.safetensors"))
        constants = [(vid, weights[f"__constant__.{k}"]) for k, vid in enumerate(doc["constants"])]
        # (sizes, dtype name[, strides, wrapped number]): files saved before strides were kept have two entries
        meta = [(m[0], getattr(_dtype, m[1]), *m[2:]) for m in doc["meta"]]
        calls = [(name, [_from_json(a) for a in args], ids, results) for name, args, ids, results in doc["calls"]]
        self._program = _C._program_from(calls, doc["input_ids"], constants, doc["num_values"], meta)
        self._inputs = [("arg", what) if kind == "arg" else ("weight", weights[what]) for kind, what in doc["inputs"]]
        self._out_spec = _spec_from_json(doc["out_spec"])
        self._outputs = [tuple(o) for o in doc["outputs"]]
        self._wanted = sorted({what for kind, what in self._outputs if kind == "value"})
        self._in_spec = _spec_from_json(doc["in_spec"])
        self._in_tensors = [(list(shape), dtype) for shape, dtype in doc["in_tensors"]]
        self._fusion = codegen.fuse(self._program, self._wanted)

    def __call__(self, *args, **kwargs):
        tensors = []
        spec = _flatten((args, kwargs), tensors)
        got_tensors = [(list(t.shape), str(t.dtype).split(".")[-1]) for t in tensors]
        if spec != self._in_spec or got_tensors != self._in_tensors:
            raise ValueError(f"this saved graph runs on inputs like those it was captured with: tensors (shape, dtype) "
                             f"{self._in_tensors} and the same other values; got {got_tensors}")
        inputs = [tensors[what] if kind == "arg" else what for kind, what in self._inputs]
        self._fusion.poll()
        got = dict(zip(self._wanted, self._program.run(inputs, self._wanted)))
        return _unflatten(self._out_spec, [got[what] if kind == "value" else inputs[what] for kind, what in self._outputs])

    def __repr__(self):
        return "LoadedGraph(\n  " + "\n  ".join(self._program.listing()) + "\n)"


class _Slot:
    """A place that holds a tensor across steps: a parameter, a buffer, a parameter's .grad, an optimizer state."""
    __slots__ = ("get", "set", "name")

    def __init__(self, get, set_, name):
        self.get, self.set, self.name = get, set_, name


class _Plan:
    """One captured program and how to feed it: where each input comes from, which values to hand back."""

    def __init__(self, program, slots, sources, out_spec, out_ids, writebacks):
        self.program = program
        self.slots = slots          # the places holding tensors across steps, listed at the capture
        self.sources = sources      # per program input: ("arg", i) | ("slot", j) | ("fixed", tensor)
        self.out_spec = out_spec    # the structure of build's result
        self.out_ids = out_ids      # per output tensor: ("value", id) | ("input", k)
        self.writebacks = writebacks  # (slot index, ("value", id) | None) after each run
        self.wanted = sorted({w[1] for w in out_ids if w[0] == "value"} |
                             {w[1][1] for w in writebacks if w[1] is not None and w[1][0] == "value"})


class Graph:
    """Base class of static graphs (OneFlow's nn.Graph): subclass it, assign modules in __init__, call
    add_optimizer for a training graph, and implement build(*args, **kwargs). Calling the graph runs build:
    captured at the first call per input signature, replayed by the C++ executor afterwards."""

    max_cached_plans = 8

    def __init__(self):
        self._optimizers = []
        self._plans = collections.OrderedDict()
        self._debug = 0
        self._is_built = False
        self._params = None  # the modules' parameters, listed at the last capture
        self._keyed = []  # the modules with a _graph_signature(), listed with _params
        self._params_version = -1
        self._lr_inputs = set()  # ids of the param groups whose lr every plan takes as an input

    # ---- the OneFlow surface ----------------------------------------------------------------------------------
    def build(self, *args, **kwargs):
        raise NotImplementedError("nn.Graph subclasses implement build(*args, **kwargs)")

    def add_optimizer(self, optimizer, *, lr_sch=None):
        """Registers an optimizer whose step runs inside build, and optionally its learning-rate scheduler, which
        the graph steps after each call (as OneFlow's nn.Graph; the new lr reaches the plan as an input)."""
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"add_optimizer: expected an optimizer, got {type(optimizer).__name__}")
        self._optimizers.append((optimizer, lr_sch))

    def debug(self, v_level=0):
        """Logs each capture and the reason for it (the signature that changed) at v_level >= 0, and the fusion
        groups with their generated source at v_level >= 1."""
        self._debug = v_level
        _log.setLevel(logging.DEBUG if v_level >= 0 else logging.WARNING)
        codegen.log.setLevel(logging.DEBUG if v_level >= 1 else logging.WARNING)

    def memory_report(self, *args, **kwargs):
        """Prints and returns the memory of each cached plan's step (Note [Memory plan] in
        csrc/graph/memory_plan.h): the peak of the intermediates when each is freed after its last use, as eager
        frees them; the arena they are planned into; and what a step keeps (outputs, new gradients, optimizer
        state). A plan is planned from its first run after the capture.

        Given a step's inputs (those of a call that was captured), it also measures that step with the allocator's
        counters, run eagerly (build called as plain Python) and as the graph: the most memory each allocates above
        what was allocated before it. The state a step changes (parameters, buffers, gradients, optimizer state,
        the random generator) is put back after each, so measuring takes no training step."""
        mib = 1 / 2**20
        lines = [f"nn.Graph {type(self).__name__}: {len(self._plans)} cached plan(s)"]
        if args or kwargs:
            eager, graph = self._measure(args, kwargs)
            lines.append(f"  measured step peak (above what was allocated before the step): graph {graph * mib:.2f} MiB "
                         f"({graph} bytes), eager {eager * mib:.2f} MiB ({eager} bytes)")
        for i, plan in enumerate(self._plans.values()):
            stats = plan.program.memory_stats
            lines.append(f"  plan {i}: {len(plan.program)} calls")
            if stats is None:
                lines.append("    not planned yet (a plan is planned from its first run after the capture)" if
                             plan.program.plan_memory else "    memory planning is off (FLOWLIKE_MEMORY_PLAN=0)")
                continue
            reuse = stats["planned_bytes"] / stats["arena_bytes"] if stats["arena_bytes"] else 0.0
            lines += [f"    intermediates freed after their last use (as eager frees them): peak "
                      f"{stats['peak_live_bytes'] * mib:.2f} MiB over {stats['allocations']} allocations",
                      f"    planned arena: {stats['arena_bytes'] * mib:.2f} MiB holding {stats['planned']} allocations "
                      f"({stats['planned_bytes'] * mib:.2f} MiB summed, each byte used {reuse:.1f} times); "
                      f"{stats['fallbacks']} requests off the plan in the last run",
                      f"    kept after a step (outputs, new gradients, optimizer state): "
                      f"{stats['kept_bytes'] * mib:.2f} MiB",
                      f"    step peak: arena + kept = {(stats['arena_bytes'] + stats['kept_bytes']) * mib:.2f} MiB"]
        text = "\n".join(lines)
        print(text)
        return text

    def _measure(self, args, kwargs):
        """(eager, graph): the peak memory above the start of one step on these inputs, run eagerly and as the
        graph, each from the same state (put back afterwards)."""
        plan, tensors = self._captured_plan(args, kwargs, "memory_report(*inputs) measures")
        graph_step = lambda: self._run(plan, tensors)  # noqa: E731
        self._step_peak(graph_step)  # (the run the memory plan is made from, when the program is new)
        return self._step_peak(lambda: self.build(*args, **kwargs)), self._step_peak(graph_step)

    def _captured_plan(self, args, kwargs, what):
        """(plan, input tensors) of the step these inputs make, which must have been captured; its fused kernels
        installed (a kernel installed by a later run would change the program being measured)."""
        tensors = []
        plan = self._plans.get(self._signature(_flatten((args, kwargs), tensors), tensors))
        if plan is None:
            raise RuntimeError(f"nn.Graph {type(self).__name__}: {what} a step captured before: call the graph with "
                               "inputs like these first")
        plan.fusion.wait()
        return plan, tensors

    def _step_peak(self, step):
        """The most memory step() allocates above what was allocated when it began (the allocator's counters), from
        the state it began with (put back afterwards)."""
        with self._state_kept():
            _C._reset_peak_memory_stats()
            start = _C._memory_stats()["allocated_bytes.all.current"]
            step()
            return _C._memory_stats()["allocated_bytes.all.peak"] - start

    @contextlib.contextmanager
    def _state_kept(self):
        """Puts back, on leaving, the parameters, buffers, gradients and optimizer states the steps inside change, and
        the random generator's state: measuring takes no training step."""
        slots = self._slots()
        before = [s.get() for s in slots]
        with no_grad():
            copies = [None if t is None else t.clone() for t in before]
        # the same state dicts, with their entries as they were (a plan's signature holds the dicts' identities)
        states = [[(p, state, dict(state)) for p, state in opt.state.items()] for opt, _ in self._optimizers]
        rng = _random.get_rng_state()
        try:
            yield
        finally:
            with no_grad():
                for slot, t, copy in zip(slots, before, copies):
                    slot.set(t)
                    if t is not None:
                        t.copy_(copy)
            for (opt, _), entries in zip(self._optimizers, states):
                opt.state.clear()
                for p, state, items in entries:
                    state.clear()
                    state.update(items)
                    opt.state[p] = state
            _random.set_rng_state(rng)

    def time_report(self, *args, steps=10, top=20, **kwargs):
        """Prints where a step's time goes and returns it as {op: milliseconds per step}, largest first: the step on
        these inputs (a call that was captured; `steps` and `top` are this method's own keywords) run `steps` times
        as the graph with each call timed by the executor, summed per op (a fused group under its name); the table
        lists the `top` largest with their share of the step. The state the steps change is put back, as
        memory_report's."""
        if not isinstance(steps, int) or steps < 1:
            raise ValueError(f"time_report: steps must be a positive int, got {steps!r}")
        plan, tensors = self._captured_plan(args, kwargs, "time_report(*inputs) times")
        program = plan.program
        group_at = {calls[-1]: name for name, calls, _, _ in program.groups}
        with self._state_kept():
            self._run(plan, tensors)  # (the run a new program's memory plan is made from)
            program.profile = True
            try:
                start = time.perf_counter()
                for _ in range(steps):
                    self._run(plan, tensors)
                wall = (time.perf_counter() - start) / steps
                times = program.call_ns
            finally:
                program.profile = False
        per_op, count = collections.Counter(), collections.Counter()
        for c, (op, ns) in enumerate(zip(program.ops, times)):
            if ns:
                key = group_at.get(c, op)
                per_op[key] += ns / steps / 1e9
                count[key] += 1
        total = sum(per_op.values())
        lines = [f"nn.Graph {type(self).__name__}: a step takes {wall * 1e3:.3f} ms ({steps} timed), its calls "
                 f"{total * 1e3:.3f} ms",
                 f"  {'op':<44}{'calls':>6}{'ms per step':>13}{'share':>8}"]
        for op, t in per_op.most_common(top):
            lines.append(f"  {op:<44}{count[op]:>6}{t * 1e3:>13.3f}{t / total if total else 0:>8.1%}")
        print("\n".join(lines))
        return {op: t * 1e3 for op, t in per_op.most_common()}

    def train(self, mode=True):
        for m in self._modules():
            m.train(mode)
        return self

    def eval(self):
        return self.train(False)

    @property
    def training(self):
        mods = self._modules()
        return mods[0].training if mods else True

    @property
    def is_built(self):
        return self._is_built

    def __repr__(self):
        lines = [f"({name}): {m!r}".replace("\n", "\n  ") for name, m in self._named_modules()]
        if self._plans:
            plan = next(reversed(self._plans.values()))  # the plan run last
            names = [f"input {what}" if kind == "arg" else plan.slots[what].name if kind == "slot" else "constant"
                     for kind, what in plan.sources]
            inputs = ", ".join(f"%{vid}={name}" for vid, name in zip(plan.program.input_ids, names))
            lines.append(f"(program): {len(plan.program)} ops, inputs {inputs}")
            lines += ["  " + line for line in plan.program.listing()]
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)" if lines else f"{type(self).__name__}()"

    # ---- saving an inference graph ------------------------------------------------------------------------------
    def save(self, path):
        """Saves the inference plan run last to the directory `path`: program.json (the program and how its inputs
        and outputs map to the call) and weights.safetensors (the parameters and buffers it reads, and its constants).
        Graph.load(path) runs it in any process with flowlike, without the model's Python code."""
        if not self._plans:
            raise RuntimeError(f"nn.Graph {type(self).__name__}: save() needs a graph that has run once")
        plan = next(reversed(self._plans.values()))
        if plan.writebacks or self._optimizers:
            raise RuntimeError(f"nn.Graph {type(self).__name__}: only an inference graph can be saved (this one "
                               "updates state: gradients, optimizer states or buffers)")
        calls, input_ids, constants, num_values, meta = plan.program.export()
        weights, inputs = {}, []
        for k, (kind, what) in enumerate(plan.sources):
            if kind == "arg":
                inputs.append(["arg", what])
            else:
                name = plan.slots[what].name if kind == "slot" else f"__fixed__.{k}"
                weights[name] = plan.slots[what].get() if kind == "slot" else what
                inputs.append(["weight", name])
        for k, (vid, tensor) in enumerate(constants):
            weights[f"__constant__.{k}"] = tensor
        outputs = [[kind, what if kind != "fixed" else None] for kind, what in plan.out_ids]
        if any(kind == "fixed" for kind, _ in plan.out_ids):
            raise RuntimeError(f"nn.Graph {type(self).__name__}: an output is a tensor the program does not make")
        os.makedirs(path, exist_ok=True)
        _serialization._save_safetensors(weights, os.path.join(path, "weights.safetensors"))
        doc = {"format": "flowlike.nn.Graph/1", "calls": [[name, [_to_json(a) for a in args], ids, results]
                                                           for name, args, ids, results in calls],
               "input_ids": input_ids, "inputs": inputs, "constants": [vid for vid, _ in constants],
               "num_values": num_values, "meta": [[sizes, str(dtype).split(".")[-1], strides, wrapped]
                                                  for sizes, dtype, strides, wrapped in meta],
               "out_spec": _spec_to_json(plan.out_spec), "outputs": outputs,
               "in_spec": _spec_to_json(plan.in_spec), "in_tensors": plan.in_tensors}
        with open(os.path.join(path, "program.json"), "w") as fh:
            json.dump(doc, fh)

    @staticmethod
    def load(path):
        """An inference graph saved by Graph.save, as a callable taking the same inputs as the saved graph."""
        return _LoadedGraph(path)

    # ---- state the program reads and writes --------------------------------------------------------------------
    def _named_modules(self):
        return [(k, v) for k, v in vars(self).items() if isinstance(v, Module)]

    def _modules(self):
        return [m for _, m in self._named_modules()]

    def _slots(self):
        slots, seen = [], set()

        def param_slots(owner, key, prefix):
            p = owner[key]
            if p is None or id(p) in seen:
                return
            seen.add(id(p))
            slots.append(_Slot(lambda: owner[key], lambda t: owner.__setitem__(key, t), prefix))
            slots.append(_Slot(lambda: p.grad, lambda t: setattr(p, "grad", t), prefix + ".grad"))

        for name, root in self._named_modules():
            for mname, mod in root.named_modules(prefix=name):
                for key in list(mod._parameters):
                    param_slots(mod._parameters, key, f"{mname}.{key}")
                for key in list(mod._buffers):
                    if mod._buffers[key] is not None:
                        buffers = mod._buffers
                        slots.append(_Slot(lambda b=buffers, k=key: b[k], lambda t, b=buffers, k=key: b.__setitem__(k, t),
                                           f"{mname}.{key}"))
        for i, (opt, _) in enumerate(self._optimizers):
            for group in opt.param_groups:
                for p in group["params"]:
                    if id(p) not in seen:
                        seen.add(id(p))
                        slots.append(_Slot(lambda p=p: p.grad, lambda t, p=p: setattr(p, "grad", t), "param.grad"))
                    for key, value in opt.state.get(p, {}).items():
                        if isinstance(value, _C.Tensor):
                            state = opt.state[p]
                            slots.append(_Slot(lambda s=state, k=key: s[k], lambda t, s=state, k=key: s.__setitem__(k, t),
                                               f"optimizer{i}.state.{key}"))
        return slots

    def _signature(self, spec, tensors):
        modules = self._modules()
        version = _module.structure_version()  # any parameter, buffer or submodule added, rebound or converted
        if self._params is None or self._params_version != version:
            self._params = [p for m in modules for p in m.parameters()]
            # modules whose Python state changes what a step records (DistributedDataParallel's no_sync())
            self._keyed = [m for root in modules for m in root.modules() if hasattr(m, "_graph_signature")]
            self._params_version = version
        # a learning rate the plans feed as an input (the fused steps' `lr`) is left out: a scheduler changes it
        # without a recapture
        hyper = tuple(tuple((k, v) for k, v in group.items() if k != "params" and not (k == "lr" and id(group) in
                                                                                      self._lr_inputs)
                            and isinstance(v, (int, float, bool, str, type(None), tuple)))
                      for opt, _ in self._optimizers for group in opt.param_groups)
        # which state dicts exist (a load_state_dict replaces them) and how full they are
        states = tuple((tuple(map(id, opt.state.values())), sum(map(len, opt.state.values())))
                       for opt, _ in self._optimizers)
        return (spec, tuple((tuple(t.shape), t.dtype, t.requires_grad) for t in tensors),
                tuple(m.training for m in modules), _C.is_grad_enabled(),
                tuple(p.grad is None for p in self._params), (hyper, states), version,
                tuple(m._graph_signature() for m in self._keyed))

    # ---- running ---------------------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        tensors = []
        spec = _flatten((args, kwargs), tensors)
        key = self._signature(spec, tensors)
        plan = self._plans.get(key)
        if plan is not None and not self._lr_fixed_in(plan):
            self._plans.move_to_end(key)
            result = self._run(plan, tensors)
            self._step_schedulers()
            return result
        if self._plans and self._debug >= 0:
            _log.debug("nn.Graph %s: capturing a new plan (%d cached): %s", type(self).__name__, len(self._plans),
                       self._why(key))
        started = time.perf_counter()
        plan, result = self._capture(args, kwargs, tensors)
        if self._debug >= 0:
            _log.debug("nn.Graph %s: captured %d ops (%d inputs, %d constants, %d values handed back, lr as input for "
                       "%d param groups) in %.3f s", type(self).__name__, len(plan.program), len(plan.sources),
                       plan.program.num_constants, len(plan.wanted), len({id(g) for _, _, g in plan.lr_args}),
                       time.perf_counter() - started)
        if plan is not None:
            self._plans[key] = plan
            while len(self._plans) > self.max_cached_plans:
                self._plans.popitem(last=False)
        self._is_built = True
        self._step_schedulers()
        return result

    def _step_schedulers(self):
        for _, lr_sch in self._optimizers:
            if lr_sch is not None:
                lr_sch.step()

    def _why(self, key):
        names = ("argument structure", "tensor shapes/dtypes/requires_grad", "train/eval flags", "grad mode",
                 "which gradients exist", "optimizer hyperparameters or state", "the modules' parameters or buffers",
                 "module state (DistributedDataParallel.no_sync)")
        last = next(reversed(self._plans))
        return ", ".join(n for n, a, b in zip(names, key, last) if a != b) or "signature"

    def _capture(self, args, kwargs, tensors):
        self._params = None
        slots = self._slots()
        before = [s.get() for s in slots]
        trace_begin(forbid_host_reads=True)
        try:
            result = self.build(*args, **kwargs)
        except RuntimeError as e:
            trace_end()
            if "reads a tensor's value on the host" in str(e):
                raise RuntimeError(f"nn.Graph {type(self).__name__}: at {user_frame(e.__traceback__)}: {e}") from None
            raise
        except BaseException:
            trace_end()
            raise
        program = trace_end()
        if program.holes:
            raise RuntimeError(f"nn.Graph {type(self).__name__}: build() used tensors made outside the dispatcher, "
                               f"which a program cannot replay: {program.holes[0]}")
        known = {id(t): ("slot", j) for j, t in enumerate(before) if t is not None}
        known.update({id(t): ("arg", i) for i, t in enumerate(tensors)})
        sources = _sources(program, known)
        locate = locator(program)

        out_tensors = []
        out_spec = _flatten(result, out_tensors, "build's result")
        out_ids = [locate(t) for t in out_tensors]
        writebacks = []
        for j, slot in enumerate(slots):
            now = slot.get()
            if now is before[j]:
                continue  # unchanged object: updated in place, if at all
            writebacks.append((j, None if now is None else locate(now)))
        plan = _Plan(program, slots, sources, out_spec, out_ids, writebacks)
        # kernels built in the background, installed by _run
        plan.fusion = passes.prepare(program, plan.wanted, _log, f"nn.Graph {type(self).__name__}")
        plan.in_spec = _flatten((args, kwargs), [])
        plan.in_tensors = [(list(t.shape), str(t.dtype).split(".")[-1]) for t in tensors]
        plan.lr_args = self._lr_args(program)
        program.release_capture_state()  # the tensors the capture met, the inputs' copies: not needed to run
        covered = {id(group) for _, _, group in plan.lr_args}
        # the learning rates this plan holds as constants: a change to one of them means a new plan
        plan.fixed_lrs = [(group, group["lr"]) for opt, _ in self._optimizers for group in opt.param_groups
                          if id(group) not in covered]
        # the outputs the program makes carry no autograd history, on this first call as on the replays
        result = _unflatten(out_spec, [t.detach() if where[0] == "value" else t for t, where in zip(out_tensors, out_ids)])
        return plan, result

    @staticmethod
    def _lr_fixed_in(plan):
        return any(group["lr"] != lr for group, lr in plan.fixed_lrs)

    def _lr_args(self, program):
        """(call, argument, group) for each recorded optimizer step's lr, when the fused steps cover every
        parameter of the group (then no other op of the step read the lr); such groups' lr becomes an input."""
        found = program.float_args("lr")
        lr_args = []
        for opt, _ in self._optimizers:
            for group in opt.param_groups:
                if not isinstance(group.get("lr"), float):
                    continue
                ids = {program.value_of(p) for p in group["params"] if p.requires_grad} - {-1}
                calls = [(c, a) for c, a, value, call_ids in found if value == group["lr"] and set(call_ids) & ids]
                covered = set().union(*[set(call_ids) for c, a, value, call_ids in found
                                        if (c, a) in calls]) if calls else set()
                if calls and ids <= covered:
                    lr_args += [(c, a, group) for c, a in calls]
                    self._lr_inputs.add(id(group))
        return lr_args

    def _run(self, plan, tensors):
        slots = plan.slots  # their getters read the live modules and optimizer states
        for call, arg, group in plan.lr_args:
            plan.program.set_float_arg(call, arg, group["lr"])
        inputs = []
        for kind, what in plan.sources:
            inputs.append(tensors[what] if kind == "arg" else slots[what].get() if kind == "slot" else what)
        plan.fusion.poll()
        got = dict(zip(plan.wanted, plan.program.run(inputs, plan.wanted)))
        if self._debug >= 0 and not getattr(plan, "memory_logged", False) and plan.program.memory_stats:
            plan.memory_logged = True
            stats = plan.program.memory_stats
            _log.debug("nn.Graph %s: memory plan: %d of %d allocations in a %.2f MiB arena (peak of live "
                       "intermediates %.2f MiB), %.2f MiB kept after a step", type(self).__name__, stats["planned"],
                       stats["allocations"], stats["arena_bytes"] / 2**20, stats["peak_live_bytes"] / 2**20,
                       stats["kept_bytes"] / 2**20)
        for j, where in plan.writebacks:
            slots[j].set(None if where is None else resolve(where, got, inputs))
        return _unflatten(plan.out_spec, [resolve(w, got, inputs) for w in plan.out_ids])
