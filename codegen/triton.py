"""Triton for fusion groups: the groups codegen/cpp.py compiles for the CPU, written as `@triton.jit` kernels for
CUDA. Each kernel is specialized as the C++ one is (the merged loop's sizes and every operand's strides are
constants), takes the outputs' then the inputs' pointers, and covers BLOCK elements per program, BLOCK chosen from
the group's size. The float32 math is codegen/triton_math.py, csrc/kernels/vec_math.h step for step, and no
floating-point contraction is allowed (launch with enable_fp_fusion=False on a GPU) and divisions are IEEE's
(tl.math.div_rn; a GPU's `/` is approximate), so the kernels compute what the C++ kernels compute; 16-bit floats
round after every op as eager does.

Until flowlike has a CUDA device the kernels run in tests through Triton's interpreter (TRITON_INTERPRET=1) on
flowlike CPU tensors: `run(group, meta, inputs)`.
"""
import hashlib
import importlib.util
import math

from .. import _dtype
from . import cpp

TL = {
    _dtype.bool: "tl.int1", _dtype.uint8: "tl.uint8", _dtype.int8: "tl.int8", _dtype.int16: "tl.int16",
    _dtype.int32: "tl.int32", _dtype.int64: "tl.int64", _dtype.float16: "tl.float16",
    _dtype.bfloat16: "tl.bfloat16", _dtype.float32: "tl.float32", _dtype.float64: "tl.float64",
}
_UNARY = {
    "neg": "-{0}", "abs": "tl.abs({0})", "square": "{0} * {0}", "exp": "tl.exp({0})", "log": "tl.log({0})",
    "sqrt": "tl.sqrt_rn({0})", "rsqrt": "tl.math.div_rn(1.0, tl.sqrt_rn({0}))",
    "reciprocal": "tl.math.div_rn(1.0, {0})", "sin": "tl.sin({0})", "cos": "tl.cos({0})", "floor": "tl.floor({0})",
    "ceil": "tl.ceil({0})", "log2": "tl.log2({0})",
    "exp2": "tl.exp2({0})", "sigmoid": "tl.math.div_rn(1.0, 1 + tl.exp(-{0}))",
    "tanh": "tl.math.div_rn(2.0, 1 + tl.exp(-2 * {0})) - 1",
    "erf": "tl.erf({0})", "logical_not": "{0} == 0", "isnan": "{0} != {0}",
    "sign": "tl.where({0} > 0, 1, 0) - tl.where({0} < 0, 1, 0)",
    "sgn": "tl.where({0} > 0, 1, 0) - tl.where({0} < 0, 1, 0)",
}
_DENSE = {"exp": "dense_exp({0})", "tanh": "dense_tanh({0})", "sigmoid": "dense_sigmoid({0})", "erf": "dense_erf({0})"}
_BINARY = {
    "add": "{0} + {a} * {1}", "sub": "{0} - {a} * {1}", "mul": "{0} * {1}", "div": "tl.math.div_rn({0}, {1})",
    "maximum": "tl.where({0} != {0}, {0}, tl.where({1} != {1}, {1}, tl.maximum({0}, {1})))",
    "minimum": "tl.where({0} != {0}, {0}, tl.where({1} != {1}, {1}, tl.minimum({0}, {1})))",
    "eq": "{0} == {1}", "ne": "{0} != {1}", "lt": "{0} < {1}", "le": "{0} <= {1}", "gt": "{0} > {1}",
    "ge": "{0} >= {1}", "logical_and": "({0} != 0) & ({1} != 0)", "logical_or": "({0} != 0) | ({1} != 0)",
    "logical_xor": "({0} != 0) ^ ({1} != 0)",
}
_POW = {"square": "{0} * {0}", "cube": "({0} * {0}).to({t}).to({om}) * {0}", "sqrt": "tl.sqrt_rn({0})",
        "rsqrt": "tl.math.div_rn(1.0, tl.sqrt_rn({0}).to({t}).to({om}))", "reciprocal": "tl.math.div_rn(1.0, {0})",
        "inv_square": "tl.math.div_rn(1.0, ({0} * {0}).to({t}).to({om}))"}
