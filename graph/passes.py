"""The IR passes nn.Graph runs over a captured program before fusion (DESIGN.md, graph mode).

A program is a list of calls over numbered values (csrc/graph/trace.h). The passes edit it in place through the
program's editing calls (remove_calls, set_tensor_arg, fold); value ids never change, and a value a run hands back
(`wanted`) is never replaced by another, so the plan's inputs and outputs keep meaning what they meant.

What makes an edit safe is an alias analysis: each value has a set of roots, the memory it may share. A fresh
result is its own root; a view (a schema argument annotated `Tensor(a)`) shares its argument's roots; every program
input shares one root, since two inputs may be views of one tensor. A call *writes* the roots of its arguments
annotated `Tensor(a!)`. Random ops (a `Generator?` argument) draw numbers, so they are never removed, merged or
evaluated ahead.

Passes, repeated until nothing changes:
- identities: a call that returns its own argument (conj or contiguous of a tensor that needs none) is dropped;
- constant folding: a call whose tensors are all constants (or that reads none) is evaluated once at planning
  (small results only: a plan keeps its constants), e.g. the wrapped numbers of `x * 1` and the seed gradient;
- algebraic simplification: `x * 1`, `x / 1`, `x + 0`, `x - 0`, casts and copies to the same dtype and layout
  reuse x; a chain of views that ends with x's own sizes and strides (transpose of a transpose) is x; a view or
  reshape of a view chain of a contiguous tensor reads that tensor directly;
- common subexpressions: the same op on the same values with the same arguments is computed once;
- dead code: calls none of whose results are read, handed back or written through are dropped (the autograd
  bookkeeping a plan does not need: detach, unused views, saved values nothing reads).
After fusion, `reuse_buffers` lets a pointwise call write its result into an operand that dies there (the `out=`
argument), where the shapes, dtypes and layouts match and no other live value shares that memory; the memory plan
(Note [Memory plan] in csrc/graph/memory_plan.h) then places the remaining intermediates in one arena.
"""
import math
import os

from .. import _C, codegen
from ..codegen.fusion import ProgramView, _contiguous, _schema

class _Config:
    """enabled: run the passes (FLOWLIKE_GRAPH_PASSES=0 turns them off); plan_memory: place a run's intermediates in
    one planned arena (FLOWLIKE_MEMORY_PLAN=0 turns it off)."""

    def __init__(self):
        self.enabled = os.environ.get("FLOWLIKE_GRAPH_PASSES", "1") != "0"
        self.plan_memory = os.environ.get("FLOWLIKE_MEMORY_PLAN", "1") != "0"


config = _Config()

_FOLD_MAX_BYTES = 1 << 16  # results folded into constants are kept by the plan: small ones only
_ONES = {"mul", "div"}     # x op 1 == x
_ZEROS = {"add", "sub"}    # x op 0 == x (any alpha)
# views that keep their base's storage offset (a chain of them with x's sizes and strides is x itself); reshape
# only when its input is contiguous (else it may copy)
_OFFSET_KEEPING_VIEWS = {"view", "reshape", "_unsafe_view", "transpose", "permute", "expand", "unsqueeze", "squeeze",
                         "t", "alias", "detach", "movedim"}  # (not conj: a conjugate view has the same geometry)
_MAY_COPY = {"reshape", "_unsafe_view"}
_SHAPE_VIEWS = {"view", "reshape", "_unsafe_view"}  # their shape argument is absolute
_ORDER_KEEPING_VIEWS = _SHAPE_VIEWS | {"unsqueeze", "squeeze"}  # row-major element order unchanged
_COPIES = {"clone", "_to_copy", "contiguous"}


