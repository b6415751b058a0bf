"""C++ for fusion groups: one function per group, compiled at run time with the system compiler, cached on disk.

Each group becomes `extern "C" void <name>(char** data)` (the outputs' then the inputs' data pointers) whose loops
are specialized to the captured shapes and strides: dimensions that every operand walks contiguously are merged,
the innermost loop runs over unit or zero strides so the compiler vectorizes it for this CPU (-march=native), and
OpenMP splits the work. Element math comes from csrc/graph/fused_prelude.h, the same op lists the eager kernels
expand, compiled without floating-point contraction as the eager kernels are, so each element equals eager's.

Compiled libraries live in FLOWLIKE_CACHE_DIR (default: $XDG_CACHE_HOME/flowlike or ~/.cache/flowlike) under a
hash of the source, the headers it includes, the compiler's identity, the flags and the CPU's features: a second
process running the same model compiles nothing.
"""
import ctypes
import hashlib
import math
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from functools import lru_cache
from pathlib import Path

from .. import _dtype
from .fusion import strides_over

CTYPES = {
    _dtype.bool: "bool", _dtype.uint8: "uint8_t", _dtype.int8: "int8_t", _dtype.int16: "int16_t",
    _dtype.int32: "int32_t", _dtype.int64: "int64_t", _dtype.float16: "fl::Half", _dtype.bfloat16: "fl::BFloat16",
    _dtype.float32: "float", _dtype.float64: "double",
}
FLAGS = ["-std=c++17", "-O3", "-march=native", "-fopenmp", "-fno-math-errno", "-fno-trapping-math", "-ffp-contract=off",
         "-fPIC",
         "-shared", "-w"]
BLOCK = 4096          # elements per task of the innermost loop
PARALLEL_MIN = 32768  # fewer elements run on one thread
STREAM_MIN = 1 << 23  # bytes of a row group's output from which it is written with streaming stores (as eager's)
ROW_BUFFER_MAX = 65536  # bytes of a row kept in a buffer on the stack
# the headers fused_prelude.h includes (their contents are part of the cache key)
_HEADERS = ["graph/fused_prelude.h", "core/dtype.h", "kernels/vec_math.h", "ops/activation_math.h",
            "ops/pointwise_list.h", "ops/pointwise_math.h", "ops/pointwise_special.h"]


def _dtype_size(dt):
    return {"bool": 1, "uint8_t": 1, "int8_t": 1, "int16_t": 2, "int32_t": 4, "int64_t": 8, "fl::Half": 2,
            "fl::BFloat16": 2, "float": 4, "double": 8}[CTYPES[dt]]


def opmath(dt):
    return "float" if dt in (_dtype.float16, _dtype.bfloat16) else CTYPES[dt]


