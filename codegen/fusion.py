"""Fusion grouping over a captured program (Note [Fused groups] in csrc/graph/trace.h).

A program is a list of calls over numbered values. The pass finds pointwise calls (the op lists of
csrc/ops/pointwise_list.h and csrc/ops/activation_math.h, and dtype casts) and joins producer and consumer into one
group when they iterate over the same shape, so the group's intermediate values are never written to memory. A
group runs where its last member ran, so the pass only groups calls whose results are read, outside the group,
after that position, and no call between the members writes to memory (an in-place op would change what a
delayed member reads). Random ops are never members, so grouping never changes which numbers are drawn.
"""
import math
from dataclasses import dataclass, field

from .. import _C
from .. import _dtype

_UNARY, _BINARY, _ACTIVATIONS, _DENSE_F32 = _C._fusible_ops()
_ACTIVATIONS = frozenset(_ACTIVATIONS)
_ACTIVATION_DTYPES = (_dtype.float32, _dtype.float64)  # the eager activation kernels' own dtypes
# integer forms of these check their divisor or exponent at run time (ZeroDivisionError): not fused
_CHECKED_INTEGER_OPS = frozenset({"div_trunc", "div_floor", "remainder", "fmod", "pow"})
# pow with a Python-number exponent: the forms the eager kernel special-cases (pointwise_binary.cpp)
# reductions over the last dimension (keepdim) of float32/float64 rows: a group holding them runs row by row
_ROW_REDUCTIONS = frozenset({"sum", "mean", "amax", "amin"})
POW_SCALAR_FORMS = {2.0: "square", 3.0: "cube", 0.5: "sqrt", -0.5: "rsqrt", -1.0: "reciprocal", -2.0: "inv_square"}


@dataclass
class Node:
    """One fusible call: `out = op(inputs)` computed in dtype `compute`."""
    call: int
    op: str
    kind: str          # "unary", "binary", "activation", "activation_backward", "cast", "reduce"
    inputs: list       # value ids of the tensor operands, in argument order
    out: int
    compute: object    # the dtype the eager kernel computes in (its inputs are cast to it first)
    params: dict = field(default_factory=dict)


@dataclass
class Group:
    """Members (ascending call order) that one generated kernel computes over `shape`."""
    name: str
    nodes: list
    inputs: list       # value ids read from memory
    outputs: list      # value ids written to memory
    shape: tuple       # the iteration space (a row group reduces its last dimension)
    replacement: tuple = None  # or one op call computing the members (an epilogue): (name, args, arg ids, result ids)
    replacement_calls: tuple = ()  # the calls it replaces

    @property
    def rows(self):
        """Whether the group reduces rows (then it runs row by row)."""
        return any(n.kind == "reduce" for n in self.nodes)

    @property
    def calls(self):
        return [n.call for n in self.nodes] if self.replacement is None else list(self.replacement_calls)


class ProgramView:
    """The exported program with what the pass needs: producers, readers and each value's geometry."""

    def __init__(self, program):
        calls, self.input_ids, constants, self.num_values, _ = program.export(for_saving=False)
        self.calls = calls
        self.meta = program.value_meta  # (sizes, strides, dtype, wrapped) per value id
        self.constants = {vid: t for vid, t in constants}
        self.producer, self.readers = {}, {}
        for ci, (_, _, arg_ids, result_ids) in enumerate(calls):
            for ids in arg_ids:
                for vid in ids:
                    if vid >= 0:
                        self.readers.setdefault(vid, []).append(ci)
            for ids in result_ids:
                for vid in ids:
                    self.producer.setdefault(vid, ci)
        self.writes = [self._writes(ci) for ci in range(len(calls))]

    def _writes(self, ci):
        """Whether call ci writes into a tensor it was given (an in-place op, out=, copy_)."""
        name, _, arg_ids, _ = self.calls[ci]
        schema = _schema(name)
        return any(a["writes"] and ids for a, ids in zip(schema["args"], arg_ids))

    def scalar_value(self, vid):
        """The number a 0-dim value holds when the program fixes it (a constant or scalar_tensor), else None."""
        if vid in self.constants:
            t = self.constants[vid]
            return t.item() if t.numel() == 1 else None
        ci = self.producer.get(vid)
        if ci is not None and self.calls[ci][0] == "scalar_tensor":
            return self.calls[ci][1][0]
        return None