# activations over float32/float64 x (and g for the backward forms), with parameters a, b, c
_ACTIVATION = {
    "relu": "tl.where({x} < 0, 0.0, {x})",
    "gelu": "{x} * 0.5 * {erfc}(-{x} * 0.7071067811865476)",
    "gelu_tanh": "0.5 * {x} * (1 + {tanh}(0.7978845608028654 * ({x} + 0.044715 * {x} * {x} * {x})))",
    "silu": "tl.math.div_rn({x}, 1 + {exp}(-{x}))",
    "hardtanh": "tl.where({x} < {a}, {a}, tl.where({x} > {b}, {b}, {x}))",
    "leaky_relu": "tl.where({x} > 0, {x}, {x} * {a})",
}
_ACTIVATION_BACKWARD = {
    "relu": "tl.where({x} > 0, {g}, 0.0)",
    "hardtanh": "tl.where(({x} > {a}) & ({x} < {b}), {g}, 0.0)",
    "leaky_relu": "tl.where({x} > 0, {g}, {g} * {a})",
}


def supports(group, meta):
    """Whether every op of the group has a Triton form here."""
    if group.rows and group.shape[-1] > MAX_ROW:
        return False
    return all(n.kind in ("reduce", "columns") or _expr(n, meta, lambda v: "x") is not None for n in group.nodes)


def _om(dt):
    return "tl.float32" if dt in (_dtype.float16, _dtype.bfloat16) else TL[dt]


def _expr(node, meta, name_of):
    ct = node.compute
    # an operand is cast to the compute dtype first (a float64 Python number to float16, say), then to its opmath
    args = [f"{name_of(v)}.to({TL[ct]}).to({_om(ct)})" if meta[v][2] != ct else f"{name_of(v)}.to({_om(ct)})"
            for v in node.inputs]
    f32 = ct == _dtype.float32
    if node.kind == "unary":
        if node.params.get("dense"):
            return _DENSE[node.op].format(*args)
        return _UNARY[node.op].format(*args) if node.op in _UNARY else None
    if node.kind == "binary":
        form = node.params.get("pow_form")
        if node.op == "pow":
            return _POW[form].format(*args, t=TL[ct], om=_om(ct)) if form else None
        return _BINARY[node.op].format(*args, a=repr(node.params["alpha"])) if node.op in _BINARY else None
    if node.kind in ("activation", "activation_backward"):
        table = _ACTIVATION if node.kind == "activation" else _ACTIVATION_BACKWARD
        if node.op not in table:
            return None
        math_fns = ({"erfc": "erfc_f32", "tanh": "dense_tanh", "exp": "exp_f32"} if f32 else
                    {"erfc": "tl.erfc", "tanh": "_tanh64", "exp": "tl.exp"})
        if not f32 and node.op in ("gelu", "gelu_tanh"):
            return None  # libm's double erfc/tanh have no exact Triton counterpart
        a, b, c = (repr(float(v)) for v in node.params["abc"])
        xg = dict(zip(("g", "x"), args)) if node.kind == "activation_backward" else {"x": args[0]}
        return table[node.op].format(**xg, a=a, b=b, c=c, **math_fns)
    if node.kind == "cast":
        return f"{name_of(node.inputs[0])}.to({TL[meta[node.out][2]]})"
    return None


def group_source(group, meta):
    """The Triton kernel computing one group (a function named as the group)."""
    if group.rows:
        return _rows_source(group, meta)
    if group.columns:
        return _columns_source(group, meta)
    sizes, strides = cpp._loop_dims(group, meta)
    operands = list(group.outputs) + list(group.inputs)
    numel = math.prod(sizes)
    params = ", ".join(f"p{k}" for k in range(len(operands)))
    lines = ["@triton.jit", f"def {group.name}({params}, BLOCK: tl.constexpr):",
             "    idx = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)",
             f"    mask = idx < {numel}"]
    offsets = [[] for _ in operands]
    lines.append("    rest = idx")
    for d in reversed(range(len(sizes))):
        var = f"i{d}"
        if d > 0:
            lines.append(f"    {var} = rest % {sizes[d]}")
            lines.append(f"    rest = rest // {sizes[d]}")
        else:
            lines.append(f"    {var} = rest")
        for k in range(len(operands)):
            if strides[k][d]:
                offsets[k].append(f"{var} * {strides[k][d]}" if strides[k][d] != 1 else var)
    off = [" + ".join(o) if o else "idx * 0" for o in offsets]  # a block of pointers even for a broadcast scalar
    index = {vid: k for k, vid in enumerate(operands)}
    names = {}
    for vid in group.inputs:
        k = index[vid]
        names[vid] = f"x{vid}"
        lines.append(f"    x{vid} = tl.load(p{k} + {off[k]}, mask=mask)")
    for node in group.nodes:
        names[node.out] = f"v{node.out}"
        expr = _expr(node, meta, names.__getitem__)
        lines.append(f"    v{node.out} = ({expr}).to({TL[meta[node.out][2]]})  # {node.op}")
    for vid in group.outputs:
        k = index[vid]
        lines.append(f"    tl.store(p{k} + {off[k]}, v{vid}, mask=mask)")
    return "\n".join(lines)


