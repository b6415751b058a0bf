"""Fusion grouping over a captured program (Note [Fused groups] in csrc/graph/trace.h).

A program is a list of calls over numbered values. The pass finds pointwise calls (the op lists of
csrc/ops/pointwise_list.h and csrc/ops/activation_math.h, and dtype casts) and joins producer and consumer into one
group when they iterate over the same shape, so the group's intermediate values are never written to memory. A
group runs where its last member ran, so the pass only groups calls whose results are read, outside the group,
after that position, and no call between the members writes to memory (an in-place op would change what a
delayed member reads). Random ops are never members, so grouping never changes which numbers are drawn.

Groups reach through views (reshape, transpose, permute, expand, (un)squeeze, contiguous): a member reading a
view of a value reads that value at the view's index map instead (`_through_view`: the element strides of the
source over the view's shape), and the view calls become members the group computes by indexing, so a copy that
`contiguous` or `reshape` would make never happens. When the viewed value is made by another pointwise group, that
group joins in the view's space: every value it reads or writes is indexed over the view's shape (Group.geometry),
so `mm -> reshape -> add bias -> gelu` or `gelu -> transpose -> add` is one kernel.
"""
import math
from dataclasses import dataclass, field, replace

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
# sums over all dimensions but the last (contiguous float32/float64 input, at least _COLUMN_MIN columns: where eager
# runs its column kernel, reduce.cpp run_columns): the group ends there, nothing reads its result inside
_COLUMN_REDUCTIONS = frozenset({"sum", "mean"})
_COLUMN_MIN = 8
POW_SCALAR_FORMS = {2.0: "square", 3.0: "cube", 0.5: "sqrt", -0.5: "rsqrt", -1.0: "reciprocal", -2.0: "inv_square"}


@dataclass
class Node:
    """One fusible call: `out = op(inputs)` computed in dtype `compute`."""
    call: int
    op: str
    kind: str          # "unary", "binary", "activation", "activation_backward", "cast", "reduce", "columns"
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
    views: tuple = ()  # view calls the group computes by indexing (their results are read by members alone)
    # value id -> (sizes, element strides): where a value is read or written other than by its captured layout
    # (reached through views); the sizes broadcast to `shape`
    geometry: dict = field(default_factory=dict)

    @property
    def rows(self):
        """Whether the group reduces rows (then it runs row by row)."""
        return any(n.kind == "reduce" for n in self.nodes)

    @property
    def columns(self):
        """Whether the group ends in a column reduction (its space is the reduction's input)."""
        return any(n.kind == "columns" for n in self.nodes)

    @property
    def calls(self):
        if self.replacement is not None:
            return list(self.replacement_calls)
        return sorted([n.call for n in self.nodes] + list(self.views))

    def layout(self, vid, meta):
        """(sizes, strides) by which the kernel indexes value vid."""
        return self.geometry.get(vid, meta[vid])


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
        # eager takes the vectorizable float32 form whenever it computes in float32, strided operands included
        # (pointwise_unary.cpp)
        dense = name in _DENSE_F32 and compute == _dtype.float32 and out_dtype == _dtype.float32
        return Node(ci, name, "unary", tensors, out, compute, {"dense": dense, "range": _DENSE_F32.get(name)})
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
        meta = view.meta[tensors[0]]
        sizes = meta[0]
        dims, keepdim, dtype = args[1], args[2], args[3]
        if (not sizes or dtype not in (None, out_dtype) or out_dtype not in _ACTIVATION_DTYPES
                or meta[2] != out_dtype or not dims):
            return None
        dims = sorted({d % len(sizes) for d in dims})
        if keepdim and sizes[-1] > 0 and dims == [len(sizes) - 1]:
            return Node(ci, name, "reduce", tensors, out, out_dtype)
        # a bias gradient: every dimension but the last, as eager's column kernel sums (its blocks, its order), so
        # the group's sums equal eager's bit for bit
        if (name in _COLUMN_REDUCTIONS and dims == list(range(len(sizes) - 1)) and sizes[-1] >= _COLUMN_MIN
                and math.prod(sizes[:-1]) > 1 and _contiguous(meta)):
            return Node(ci, name, "columns", tensors, out, out_dtype)
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


