"""Matrix and tensor products written once on the C++ primitives mm, bmm, addmm and baddbmm
(csrc/ops/matmul.h): matmul, mv, dot, outer, the add* family, einsum, tensordot, kron, multi_dot; and the
3-D cross product.

Autograd flows through the primitives and views, so every product here is differentiable (twice).
"""
import builtins
import string

from . import _C
from ._dtype import FLOAT8_DTYPES, c10_name
from ._out import inplace_method, write_out
from ._joining import stack
from ._tensor import Tensor
from ._views import broadcast_tensors, unbind
from . import _autocast

__all__ = ["matmul", "mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "addmm", "_addmm_activation", "addmv",
           "addr", "addbmm", "baddbmm", "einsum", "tensordot", "kron", "chain_matmul", "multi_dot", "cross"]


def _check_tensor(op, name, x):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument '{name}' must be Tensor, not {type(x).__name__}")


@_autocast.lower_precision
def matmul(input, other, *, out=None):
    """Matrix product with torch.matmul's rules: dot for 1-D by 1-D, mv/mm, and batched products whose
    leading dims broadcast."""
    _check_tensor("matmul", "input", input)
    _check_tensor("matmul", "other", other)
    return write_out(out, _C._matmul(input, other), "matmul", exact_dtype=True)


@_autocast.lower_precision
def mm(input, mat2, *, out=None):
    """Product of two matrices (no broadcasting)."""
    _check_tensor("mm", "input", input)
    _check_tensor("mm", "mat2", mat2)
    return write_out(out, _C._mm(input, mat2), "mm", exact_dtype=True)


@_autocast.lower_precision
def bmm(input, mat2, *, out=None):
    """Batched product of (b, n, m) by (b, m, p) tensors."""
    _check_tensor("bmm", "input", input)
    _check_tensor("bmm", "mat2", mat2)
    return write_out(out, _C._bmm(input, mat2), "bmm", exact_dtype=True)


def mv(input, vec, *, out=None):
    """Product of a matrix and a vector."""
    _check_tensor("mv", "input", input)
    _check_tensor("mv", "vec", vec)
    if input.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.dim()}, {vec.dim()}")
    if input.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input.shape[0]}), mat ({input.shape[0]}x{input.shape[1]}), "
                           f"vec ({vec.shape[0]})")
    if input.dtype in FLOAT8_DTYPES:  # torch's CPU build multiplies float8 matrices only (mm)
        raise NotImplementedError(f"\"addmv_impl_cpu\" not implemented for '{c10_name(input.dtype)}'")
    return write_out(out, _C._mm(input, vec.unsqueeze(1)).squeeze(1), "mv", exact_dtype=True)


def dot(input, tensor, *, out=None):
    """Inner product of two 1-D tensors of the same dtype and length."""
    _check_tensor("dot", "input", input)
    _check_tensor("dot", "tensor", tensor)
    if input.dim() != 1 or tensor.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.dim()}D and {tensor.dim()}D tensors")
    if input.dtype != tensor.dtype:
        raise RuntimeError("dot : expected both vectors to have same dtype, but found "
                           f"{c10_name(input.dtype)} and {c10_name(tensor.dtype)}")
    if input.shape[0] != tensor.shape[0]:
        n, m = input.shape[0], tensor.shape[0]
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to have the same number of "
                           f"elements, but got {n} and {m} elements respectively")
    return write_out(out, _C._matmul(input, tensor), "dot", exact_dtype=True)


def vdot(input, other, *, out=None):
    """Inner product of two 1-D tensors with the first one conjugated (dot for real tensors)."""
    _check_tensor("vdot", "input", input)
    return dot(input.conj(), other, out=out)


def vecdot(x, y, *, dim=-1, out=None):
    """linalg.vecdot: sum of conj(x) * y over dim, broadcasting the other dims."""
    return write_out(out, (x.conj() * y).sum(dim), "linalg.vecdot", exact_dtype=True)