def literal(x):
    """A C++ literal of a Python number that reads back exactly."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return f"INT64_C({x})"
    if x != x:
        return "NAN"
    if x in (float("inf"), float("-inf")):
        return "INFINITY" if x > 0 else "-INFINITY"
    return float(x).hex()


def include_dir():
    """The folder holding csrc's headers: the wheel's flowlike/include, or the source tree of an editable install."""
    here = Path(__file__).resolve().parent
    for candidate in (here.parent / "include", here.parent / "flowlike" / "include", here.parent / "csrc"):
        if (candidate / "graph" / "fused_prelude.h").is_file():
            return candidate
    import flowlike
    pkg = Path(flowlike.__file__).resolve().parent
    for candidate in (pkg / "include", pkg.parent / "csrc"):
        if (candidate / "graph" / "fused_prelude.h").is_file():
            return candidate
    raise FileNotFoundError("flowlike's C++ headers (graph/fused_prelude.h) are not installed")


def _loop_dims(group, meta):
    """The group's iteration space after merging dimensions: (sizes, per operand (outputs then inputs) strides). A
    row group keeps its last dimension (the reduced one) apart, even of size 1, and so does a column group (the
    kept one)."""
    if group.rows or group.columns:
        sizes, strides = _merged(group, meta, group.shape[:-1])
        last = len(group.shape) - 1
        return sizes + [group.shape[-1]], [s + [strides_over(group.layout(v, meta), group.shape)[last]]
                                           for s, v in zip(strides, list(group.outputs) + list(group.inputs))]
    return _merged(group, meta, group.shape)


def _merged(group, meta, shape):
    shape = list(shape)
    nd = len(shape)
    operands = list(group.outputs) + list(group.inputs)
    strides = [strides_over(group.layout(vid, meta), group.shape)[:nd] for vid in operands]
    keep = [d for d in range(nd) if shape[d] != 1]
    shape = [shape[d] for d in keep]
    strides = [[s[d] for d in keep] for s in strides]
    merged_shape, merged = [], [[] for _ in operands]
    for d in range(len(shape)):
        if merged_shape and all(m[-1] == s[d] * shape[d] for m, s in zip(merged, strides)):
            merged_shape[-1] *= shape[d]
            for m, s in zip(merged, strides):
                m[-1] = s[d]
        else:
            merged_shape.append(shape[d])
            for m, s in zip(merged, strides):
                m.append(s[d])
    return merged_shape, merged


def _convert(expr, src, dst):
    """expr of storage dtype src as a value of opmath(dst), as eager casts an operand to the compute dtype."""
    if src == dst:
        return f"static_cast<{opmath(dst)}>({expr})"
    return f"static_cast<{opmath(dst)}>(fl::convert<{CTYPES[dst]}>({expr}))"


def _node_expr(node, meta, name_of, fast=False):
    """The C++ expression of a node's result, before its conversion to the result's storage type (fast: the dense
    float32 ops without their libm stand-in)."""
    ct, om = node.compute, opmath(node.compute)
    args = [_convert(name_of(v), meta[v][2], ct) for v in node.inputs]
    if node.kind == "unary":
        if node.params["dense"]:
            return f"dense_{node.op}_fast({args[0]})" if fast else f"dense_{node.op}({args[0]})"
        return f"un_{node.op}<{om}>({args[0]})"
    if node.kind == "binary":
        form = node.params.get("pow_form")
        if node.op == "pow" and form:
            t = CTYPES[ct]
            return {"square": f"pow_square<{t}, {om}>({args[0]})", "cube": f"pow_cube<{t}, {om}>({args[0]})",
                    "sqrt": f"std::sqrt({args[0]})", "rsqrt": f"pow_rsqrt<{t}, {om}>({args[0]})",
                    "reciprocal": f"{om}(1) / {args[0]}", "inv_square": f"pow_inv_square<{t}, {om}>({args[0]})"}[form]
        alpha = f"static_cast<{om}>({literal(node.params['alpha'])})"
        return f"bin_{node.op}<{om}>({args[0]}, {args[1]}, {alpha})"
    if node.kind in ("activation", "activation_backward"):
        abc = ", ".join(f"{om}({literal(float(x))})" for x in node.params["abc"])
        suffix = "_backward" if node.kind == "activation_backward" else ""
        return f"act_{node.op}{suffix}<{om}>({', '.join(args)}, {abc})"
    if node.kind == "cast":
        (v,) = node.inputs
        return f"fl::convert<{CTYPES[meta[node.out][2]]}>({name_of(v)})"
    raise AssertionError(node.kind)


def group_source(group, meta):
    """The C++ function computing one group."""
    sizes, strides = _loop_dims(group, meta)
    operands = list(group.outputs) + list(group.inputs)
    n_out = len(group.outputs)
    lines = [f'extern "C" void {group.name}(char** data) {{']
    for k, vid in enumerate(operands):
        t = CTYPES[meta[vid][2]]
        const = "" if k < n_out else "const "
        lines.append(f"  {const}{t}* __restrict__ p{k} = reinterpret_cast<{const}{t}*>(data[{k}]);")
    numel = 1
    for s in sizes:
        numel *= s
    if numel == 0:
        lines.append("}")
        return "\n".join(lines)
    inner = sizes[-1] if sizes else 1
    outer_sizes = sizes[:-1]
    outer = numel // inner
    if group.columns:
        return "\n".join(lines + _columns(group, meta, outer_sizes, strides, inner))
    blocks = 1 if group.rows else -(-inner // BLOCK)
    inner_stride = [s[-1] if sizes else 0 for s in strides]
    index = {vid: k for k, vid in enumerate(operands)}
    rows = _Rows(group, meta, index, inner_stride, inner, numel) if group.rows else None
    parallel = f"if({outer * blocks} > 1 && {numel} >= {PARALLEL_MIN})"
    if rows and rows.streamed:  # each thread orders its streaming stores before the region ends
        lines += [f"  #pragma omp parallel {parallel}", "  {", "  #pragma omp for schedule(static)"]
    else:
        lines.append(f"  #pragma omp parallel for schedule(static) {parallel}")
    lines.append(f"  for (int64_t task = 0; task < {outer * blocks}; ++task) {{")
    lines.append(f"    const int64_t begin = (task % {blocks}) * {BLOCK};")
    lines.append(f"    const int64_t end = std::min<int64_t>({inner}, begin + {BLOCK});")
    lines += _offsets(outer_sizes, strides, f"task / {blocks}", "    ")
    if rows:
        lines += rows.lines
        lines += ["  }", "  stream_fence();", "  }", "}"] if rows.streamed else ["  }", "}"]
        return "\n".join(lines)
    # dense float32 ops that fall back to libm for some inputs (exp, sigmoid): the block runs vectorized without the
    # fallback, noting its least and greatest argument, and runs again exactly if one lay outside the op's range
    checked = _checked_nodes(group)
    if checked:
        lines += _block(group, meta, index, inner_stride, fast=True, checked=checked)
    lines += _block(group, meta, index, inner_stride)
    lines += ["  }", "}"]
    return "\n".join(lines)


def _offsets(outer_sizes, strides, index_var, indent):
    """Statements setting o<k>, operand k's offset at the outer index `index_var`."""
    lines = [f"{indent}int64_t rest = {index_var};"] + [f"{indent}int64_t o{k} = 0;" for k in range(len(strides))]
    for d in reversed(range(len(outer_sizes))):
        lines.append(f"{indent}{{ const int64_t i = rest % {outer_sizes[d]}; rest /= {outer_sizes[d]};")
        adds = " ".join(f"o{k} += i * {strides[k][d]};" for k in range(len(strides)) if strides[k][d])
        lines.append(f"{indent}  {adds} }}" if adds else f"{indent}}}")
    return lines


