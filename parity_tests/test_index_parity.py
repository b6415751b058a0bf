"""Indexing against real PyTorch: values, dtypes, shapes, view-vs-copy aliasing, version counters and
the exception type on bad input. Each case is one body run with `torch` and with `flowlike`."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import flowlike as fl  # noqa: E402
from helpers import check_both, convert  # noqa: E402


def check(body):
    """The dual run (helpers.check_both, exact values) of body(lib, mk); mk(data, dtype=None) builds a lib tensor."""
    check_both(lambda lib: body(lib, lambda d, dtype=None: convert(lib, np.asarray(d), dtype)), exact=True, quiet=True)


X = np.arange(60).reshape(3, 4, 5)
XF = X.astype(np.float32) / 7

GETITEM_CASES = [
    lambda: 1, lambda: -1, lambda: (0, 2), lambda: (slice(None), 1), lambda: slice(1, None),
    lambda: (slice(None, None, 2), slice(1, 4, 2)), lambda: (Ellipsis, 2), lambda: (None, 1, None),
    lambda: (Ellipsis, None), lambda: (1, Ellipsis, slice(0, 3)), lambda: slice(-2, -10), lambda: slice(10, 20),
    lambda: True, lambda: False, lambda: (1, True), lambda: (None, False, 1),
    lambda: [0, 2], lambda: [-1, 0, -1], lambda: ([0, 1], [1, 2]), lambda: ([0, 1], slice(None), [1, 2]),
    lambda: (slice(None), [0, 3], [1, 2]), lambda: (slice(None), [[0], [3]], [1, 2]),
    lambda: (1, slice(None), [0, 4]), lambda: (0, [1, 2], slice(None)), lambda: ([[0, 1], [2, 0]],),
    lambda: (Ellipsis, [1, 0]), lambda: (None, [1, 2], None, slice(None), [0, 0]),
    lambda: [], lambda: (slice(None), []),
]


@pytest.mark.parametrize("case", range(len(GETITEM_CASES)))
def test_getitem_python_index(case):
    idx = GETITEM_CASES[case]()
    check(lambda lib, mk: mk(X)[idx])


@pytest.mark.parametrize("kind", ["long", "int", "bool", "bool2d", "bool3d", "scalar_long", "scalar_bool", "uint8",
                                  "bool2d_then_long", "slice_bool2d"])
def test_getitem_tensor_index(kind):
    def body(lib, mk):
        x = mk(X)
        if kind == "long":
            return x[mk([2, 0, -1]), :, mk([[1], [4]])]
        if kind == "int":
            return x[:, mk(np.array([3, 1], dtype=np.int32))]
        if kind == "bool":
            return x[mk([True, False, True])]
        if kind == "bool2d":
            return x[:, mk((X[0] % 3) == 0)]
        if kind == "bool3d":
            return x[x > 40]
        if kind == "bool2d_then_long":
            return x[mk(X[:, :, 0] > 20), mk([1])]
        if kind == "slice_bool2d":
            return x[1:, mk(X[0] % 4 == 1)]
        if kind == "scalar_long":
            return x[mk(np.array(2)), 1]
        if kind == "scalar_bool":
            return x[mk(np.array(True))]
        return x[mk(np.array([1, 0, 1], dtype=np.uint8))]
    check(body)


def test_basic_index_is_view_advanced_is_copy():
    for lib in (torch, fl):
        x = lib.zeros(3, 4)
        v = x[1, 1:]
        v[0] = 7.0
        assert x[1, 1].item() == 7.0
        assert x._version == v._version
        c = x[[1, 2]]
        c[0, 0] = 9.0
        assert x[1, 0].item() == 0.0
        s = x[lib.tensor(1)]
        s[0] = 3.0
        assert x[1, 0].item() == 3.0


@pytest.mark.parametrize("idx", [lambda mk: 3, lambda mk: -4, lambda mk: (0, 9), lambda mk: [0, 3],
                                 lambda mk: mk([5]), lambda mk: (0, 0, 0, 0), lambda mk: 1.5,
                                 lambda mk: mk([1.0]), lambda mk: mk([True, False]),
                                 lambda mk: (mk([0, 1]), mk([0, 1, 2])), lambda mk: (Ellipsis, Ellipsis),
                                 lambda mk: slice(None, None, -1), lambda mk: "a"])
def test_getitem_errors(idx):
    check(lambda lib, mk: mk(X)[idx(mk)])


SETITEM_CASES = [
    (lambda mk: 1, lambda mk: 5), (lambda mk: (slice(None), 2), lambda mk: mk(np.arange(3.0))),
    (lambda mk: (Ellipsis, 1), lambda mk: mk(np.ones((1, 1, 4)))), (lambda mk: [0, 2], lambda mk: -1.5),
    (lambda mk: ([0, 2], slice(None), [1, 4]), lambda mk: mk(np.arange(4.0))),
    (lambda mk: (slice(None), [[0], [3]], [1, 2]), lambda mk: mk(np.arange(6.0).reshape(3, 2, 1))),
    (lambda mk: mk(X > 30), lambda mk: 0), (lambda mk: mk(X > 30), lambda mk: mk(np.arange(29.0))),
    (lambda mk: mk([0, 0, 2]), lambda mk: mk(np.arange(60).reshape(3, 4, 5))),
    (lambda mk: True, lambda mk: 2), (lambda mk: (0, 0), lambda mk: mk(np.arange(5, dtype=np.int64))),
    # errors
    (lambda mk: 7, lambda mk: 1), (lambda mk: [0, 7], lambda mk: 1),
    (lambda mk: [0, 1], lambda mk: mk(np.ones((3, 4, 5)))), (lambda mk: 0, lambda mk: mk(np.ones(3))),
    (lambda mk: slice(None, None, 0), lambda mk: 1),
]


@pytest.mark.parametrize("case", range(len(SETITEM_CASES)))
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_setitem(case, dtype):
    idx, val = SETITEM_CASES[case]

    def body(lib, mk):
        x = mk(XF, dtype)
        v0 = x._version
        x[idx(mk)] = val(mk)
        assert x._version > v0
        return x
    check(body)


def test_setitem_through_view_and_self_alias():
    def body(lib, mk):
        x = mk(np.arange(12.0).reshape(3, 4))
        x[1:][:, [0, 2]] = 0.0
        x[0] = x[2]
        x[[2, 1]] = x[[1, 2]]
        return x
    check(body)


# ---- the op functions ---------------------------------------------------------------------------
I = np.array([[0, 2, 1, 0, 2], [1, 1, 0, 2, 0]])

OP_CASES = {
    "index_select": lambda lib, mk: lib.index_select(mk(XF), 1, mk([3, 0, 3])),
    "index_select_neg_dim": lambda lib, mk: mk(XF).index_select(-1, mk(np.array([4, 0], dtype=np.int32))),
    "index_select_scalar": lambda lib, mk: mk(np.float32(2.0)).index_select(0, mk(np.array([0]))),
    "index_select_oob": lambda lib, mk: mk(XF).index_select(0, mk([3])),
    "index_select_neg": lambda lib, mk: mk(XF).index_select(0, mk([-1])),
    "index_select_2d": lambda lib, mk: mk(XF).index_select(0, mk([[0]])),
    "index_select_float": lambda lib, mk: mk(XF).index_select(0, mk([0.0])),
    "gather": lambda lib, mk: lib.gather(mk(XF[:, :, 0]), 1, mk([[0, 3], [2, 2], [1, 0]])),
    "gather_dim0": lambda lib, mk: mk(XF[0]).gather(0, mk(I)),
    "gather_int32": lambda lib, mk: mk(XF[0]).gather(0, mk(I.astype(np.int32))),
    "gather_oob": lambda lib, mk: mk(XF[0]).gather(0, mk(I + 3)),
    "gather_ndim": lambda lib, mk: mk(XF[0]).gather(0, mk([0])),
    "gather_size": lambda lib, mk: mk(XF[0]).gather(1, mk(np.zeros((5, 1), dtype=np.int64))),
    "scatter_src": lambda lib, mk: mk(np.zeros((3, 5), np.float32)).scatter_(0, mk(I), mk(XF[0, :2])),
    "scatter_value": lambda lib, mk: lib.scatter(mk(np.zeros((3, 5), np.int64)), 0, mk(I), 7),
    "scatter_value_kw": lambda lib, mk: mk(np.zeros((3, 5))).scatter(1, mk(I[:, :2]), value=-2.5),
    "scatter_add_reduce": lambda lib, mk: mk(np.ones((3, 5))).scatter_(0, mk(I), mk(np.full((2, 5), 2.0)), reduce="add"),
    "scatter_mul_reduce": lambda lib, mk: mk(np.ones((3, 5))).scatter_(0, mk(I), mk(np.full((2, 5), 3.0)), reduce="multiply"),
    "scatter_bad_reduce": lambda lib, mk: mk(np.ones((3, 5))).scatter_(0, mk(I), mk(np.ones((2, 5))), reduce="max"),
    "scatter_oob": lambda lib, mk: mk(np.ones((3, 5))).scatter_(0, mk(I * 3), 1.0),
    "scatter_dtype": lambda lib, mk: mk(np.ones((3, 5), np.float32)).scatter_(0, mk(I), mk(np.ones((2, 5)))),
    "scatter_add": lambda lib, mk: lib.scatter_add(mk(np.zeros((3, 5))), 0, mk([[0, 0, 0, 1, 1]]), mk(np.arange(10.0).reshape(2, 5))),
    "scatter_add_size": lambda lib, mk: mk(np.zeros((3, 5))).scatter_add_(0, mk(I), mk(np.ones((1, 5)))),
    "scatter_reduce_bad": lambda lib, mk: mk(np.zeros(3)).scatter_reduce(0, mk([0]), mk(np.ones(1)), "foo"),
    "index_add": lambda lib, mk: lib.index_add(mk(XF), 1, mk([0, 3, 0]), mk(np.ones((3, 3, 5), np.float32)), alpha=2),
    "index_add_int": lambda lib, mk: mk(X).index_add(0, mk([2, 2]), mk(X[:2])),
    "index_add_oob": lambda lib, mk: mk(XF).index_add_(0, mk([3]), mk(np.ones((1, 4, 5), np.float32))),
    "index_add_shape": lambda lib, mk: mk(XF).index_add_(0, mk([0]), mk(np.ones((2, 4, 5), np.float32))),
    "index_add_dtype": lambda lib, mk: mk(XF).index_add_(0, mk([0]), mk(np.ones((1, 4, 5)))),
    "index_copy": lambda lib, mk: lib.index_copy(mk(XF), 2, mk([4, 1]), mk(np.ones((3, 4, 2), np.float32))),
    "index_copy_oob": lambda lib, mk: mk(XF).index_copy_(0, mk([3]), mk(np.ones((1, 4, 5), np.float32))),
    "index_copy_int32": lambda lib, mk: mk(XF).index_copy_(0, mk(np.array([1], np.int32)), mk(np.ones((1, 4, 5), np.float32))),
    "index_copy_shape": lambda lib, mk: mk(XF).index_copy_(0, mk([0]), mk(np.ones((2, 4, 5), np.float32))),
    "index_fill": lambda lib, mk: lib.index_fill(mk(X), 1, mk([-1, 0]), -3),
    "index_fill_tensor": lambda lib, mk: mk(XF).index_fill_(0, mk([1]), mk(np.array(2.5))),
    "index_fill_oob": lambda lib, mk: mk(XF).index_fill_(0, mk([3]), 1.0),
    "index_fill_dtype": lambda lib, mk: mk(XF).index_fill_(0, mk([0.0]), 1.0),
    "index_put": lambda lib, mk: lib.index_put(mk(XF), (mk([0, 2]), mk([1, 1])), mk(np.ones(5, np.float32))),
    "index_put_acc": lambda lib, mk: mk(XF).index_put_((mk([0, 0, 2]),), mk(np.ones((4, 5), np.float32)), accumulate=True),
    "index_put_acc_int": lambda lib, mk: mk(X).index_put_((mk([1, 1]), mk([0, 0])), mk(np.array(5)), accumulate=True),
    "index_put_mask": lambda lib, mk: mk(XF).index_put_((mk(X > 50),), mk(np.array(0.0, np.float32))),
    "index_put_oob": lambda lib, mk: mk(XF).index_put_((mk([0, 10]),), mk(np.array(1.0, np.float32)), accumulate=True),
    "index_put_shape": lambda lib, mk: mk(XF).index_put_((mk([0, 1]),), mk(np.ones(4, np.float32))),
    "index_put_dtype": lambda lib, mk: mk(XF).index_put_((mk([0]),), mk(np.array(1))),
    "masked_fill": lambda lib, mk: lib.masked_fill(mk(XF), mk(X % 4 == 0), -1.0),
    "masked_fill_int_value_float": lambda lib, mk: mk(X).masked_fill(mk(X % 4 == 0), 2.7),
    "masked_fill_tensor": lambda lib, mk: mk(XF).masked_fill_(mk(X[0, 0] > 2), mk(np.array(9.0))),
    "masked_fill_broadcast_self": lambda lib, mk: mk(XF[0, 0]).masked_fill(mk(X[0] > 10), 0.5),
    "masked_fill_inplace_expand": lambda lib, mk: mk(XF[0, 0]).masked_fill_(mk(X[0] > 10), 0.5),
    "masked_fill_dtype": lambda lib, mk: mk(XF).masked_fill_(mk(XF), 1.0),
    "masked_fill_value_dim": lambda lib, mk: mk(XF).masked_fill_(mk(X > 3), mk(np.ones(2))),
    "masked_select": lambda lib, mk: lib.masked_select(mk(XF[0]), mk(X[0, 0] % 2 == 0)),
    "masked_select_bcast": lambda lib, mk: mk(XF[0, :, :1]).masked_select(mk(X[0] % 3 == 0)),
    "masked_select_dtype": lambda lib, mk: mk(XF).masked_select(mk(X)),
    "masked_scatter": lambda lib, mk: lib.masked_scatter(mk(XF[0]), mk(X[0] % 3 == 0), mk(-np.arange(20, dtype=np.float32))),
    "masked_scatter_bcast": lambda lib, mk: mk(XF[0]).masked_scatter_(mk(X[0, 0] % 2 == 0), mk(-np.arange(20, dtype=np.float32))),
    "masked_scatter_few": lambda lib, mk: mk(XF[0]).masked_scatter_(mk(X[0] > 2), mk(np.ones(3, np.float32))),
    "masked_scatter_dtype": lambda lib, mk: mk(XF[0]).masked_scatter_(mk(X[0] > 2), mk(np.ones(30))),
    "take": lambda lib, mk: lib.take(mk(XF), mk([[0, 59], [-1, 7]])),
    "take_oob": lambda lib, mk: mk(XF).take(mk([60])),
    "take_int32": lambda lib, mk: mk(XF).take(mk(np.array([1], np.int32))),
    "take_along_dim": lambda lib, mk: lib.take_along_dim(mk(XF), mk(np.argsort(XF, axis=1)[:, :2]), dim=1),
    "take_along_dim_bcast": lambda lib, mk: lib.take_along_dim(mk(XF), mk([[[1]], [[0]], [[2]]]), 2),
    "take_along_dim_flat": lambda lib, mk: mk(XF).take_along_dim(mk([5, 0, 59])),
    "nonzero": lambda lib, mk: lib.nonzero(mk(X % 7 == 0)),
    "nonzero_float": lambda lib, mk: mk(np.array([0.0, -0.0, np.nan, 1.0])).nonzero(),
    "nonzero_tuple": lambda lib, mk: lib.nonzero(mk(X[0] % 5 == 1), as_tuple=True),
    "nonzero_scalar": lambda lib, mk: lib.nonzero(mk(np.array(3.0))),
    "nonzero_scalar_tuple": lambda lib, mk: mk(np.array(3.0)).nonzero(as_tuple=True),
    "argwhere": lambda lib, mk: lib.argwhere(mk(X[1] > 30)),
    "where": lambda lib, mk: lib.where(mk(X > 30), mk(XF), mk(X)),
    "where_scalars": lambda lib, mk: lib.where(mk(X > 30), mk(X), 0.5),
    "where_int_scalar": lambda lib, mk: lib.where(mk(X > 30), mk(X.astype(np.int32)), 0),
    "where_both_scalars": lambda lib, mk: lib.where(mk(X > 30), 1.0, 0),
    "where_bcast": lambda lib, mk: lib.where(mk(X[0, 0] > 2), mk(XF[:, :1]), mk(X[0])),
    "where_method": lambda lib, mk: mk(XF).where(mk(X > 3), -1),
    "where_one_arg": lambda lib, mk: lib.where(mk(X[0] > 15)),
    "where_uint8": lambda lib, mk: lib.where(mk((X > 5).astype(np.uint8)), mk(XF), 0.0),
    "where_cond_dtype": lambda lib, mk: lib.where(mk(XF), mk(XF), mk(XF)),
    "where_shape": lambda lib, mk: lib.where(mk(X[0, :2] > 2), mk(XF), mk(XF)),
}


@pytest.mark.parametrize("name", sorted(OP_CASES))
def test_op(name):
    check(OP_CASES[name])


SCATTER_REDUCE = [(r, inc) for r in ["sum", "prod", "mean", "amax", "amin"] for inc in (True, False)]


@pytest.mark.parametrize("reduce,include_self", SCATTER_REDUCE)
@pytest.mark.parametrize("dtype", ["float32", "int64", "float64"])
def test_scatter_reduce(reduce, include_self, dtype):
    rng = np.random.default_rng(0)
    src = rng.integers(-9, 9, size=(4, 6))
    idx = rng.integers(0, 3, size=(4, 6))

    def body(lib, mk):
        s = mk(np.full((3, 6), 2), dtype)
        return s.scatter_reduce(0, mk(idx), mk(src, dtype), reduce, include_self=include_self)
    check(body)


def test_scatter_reduce_nan_propagates():
    def body(lib, mk):
        s = mk(np.zeros(3, np.float32))
        return s.scatter_reduce_(0, mk([0, 0, 1]), mk(np.array([np.nan, 1.0, 2.0], np.float32)), "amax")
    check(body)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"])
def test_dtypes_preserved(dtype):
    def body(lib, mk):
        x = mk(X % 3, dtype)
        y = x.clone()
        y[1, [0, 2]] = x[0, [1, 3]]
        return (x[[2, 0], 1:3], x[x != x[0, 0, 0]], x.gather(2, mk(I[:1, None, :].repeat(3, 0).repeat(4, 1))),
                lib.where(x == x[0, 0, 1], x, x[2]), y, x.index_select(1, mk([3, 1])), x.take(mk([5, 1])))
    check(body)


def test_version_counters_of_inplace_ops():
    for lib in (torch, fl):
        x = lib.zeros(3, 4)
        view = x[1]
        v0 = x._version
        x.index_fill_(0, lib.tensor([0]), 1.0)
        x.masked_fill_(x > 0, 2.0)
        x.scatter_(0, lib.tensor([[0]]), 3.0)
        x.index_put_((lib.tensor([1]),), lib.tensor(4.0))
        assert x._version == view._version and x._version >= v0 + 4


def random_index(rng, shape, lib_mk):
    """A random mix of ints, slices, None, Ellipsis, bools, int lists/tensors and masks for `shape`."""
    items, dim = [], 0
    used_ellipsis = False
    while dim < len(shape) and rng.random() < 0.85:
        size = shape[dim]
        r = rng.random()
        if r < 0.15:
            items.append(int(rng.integers(-size, size)))
            dim += 1
        elif r < 0.4:
            start, stop = (int(v) for v in rng.integers(-size - 2, size + 2, size=2))
            items.append(slice(start if rng.random() < 0.7 else None, stop if rng.random() < 0.7 else None,
                               int(rng.integers(1, 4))))
            dim += 1
        elif r < 0.5:
            items.append(None)
        elif r < 0.55 and not used_ellipsis:
            items.append(Ellipsis)
            used_ellipsis = True
            dim = len(shape) - 1
        elif r < 0.6:
            items.append(bool(rng.random() < 0.7))
        elif r < 0.85:
            items.append(lib_mk(rng.integers(-size, size, size=(2, 1) if rng.random() < 0.3 else 2)))
            dim += 1
        elif dim + 1 < len(shape):
            items.append(lib_mk(rng.random(shape[dim:dim + 2]) < 0.5))
            dim += 2
    return tuple(items)


@pytest.mark.parametrize("seed", range(100))
def test_random_indices(seed):
    shape = (4, 3, 5, 2)
    data = np.arange(120, dtype=np.float32).reshape(shape)

    def body(lib, mk):
        idx = random_index(np.random.default_rng(seed), shape, mk)
        x = mk(data)
        got = x[idx]
        y = mk(data)
        y[idx] = mk(-np.arange(got.numel(), dtype=np.float32).reshape(tuple(got.shape)))
        return got, y
    check(body)


# ---- edge cases: empty and 0-dim tensors, bad dims, dtype rules of values ------------------------
E = np.zeros((0, 3), np.float32)
S = np.array(2.0, np.float32)
M = np.arange(6, dtype=np.float32).reshape(2, 3)
EDGE_CASES = {
 "empty_getitem_list": lambda lib, mk: mk(E)[[0]],
 "empty_getitem_emptylist": lambda lib, mk: mk(E)[[]],
 "empty_mask": lambda lib, mk: mk(E)[mk(np.zeros((0, 3), bool))],
 "empty_gather": lambda lib, mk: mk(E).gather(0, mk(np.zeros((0, 3), np.int64))),
 "empty_gather_oob": lambda lib, mk: mk(E).gather(0, mk(np.zeros((1, 3), np.int64))),
 "empty_index_select": lambda lib, mk: mk(E).index_select(0, mk(np.zeros(0, np.int64))),
 "empty_take": lambda lib, mk: mk(E).take(mk(np.zeros(0, np.int64))),
 "empty_take_oob": lambda lib, mk: mk(E).take(mk([0])),
 "empty_nonzero": lambda lib, mk: lib.nonzero(mk(E)),
 "empty_where": lambda lib, mk: lib.where(mk(E) > 0, mk(E), 1.0),
 "empty_scatter": lambda lib, mk: mk(E).scatter_(0, mk(np.zeros((0, 3), np.int64)), 1.0),
 "scalar_getitem_0": lambda lib, mk: mk(S)[0],
 "scalar_getitem_none": lambda lib, mk: mk(S)[None, None],
 "scalar_getitem_ell": lambda lib, mk: mk(S)[...],
 "scalar_setitem": lambda lib, mk: mk(S).__setitem__(..., 3.0),
 "scalar_mask": lambda lib, mk: mk(S)[mk(S) > 1],
 "scalar_masked_fill": lambda lib, mk: mk(S).masked_fill(mk(S) > 1, 0.0),
 "scalar_masked_select": lambda lib, mk: mk(S).masked_select(mk(S) > 1),
 "scalar_masked_scatter": lambda lib, mk: mk(S).masked_scatter(mk(S) > 1, mk(np.array([7.0], np.float32))),
 "scalar_take": lambda lib, mk: mk(S).take(mk([0, -1])),
 "scalar_gather": lambda lib, mk: mk(S).gather(0, mk(np.array(0))),
 "scalar_gather_oob": lambda lib, mk: mk(S).gather(0, mk(np.array(1))),
 "scalar_scatter": lambda lib, mk: mk(S).scatter(0, mk(np.array(0)), 5.0),
 "scalar_index_fill": lambda lib, mk: mk(S).index_fill(0, mk(np.array(0)), 5.0),
 "scalar_index_add": lambda lib, mk: mk(S).index_add(0, mk(np.array([0])), mk(np.array(1.0, np.float32))),
 "scalar_index_copy": lambda lib, mk: mk(S).index_copy(0, mk(np.array([0])), mk(np.array(1.0, np.float32))),
 "scalar_nonzero_tuple": lambda lib, mk: lib.nonzero(mk(S), as_tuple=True),
 "dim_oob_gather": lambda lib, mk: mk(M).gather(2, mk(np.zeros((2, 3), np.int64))),
 "dim_oob_index_select": lambda lib, mk: mk(M).index_select(5, mk([0])),
 "dim_oob_scatter": lambda lib, mk: mk(M).scatter(-3, mk(np.zeros((2, 3), np.int64)), 1.0),
 "dim_oob_index_add": lambda lib, mk: mk(M).index_add(2, mk([0]), mk(M)),
 "dim_oob_fill": lambda lib, mk: mk(M).index_fill(2, mk([0]), 1.0),
 "take_along_dim_oob": lambda lib, mk: lib.take_along_dim(mk(M), mk([[5]]), 2),
 "take_along_dim_ndim": lambda lib, mk: lib.take_along_dim(mk(M), mk([1]), 0),
 "take_along_dim_int32": lambda lib, mk: lib.take_along_dim(mk(M), mk(np.array([[1]], np.int32)), 0),
 "take_along_dim_float": lambda lib, mk: lib.take_along_dim(mk(M), mk(np.array([[1.0]])), 0),
 "index_put_list_of_masks": lambda lib, mk: mk(M).index_put_((mk(M > 2),), mk(np.array(0.0, np.float32))),
 "index_put_too_many": lambda lib, mk: mk(M).index_put_((mk([0]), mk([0]), mk([0])), mk(np.array(0.0, np.float32))),
 "getitem_int16": lambda lib, mk: mk(M)[mk(np.array([0], np.int16))],
 "getitem_int8": lambda lib, mk: mk(M)[mk(np.array([0], np.int8))],
 "getitem_np_int": lambda lib, mk: mk(M)[np.int64(1)],
 "getitem_np_arr": lambda lib, mk: mk(M)[np.array([1, 0])],
 "getitem_nested_tuple": lambda lib, mk: mk(M)[(0, 1),],
 "getitem_tensor_slice": lambda lib, mk: mk(M)[mk(np.array(1)):],
 "setitem_list_value": lambda lib, mk: mk(M).__setitem__(0, [1, 2, 3]),
 "setitem_adv_list_value": lambda lib, mk: mk(M).__setitem__([0], [1.0, 2, 3]),
 "setitem_float_tensor_into_int": lambda lib, mk: mk(M, "int64").__setitem__(0, mk(np.array([1.5, 2.5, 3.5]))),
 "setitem_adv_number_int": lambda lib, mk: mk(M, "int64").__setitem__([0], 2.7),
 "setitem_mask_scalar_tensor": lambda lib, mk: mk(M).__setitem__(mk(M) > 2, mk(np.array(9.0, np.float32))),
 "setitem_mask_0d_tensor_other_dtype": lambda lib, mk: mk(M).__setitem__(mk(M) > 2, mk(np.array(9.0))),
 "where_int8_uint8": lambda lib, mk: lib.where(mk(M) > 2, mk(M, "int8"), mk(M, "uint8")),
 "where_bool_float": lambda lib, mk: lib.where(mk(M) > 2, True, 2.5),
 "where_f16_scalar": lambda lib, mk: lib.where(mk(M) > 2, mk(M, "float16"), 2.5),
 "where_0d": lambda lib, mk: lib.where(mk(M) > 2, mk(M, "int32"), mk(np.array(2.5))),
 "scatter_reduce_int_mean": lambda lib, mk: mk(np.array([7, -7, 3])).scatter_reduce(0, mk([0, 1, 1]), mk(np.array([2, -4, 0])), "mean"),
 "scatter_reduce_bool_sum": lambda lib, mk: mk(np.array([True, False])).scatter_reduce(0, mk([0, 1, 1]), mk(np.array([False, True, True])), "sum"),
 "scatter_reduce_f16_amin": lambda lib, mk: mk(M, "float16").scatter_reduce(1, mk([[0, 0]]), mk(-M[:1, :2], "float16"), "amin", include_self=False),
 "scatter_src_bigger": lambda lib, mk: mk(np.zeros((2, 3), np.float32)).scatter(0, mk([[1, 0]]), mk(np.arange(12, dtype=np.float32).reshape(3, 4))),
 "index_add_alpha_float_int": lambda lib, mk: mk(M, "int64").index_add(0, mk([0]), mk(M[:1], "int64"), alpha=2.5),
 "masked_fill_bool_self": lambda lib, mk: mk(M > 1).masked_fill(mk(M) > 3, 0),
 "masked_fill_neg_value_uint8": lambda lib, mk: mk(M, "uint8").masked_fill(mk(M) > 3, -1),
}


@pytest.mark.parametrize("name", sorted(EDGE_CASES))
def test_edge_case(name):
    check(EDGE_CASES[name])


@pytest.mark.parametrize("name", ["index_select", "gather", "masked_select", "take", "where", "nonzero", "take_along_dim"])
def test_out_argument(name):
    def body(lib, mk):
        x = mk(XF[0])
        calls = {
            "index_select": lambda out: lib.index_select(x, 0, mk([2, 0]), out=out),
            "gather": lambda out: lib.gather(x, 1, mk([[0], [4], [1], [1]]), out=out),
            "masked_select": lambda out: lib.masked_select(x, x > 1, out=out),
            "take": lambda out: lib.take(x, mk([3, 1]), out=out),
            "where": lambda out: lib.where(x > 1, x, -x, out=out),
            "nonzero": lambda out: lib.nonzero(x > 1, out=out),
            "take_along_dim": lambda out: lib.take_along_dim(x, mk([[0], [4], [1], [1]]), 1, out=out),
        }
        out = lib.empty(0, dtype=lib.int64 if name == "nonzero" else lib.float32)
        r = calls[name](out)
        assert r is out
        return out
    check(body)