class _Analysis(ProgramView):
    """The fusion pass's view of the program (producers, readers, geometry) with the alias roots and the roots each
    call writes."""

    def __init__(self, program, wanted):
        super().__init__(program)
        self.wanted = set(wanted)
        self.schemas = [_schema(name) for name, *_ in self.calls]
        self.roots = {vid: frozenset({"in"}) for vid in self.input_ids}
        self.roots.update({vid: frozenset({vid}) for vid in self.constants})
        self.written = []  # per call: the roots it writes
        self.random = []   # per call: draws random numbers
        for ci, (name, args, arg_ids, result_ids) in enumerate(self.calls):
            schema = self.schemas[ci]["args"]
            written, aliased = set(), set()
            for a, ids in zip(schema, arg_ids):
                for vid in ids:
                    if vid >= 0 and a["writes"]:
                        written |= self.root(vid)
                    elif vid >= 0 and a["alias"]:
                        aliased |= self.root(vid)
            self.written.append(frozenset(written))
            self.random.append(any("Generator" in a["type"] for a in schema))
            for ids in result_ids:
                for vid in ids:
                    if vid not in self.roots:
                        self.roots[vid] = frozenset(aliased) if aliased else frozenset({vid})
        self.written_roots = set().union(*self.written) if self.written else set()
        # per root: the last call reading a value that holds it; math.inf when a wanted value holds it
        self.root_last_read = {}
        for vid, readers in self.readers.items():
            for r in self.root(vid):
                self.root_last_read[r] = max(self.root_last_read.get(r, -1), max(readers))
        for vid in self.wanted:
            for r in self.root(vid):
                self.root_last_read[r] = math.inf

    def root(self, vid):
        return self.roots.get(vid, frozenset({vid}))

    def pure(self, ci):
        """Reads its arguments and makes its results, nothing else: no write, no random draw, some result."""
        return not self.written[ci] and not self.random[ci] and any(self.calls[ci][3])

    def results(self, ci):
        return [vid for ids in self.calls[ci][3] for vid in ids]

    def tensor_args(self, ci):
        return [vid for ids in self.calls[ci][2] for vid in ids if vid >= 0]

    def geometry(self, vid):
        sizes, strides, dtype, _ = self.meta[vid]
        return (tuple(sizes), tuple(strides), dtype)

    def written_between(self, roots, first, last):
        """Whether a call after `first` and up to `last` writes any of the roots."""
        last = len(self.calls) - 1 if last == math.inf else last
        return any(self.written[c] & roots for c in range(first + 1, int(last) + 1))

    def scalar(self, vid):
        """The number a one-element constant holds, else None."""
        t = self.constants.get(vid)
        return t.item() if t is not None and t.numel() == 1 and not t.is_complex() else None


def _fresh_replacement_safe(a, y, x, ci):
    """Whether y (made fresh by call ci) may be read as x from now on: y is never written, no wanted value shares
    its memory, and nothing writes x's memory before y's last reader."""
    if y in a.wanted or {y} & a.written_roots or a.root_last_read.get(y, -1) == math.inf:
        return False
    if a.geometry(y) != a.geometry(x) or a.meta[x][3]:  # a wrapped number broadcasts: not the same tensor
        return False
    return not a.written_between(a.root(x), ci, a.root_last_read.get(y, ci))


def _identities(a, program):
    """Calls that return their own argument (conj of a real tensor, contiguous of a contiguous one)."""
    return [ci for ci in range(len(a.calls))
            if a.pure(ci) and set(a.results(ci)) <= set(a.tensor_args(ci))], {}, ()


def _fold(a, program):
    """Evaluates ahead the calls that read only constants (or nothing), into constants every run uses as they are.
    In program order, so a buffer made and then filled in place (`ones` is empty + fill_) folds as a whole. A call
    folds when no unfolded call has written what it reads, or touched what it writes, before it; and nothing
    unfolded writes its results later (a run would need its own copy)."""
    banned = set()
    while True:
        folded, known = [], set(a.constants)
        touched = {}  # root -> "read" / "written" by an unfolded call so far
        for ci in range(len(a.calls)):
            tensors, results = a.tensor_args(ci), a.results(ci)
            reads = frozenset().union(*(a.root(v) for v in tensors)) if tensors else frozenset()
            # (nor a result whose memory a handed-back value shares: the caller could write into the constant)
            if (ci not in banned and not a.random[ci] and (results or a.written[ci])
                    and all(v in known for v in tensors)
                    and not any(v in a.wanted or a.root_last_read.get(v) == math.inf for v in results)
                    and not any(touched.get(r) == "written" for r in reads)
                    and not any(touched.get(r) for r in a.written[ci])
                    and sum(math.prod(a.meta[v][0]) * a.meta[v][2].itemsize for v in results) <= _FOLD_MAX_BYTES):
                folded.append(ci)
                known.update(results)
                continue
            for r in reads:
                touched.setdefault(r, "read")
            for r in a.written[ci]:
                touched[r] = "written"
        chosen = set(folded)
        unfolded_writes = set().union(*(a.written[c] for c in range(len(a.calls)) if c not in chosen))
        written_later = {ci for ci in folded
                         if any(a.root(v) & unfolded_writes for v in a.results(ci)) or a.written[ci] & unfolded_writes}
        if not written_later:
            break
        banned |= written_later
    for ci in folded:
        program.fold(ci, shared=True)
    return folded, {}, ()


