"""The generated faces of the indexing writes against real PyTorch: each out-of-place form (scatter_add, masked_fill,
...) is its own op with torch's backward node, and the number-or-tensor values bind torch's Scalar / Tensor
overloads. Each face (function, method, in-place; number and tensor values) is compared on values, gradients,
grad_fn names and the errors of arguments that fit no overload."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import flowlike as fl  # noqa: E402
from helpers import LIBS, assert_raises_same, check_both  # noqa: E402

X = np.arange(12.0).reshape(3, 4) / 5 - 1
S = np.arange(8.0).reshape(2, 4) / 3


def idx(lib, v):
    return lib.tensor(v)


def mask(lib):
    return lib.tensor([[True, False, True, False], [False, False, True, True], [True, True, False, False]])


# body(lib, x, s) -> a tensor; x (3, 4) and s (2, 4) are float64 leaves; the in-place forms write into x * 1
FACES = {
    "masked_fill_fn_number": lambda lib, x, s: lib.masked_fill(x, mask(lib), -2.5),
    "masked_fill_method_tensor": lambda lib, x, s: x.masked_fill(mask(lib), s[1, 2]),
    "masked_fill_bool_value": lambda lib, x, s: (x > 0).masked_fill(mask(lib), True),
    "masked_fill_broadcast_self": lambda lib, x, s: x[0].masked_fill(mask(lib), s[0, 0]),
    "masked_fill_inplace_number": lambda lib, x, s: (x * 1).masked_fill_(mask(lib), 7),
    "masked_fill_inplace_tensor": lambda lib, x, s: (x * 1).masked_fill_(mask(lib), s[0, 1]),
    "scatter_fn_src": lambda lib, x, s: lib.scatter(x, 0, idx(lib, [[2, 0, 1, 1], [0, 1, 2, 0]]), s),
    "scatter_method_value": lambda lib, x, s: x.scatter(1, idx(lib, [[3], [0], [1]]), 4.5),
    "scatter_value_kw": lambda lib, x, s: lib.scatter(x, 1, idx(lib, [[3], [0], [1]]), value=-1),
    "scatter_src_kw": lambda lib, x, s: x.scatter(0, idx(lib, [[1, 2, 0, 0], [0, 1, 2, 1]]), src=s),
    "scatter_reduce_kw": lambda lib, x, s: x.detach().scatter(0, idx(lib, [[1, 2, 0, 0]]), s.detach(), reduce="add"),
    "scatter_value_reduce": lambda lib, x, s: x.detach().scatter(0, idx(lib, [[1, 2, 0, 0]]), 2.0, reduce="multiply"),
    "scatter_inplace_src": lambda lib, x, s: (x * 1).scatter_(0, idx(lib, [[2, 0, 1, 1], [1, 2, 0, 0]]), s),
    "scatter_inplace_value": lambda lib, x, s: (x * 1).scatter_(1, idx(lib, [[3], [0], [1]]), -4),
    "scatter_add_fn": lambda lib, x, s: lib.scatter_add(x, 0, idx(lib, [[0, 0, 1, 2], [2, 2, 1, 0]]), s),
    "scatter_add_method": lambda lib, x, s: x.scatter_add(1, idx(lib, [[0, 0, 3, 2], [1, 1, 1, 1]]), s),
    "scatter_add_inplace": lambda lib, x, s: (x * 1).scatter_add_(0, idx(lib, [[0, 0, 1, 2], [0, 0, 0, 0]]), s),
    "scatter_reduce_fn": lambda lib, x, s: lib.scatter_reduce(x, 0, idx(lib, [[0, 0, 1, 2], [0, 2, 1, 0]]), s, "amax"),
    "scatter_reduce_method": lambda lib, x, s: x.scatter_reduce(0, idx(lib, [[0, 0, 1, 2], [2, 0, 1, 2]]), s, "sum",
                                                                include_self=False),
    "scatter_reduce_inplace": lambda lib, x, s: (x * 1).scatter_reduce_(0, idx(lib, [[1, 0, 1, 2], [2, 2, 0, 0]]), s,
                                                                        "prod"),
    "index_add_fn": lambda lib, x, s: lib.index_add(x, 0, idx(lib, [2, 0]), s, alpha=-3),
    "index_add_method": lambda lib, x, s: x.index_add(1, idx(lib, [1, 1]), x[:, :2] * s[0, 0]),
    "index_add_inplace": lambda lib, x, s: (x * 1).index_add_(0, idx(lib, [1, 1]), s),
    "index_copy_fn": lambda lib, x, s: lib.index_copy(x, 0, idx(lib, [2, 0]), s),
    "index_copy_method": lambda lib, x, s: x.index_copy(0, idx(lib, [1]), s[:1]),
    "index_copy_inplace": lambda lib, x, s: (x * 1).index_copy_(0, idx(lib, [0, 2]), s),
    "index_fill_fn_number": lambda lib, x, s: lib.index_fill(x, 1, idx(lib, [3, 0]), -1.5),
    "index_fill_method_tensor": lambda lib, x, s: x.index_fill(0, idx(lib, [1]), s[0, 3]),
    "index_fill_inplace_number": lambda lib, x, s: (x * 1).index_fill_(1, idx(lib, [2]), 3),
    "index_fill_inplace_tensor": lambda lib, x, s: (x * 1).index_fill_(0, idx(lib, [0, 2]), s[1, 1]),
    "index_put_fn": lambda lib, x, s: lib.index_put(x, (idx(lib, [0, 2]), idx(lib, [1, 3])), s[0, :2]),
    "index_put_method_acc": lambda lib, x, s: x.index_put((idx(lib, [1, 1]),), s, accumulate=True),
    "index_put_inplace": lambda lib, x, s: (x * 1).index_put_((idx(lib, [2]),), s[1]),
    "index_put_inplace_fn": lambda lib, x, s: lib.index_put_(x * 1, (mask(lib),), s[0, 0]),
    "masked_scatter_fn": lambda lib, x, s: lib.masked_scatter(x, mask(lib), s.reshape(-1)),
    "masked_scatter_broadcast_self": lambda lib, x, s: x[1].masked_scatter(mask(lib), s.reshape(-1)),
    "masked_scatter_inplace": lambda lib, x, s: (x * 1).masked_scatter_(mask(lib), s.reshape(-1)),
    "where_fn": lambda lib, x, s: lib.where(mask(lib), x, s[:1]),
    "where_method": lambda lib, x, s: x.where(mask(lib), s[1]),
    "where_method_number": lambda lib, x, s: x.where(mask(lib), -1),
    "where_scalar_other": lambda lib, x, s: lib.where(mask(lib), x, 0.25),
    "where_scalar_self": lambda lib, x, s: lib.where(mask(lib), 2, x),
    "where_keywords": lambda lib, x, s: lib.where(condition=mask(lib), input=x, other=s[0]),
    "gather_fn_sparse_grad": lambda lib, x, s: lib.gather(x, 1, idx(lib, [[0, 3], [1, 1], [2, 0]]), sparse_grad=False),
    "gather_method": lambda lib, x, s: x.gather(0, idx(lib, [[2, 0, 1, 1]])),
    "index_select_fn": lambda lib, x, s: lib.index_select(x, 1, idx(lib, [3, 0, 3])),
    "masked_select_fn": lambda lib, x, s: lib.masked_select(x, mask(lib)),
    "take_fn": lambda lib, x, s: lib.take(x, idx(lib, [[11, 0], [-1, 5]])),
}


@pytest.mark.parametrize("name", sorted(FACES))
def test_face(name):
    """Values and gradients (inputs and writes), and the result's backward node named as torch's."""
    want, got = check_both(FACES[name], X, S, grad=True, dtype="float64")
    assert (got.grad_fn and got.grad_fn.name()) == (want.grad_fn and want.grad_fn.name())


def test_node_names_are_torchs():
    """One node per write, named by the overload as torch's (the out-of-place forms are not copy + write)."""
    names = []
    for lib in LIBS:
        x = lib.tensor(X, requires_grad=True)
        s = lib.tensor(S, requires_grad=True)
        names.append([FACES[n](lib, x, s).grad_fn.name() for n in sorted(FACES) if "reduce_kw" not in n
                      and "value_reduce" not in n and "bool_value" not in n])
    assert names[1] == names[0]
    assert "MaskedFillBackward0" in names[1] and "IndexAddBackward0" in names[1] and "CloneBackward0" not in names[1]