# the view F.linear puts between a 3-D input's addmm and the activation (the activation of the view is the view of
# the activation: the group makes the GEMM's result and the executor views it, Note [Fused groups])
_SKIPPED_VIEWS = ("view", "_unsafe_view")


def _sole_input(view, x, ci, keep):
    """The call making value x when x is read by call ci alone and nothing writes memory between them, else None."""
    p = view.producer.get(x)
    if p is None or x in keep or view.readers.get(x) != [ci] or any(view.writes[p + 1:ci]):
        return None  # the value is needed elsewhere (a backward), or a write lies between
    return p


def _epilogue(view, ci, keep):
    """The replacement of a convolution or addmm and the activation call ci applies to its result alone (for addmm
    also through a view), as (the calls replaced, the replacement), or None."""
    name, args, arg_ids, result_ids = view.calls[ci]
    if name not in _CONV_EPILOGUES or view.writes[ci] or any(args[1:4]) or not arg_ids[0]:
        return None
    p = _sole_input(view, arg_ids[0][0], ci, keep)
    if p is None:
        return None
    replaced = (p, ci)
    if view.calls[p][0] in _SKIPPED_VIEWS and view.calls[p][2][0]:
        q = _sole_input(view, view.calls[p][2][0][0], p, keep)
        if q is not None and view.calls[q][0] == "addmm":
            p, replaced = q, (q, p, ci)
    pname, pargs, pids, _ = view.calls[p]
    out = result_ids[0][0]
    if pname == "convolution" and not pargs[6] and len(pargs[3]) == 2 and not any(pargs[7]):
        return (replaced, ("_conv2d_bias_act", [None, None, None, pargs[3], pargs[4], pargs[5], pargs[8], name],
                           [pids[0], pids[1], pids[2], [], [], [], [], []], [[out]]))
    if pname == "addmm" and name in _ADDMM_EPILOGUES:
        return (replaced, ("_addmm_activation", [None, None, None, pargs[3], pargs[4], name == "gelu"],
                           [pids[0], pids[1], pids[2], [], [], []], [[out]]))
    return None