def _simplify(a, program):
    """Substitutions y -> x for calls computing nothing (x * 1, same-dtype casts, views back to x's geometry)."""
    subst = {}
    rewrites = []  # (call, argument, value): a shape view reading its chain's source directly
    chain = {}     # value -> the value an offset-keeping chain of views starts from
    ordered = {}   # value -> the contiguous value an order-keeping chain of views starts from
    for ci, (name, args, arg_ids, result_ids) in enumerate(a.calls):
        if not a.pure(ci) or len(result_ids) != 1 or len(result_ids[0]) != 1:
            continue
        y = result_ids[0][0]
        tensors = a.tensor_args(ci)
        if (name in _OFFSET_KEEPING_VIEWS and tensors and arg_ids[0] and y not in tensors
                and (name not in _MAY_COPY or _contiguous(a.meta[arg_ids[0][0]]))):
            x = arg_ids[0][0]
            source = chain.get(x, x)
            chain[y] = source
            if name in _ORDER_KEEPING_VIEWS and _contiguous(a.meta[x]):
                ordered[y] = ordered.get(x, x)
            if y not in a.wanted and a.geometry(y) == a.geometry(source):
                subst[y] = source  # the same memory with the same geometry: exact, whatever writes it later
            elif (name in _SHAPE_VIEWS and ordered.get(y, x) != x and _contiguous(a.meta[y])
                  and a.meta[ordered[y]][2] == a.meta[y][2]):
                rewrites.append((ci, 0, ordered[y]))  # a reshape of a reshape of contiguous x: one reshape of x
            continue
        if name in _ONES | _ZEROS and len(tensors) == 2:
            unit = 1 if name in _ONES else 0
            for keep, other in ((tensors[0], tensors[1]), (tensors[1], tensors[0])):
                if name in ("div", "sub") and keep != tensors[0]:
                    continue  # 1 / x and 0 - x are not x
                if a.scalar(other) == unit and _fresh_replacement_safe(a, y, keep, ci):
                    subst[y] = keep
                    break
        elif name in _COPIES and tensors and _fresh_replacement_safe(a, y, tensors[0], ci):
            subst[y] = tensors[0]
    # one step per round: a value replaced by one that is itself replaced waits for the next round
    subst = {y: x for y, x in subst.items() if x not in subst}
    return [], subst, rewrites


def _cse(a, program):
    seen = {}
    subst = {}
    for ci, (name, args, arg_ids, result_ids) in enumerate(a.calls):
        if not a.pure(ci):
            continue
        results = a.results(ci)
        if set(results) & set(a.tensor_args(ci)):
            continue
        key = (name, repr(args), repr(arg_ids))
        first = seen.get(key)
        if first is None:
            seen[key] = ci
            continue
        earlier = a.results(first)
        if len(earlier) != len(results) or any(v in a.wanted or a.root_last_read.get(v) == math.inf for v in results):
            continue
        view = any(a.root(v) != frozenset({v}) for v in results)
        if not view:  # fresh results: the same values only while neither is written and the inputs are unchanged
            inputs = frozenset().union(*(a.root(v) for v in a.tensor_args(ci))) if a.tensor_args(ci) else frozenset()
            if any({v} & a.written_roots for v in results + earlier) or a.written_between(inputs, first, ci):
                continue
        subst.update({y: x for y, x in zip(results, earlier)})
    return [], subst, ()


def _zero_buffers(a):
    """Buffers made by `empty` and zero-filled before anything else touches them, then written only by
    `_copy_into` through `as_strided` views: {buffer: its description}.
    (The backward of a slice writes the gradient into a zero buffer of the base's size: one per slice.)"""
    found = {}
    for ci, (name, args, arg_ids, result_ids) in enumerate(a.calls):
        if name == "empty" and len(result_ids[0]) == 1 and _contiguous(a.meta[result_ids[0][0]]):
            b = result_ids[0][0]
            found[b] = {"made": ci, "fill": None, "views": {}, "copies": [], "reads": [], "numel": math.prod(
                a.meta[b][0])}
    for ci, (name, args, arg_ids, result_ids) in enumerate(a.calls):
        for r in set(a.written[ci]) | {r for v in a.tensor_args(ci) for r in a.root(v)}:
            d = found.get(r)
            if d is None or ci == d["made"]:
                continue
            if name == "_fill" and d["fill"] is None and arg_ids[0] == [r] and args[1] == 0 and not d["views"]:
                d["fill"] = ci
            elif name == "as_strided" and arg_ids[0] == [r] and d["fill"] is not None:
                d["views"][result_ids[0][0]] = (ci, args[1], args[2], args[3] or 0)
            elif name == "_copy_into" and arg_ids[0][0] in d["views"] and not ({r} & a.root(arg_ids[1][0])):
                d["copies"].append(ci)
            elif r not in a.written[ci]:
                d["reads"].append(ci)  # (reading the buffer, or a view of it)
            else:
                found[r] = None  # touched some other way: left alone
    return {b: d for b, d in found.items() if d is not None and d["fill"] is not None}