_schemas = {}


def _declared(name):
    try:
        _schema(name)
        return True
    except Exception:  # noqa: BLE001  (find_op raises for an op this build does not declare)
        return False


def _schema(name):
    if name not in _schemas:
        _schemas[name] = _C._op_schema(name)
    return _schemas[name]


def _result_type(view, a, b):
    """Eager's result_type(a, b) from the values' capture-time dtype, rank and wrapped-number flag."""
    from .. import _creation

    def proxy(vid):
        sizes, _, dt, wrapped = view.meta[vid]
        if wrapped:
            return True if dt == _dtype.bool else (1.0 if dt.is_floating_point else 1j if dt.is_complex else 1)
        return _creation.empty([1] * len(sizes), dtype=dt)
    import flowlike
    return flowlike.result_type(proxy(a), proxy(b))


def as_node(view, ci):
    """The call as a fusion node, or None when it is not fusible."""
    name, args, arg_ids, result_ids = view.calls[ci]
    if view.writes[ci] or len(result_ids) != 1 or len(result_ids[0]) != 1:
        return None
    out = result_ids[0][0]
    if any(out in ids for ids in arg_ids):
        return None  # returns an argument (an in-place form, a cast to the same dtype)
    out_dtype = view.meta[out][2]
    tensors = [ids[0] for ids in arg_ids if ids]
    if any(len(ids) != 1 or ids[0] < 0 for ids in arg_ids if ids):
        return None
    if out_dtype.is_complex or any(view.meta[t][2].is_complex for t in tensors):
        return None  # the generated kernels are real-valued; complex calls run their eager kernels
    if name in _UNARY and len(tensors) == 1:
        rule = _UNARY[name]
        compute = view.meta[tensors[0]][2] if rule == "BOOL" else out_dtype
        if rule in ("SAME", "INT", "BOOL") and compute != view.meta[tensors[0]][2]:
            return None
        # eager takes the vectorizable float32 form where operand and result are contiguous (pointwise_unary.cpp)
        dense = (name in _DENSE_F32 and compute == _dtype.float32 and view.meta[tensors[0]][2] == _dtype.float32
                 and out_dtype == _dtype.float32 and all(_contiguous(view.meta[v]) for v in (tensors[0], out)))
        return Node(ci, name, "unary", tensors, out, compute, {"dense": dense})
    if name in _BINARY and len(tensors) == 2:
        rule = _BINARY[name]
        a, b = tensors
        if _dtype.bool in (view.meta[a][2], view.meta[b][2]) and name == "sub":
            return None
        compute = _result_type(view, a, b) if rule in ("CMP", "LOGICAL") else out_dtype
        if name in _CHECKED_INTEGER_OPS and not compute.is_floating_point:
            return None
        params = {"alpha": args[2]}
        if name == "pow" and view.meta[b][3] and compute != _dtype.float16:
            exponent = view.scalar_value(b)
            if exponent is None:
                return None  # the eager kernel picks its form from the value: unknown here
            params["pow_form"] = POW_SCALAR_FORMS.get(float(exponent))
        return Node(ci, name, "binary", tensors, out, compute, params)
    if name in _ACTIVATIONS and len(tensors) == 1 and out_dtype in _ACTIVATION_DTYPES:
        return Node(ci, name, "activation", tensors, out, out_dtype, {"abc": list(args[1:4])})
    if (name.endswith("_backward") and name[:-9] in _ACTIVATIONS and len(tensors) == 2 and args[5] == 1
            and out_dtype in _ACTIVATION_DTYPES and all(view.meta[t][2] == out_dtype for t in tensors)):
        return Node(ci, name[:-9], "activation_backward", tensors, out, out_dtype, {"abc": list(args[2:5])})
    if name in _ROW_REDUCTIONS and len(tensors) == 1:
        sizes = view.meta[tensors[0]][0]
        dims, keepdim, dtype = args[1], args[2], args[3]
        if (sizes and sizes[-1] > 0 and keepdim and dtype in (None, out_dtype) and out_dtype in _ACTIVATION_DTYPES
                and view.meta[tensors[0]][2] == out_dtype and dims is not None and len(dims) == 1
                and dims[0] % len(sizes) == len(sizes) - 1):
            return Node(ci, name, "reduce", tensors, out, out_dtype)
        return None
    if name == "_to_copy" and len(tensors) == 1 and _is_plain_cast(args, view.meta[tensors[0]], view.meta[out]):
        return Node(ci, name, "cast", tensors, out, out_dtype)
    return None