_REDUCE = {"sum": ("0.0", "tl.sum({v}, axis=0)"), "mean": ("0.0", "tl.math.div_rn(tl.sum({v}, axis=0), {n})"),
           "amax": ("-float('inf')", "tl.max({v}, axis=0)"), "amin": ("float('inf')", "tl.min({v}, axis=0)")}
MAX_ROW = 16384  # a row group's row is one block: longer rows are left to the C++ kernels


def _rows_source(group, meta):
    """A row group as one program per row, the whole row in one block: reductions are tl.sum / tl.max over it,
    row-level values are scalars that broadcast over the block (NaN kept by amax/amin as by the C++ kernel)."""
    sizes, strides = cpp._loop_dims(group, meta)
    operands = list(group.outputs) + list(group.inputs)
    index = {vid: k for k, vid in enumerate(operands)}
    n = sizes[-1]
    outer = sizes[:-1]
    params = ", ".join(f"p{k}" for k in range(len(operands)))
    lines = ["@triton.jit", f"def {group.name}({params}, BLOCK: tl.constexpr):",
             "    row = tl.program_id(0)", "    cols = tl.arange(0, BLOCK)", f"    mask = cols < {n}", "    rest = row"]
    row_off = [[] for _ in operands]
    for d in reversed(range(len(outer))):
        var = f"r{d}"
        if d > 0:
            lines += [f"    {var} = rest % {outer[d]}", f"    rest = rest // {outer[d]}"]
        else:
            lines.append(f"    {var} = rest")
        for k in range(len(operands)):
            if strides[k][d]:
                row_off[k].append(f"{var} * {strides[k][d]}")
    base = [" + ".join(o) if o else "0" for o in row_off]
    names = {}
    node_of = {node.out: node for node in group.nodes}

    def row_level(vid):
        node = node_of.get(vid)
        sz = group.layout(vid, meta)[0]
        return (node is not None and node.kind == "reduce") or (n > 1 and (not sz or sz[-1] == 1))

    def where(k, vid):
        inner = strides[k][-1]
        return f"p{k} + {base[k]}" if row_level(vid) or not inner else f"p{k} + {base[k]} + cols * {inner}"

    for vid in group.inputs:
        k = index[vid]
        names[vid] = f"x{vid}"
        if row_level(vid):
            lines.append(f"    x{vid} = tl.load({where(k, vid)})")
        else:  # (a block of pointers even where the row has one element)
            lines.append(f"    x{vid} = tl.load({where(k, vid)}{'' if strides[k][-1] else ' + cols * 0'}, mask=mask)")
    for node in group.nodes:
        names[node.out] = f"v{node.out}"
        if node.kind == "reduce":
            x = names[node.inputs[0]]
            neutral, fold = _REDUCE[node.op]
            masked = f"tl.where(mask, {x}.to({_om(node.compute)}), {neutral})"
            expr = fold.format(v=masked, n=float(n))
            if node.op in ("amax", "amin"):
                expr = f"tl.where(tl.sum(tl.where(mask & ({x} != {x}), 1, 0), axis=0) > 0, float('nan'), {expr})"
            lines.append(f"    v{node.out} = ({expr}).to({TL[meta[node.out][2]]})  # {node.op}")
        else:
            lines.append(f"    v{node.out} = ({_expr(node, meta, names.__getitem__)}).to({TL[meta[node.out][2]]})"
                         f"  # {node.op}")
    for vid in group.outputs:
        k = index[vid]
        if row_level(vid):
            lines.append(f"    tl.store({where(k, vid)}, v{vid})")
        else:
            lines.append(f"    tl.store({where(k, vid)}, v{vid}, mask=mask)")
    return "\n".join(lines)