def inner(input, other, *, out=None):
    """Sum of products over the last dims (a scalar operand multiplies)."""
    if input.dim() == 0 or other.dim() == 0:
        return write_out(out, input * other, "inner")
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(input.shape)} and {list(other.shape)}")
    return write_out(out, tensordot(input, other, dims=([input.dim() - 1], [other.dim() - 1])), "inner",
                     exact_dtype=True)


def outer(input, vec2, *, out=None):
    """Outer product of two vectors."""
    if input.dim() != 1 or vec2.dim() != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {input.dim()}-D" if input.dim() != 1 else
                           f"outer: Expected 1-D argument vec2, but got {vec2.dim()}-D")
    return write_out(out, input.unsqueeze(1) * vec2, "outer")


ger = outer


@_autocast.lower_precision
def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * (mat1 @ mat2); input broadcasts to the product's shape."""
    # the face keeps its defaults converted: leaving out beta=1, alpha=1 spares converting them by keyword per call
    if beta == 1 and alpha == 1:
        r = _C._addmm(input, mat1, mat2)
    else:
        r = _C._addmm(input, mat1, mat2, beta=beta, alpha=alpha)
    return write_out(out, r, "addmm", exact_dtype=True)


@_autocast.lower_precision
def _addmm_activation(input, mat1, mat2, *, beta=1, alpha=1, use_gelu=False):
    """relu(beta * input + alpha * (mat1 @ mat2)), or its gelu (erf form) with use_gelu: addmm with the activation
    applied as the GEMM stores each tile (float32), the values of addmm then the activation bit for bit. Linear +
    activation is _addmm_activation(bias, x, weight.t())."""
    return _C._addmm_activation(input, mat1, mat2, beta=beta, alpha=alpha, use_gelu=bool(use_gelu))


@_autocast.lower_precision
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * bmm(batch1, batch2)."""
    return write_out(out, _C._baddbmm(input, batch1, batch2, beta=beta, alpha=alpha), "baddbmm", exact_dtype=True)


def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * (mat @ vec)."""
    if mat.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.dim()}, {mat.dim()}, {vec.dim()}")
    col = input.unsqueeze(-1) if input.dim() == 1 else input
    return write_out(out, _C._addmm(col, mat, vec.unsqueeze(1), beta=beta, alpha=alpha).squeeze(1), "addmv",
                     exact_dtype=True)


def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * outer(vec1, vec2)."""
    if vec1.dim() != 1 or vec2.dim() != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {vec1.dim()}-D" if vec1.dim() != 1 else
                           f"addr: Expected 1-D argument vec2, but got {vec2.dim()}-D")
    prod = outer(vec1, vec2)
    if alpha != 1:
        prod = prod * alpha
    result = prod if beta == 0 else prod + (input if beta == 1 else input * beta)
    return write_out(out, result.expand(prod.shape) if beta == 0 else result, "addr")


@_autocast.lower_precision
def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * sum_i batch1[i] @ batch2[i], computed as one GEMM over the joined batch."""
    if batch1.dim() != 3 or batch2.dim() != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor" if batch1.dim() != 3 else "batch2 must be a 3D tensor")
    b, n, k = batch1.shape
    if batch2.shape[0] != b or batch2.shape[1] != k:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{b}, {k}] but got: "
                           f"[{batch2.shape[0]}, {batch2.shape[1]}].")
    lhs = batch1.permute(1, 0, 2).reshape(n, b * k)
    rhs = batch2.reshape(b * k, batch2.shape[2])
    return write_out(out, _C._addmm(input, lhs, rhs, beta=beta, alpha=alpha), "addbmm", exact_dtype=True)