def _elements(sizes, strides, offset):
    import numpy as np
    index = np.full((), offset, dtype=np.int64)
    for size, stride in zip(sizes, strides):
        index = index[..., None] + np.arange(size, dtype=np.int64) * stride
    return index.ravel()


def _merge_zero_buffers(a, program):
    """`add` of two full views of zero buffers whose written parts are disjoint (a gradient split into slices):
    the second buffer's slices are written into the first instead, and the sum is the first buffer. A zero fill
    that the copies then overwrite everywhere is dropped. Exact, except that a -0.0 copied into a slice stays -0.0
    where eager's 0 + -0.0 gives +0.0."""
    import numpy as np
    buffers = _zero_buffers(a)
    of_view = {v: b for b, d in buffers.items() for v in d["views"]}

    def written(b):
        d = buffers[b]
        mask = np.zeros(d["numel"], dtype=bool)
        for c in d["copies"]:
            _, sizes, strides, offset = d["views"][a.calls[c][2][0][0]]
            mask[_elements(sizes, strides, offset)] = True
        return mask

    subst, rewrites, remove, used = {}, [], [], set()
    for ci, (name, args, arg_ids, result_ids) in enumerate(a.calls):
        if name != "add" or len(a.tensor_args(ci)) != 2 or args[2] != 1:
            continue
        f1, f2 = a.tensor_args(ci)
        b1, b2 = of_view.get(f1), of_view.get(f2)
        if b1 is None or b2 is None or b1 == b2 or {b1, b2} & used:
            continue
        d1, d2 = buffers[b1], buffers[b2]
        y = result_ids[0][0]
        if (a.geometry(f1) != a.geometry(f2) or a.geometry(f1)[0] != tuple(a.meta[y][0]) or a.meta[b1][:3] != a.meta[b2][:3]
                or d1["views"][f1][1:] != d2["views"][f2][1:] or math.prod(a.meta[f1][0]) != d1["numel"]
                or d2["reads"] != [ci] or any(c > ci for c in d1["copies"] + d2["copies"])
                or any(c < d2["fill"] for c in d1["reads"]) or d1["fill"] > min(d2["copies"], default=ci)
                or any(c != ci and c > min(d2["copies"], default=ci) for c in d1["reads"])
                or (written(b1) & written(b2)).any()
                or not _fresh_replacement_safe(a, y, f1, ci)):
            continue
        for v, (vc, *_) in d2["views"].items():
            if any(a.calls[c][2][0][0] == v for c in d2["copies"]):
                rewrites.append((vc, 0, b1))  # the slice view of the second buffer now views the first
        subst[y] = f1
        used |= {b1, b2}
    for b, d in buffers.items():
        if b not in used and d["copies"] and written(b).all() and all(c > max(d["copies"]) for c in d["reads"]):
            remove.append(d["fill"])  # every element is copied over before anything reads it
    return remove, subst, rewrites


def _dead(a, program):
    """Calls whose results nothing reads, hands back or writes through (walked backwards)."""
    live_values = set(a.wanted)
    live_roots = {"in"} | {r for vid in a.wanted for r in a.root(vid)}
    dead = []
    for ci in range(len(a.calls) - 1, -1, -1):
        results = a.results(ci)
        needed = (a.random[ci] or not (results or a.written[ci]) or any(v in live_values for v in results)
                  or bool(a.written[ci] & live_roots))
        if not needed:
            dead.append(ci)
            continue
        for vid in a.tensor_args(ci):
            live_values.add(vid)
            live_roots |= a.root(vid)
    return dead, {}, ()


def _apply(program, a, remove, subst, rewrites):
    for ci, (name, args, arg_ids, result_ids) in enumerate(a.calls):
        for ai, ids in enumerate(arg_ids):
            is_list = a.schemas[ci]["args"][ai]["type"].endswith("[]")
            for k, vid in enumerate(ids):
                if vid in subst and a.producer.get(vid, -1) < ci:
                    program.set_tensor_arg(ci, ai, subst[vid], k if is_list else -1)
    for ci, ai, vid in rewrites:
        program.set_tensor_arg(ci, ai, vid)
    if remove:
        program.remove_calls(sorted(set(remove)))