def _contiguous(meta):
    sizes, strides = meta[0], meta[1]
    expected = 1
    for size, stride in zip(reversed(sizes), reversed(strides)):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


def _is_plain_cast(args, src, dst):
    """A _to_copy that only changes the dtype between float types (or from an integer type to a float type): the
    conversions whose C++ static_cast equals eager's convert()."""
    schema = _schema("_to_copy")
    named = {a["name"]: v for a, v in zip(schema["args"], args)}
    if named.get("non_blocking") or not dst[2].is_floating_point or src[2] == _dtype.bool:
        return False
    return src[0] == dst[0]


# activations a GEMM or a convolution applies as it stores its tile (_conv2d_bias_act, _addmm_activation)
_CONV_EPILOGUES = ("relu", "gelu", "gelu_tanh", "silu")
_ADDMM_EPILOGUES = ("relu", "gelu")


def _epilogue(view, ci, keep):
    """The replacement of a convolution or addmm and the activation call ci applies to its result alone, or None."""
    name, args, arg_ids, result_ids = view.calls[ci]
    if name not in _CONV_EPILOGUES or view.writes[ci] or any(args[1:4]) or not arg_ids[0]:
        return None
    x = arg_ids[0][0]
    p = view.producer.get(x)
    if p is None or x in keep or view.readers.get(x) != [ci] or any(view.writes[p + 1:ci]):
        return None  # the activation's input is needed elsewhere (a backward), or a write lies between
    pname, pargs, pids, _ = view.calls[p]
    out = result_ids[0][0]
    if pname == "convolution" and not pargs[6] and len(pargs[3]) == 2 and not any(pargs[7]):
        return (p, ("_conv2d_bias_act", [None, None, None, pargs[3], pargs[4], pargs[5], pargs[8], name],
                    [pids[0], pids[1], pids[2], [], [], [], [], []], [[out]]))
    if pname == "addmm" and name in _ADDMM_EPILOGUES:
        return (p, ("_addmm_activation", [None, None, None, pargs[3], pargs[4], name == "gelu"],
                    [pids[0], pids[1], pids[2], [], [], []], [[out]]))
    return None


def find_epilogues(view, keep):
    """Groups of a convolution or addmm with the activation applied to its result, each run as one op."""
    groups = []
    for ci in range(len(view.calls)):
        found = _epilogue(view, ci, keep)
        if found is not None and _declared(found[1][0]):
            p, call = found
            inputs = [ids[0] for ids in call[2] if ids]
            groups.append(Group(f"epilogue_{len(groups)}", [], inputs, call[3][0], tuple(view.meta[call[3][0][0]][0]),
                                call, (p, ci)))
    return groups