def tensordot(a, b, dims=2, out=None):
    """Contracts dims of a with dims of b: an int n (the last n of a with the first n of b) or two lists."""
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.dim() or dims > b.dim():
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da, db = list(range(a.dim() - dims, a.dim())), list(range(dims))
    else:
        da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    da = [d % a.dim() if a.dim() else d for d in da]
    db = [d % b.dim() if b.dim() else d for d in db]
    for x, y in zip(da, db):
        # as torch, a size-1 dim contracts with any size: the other side is summed over that dim first
        if b.shape[y] == 1 and a.shape[x] != 1:
            a = a.sum(x, keepdim=True)
        elif a.shape[x] == 1 and b.shape[y] != 1:
            b = b.sum(y, keepdim=True)
        elif a.shape[x] != b.shape[y]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a.shape[x]} in dim {x} and "
                               f"second has size {b.shape[y]} in dim {y}")
    fa = [d for d in range(a.dim()) if d not in da]
    fb = [d for d in range(b.dim()) if d not in db]
    k = 1
    for d in da:
        k *= a.shape[d]
    m = 1
    for d in fa:
        m *= a.shape[d]
    n = 1
    for d in fb:
        n *= b.shape[d]
    lhs = a.permute(fa + da).reshape(m, k)
    rhs = b.permute(db + fb).reshape(k, n)
    result = _C._mm(lhs, rhs).reshape([a.shape[d] for d in fa] + [b.shape[d] for d in fb])
    return write_out(out, result, "tensordot", exact_dtype=True)


def kron(input, other, *, out=None):
    """Kronecker product: blocks input[i] * other, over every dim (the lower-rank operand gains leading 1s)."""
    nd = builtins.max(input.dim(), other.dim())
    a = input.reshape([1] * (nd - input.dim()) + list(input.shape))
    b = other.reshape([1] * (nd - other.dim()) + list(other.shape))
    inter_a, inter_b = [], []
    for sa, sb in zip(a.shape, b.shape):
        inter_a += [sa, 1]
        inter_b += [1, sb]
    result = a.reshape(inter_a) * b.reshape(inter_b)
    return write_out(out, result.reshape([sa * sb for sa, sb in zip(a.shape, b.shape)]), "kron")