_POINTWISE = None


def _pointwise_with_out():
    """The pointwise ops (csrc/ops/pointwise_list.h, activation_math.h) whose schema has an `out=` argument."""
    global _POINTWISE
    if _POINTWISE is None:
        unary, binary, activations, _ = _C._fusible_ops()
        _POINTWISE = {name: next(i for i, arg in enumerate(_schema(name)["args"]) if arg["name"] == "out")
                      for name in [*unary, *binary, *activations]
                      if any(arg["name"] == "out" for arg in _schema(name)["args"])}
    return _POINTWISE


def reuse_buffers(program, wanted, groups=()):
    """In-place reuse, after fusion: a pointwise call outside the fusion `groups` writes its result into an
    operand that dies there (through its `out=` argument) when that operand is a fresh contiguous buffer of the
    result's shape and dtype that no other live value shares and no group reads. Returns how many calls reuse."""
    if not (config.enabled and config.plan_memory):
        return 0
    a = _Analysis(program, wanted)
    grouped = {c for g in groups for c in g.calls}
    near_groups = {v for g in groups for v in (*g.inputs, *g.outputs)}
    pointwise = _pointwise_with_out()
    reused = 0
    for ci, (name, args, arg_ids, result_ids) in enumerate(a.calls):
        out_arg = pointwise.get(name)
        if out_arg is None or ci in grouped or arg_ids[out_arg] or a.written[ci] or len(a.results(ci)) != 1:
            continue
        y = a.results(ci)[0]
        tensors = a.tensor_args(ci)
        if a.root(y) != frozenset({y}) or not _contiguous(a.meta[y]):
            continue
        for x in tensors:
            if (x in a.wanted or x in a.constants or x in a.input_ids or x in near_groups
                    or a.root(x) != frozenset({x}) or a.root_last_read.get(x) != ci
                    or a.geometry(x) != a.geometry(y)
                    or any(v != x and a.root(v) & {x} for v in tensors)):
                continue
            program.set_tensor_arg(ci, out_arg, x)
            reused += 1
            break
    return reused


def optimize(program, wanted, max_rounds=8):
    """Runs the passes until nothing changes (unless config.enabled is off); returns what each removed or replaced
    (for graph.debug)."""
    program.plan_memory = config.plan_memory
    counts = {"identities": 0, "folded": 0, "simplified": 0, "merged": 0, "cse": 0, "dead": 0}
    if not config.enabled:
        return counts
    for _ in range(max_rounds):
        changed = False
        # each pass: (analysis, program) -> (calls to remove, substitutions y -> x, (call, argument, value) rewrites)
        for name, run in (("identities", _identities), ("folded", _fold), ("simplified", _simplify),
                          ("merged", _merge_zero_buffers), ("cse", _cse), ("dead", _dead)):
            a = _Analysis(program, wanted)
            remove, subst, rewrites = run(a, program)
            if not (remove or subst or rewrites):
                continue
            _apply(program, a, remove, subst, rewrites)
            counts[name] += len(remove) + len(subst) + len(rewrites)
            changed = True
        if not changed:
            break
    return counts



def run_passes(program, wanted, log, who):
    """optimize(), with the counts logged at debug level as `who` (nn.Graph and flowlike.compile)."""
    calls = len(program)
    counts = optimize(program, wanted)
    log.debug("%s: IR passes: %d calls -> %d (%s)", who, calls, len(program),
              ", ".join(f"{k} {v}" for k, v in counts.items()))


def fuse(program, wanted, log, who):
    """The fusion groups of an optimized program (codegen.fuse: kernels built in the background, installed by the
    returned plan's poll()), then in-place reuse outside them; returns the fusion plan."""
    fusion = codegen.fuse(program, wanted)
    reused = reuse_buffers(program, wanted, fusion.groups)
    if reused:
        log.debug("%s: %d pointwise calls write into an operand that dies there", who, reused)
    return fusion


def prepare(program, wanted, log, who):
    """Everything a captured program goes through before its runs, in nn.Graph and flowlike.compile alike: the
    passes, fusion, in-place reuse (the memory plan then follows from its first run). `wanted`: the values every run
    hands back. Returns the fusion plan."""
    run_passes(program, wanted, log, who)
    return fuse(program, wanted, log, who)