# the faces that give no gradient: body(lib, x) with x (3, 4) float32
VALUES = {
    "where_scalars": lambda lib, x: lib.where(x > 0, 1.0, 0),
    "where_int_scalars": lambda lib, x: lib.where(x > 0, 1, 0),
    "where_one_argument": lambda lib, x: lib.where(x > 0),
    "where_one_argument_0dim": lambda lib, x: lib.where(x[0, 0] < 0),
    "where_uint8": lambda lib, x: lib.where((x > 0).to(lib.uint8), x, 0.0),
    "argwhere_fn": lambda lib, x: lib.argwhere(x > 0),
    "argwhere_method": lambda lib, x: (x * 0).argwhere(),
    "where_out": lambda lib, x: lib.where(x > 0, x, -x, out=lib.empty(3, 4)),
    "where_out_cast": lambda lib, x: lib.where(x > 0, x, x[0], out=lib.empty(3, 4, dtype=lib.float64)),
    "where_out_number": lambda lib, x: lib.where(x > 0, x, 0.5, out=lib.empty(3, 4)),
    "index_select_out": lambda lib, x: lib.index_select(x, 0, idx(lib, [2, 0]), out=lib.empty(0)),
    "index_select_out_dtype": lambda lib, x: lib.index_select(x, 0, idx(lib, [2]), out=lib.empty(0, dtype=lib.float64)),
    "gather_out": lambda lib, x: lib.gather(x, 0, idx(lib, [[1, 0, 2, 2]]), out=lib.empty(1, 4)),
    "gather_out_dtype": lambda lib, x: lib.gather(x, 0, idx(lib, [[1, 0, 2, 2]]), out=lib.empty(1, 4, dtype=lib.int64)),
    "masked_select_out": lambda lib, x: lib.masked_select(x, x > 0, out=lib.empty(2)),
    "take_out": lambda lib, x: lib.take(x, idx(lib, [3, 1]), out=lib.empty(2)),
    "take_out_overlap": lambda lib, x: lib.take(x, idx(lib, [3, 1]), out=x),
    "take_out_expanded": lambda lib, x: lib.take(x, idx(lib, [3, 1, 0]), out=lib.empty(1).expand(3)),
    "index_select_out_expanded": lambda lib, x: lib.index_select(x, 0, idx(lib, [1]), out=lib.empty(1).expand(4, 4)),
}