# eager's column kernel (reduce.cpp run_columns): bands of columns, partial sums over blocks of rows
COLUMN_BAND, COLUMN_ROWS = 512, 128


def _columns(group, meta, outer_sizes, strides, inner):
    """The body of a group ending in a sum (or mean) over all dimensions but the last: eager's column kernel, its
    bands and row blocks, with the members computed as each element is added (their outputs stored on the way), so
    the sums equal eager's bit for bit. Each task sums one band of one block of rows (so a narrow band still spreads
    over the threads); the blocks are then added in order, as eager adds them."""
    (red,) = [n for n in group.nodes if n.kind == "columns"]
    index = {vid: k for k, vid in enumerate(list(group.outputs) + list(group.inputs))}
    acc, rows = opmath(red.compute), math.prod(outer_sizes)
    bands, blocks = -(-inner // COLUMN_BAND), -(-rows // COLUMN_ROWS)
    inner_stride = [s[-1] for s in strides]
    k = index[red.out]
    lines = [f"  std::vector<{acc}> blocks({blocks * inner});  // per block of rows: its sum of each column",
             f"  #pragma omp parallel for schedule(static) if({bands * blocks} > 1 && {rows * inner} >= {PARALLEL_MIN})",
             f"  for (int64_t task = 0; task < {bands * blocks}; ++task) {{",
             f"    const int64_t begin = (task % {bands}) * {COLUMN_BAND}, end = std::min<int64_t>({inner}, begin + {COLUMN_BAND});",
             f"    const int64_t r0 = (task / {bands}) * {COLUMN_ROWS};",
             f"    {acc}* __restrict__ blk = blocks.data() + (task / {bands}) * {inner} + begin;",
             "    for (int64_t i = begin; i < end; ++i) blk[i - begin] = 0;",
             f"    for (int64_t r = r0; r < std::min<int64_t>({rows}, r0 + {COLUMN_ROWS}); ++r) {{"]
    lines += _offsets(outer_sizes, strides, "r", "    ")
    # the row's summands go to col[] first: the dense float32 ops run vectorized, and again exactly when an element
    # needed libm (as in the pointwise kernels), before anything is added
    lines.append(f"    {CTYPES[meta[red.inputs[0]][2]]} col[{COLUMN_BAND}];")
    checked = _checked_nodes(group)
    if checked:
        lines += _block(group, meta, index, inner_stride, fast=True, checked=checked, summands=red)
    lines += _block(group, meta, index, inner_stride, summands=red)
    lines += [f"    for (int64_t i = begin; i < end; ++i) blk[i - begin] += static_cast<{acc}>(col[i - begin]);",
              "    }", "  }"]
    finish = f"total[i] / {acc}({rows})" if red.op == "mean" else "total[i]"
    lines += [f"  std::vector<{acc}> total({inner});",
              f"  for (int64_t b = 0; b < {blocks}; ++b)",
              f"    for (int64_t i = 0; i < {inner}; ++i) total[i] += blocks[b * {inner} + i];",
              f"  for (int64_t i = 0; i < {inner}; ++i) p{k}[i * {inner_stride[k]}] = "
              f"static_cast<{CTYPES[meta[red.out][2]]}>({finish});",
              "}"]
    return lines


def _range_checks(node, arg):
    """For a dense float32 op reading `arg`: (declarations, statements in the loop, omp simd clauses, the condition
    after the loop) that track the least and greatest argument and tell whether one lay outside the range where the
    vectorizable form stands (pointwise_list.h's FL_DENSE_UNARY). Two vectorized reductions; NaN leaves both."""
    lo, hi = node.params["range"]
    decls, stmts, clauses, conds = [], [], [], []
    for bound, name, fn, start, op in ((lo, "least", "min", "INFINITY", "<"), (hi, "most", "max", "-INFINITY", ">")):
        if math.isinf(bound):
            continue
        var = f"{name}{node.out}"
        decls.append(f"float {var} = {start};")
        stmts.append(f"{var} = std::{fn}({var}, {arg});")
        clauses.append(f"{fn}:{var}")
        conds.append(f"{var} {op} {literal(bound)}")
    return decls, stmts, clauses, " || ".join(conds)


def _checked_nodes(group):
    """The group's dense float32 ops whose vectorizable form stands on part of the line only (exp, sigmoid)."""
    return [n for n in group.nodes if n.kind == "unary" and n.params["dense"] and _range_checks(n, "")[0]]


def _block(group, meta, index, inner_stride, fast=False, checked=(), summands=None):
    """The innermost loop over one block: load the inputs, compute the members, store the outputs (summands: a
    column reduction, whose input goes to col[] instead). With `checked` (the fast form), the loop tracks those
    nodes' range checks and the lines end in `if (<an argument was out of range>)`, for the exact block to follow."""
    lines = []
    names = {}
    checks = [_range_checks(node, "") for node in checked]  # (the argument appears in the loop's statements only)
    if checks:
        lines.append("    " + " ".join(d for c in checks for d in c[0]))
        lines.append("    #pragma omp simd " + " ".join(f"reduction({r})" for c in checks for r in c[2]))
    lines.append("    for (int64_t i = begin; i < end; ++i) {")
    for vid in group.inputs:
        k = index[vid]
        names[vid] = f"x{vid}"
        offset = f"o{k} + i * {inner_stride[k]}" if inner_stride[k] else f"o{k}"
        lines.append(f"      const {CTYPES[meta[vid][2]]} x{vid} = p{k}[{offset}];")
    for node in group.nodes:
        if node is summands:
            lines.append(f"      col[i - begin] = {names[node.inputs[0]]};")
            continue
        t = CTYPES[meta[node.out][2]]
        expr = _node_expr(node, meta, names.__getitem__, fast)
        names[node.out] = f"v{node.out}"
        lines.append(f"      const {t} v{node.out} = static_cast<{t}>({expr});  // {node.op}")
        if node in checked:
            lines += [f"      {st}" for st in _range_checks(node, names[node.inputs[0]])[1]]
    for vid in group.outputs:
        if summands is not None and vid == summands.out:
            continue
        k = index[vid]
        offset = f"o{k} + i * {inner_stride[k]}" if inner_stride[k] else f"o{k}"
        lines.append(f"      p{k}[{offset}] = v{vid};")
    lines.append("    }")
    if checks:
        lines.append(f"    if ({' || '.join(c[3] for c in checks)})")
    return lines


# init, combine (over acc and v), the omp simd reduction clauses, finish (over acc and the row's length n). amax and
# amin note a NaN in `nan`, of the accumulator's type: GCC keeps a reduction of another type than the loop's values
# (an int flag in a float loop) in a stack array, a store and a reload per iteration, which made the loop ~1.5x slower.
_REDUCE = {
    "sum": ("0", "acc += v;", ("+:acc",), "acc"),
    "mean": ("0", "acc += v;", ("+:acc",), "acc / n"),
    "amax": ("-INFINITY", "acc = std::max(acc, v); nan = std::max(nan, v != v ? OM(1) : OM(0));", ("max:acc", "max:nan"),
             "nan != 0 ? NAN : acc"),
    "amin": ("INFINITY", "acc = std::min(acc, v); nan = std::max(nan, v != v ? OM(1) : OM(0));", ("min:acc", "max:nan"),
             "nan != 0 ? NAN : acc"),
}


class _Rows:
    """The body of a row group, one row per task: a loop over the row per reduction (each computing again the
    pointwise members it needs), then a loop computing and storing the row's outputs. Row-level members (a
    reduction's result and what is computed from it alone) are computed once per row, between the loops. The
    reductions sum in the order OpenMP's simd reduction picks: float reassociation, as any vectorized sum."""

    def __init__(self, group, meta, index, inner_stride, n, numel):
        self.group, self.meta, self.index, self.stride, self.n = group, meta, index, inner_stride, n
        self.node_of = {node.out: node for node in group.nodes}
        self.inputs = set(group.inputs)
        self.shape = group.shape
        self.lines = []
        self.row_done = set()
        self.cached = set()  # values a reduction's loop kept in a row buffer for the loops after it
        self.readers = {}
        for node in group.nodes:
            for v in node.inputs:
                self.readers.setdefault(v, []).append(node)
        self.outputs = set(group.outputs)
        for node in group.nodes:
            if node.kind == "reduce":
                self._reduce(node)
        full = [v for v in group.outputs if not self._row_level(v)]
        # outputs too large to stay cached are written a row at a time with streaming stores (stream_row)
        self.streamed = [v for v in full if inner_stride[index[v]] == 1 and numel * _dtype_size(meta[v][2]) >= STREAM_MIN
                         and n * _dtype_size(meta[v][2]) <= ROW_BUFFER_MAX]
        for v in self.streamed:
            self.lines.append(f"    alignas(64) {CTYPES[meta[v][2]]} so{index[v]}[{n}];")
        if full:
            self._loop(lambda emit: [self._store(v, emit(v)) for v in full])
        for v in self.streamed:
            k = index[v]
            self.lines.append(f"    stream_row(p{k} + o{k}, so{k}, {n});")
        for vid in group.outputs:
            if self._row_level(vid):
                self._row_value(vid)
                k = index[vid]
                self.lines.append(f"    p{k}[o{k}] = v{vid};")

    def _row_level(self, vid):
        """Constant along the row: a reduction's result, or a value whose last dimension is broadcast."""
        node = self.node_of.get(vid)
        if node is not None and node.kind == "reduce":
            return True
        sizes = self.group.layout(vid, self.meta)[0]
        return self.n > 1 and (not sizes or sizes[-1] == 1)  # (shapes align at the right)

    def _row_value(self, vid):
        """Emits a row-level value, once per row, before the loop being built."""
        if vid in self.row_done:
            return
        self.row_done.add(vid)
        t = CTYPES[self.meta[vid][2]]
        if vid in self.inputs:
            k = self.index[vid]
            self.lines.append(f"    const {t} v{vid} = p{k}[o{k}];")
            return
        node = self.node_of[vid]
        for v in node.inputs:
            self._row_value(v)
        self.lines.append(f"    const {t} v{vid} = static_cast<{t}>({_node_expr(node, self.meta, lambda v: f'v{v}')});"
                          f"  // {node.op}")

    def _body(self, tail, fast):
        """(statements of one iteration, whether a dense op checked its libm condition)."""
        done, stmts, checked = set(), [], []

        def emit(vid):
            if self._row_level(vid):
                self._row_value(vid)
                return f"v{vid}"
            if vid in done:
                return f"v{vid}"
            done.add(vid)
            t = CTYPES[self.meta[vid][2]]
            if vid in self.cached:
                stmts.append(f"      const {t} v{vid} = s{vid}[i];")
                return f"v{vid}"
            if vid in self.inputs:
                k = self.index[vid]
                offset = f"o{k} + i * {self.stride[k]}" if self.stride[k] else f"o{k}"
                stmts.append(f"      const {t} v{vid} = p{k}[{offset}];")
                return f"v{vid}"
            node = self.node_of[vid]
            for v in node.inputs:
                emit(v)
            expr = _node_expr(node, self.meta, lambda v: f"v{v}", fast)
            stmts.append(f"      const {t} v{vid} = static_cast<{t}>({expr});"
                         f"  // {node.op}")
            if fast and node.kind == "unary" and node.params["dense"]:
                check = _range_checks(node, f"v{node.inputs[0]}")
                if check[0]:
                    checked.append(check)
                    stmts.extend(f"      {st}" for st in check[1])
            return f"v{vid}"
        after = tail(emit)
        return stmts + after, checked

    def _loop(self, tail, reset=(), clauses=()):
        """Emits a loop over the row: tail(emit) gives the statements after the values (stores or a reduction's
        combine), emit(vid) names a value computed in the iteration. Dense float32 ops run their vectorizable form,
        and the loop runs again exactly (after `reset`) if an element needed libm."""
        fast, checked = self._body(tail, fast=True)
        clauses = (*clauses, *(c for check in checked for c in check[2]))
        clause = " ".join(f"reduction({c})" for c in clauses)
        self.lines.append("    {")
        if checked:
            self.lines.append("    " + " ".join(d for check in checked for d in check[0]))
        self.lines.append(f"    #pragma omp simd {clause}".rstrip())
        self.lines.append(f"    for (int64_t i = 0; i < {self.n}; ++i) {{")
        self.lines += fast
        self.lines.append("    }")
        if checked:
            exact, _ = self._body(tail, fast=False)
            self.lines.append(f"    if ({' || '.join(check[3] for check in checked)}) {{")
            self.lines += [f"    {r}" for r in reset]
            self.lines.append(f"    for (int64_t i = 0; i < {self.n}; ++i) {{")
            self.lines += exact
            self.lines += ["    }", "    }"]
        self.lines.append("    }")

    def _store(self, vid, name):
        k = self.index[vid]
        if vid in self.streamed:
            return f"      so{k}[i] = {name};"
        offset = f"o{k} + i * {self.stride[k]}" if self.stride[k] else f"o{k}"
        return f"      p{k}[{offset}] = {name};"

    def _reduce(self, node):
        (x,) = node.inputs
        om, t = opmath(node.compute), CTYPES[self.meta[node.out][2]]
        init, combine, clauses, finish = _REDUCE[node.op]
        combine = combine.replace("OM(", f"{om}(")
        flags = any("nan" in c for c in clauses)
        reset = [f"acc = {init};" + (" nan = 0;" if flags else "")]
        # the reduced value, when a later loop reads it again (softmax's exp), is kept in a row buffer instead of
        # being computed twice
        keep = (x not in self.inputs and x not in self.cached and not self._row_level(x)
                and self.n * _dtype_size(self.meta[x][2]) <= ROW_BUFFER_MAX
                and (x in self.outputs or any(r is not node for r in self.readers.get(x, ()))))
        store = [f"      s{x}[i] = v{x};"] if keep else []
        if keep:
            self.lines.append(f"    alignas(64) {CTYPES[self.meta[x][2]]} s{x}[{self.n}];")
        self.lines.append(f"    {t} v{node.out};  // {node.op}")
        self.lines.append("    {")
        self.lines.append(f"    {om} acc = {init};" + (f" {om} nan = 0;" if flags else ""))
        self._loop(lambda emit: [f"      {{ const {om} v = static_cast<{om}>({emit(x)}); {combine} }}", *store],
                   reset, clauses)
        if keep:
            self.cached.add(x)
        self.lines.append(f"    v{node.out} = static_cast<{t}>({finish.replace('/ n', f'/ {om}({self.n})')});")
        self.lines.append("    }")
        self.row_done.add(node.out)


def program_source(groups, meta):
    """One translation unit holding the functions of the given groups."""
    parts = ['#include "graph/fused_prelude.h"', "using namespace fl::fused;", ""]
    parts += [group_source(g, meta) + "\n" for g in groups]
    return "\n".join(parts)


def compiler():
    """The C++ compiler as users name it: $CXX, else c++ (a list of words), or None when there is none."""
    words = shlex.split(os.environ.get("CXX", "") or "c++")
    return words if words and shutil.which(words[0]) else None


@lru_cache(maxsize=None)
def _compiler_identity(cxx):
    out = subprocess.run([*cxx, "--version"], capture_output=True, text=True, timeout=60)
    return out.stdout


@lru_cache(maxsize=None)
def _cpu_features():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith(("flags", "Features")):
                return line
    except OSError:
        pass
    import platform
    return platform.processor() + platform.machine()


def cache_dir():
    """Where compiled kernels are kept: $FLOWLIKE_CACHE_DIR, else the user's cache directory."""
    env = os.environ.get("FLOWLIKE_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "flowlike"


def core_library():
    """flowlike's extension module: generated kernels link against it for the out-of-line special functions."""
    from .. import _C
    return Path(_C.__file__).resolve()


def cache_key(source, cxx):
    h = hashlib.sha256()
    inc = include_dir()
    for part in (source, " ".join(cxx), _compiler_identity(tuple(cxx)), " ".join(FLAGS), _cpu_features(), sys.platform,
                 str(core_library())):
        h.update(part.encode())
        h.update(b"\0")
    for header in _HEADERS:
        h.update((inc / header).read_bytes())
    return h.hexdigest()[:32]


class CompileError(RuntimeError):
    """The compiler rejected a generated source (its message is attached)."""


def build(source):
    """The path of the compiled library of `source`, compiling it unless the cache holds it.

    Returns (path, compiled): compiled is False when the library came from the cache."""
    cxx = compiler()
    if cxx is None:
        raise FileNotFoundError(f"no C++ compiler ({os.environ.get('CXX') or 'c++'} not found; set CXX)")
    key = cache_key(source, cxx)
    folder = cache_dir() / "cpp" / key[:2]
    lib = folder / f"{key}.so"
    if lib.is_file():
        return lib, False
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        src = Path(tmp) / f"{key}.cpp"
        src.write_text(source)
        out = Path(tmp) / f"{key}.so"
        cmd = [*cxx, *FLAGS, f"-I{include_dir()}", str(src), "-o", str(out), str(core_library())]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise CompileError(f"{' '.join(cmd)} failed:\n{done.stderr[-4000:]}")
        shutil.copy(src, folder / f"{key}.cpp")  # kept beside the library for reading
        os.replace(out, lib)  # atomic: a concurrent process sees the whole library or none
    return lib, True


_loaded = {}  # path -> CDLL (libraries stay loaded: plans hold their function addresses)


def load(path, names):
    """The addresses of the named functions in a compiled library."""
    lib = _loaded.get(str(path))
    if lib is None:
        lib = _loaded[str(path)] = ctypes.CDLL(str(path))
    return [ctypes.cast(getattr(lib, n), ctypes.c_void_p).value for n in names]