def find_groups(program, keep, *, min_size=2):
    """The fusion groups of a program. keep: value ids that must be written to memory (what a run hands back)."""
    view = ProgramView(program)
    keep = set(keep)
    epilogues = find_epilogues(view, keep)
    taken = {c for g in epilogues for c in g.calls}
    nodes = {}
    for ci in range(len(view.calls)):
        node = None if ci in taken else as_node(view, ci)
        if node is not None:
            nodes[ci] = node
    # the space each node iterates: its result's shape, a reduction's input's shape
    shape = {ci: tuple(view.meta[n.inputs[0] if n.kind == "reduce" else n.out][0]) for ci, n in nodes.items()}
    group_of = {}   # call -> group id
    members = {}    # group id -> list of calls
    space = {}      # group id -> the shape it iterates
    for ci in sorted(nodes):
        node = nodes[ci]
        # groups making an input of this call that no op outside the group reads but fusible ones (which may join
        # later): the value then stays in registers. A group joins when its space broadcasts to this call's, or,
        # holding reductions, when this call works on its rows' results (`var + eps` after a mean).
        candidates = {}
        for vid in node.inputs:
            p = view.producer.get(vid)
            if p not in group_of or group_of[p] in candidates or vid in keep:
                continue
            g = group_of[p]
            if not all(r in nodes for r in view.readers.get(vid, ())):
                continue
            if _broadcasts(space[g], shape[ci]):
                candidates[g] = shape[ci]
            elif any(nodes[c].kind == "reduce" for c in members[g]) and shape[ci] == space[g][:-1] + (1,):
                candidates[g] = space[g]

        def attempt(groups):
            calls = sorted({ci}.union(*(members[g] for g in groups)))
            spaces = [shape[ci], *(candidates[g] for g in groups)]
            target = max(spaces, key=lambda sp: (len(sp), math.prod(sp)))
            if all(_broadcasts(sp, target) for sp in spaces) and _valid(view, calls, keep, target,
                                                                          [nodes[c] for c in calls]):
                return calls, target
            return None

        # all at once first (one at a time can fail where all at once holds: a value read by another candidate)
        best = attempt(list(candidates)) or ([ci], shape[ci])
        for g in candidates:
            if not set(members[g]) <= set(best[0]):
                trial = attempt([h for h in candidates if set(members[h]) <= set(best[0])] + [g])
                best = trial or best
        merged, target = best
        for g in candidates:
            if set(members[g]) <= set(merged):
                del members[g]
        members[ci] = merged
        space[ci] = target
        for c in merged:
            group_of[c] = ci
    groups = []
    for calls in sorted(members.values()):
        if len(calls) < min_size:
            continue
        groups.append(_make_group(view, [nodes[c] for c in calls], keep, f"fused_{len(groups)}",
                                  space[group_of[calls[0]]]))
    return epilogues + groups, view


def _broadcasts(small, big):
    """Whether a value of shape `small` broadcasts to `big` (a member computed again at each element it covers)."""
    return len(small) <= len(big) and all(s in (1, b) for s, b in zip(small[::-1], big[::-1]))


def _valid(view, calls, keep, shape, nodes):
    """Whether the calls may run as one group over `shape` at the last one's position."""
    rows = any(n.kind == "reduce" for n in nodes)
    row_shape = shape[:-1] + (1,) if shape else ()
    if rows and not all(n.kind != "reduce" or tuple(view.meta[n.inputs[0]][0]) == shape for n in nodes):
        return False  # each reduction reduces the group's last dimension
    inside = set(calls)
    last = calls[-1]
    made = {view.calls[c][3][0][0] for c in calls}
    for vid in made:
        outside = [r for r in view.readers.get(vid, ()) if r not in inside]
        if any(r < last for r in outside):
            return False  # read before the group would have made it
        if (outside or vid in keep) and tuple(view.meta[vid][0]) not in ((shape, row_shape) if rows else (shape,)):
            return False  # a broadcast member is computed once per element it covers: it cannot be written
    return not any(view.writes[c] for c in range(calls[0] + 1, last) if c not in inside)


def _make_group(view, nodes, keep, name, shape):
    inside = {n.call for n in nodes}
    made = [n.out for n in nodes]
    made_set = set(made)
    inputs = []
    for n in nodes:
        for vid in n.inputs:
            if vid not in made_set and vid not in inputs:
                inputs.append(vid)
    outputs = [vid for vid in made
               if vid in keep or any(r not in inside for r in view.readers.get(vid, ()))]
    return Group(name, nodes, inputs, outputs, shape)