@pytest.mark.parametrize("name", sorted(VALUES))
def test_values(name):
    check_both(VALUES[name], X, dtype="float32", exact=True, quiet=True)


BAD = {
    "masked_fill_str": lambda lib, x: x.masked_fill(mask(lib), "a"),
    "masked_fill__none": lambda lib, x: x.masked_fill_(mask(lib), None),
    "masked_fill_none_mask": lambda lib, x: x[:0].masked_fill(None, -2),
    "index_put_none_input": lambda lib, x: lib.index_put(None, [3, -1], x[0]),
    "scatter_no_value": lambda lib, x: x.scatter_(0, idx(lib, [[0]])),
    "scatter_str": lambda lib, x: lib.scatter(x, 0, idx(lib, [[0]]), "v"),
    "index_fill_list": lambda lib, x: x.index_fill(0, idx(lib, [0]), [1.0]),
    "index_add_alpha": lambda lib, x: lib.index_add(x, 0, idx(lib, [0]), x[:1], alpha="2"),
    "index_put_list": lambda lib, x: x.index_put(([0],), x[0, 0]),
    "index_put_fn_list": lambda lib, x: lib.index_put_(x, [[0]], x[0, 0]),
    "scatter_add_number": lambda lib, x: x.scatter_add(0, idx(lib, [[0]]), 1.0),
    "where_none": lambda lib, x: lib.where(None, 1.0, 2.0),
    "where_two_arguments": lambda lib, x: lib.where(x > 0, x),
    "where_method_scalar_self": lambda lib, x: x.where(x > 0),
    "gather_index_float": lambda lib, x: lib.gather(x, 0, 1.5),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_arguments(name):
    """Arguments that fit no overload: torch's TypeError, with its first line."""
    assert_raises_same(BAD[name], X, match_message=True)