def find_epilogues(view, keep):
    """Groups of a convolution or addmm with the activation applied to its result, each run as one op."""
    groups = []
    for ci in range(len(view.calls)):
        found = _epilogue(view, ci, keep)
        if found is not None and _declared(found[1][0]):
            replaced, call = found
            inputs = [ids[0] for ids in call[2] if ids]
            groups.append(Group(f"epilogue_{len(groups)}", [], inputs, call[3][0], tuple(view.meta[call[3][0][0]][0]),
                                call, replaced))
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
    shape = {ci: tuple(view.meta[n.inputs[0] if n.kind in ("reduce", "columns") else n.out][0])
             for ci, n in nodes.items()}
    group_of = {}   # call -> group id
    members = {}    # group id -> list of calls (view calls included)
    space = {}      # group id -> the shape it iterates
    geometry = {}   # group id -> {value id: (sizes, strides)} for values not indexed by their captured layout
    alias = {}      # group id -> {view result: the value it views}: members read the source instead
    for ci in sorted(nodes):
        node = nodes[ci]
        # groups making an input of this call that no op outside the group reads but fusible ones (which may join
        # later): the value then stays in registers. A group joins when its space broadcasts to this call's, or,
        # holding reductions, when this call works on its rows' results (`var + eps` after a mean), or, reached
        # through views, in the views' space (`respaced`).
        candidates, respaced = {}, {}
        own_geometry, own_alias, own_views = {}, {}, []
        for vid in node.inputs:
            source, chain = _view_chain(view, vid, keep)
            layout = _through_chain(view, chain, *view.meta[source][:2]) if chain else None
            if layout is not None and own_geometry.get(source, layout) == layout and source not in node.inputs:
                # the source read from memory through the views, or computed by its group joining in their space
                g = group_of.get(view.producer.get(source))
                moved = None if g is None or g in candidates else _respace(view, nodes, members[g], space[g],
                                                                            geometry[g], alias[g], source, chain)
                if moved is not None and all(r in nodes for r in view.readers.get(source, ()) if r != chain[0]):
                    candidates[g], respaced[g] = shape[ci], moved
                own_geometry[source] = layout
                own_alias[vid] = source
                own_views += chain
                continue
            p = view.producer.get(vid)
            if p not in group_of or group_of[p] in candidates or vid in keep or _closed(nodes, members[group_of[p]]):
                continue
            g = group_of[p]
            if not all(r in nodes for r in view.readers.get(vid, ())):
                continue
            if _broadcasts(space[g], shape[ci]):
                candidates[g] = shape[ci]
            elif any(nodes[c].kind == "reduce" for c in members[g] if c in nodes) and shape[ci] == space[g][:-1] + (1,):
                candidates[g] = space[g]

        def attempt(groups):
            calls = sorted({ci, *own_views}.union(*(members[g] for g in groups)))
            spaces = [shape[ci], *(candidates[g] for g in groups)]
            target = max(spaces, key=lambda sp: (len(sp), math.prod(sp)))
            if not all(_broadcasts(sp, target) for sp in spaces):
                return None
            parts = [(own_geometry, own_alias, [ci])]
            parts += [(respaced.get(g, geometry[g]), alias[g], members[g]) for g in groups]
            layouts = _merge_layouts(view, nodes, parts, target)
            if layouts is not None and _valid(view, calls, keep, target, [nodes[c] for c in calls if c in nodes],
                                              layouts[0]):
                return calls, target, layouts
            return None

        # all at once first (one at a time can fail where all at once holds: a value read by another candidate)
        alone = attempt([])
        if alone is None:  # its reads through views conflict (x + x.t()): it reads the view values instead
            own_geometry, own_alias, own_views = {}, {}, []
            candidates = {g: sp for g, sp in candidates.items() if g not in respaced}
            alone = attempt([]) or ([ci], shape[ci], ({}, {}))
        best = attempt(list(candidates)) or alone
        for g in candidates:
            if not set(members[g]) <= set(best[0]):
                trial = attempt([h for h in candidates if set(members[h]) <= set(best[0])] + [g])
                best = trial or best
        merged, target, (layouts, aliases) = best
        for g in candidates:
            if set(members[g]) <= set(merged):
                del members[g], geometry[g], alias[g]
        members[ci], space[ci], geometry[ci], alias[ci] = merged, target, layouts, aliases
        for c in merged:
            group_of[c] = ci
    groups = []
    for gid, calls in sorted(members.items(), key=lambda item: item[1]):
        members_ = [nodes[c] for c in calls if c in nodes]
        views = [c for c in calls if c not in nodes]
        if len(members_) < min_size and not any(_copies(view, c) for c in views):
            continue
        groups.append(_make_group(view, members_, views, keep, f"fused_{len(groups)}", space[gid], geometry[gid],
                                  alias[gid]))
    return epilogues + groups, view


# view ops a group reads through: element j of the result is its source's element at an index linear in j
_VIEW_OPS = frozenset({"view", "_unsafe_view", "reshape", "contiguous", "alias", "transpose", "t", "permute", "expand",
                       "unsqueeze", "squeeze"})


def _view_chain(view, vid, keep):
    """(source, view calls from source to vid) when vid is made from source by view calls whose results nothing
    else reads (a group may then compute them by indexing), else (vid, [])."""
    chain = []
    while vid not in keep and len(view.readers.get(vid, ())) == 1:
        p = view.producer.get(vid)
        if p is None or view.calls[p][0] not in _VIEW_OPS or view.writes[p]:
            break
        _, _, arg_ids, result_ids = view.calls[p]
        sources = [ids for ids in arg_ids if ids]
        if len(sources) != 1 or len(sources[0]) != 1 or sources[0][0] < 0 or [list(r) for r in result_ids] != [[vid]]:
            break
        chain.append(p)
        vid = sources[0][0]
    return vid, chain[::-1]