def _columns_source(group, meta):
    """A group ending in a sum (or mean) over all dimensions but the last, as codegen/cpp.py's column kernel (eager's
    order, so the sums are the same bit for bit): one program per BLOCK columns, the rows in blocks of
    cpp.COLUMN_ROWS summed apart and then added to the column's total, the members computed row by row (their
    outputs stored on the way)."""
    (red,) = [n for n in group.nodes if n.kind == "columns"]
    sizes, strides = cpp._loop_dims(group, meta)
    operands = list(group.outputs) + list(group.inputs)
    index = {vid: k for k, vid in enumerate(operands)}
    inner, outer = sizes[-1], sizes[:-1]
    rows, om = math.prod(outer), _om(red.compute)
    params = ", ".join(f"p{k}" for k in range(len(operands)))
    lines = ["@triton.jit", f"def {group.name}({params}, BLOCK: tl.constexpr):",
             "    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)", f"    mask = cols < {inner}",
             f"    acc = tl.zeros([BLOCK], dtype={om})"]

    def row_block(first, last, pad):
        """A loop summing rows [first, last) into blk, then blk into acc (pad: the indent)."""
        body = [f"{pad}blk = tl.zeros([BLOCK], dtype={om})", f"{pad}for r in range({first}, {last}):",
                f"{pad}    rest = r"]
        offsets = [[] for _ in operands]
        for d in reversed(range(len(outer))):
            body += [f"{pad}    r{d} = rest % {outer[d]}", f"{pad}    rest = rest // {outer[d]}"]
            for k in range(len(operands)):
                if strides[k][d]:
                    offsets[k].append(f"r{d} * {strides[k][d]}")
        for k in range(len(operands)):
            if strides[k][-1]:
                offsets[k].append(f"cols * {strides[k][-1]}")
        off = [" + ".join(o) if o else "cols * 0" for o in offsets]
        names = {}
        for vid in group.inputs:
            names[vid] = f"x{vid}"
            body.append(f"{pad}    x{vid} = tl.load(p{index[vid]} + {off[index[vid]]}, mask=mask)")
        for node in group.nodes:
            if node is red:
                body.append(f"{pad}    blk += {names[node.inputs[0]]}.to({om})")
                continue
            names[node.out] = f"v{node.out}"
            body.append(f"{pad}    v{node.out} = ({_expr(node, meta, names.__getitem__)})"
                        f".to({TL[meta[node.out][2]]})  # {node.op}")
        for vid in group.outputs:
            if vid != red.out:
                body.append(f"{pad}    tl.store(p{index[vid]} + {off[index[vid]]}, v{vid}, mask=mask)")
        return body + [f"{pad}acc += blk"]

    block = cpp.COLUMN_ROWS
    full = rows // block * block
    if full:
        lines.append(f"    for rb in range(0, {full}, {block}):")
        lines += row_block("rb", f"rb + {block}", "        ")
    if rows > full:
        lines += row_block(full, rows, "    ")
    # (div_rn takes float32 alone; a float64 division is IEEE's already)
    total = "acc" if red.op != "mean" else (f"acc / {float(rows)}" if om == "tl.float64" else
                                            f"tl.math.div_rn(acc, {float(rows)})")
    k = index[red.out]
    lines.append(f"    tl.store(p{k} + cols * {strides[k][-1]}, ({total}).to({TL[meta[red.out][2]]}), mask=mask)")
    return "\n".join(lines)


def program_source(groups, meta):
    parts = ["import triton", "import triton.language as tl", "from flowlike.codegen.triton_math import *  # noqa",
             "", "", "@triton.jit", "def _tanh64(x):", "    return tl.math.div_rn(2.0, 1 + tl.exp(-2 * x)) - 1", ""]
    return "\n".join(parts + [group_source(g, meta) + "\n\n" for g in groups])


def block_size(numel):
    """Elements per program: the group's size rounded up to a power of two, between 16 and 1024."""
    return max(16, min(1024, 1 << max(0, (numel - 1).bit_length())))


_modules = {}


def load(source):
    """The module of a generated source (written into the kernel cache: Triton reads a kernel's source file)."""
    key = hashlib.sha256(source.encode()).hexdigest()[:32]
    if key not in _modules:
        folder = cpp.cache_dir() / "triton"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"k{key}.py"
        if not path.is_file():
            tmp = path.with_suffix(".tmp")
            tmp.write_text(source)
            tmp.replace(path)
        spec = importlib.util.spec_from_file_location(f"flowlike_triton_{key}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _modules[key] = module
    return _modules[key]


def run(group, meta, inputs):
    """Runs the group's Triton kernel on flowlike tensors (the inputs in group.inputs' order); returns the outputs,
    allocated with the capture's strides as the executor allocates them."""
    from .. import _creation
    kernel = getattr(load(program_source([group], meta)), group.name)
    outputs = [_creation.empty_strided(meta[v][0], meta[v][1], dtype=meta[v][2]) for v in group.outputs]
    numel = math.prod(group.shape)
    if not numel:
        return outputs
    if group.rows:
        n = group.shape[-1]
        kernel[(numel // n,)](*outputs, *inputs, BLOCK=max(16, 1 << (n - 1).bit_length()))
    elif group.columns:
        block = block_size(group.shape[-1])
        kernel[(-(-group.shape[-1] // block),)](*outputs, *inputs, BLOCK=block)
    else:
        block = block_size(numel)
        kernel[(-(-numel // block),)](*outputs, *inputs, BLOCK=block)
    return outputs