def multi_dot(tensors, *, out=None):
    """Product of a chain of matrices in the cheapest order (the first and last may be vectors)."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    first_vec, last_vec = tensors[0].dim() == 1, tensors[-1].dim() == 1
    mats = list(tensors)
    if first_vec:
        mats[0] = mats[0].unsqueeze(0)
    if last_vec:
        mats[-1] = mats[-1].unsqueeze(1)
    for i, t in enumerate(mats):
        if t.dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {tensors[i].dim()}D")
    for i in range(len(mats) - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes {tuple(tensors[i].shape)} and "
                               f"{tuple(tensors[i + 1].shape)} cannot be multiplied")
    result = _chain_product(mats)
    if first_vec and last_vec:
        result = result.reshape(())
    elif first_vec:
        result = result.squeeze(0)
    elif last_vec:
        result = result.squeeze(1)
    return write_out(out, result, "multi_dot", exact_dtype=True)


def _chain_product(mats):
    # Classic matrix-chain dynamic program over the operand sizes.
    n = len(mats)
    dims = [mats[0].shape[0]] + [m.shape[1] for m in mats]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for s in range(i, j):
                c = cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, s

    def build(i, j):
        if i == j:
            return mats[i]
        s = split[i][j]
        return _C._mm(build(i, s), build(s + 1, j))
    return build(0, n - 1)


def chain_matmul(*matrices, out=None):
    """Deprecated torch.chain_matmul: multi_dot of 2-D matrices."""
    if len(matrices) == 1:
        return write_out(out, matrices[0], "chain_matmul", exact_dtype=True)
    return multi_dot(matrices, out=out)


# ---- einsum --------------------------------------------------------------------------------------------------

def _parse_einsum(equation, operands):
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise RuntimeError(f"einsum(): more operands were provided than specified in the equation"
                           if len(operands) > len(terms) else
                           "einsum(): fewer operands were provided than specified in the equation")
    ell_dims = 0
    parsed = []
    for i, (term, op) in enumerate(zip(terms, operands)):
        if term.count("...") > 1 or "." in term.replace("...", ""):
            raise RuntimeError(f"einsum(): found '.' for operand {i} that is not part of any ellipsis")
        labels = list(term.replace("...", "."))
        for c in labels:
            if c != "." and c not in string.ascii_letters:
                raise RuntimeError(f"einsum(): invalid subscript given at index {lhs.index(c)} in the equation string, "
                                   "subscripts must be in [a-zA-Z]")
        named = len(labels) - ("." in labels)
        if ("." in labels and op.dim() < named) or ("." not in labels and op.dim() != named):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({named}) does not match the number "
                               f"of dimensions ({op.dim()}) for operand {i}" +
                               ("" if "." in labels else " and no ellipsis was given"))
        if "." in labels:
            ell_dims = builtins.max(ell_dims, op.dim() - named)
        parsed.append(labels)
    # Ellipsis dims become labels 0, 1, ... aligned to the right (they broadcast like batch dims).
    ell = [str(d) for d in range(ell_dims)]
    expanded = []
    for labels, op in zip(parsed, operands):
        if "." in labels:
            k = op.dim() - (len(labels) - 1)
            p = labels.index(".")
            labels = labels[:p] + ell[ell_dims - k:] + labels[p + 1:]
        expanded.append(labels)
    counts = {}
    for labels in expanded:
        for c in labels:
            counts[c] = counts.get(c, 0) + 1
    if arrow:
        if rhs.count("...") > 1 or "." in rhs.replace("...", ""):
            raise RuntimeError("einsum(): found '.' for output that is not part of any ellipsis")
        out = []
        for c in rhs.replace("...", "."):
            if c == ".":
                out += ell
                continue
            if c not in string.ascii_letters:
                raise RuntimeError("einsum(): invalid subscript given in the output, subscripts must be in [a-zA-Z]")
            if c in out:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once in the output")
            if c not in counts:
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the equation for any input operand")
            out.append(c)
    else:
        out = ell + sorted(c for c, n in counts.items() if n == 1 and not c.isdigit())
    return expanded, out


def _take_diagonals(op, labels):
    # Repeated labels within one operand select the diagonal of those dims.
    labels = list(labels)
    while True:
        dup = next((c for c in labels if labels.count(c) > 1), None)
        if dup is None:
            return op, labels
        i = labels.index(dup)
        j = labels.index(dup, i + 1)
        if op.shape[i] != op.shape[j]:
            raise RuntimeError(f"einsum(): subscript {dup} is repeated for operand but the sizes don't match, "
                               f"{op.shape[i]} != {op.shape[j]}")
        op = op.diagonal(0, i, j)  # the diagonal dim goes last
        labels = [c for k, c in enumerate(labels) if k not in (i, j)] + [dup]


def _align(op, labels, order):
    # Permutes op to `order`, inserting size-1 dims for the labels it lacks.
    perm = [labels.index(c) for c in order if c in labels]
    op = op.permute(perm) if perm != list(range(len(perm))) else op
    shape, k = [], 0
    for c in order:
        if c in labels:
            shape.append(op.shape[k])
            k += 1
        else:
            shape.append(1)
    return op.reshape(shape)


def _contract_pair(a, b, keep, order):
    """Sum over the dims not in `keep` of a * b, for a and b aligned to `order`; by one bmm."""
    for c in order:
        i = order.index(c)
        if a.shape[i] != b.shape[i] and a.shape[i] != 1 and b.shape[i] != 1:
            raise RuntimeError(f"einsum(): operands do not broadcast with remapped shapes (original->remapped): "
                               f"{list(a.shape)} and {list(b.shape)}")
    sum_a = [i for i, c in enumerate(order) if c not in keep and a.shape[i] != 1 and b.shape[i] == 1]
    sum_b = [i for i, c in enumerate(order) if c not in keep and b.shape[i] != 1 and a.shape[i] == 1]
    if sum_a:
        a = a.sum(sum_a, keepdim=True)
    if sum_b:
        b = b.sum(sum_b, keepdim=True)
    batch, lo, ro, sm = [], [], [], []
    for i, c in enumerate(order):
        sa, sb = a.shape[i], b.shape[i]
        if c not in keep:
            (sm if sa != 1 else lo).append(i)  # both sides 1: a harmless size-1 dim
        elif sa != 1 and sb != 1:
            batch.append(i)
        elif sb != 1:
            ro.append(i)
        else:
            lo.append(i)

    def size(t, ds):
        n = 1
        for d in ds:
            n *= t.shape[d]
        return n
    nb, nl, nr, ns = size(a, batch), size(a, lo), size(b, ro), size(a, sm)
    lhs = a.permute(batch + lo + sm + ro).reshape(nb, nl, ns)
    rhs = b.permute(batch + sm + ro + lo).reshape(nb, ns, nr)
    prod = _C._bmm(lhs, rhs)
    shape = [a.shape[d] for d in batch] + [a.shape[d] for d in lo] + [b.shape[d] for d in ro]
    prod = prod.reshape(shape + [1] * len(sm))
    dims = batch + lo + ro + sm
    inverse = [dims.index(i) for i in range(len(order))]
    return prod.permute(inverse)


def einsum(equation, *operands):
    """Einstein summation over operands (any equation, with ellipsis), contracted pairwise left to right,
    each pair by one batched matrix product."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str):
        raise TypeError(f"einsum(): argument 'equation' must be str, not {type(equation).__name__}")
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    labels, out = _parse_einsum(equation, operands)
    ops = []
    for op, lab in zip(operands, labels):
        op, lab = _take_diagonals(op, lab)
        ops.append((op, lab))
    rest = []
    for _, lab in ops:
        rest += [c for c in lab if c not in out and c not in rest]
    order = out + rest
    aligned = [_align(op, lab, order) for op, lab in ops]
    used_later = [set() for _ in aligned]
    for i in range(len(ops) - 2, -1, -1):
        used_later[i] = used_later[i + 1] | set(ops[i + 1][1])
    # A dim no other operand uses is summed away before any product.
    current = aligned[0]
    own = [i for i, c in enumerate(order) if c not in out and c not in used_later[0] and current.shape[i] != 1]
    if own:
        current = current.sum(own, keepdim=True)
    for k in range(1, len(aligned)):
        current = _contract_pair(current, aligned[k], set(out) | used_later[k], order)
    # every dim past the output's is size 1 now
    return current.reshape([current.shape[i] for i in range(len(out))])