def _restride(sizes, strides, shape):
    """The strides by which a (sizes, strides) value is read as `shape` in row-major order, as a view (torch's
    computeStride), or None where no strides do (a reshape that copies, an empty value)."""
    numel = math.prod(sizes)
    if numel != math.prod(shape) or numel == 0:
        return None
    if not sizes:
        return [0] * len(shape)
    new = [0] * len(shape)
    view_d, chunk = len(shape) - 1, strides[-1]
    tensor_numel = view_numel = 1
    for d in reversed(range(len(sizes))):
        tensor_numel *= sizes[d]
        if d == 0 or (sizes[d - 1] != 1 and strides[d - 1] != tensor_numel * chunk):
            while view_d >= 0 and (view_numel < tensor_numel or shape[view_d] == 1):
                new[view_d] = view_numel * chunk
                view_numel *= shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                chunk, tensor_numel, view_numel = strides[d - 1], 1, 1
    return new if view_d == -1 else None


def _through_view(view, ci, sizes, strides):
    """(sizes, strides) by which a value indexed by (sizes, strides) is read through view call ci, or None."""
    name, args, _, result_ids = view.calls[ci]
    out = tuple(view.meta[result_ids[0][0]][0])
    n = len(sizes)
    sizes, strides = list(sizes), list(strides)
    if name in ("view", "_unsafe_view", "reshape"):
        new = _restride(sizes, strides, out)
        return None if new is None else (out, tuple(new))
    if name in ("transpose", "t") and n >= 2:
        d0, d1 = (args[1] % n, args[2] % n) if name == "transpose" else (0, 1)
        sizes[d0], sizes[d1], strides[d0], strides[d1] = sizes[d1], sizes[d0], strides[d1], strides[d0]
    elif name == "permute" and n:
        order = [d % n for d in args[1]]
        sizes, strides = [sizes[d] for d in order], [strides[d] for d in order]
    elif name == "expand" and len(out) >= n:
        strides = [0] * (len(out) - n) + [0 if s == 1 else st for s, st in zip(sizes, strides)]
        sizes = list(out)
    elif name == "unsqueeze":
        d = args[1] % (n + 1)
        sizes.insert(d, 1)
        strides.insert(d, 0)
    elif name == "squeeze":
        drop = set(range(n)) if args[2] else {d % n for d in args[1] or ()} if n else set()
        kept = [d for d in range(n) if not (d in drop and sizes[d] == 1)]
        sizes, strides = [sizes[d] for d in kept], [strides[d] for d in kept]
    elif name not in ("contiguous", "alias", "transpose", "t", "permute"):
        return None
    return (out, tuple(strides)) if tuple(sizes) == out else None


def _through_chain(view, chain, sizes, strides):
    layout = (tuple(sizes), tuple(strides))
    for c in chain:
        layout = _through_view(view, c, *layout)
        if layout is None:
            return None
    return layout


def _copies(view, ci):
    """Whether view call ci copies (contiguous of a value that is not): a group indexing through it saves a pass."""
    name, _, arg_ids, _ = view.calls[ci]
    return name == "contiguous" and not _contiguous(view.meta[arg_ids[0][0]])


def strides_over(layout, shape):
    """The element strides of a value indexed by layout (sizes, strides, ...) over `shape` it broadcasts to (0 along
    broadcast dimensions)."""
    sizes, st = layout[0], layout[1]
    lead = len(shape) - len(sizes)
    return [0 if d < lead or sizes[d - lead] == 1 else st[d - lead] for d in range(len(shape))]


def _values(nodes, calls, aliases):
    """The values the member calls read (through aliases) and make."""
    seen = set()
    for c in calls:
        node = nodes.get(c)
        if node is not None:
            seen.update(aliases.get(v, v) for v in node.inputs)
            seen.add(node.out)
    return seen


def _respace(view, nodes, calls, space, layouts, aliases, source, chain):
    """The layouts of every value of a pointwise group making `source` when it runs in the space of source's view
    `chain` (the group then computes the view's elements), or None when it cannot."""
    if (any(nodes[c].kind in ("reduce", "columns") for c in calls if c in nodes)
            or tuple(view.meta[source][0]) != tuple(space)):
        return None
    moved = {}
    for vid in _values(nodes, calls, aliases):
        layout = _through_chain(view, chain, space, strides_over(layouts.get(vid, view.meta[vid]), space))
        if layout is None:
            return None
        moved[vid] = layout
    return moved


def _merge_layouts(view, nodes, parts, target):
    """({value: layout}, {view result: source}) of parts (layouts, aliases, calls) joined over `target`, or None
    where a value would be indexed two ways (read directly by one member and through a transpose by another)."""
    layouts, aliases, seen = {}, {}, {}
    for part_layouts, part_aliases, calls in parts:
        aliases.update(part_aliases)
        for vid in _values(nodes, calls, part_aliases):
            layout = part_layouts.get(vid)
            over = strides_over(view.meta[vid] if layout is None else layout, target)
            if seen.setdefault(vid, over) != over:
                return None
            if layout is not None:
                layouts[vid] = layout
    return layouts, aliases


def _closed(nodes, calls):
    """Whether a group ends in a column reduction (no later call joins it)."""
    return any(nodes[c].kind == "columns" for c in calls if c in nodes)


def _broadcasts(small, big):
    """Whether a value of shape `small` broadcasts to `big` (a member computed again at each element it covers)."""
    return len(small) <= len(big) and all(s in (1, b) for s, b in zip(small[::-1], big[::-1]))


def _valid(view, calls, keep, shape, nodes, layouts):
    """Whether the calls may run as one group over `shape` at the last one's position."""
    rows = any(n.kind == "reduce" for n in nodes)
    row_shape = shape[:-1] + (1,) if shape else ()
    if rows and not all(n.kind != "reduce" or tuple(view.meta[n.inputs[0]][0]) == shape for n in nodes):
        return False  # each reduction reduces the group's last dimension
    columns = [n for n in nodes if n.kind == "columns"]
    if columns and (rows or len(columns) > 1 or tuple(view.meta[columns[0].inputs[0]][0]) != shape):
        return False  # one column reduction, of the group's whole space
    inside = set(calls)
    last = calls[-1]
    made = {view.calls[c][3][0][0] for c in calls}
    for vid in made:
        outside = [r for r in view.readers.get(vid, ()) if r not in inside]
        if any(r < last for r in outside):
            return False  # read before the group would have made it
        if (not outside and vid not in keep) or (columns and vid == columns[0].out):
            continue
        layout = layouts.get(vid)
        if layout is not None:
            # written through views: each element once
            if tuple(layout[0]) != tuple(shape) or any(st == 0 and sz != 1 for sz, st in zip(*layout[:2])):
                return False
        elif tuple(view.meta[vid][0]) not in ((shape, row_shape) if rows else (shape,)):
            return False  # a broadcast member is computed once per element it covers: it cannot be written
    return not any(view.writes[c] for c in range(calls[0] + 1, last) if c not in inside)


def _make_group(view, nodes, views, keep, name, shape, layouts, aliases):
    inside = {n.call for n in nodes}.union(views)
    nodes = [replace(n, inputs=[aliases.get(v, v) for v in n.inputs]) for n in nodes]
    made = [n.out for n in nodes]
    made_set = set(made)
    inputs = []
    for n in nodes:
        for vid in n.inputs:
            if vid not in made_set and vid not in inputs:
                inputs.append(vid)
    outputs = [vid for vid in made
               if vid in keep or any(r not in inside for r in view.readers.get(vid, ()))]
    used = set(inputs) | made_set
    return Group(name, nodes, inputs, outputs, shape, views=tuple(views),
                 geometry={v: (tuple(sz), tuple(st)) for v, (sz, st) in layouts.items() if v in used})