def cross(input, other, dim=None):
    """The 3-D cross product along dim (the first dim of size 3 when dim is None, as torch.cross)."""
    if input.dim() != other.dim():
        raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions, got {input.dim()} and "
                           f"{other.dim()}")
    a, b = broadcast_tensors(input, other)
    if dim is None:
        dim = next((d for d, s in enumerate(a.shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    if a.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[dim]} and "
                           f"{other.shape[dim]}")
    a0, a1, a2 = unbind(a, dim)
    b0, b1, b2 = unbind(b, dim)
    return stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], dim)


# ---- Tensor methods ------------------------------------------------------------------------------------------

for _name in ["matmul", "mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "addmm", "addmv", "addr", "addbmm",
              "baddbmm", "kron", "cross"]:
    setattr(Tensor, _name, globals()[_name])
for _name in ["addmm", "addmv", "addr", "addbmm", "baddbmm"]:
    setattr(Tensor, _name + "_", inplace_method(globals()[_name], _name + "_"))
Tensor.__matmul__ = lambda self, other: matmul(self, other) if isinstance(other, Tensor) else NotImplemented
Tensor.__rmatmul__ = lambda self, other: matmul(other, self) if isinstance(other, Tensor) else NotImplemented
Tensor.__imatmul__ = inplace_method(matmul, "__imatmul__")
del _name
