"""Reductions, scans and sorting side by side with PyTorch: values, dtypes, shapes, indices, errors."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402
from helpers import assert_raises_same, assert_same, check_both  # noqa: E402

RNG = np.random.default_rng(1)
F32 = RNG.standard_normal((3, 4, 5)).astype(np.float32)
I32 = RNG.integers(-5, 6, size=(3, 4, 5)).astype(np.int32)
DISTINCT = RNG.permutation(60).reshape(3, 4, 5).astype(np.float32)
TOL = dict(rtol=1e-5, atol=1e-6)

REDUCERS = ["sum", "nansum", "prod", "amax", "amin", "mean", "nanmean", "logsumexp", "all", "any"]


@pytest.mark.parametrize("name", REDUCERS)
@pytest.mark.parametrize("dim", [None, 0, -1, (0, 2), (1, -1)])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("npdt", [np.float32, np.int32, np.bool_, np.uint8])
def test_reducers(name, dim, keepdim, npdt):
    a = (F32 if npdt == np.float32 else I32 % 3).astype(npdt)
    if npdt != np.float32 and name in ("mean", "nanmean"):
        return assert_raises_same(lambda m, x: getattr(m, name)(x), a)
    if name == "logsumexp" and dim is None:
        dim = (0, 1, 2)
    if name in ("prod",) and isinstance(dim, tuple):
        dim = dim[0]
    if dim is None:
        check_both(lambda m, x: getattr(m, name)(x), a, rtol=1e-4, atol=1e-5)
    else:
        check_both(lambda m, x: getattr(m, name)(x, dim, keepdim=keepdim), a, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dt", [np.float64, np.int32])
def test_dtype_argument(dt):
    a = I32.astype(dt)
    for target in ("float32", "int64", "float64"):
        check_both(lambda m, x: m.sum(x, 1, dtype=getattr(m, target)), a, **TOL)
        check_both(lambda m, x: m.prod(x, 0, dtype=getattr(m, target)), a % 3, **TOL)
        check_both(lambda m, x: m.cumsum(x, 2, dtype=getattr(m, target)), a, **TOL)
    check_both(lambda m, x: m.mean(x, (0, 1), dtype=m.float64), a, **TOL)


def test_half_and_bfloat16():
    a = F32
    for name in ("float16", "bfloat16"):
        fx = fl.from_numpy(a)._to_dtype(getattr(fl, name), False)
        tx = torch.from_numpy(a).to(getattr(torch, name))
        assert_same(fx.sum(1), tx.sum(1), rtol=1e-2, atol=1e-2)
        assert_same(fx.mean(), tx.mean(), rtol=1e-2, atol=1e-2)
        assert_same(fx.amax(0), tx.amax(0), **TOL)


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_max_min_dim_values_and_indices(dim, keepdim):
    for a in (DISTINCT, I32):
        check_both(lambda m, x: tuple(m.max(x, dim, keepdim)), a, **TOL)
        check_both(lambda m, x: tuple(x.min(dim, keepdim=keepdim)), a, **TOL)
        check_both(lambda m, x: m.argmax(x, dim, keepdim), a, **TOL)
        check_both(lambda m, x: x.argmin(dim, keepdim), a, **TOL)
        check_both(lambda m, x: tuple(m.aminmax(x, dim=dim, keepdim=keepdim)), a, **TOL)
    check_both(lambda m, x: m.max(x), DISTINCT, **TOL)
    check_both(lambda m, x: m.argmax(x), DISTINCT, **TOL)
    check_both(lambda m, x, y: m.max(x, y), F32, DISTINCT, **TOL)
    check_both(lambda m, x: tuple(m.aminmax(x)), F32, **TOL)


def test_named_tuple_repr_and_fields():
    fr, tr = fl.from_numpy(DISTINCT).max(1), torch.from_numpy(DISTINCT).max(1)
    assert type(fr).__name__ == type(tr).__name__
    assert repr(fr) == repr(tr)
    assert repr(fl.from_numpy(DISTINCT[0, 0]).sort()) == repr(torch.from_numpy(DISTINCT[0, 0]).sort())


@pytest.mark.parametrize("dim", [None, 0, (1, 2)])
@pytest.mark.parametrize("correction", [0, 1, 2])
@pytest.mark.parametrize("keepdim", [False, True])
def test_var_std(dim, correction, keepdim):
    for name in ("var", "std"):
        check_both(lambda m, x: getattr(m, name)(x, dim, correction=correction, keepdim=keepdim), F32, rtol=1e-4, atol=1e-6)
    check_both(lambda m, x: m.var_mean(x, dim, correction=correction, keepdim=keepdim), F32, rtol=1e-4, atol=1e-6)
    check_both(lambda m, x: m.std_mean(x, dim, correction=correction, keepdim=keepdim), F32, rtol=1e-4, atol=1e-6)
    check_both(lambda m, x: m.var(x, dim, unbiased=False), F32, rtol=1e-4, atol=1e-6)
    check_both(lambda m, x: x.std(False), F32, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("p", [2, 1, 3, float("inf"), -float("inf"), 0, "fro"])
@pytest.mark.parametrize("dim", [None, 1, (0, 2)])
def test_norm(p, dim):
    check_both(lambda m, x: m.norm(x, p, dim), F32, rtol=1e-4, atol=1e-6)
    check_both(lambda m, x: x.norm(p, dim, keepdim=True), F32, rtol=1e-4, atol=1e-6)


def test_empty_dim_tuple():
    for name in ("sum", "mean", "amax", "all", "any", "std", "count_nonzero"):
        check_both(lambda m, x: getattr(m, name)(x, ()), F32, **TOL)
    check_both(lambda m, x: m.any(x, ()), I32.astype(np.uint8), **TOL)


def test_count_nonzero():
    check_both(lambda m, x: m.count_nonzero(x), I32, **TOL)
    check_both(lambda m, x: m.count_nonzero(x, 1), I32, **TOL)
    check_both(lambda m, x: m.count_nonzero(x, (0, 2)), I32, **TOL)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_scans(dim):
    for a in (F32, I32, I32.astype(np.bool_), I32.astype(np.int8)):
        check_both(lambda m, x: m.cumsum(x, dim), a, **TOL)
        check_both(lambda m, x: x.cumprod(dim), a % 3 if a.dtype != np.float32 else a, **TOL)
    check_both(lambda m, x: m.logcumsumexp(x, dim), F32, **TOL)
    for a in (F32, I32 % 3):
        check_both(lambda m, x: tuple(m.cummax(x, dim)), a, **TOL)
        check_both(lambda m, x: tuple(x.cummin(dim)), a, **TOL)


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_argsort(dim, descending):
    a = I32 % 4  # many ties: stable sort order must match
    check_both(lambda m, x: tuple(m.sort(x, dim=dim, descending=descending, stable=True)), a, **TOL)
    check_both(lambda m, x: tuple(m.sort(x, dim=dim, descending=descending)), DISTINCT, **TOL)
    check_both(lambda m, x: m.argsort(x, dim=dim, descending=descending, stable=True), a, **TOL)
    nan = F32.copy()
    nan[0, 1, 2] = nan[1, 0, 0] = np.nan
    check_both(lambda m, x: tuple(m.sort(x, dim=dim, descending=descending, stable=True)), nan, **TOL)
    check_both(lambda m, x: m.msort(x), DISTINCT, **TOL)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_order_statistics(dim):
    for largest in (True, False):
        check_both(lambda m, x: tuple(m.topk(x, 2, dim, largest)), DISTINCT, **TOL)
    check_both(lambda m, x: tuple(m.kthvalue(x, 2, dim)), DISTINCT, **TOL)
    check_both(lambda m, x: tuple(x.kthvalue(3, dim, keepdim=True)), DISTINCT, **TOL)
    check_both(lambda m, x: tuple(m.median(x, dim)), DISTINCT, **TOL)
    check_both(lambda m, x: tuple(x.median(dim, keepdim=True)), DISTINCT, **TOL)
    check_both(lambda m, x: m.median(x), DISTINCT, **TOL)
    check_both(lambda m, x: tuple(m.mode(x, dim)), I32 % 3, **TOL)
    nan = DISTINCT.copy()
    nan[0, 1, 2] = nan[2, 2, 2] = np.nan
    check_both(lambda m, x: m.nanmedian(x, dim).values, nan, **TOL)
    check_both(lambda m, x: m.median(x, dim).values, nan, **TOL)
    check_both(lambda m, x: m.nanmedian(x), nan, **TOL)


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile(interpolation):
    a = RNG.standard_normal((4, 9))
    check_both(lambda m, x: m.quantile(x, 0.37, interpolation=interpolation), a, **TOL)
    check_both(lambda m, x: m.quantile(x, m.tensor([0.1, 0.5, 0.9], dtype=m.float64), dim=1, keepdim=True,
                                 interpolation=interpolation), a, **TOL)
    a[1, 2] = np.nan
    check_both(lambda m, x: m.nanquantile(x, 0.5, dim=1, interpolation=interpolation), a, **TOL)
    check_both(lambda m, x: m.quantile(x, 0.5, dim=0), a, **TOL)


def test_unique_family():
    a = (I32 % 4).reshape(-1)
    check_both(lambda m, x: m.unique(x), a, **TOL)
    check_both(lambda m, x: m.unique(x, return_inverse=True, return_counts=True), I32 % 4, **TOL)
    check_both(lambda m, x: m.unique_consecutive(x, return_inverse=True, return_counts=True), np.sort(a)[::-1].copy(), **TOL)
    check_both(lambda m, x: x.unique(return_counts=True), I32.astype(np.float32), **TOL)
    rows = np.array([[1, 2], [0, 5], [1, 2], [0, 4], [0, 5]], dtype=np.int64)
    for dim in (0, 1, -1):
        check_both(lambda m, x: m.unique(x, dim=dim, return_inverse=True, return_counts=True), rows, **TOL)
        check_both(lambda m, x: m.unique_consecutive(x, dim=dim, return_inverse=True, return_counts=True), rows, **TOL)
    check_both(lambda m, x: m.unique(x, dim=1), I32 % 2, **TOL)


def test_counting_and_searching():
    x = np.array([0, 3, 1, 3, 5], dtype=np.int64)
    check_both(lambda m, i: m.bincount(i), x, **TOL)
    check_both(lambda m, i: m.bincount(i, minlength=9), x, **TOL)
    for wdt in (np.float32, np.float64, np.int64):
        check_both(lambda m, i, w: m.bincount(i, w), x, np.arange(5).astype(wdt), **TOL)
    check_both(lambda m, v: m.histc(v), F32, **TOL)
    check_both(lambda m, v: m.histc(v, 7, -1, 1), F32, **TOL)
    s = np.array([1.0, 2.0, 4.0, 8.0], dtype=np.float32)
    v = np.array([[0.5, 2.0, 9.0], [4.0, 3.0, 1.0]], dtype=np.float32)
    for right in (False, True):
        check_both(lambda m, a, b: m.searchsorted(a, b, right=right), s, v, **TOL)
        check_both(lambda m, a, b: m.bucketize(b, a, right=right, out_int32=True), s, v, **TOL)
    check_both(lambda m, a, b: m.searchsorted(a, b, side="right"), np.sort(v, 1), v, **TOL)
    check_both(lambda m, a: m.searchsorted(a, 3.0), s, **TOL)


BAD = [
    lambda m, x: m.sum(x, 3), lambda m, x: m.sum(x, (0, 0)), lambda m, x: m.amax(x, -4),
    lambda m, x: m.max(x, 5), lambda m, x: m.argmax(x, 3), lambda m, x: m.var(x, 4),
    lambda m, x: m.cumsum(x, 3), lambda m, x: m.sort(x, 3), lambda m, x: m.topk(x, 9),
    lambda m, x: m.kthvalue(x, 0), lambda m, x: m.median(x, -5), lambda m, x: m.mode(x, 7),
    lambda m, x: m.quantile(x, 1.5), lambda m, x: m.logsumexp(x, 3),
    lambda m, x: m.norm(x, 2, 3), lambda m, x: m.mean(x.int()), lambda m, x: m.std(x.long()),
    lambda m, x: m.histc(x.long()), lambda m, x: m.logcumsumexp(x.long(), 0),
    lambda m, x: m.bincount(x), lambda m, x: m.bucketize(x, x),
    lambda m, x: m.quantile(x, 0.5, interpolation="bogus"),
    lambda m, x: m.argmax(x > 0), lambda m, x: (x > 0).argmin(0), lambda m, x: m.median(x > 0),
    lambda m, x: m.median(x > 0, 0), lambda m, x: m.topk(x > 0, 1), lambda m, x: m.kthvalue(x > 0, 1),
]


@pytest.mark.parametrize("i", range(len(BAD)))
def test_errors_match(i):
    assert_raises_same(BAD[i], F32)


EMPTY = [
    (lambda m, x: m.sum(x, 0), False), (lambda m, x: m.sum(x), False), (lambda m, x: m.prod(x, 0), False),
    (lambda m, x: m.mean(x, 0), False), (lambda m, x: m.amax(x, 1), False), (lambda m, x: m.logsumexp(x, 0), False),
    (lambda m, x: m.all(x, 0), False), (lambda m, x: m.any(x), False), (lambda m, x: m.var(x, 0), False),
    (lambda m, x: m.cumsum(x, 0), False), (lambda m, x: m.sort(x, 0).values, False),
    (lambda m, x: m.amax(x, 0), True), (lambda m, x: m.amax(x), True), (lambda m, x: m.max(x), True),
    (lambda m, x: m.max(x, 0), True), (lambda m, x: m.argmax(x), True), (lambda m, x: m.argmax(x, 0), True),
    (lambda m, x: m.min(x, 0), True), (lambda m, x: m.median(x, 0), True), (lambda m, x: m.kthvalue(x, 1, 0), True),
    (lambda m, x: m.mode(x, 0), True), (lambda m, x: m.aminmax(x), True), (lambda m, x: m.norm(x, float("inf")), True),
    (lambda m, x: m.quantile(x, 0.5), True), (lambda m, x: m.quantile(x, 0.5, dim=1), True),
    (lambda m, x: m.unique(x), False), (lambda m, x: m.cumprod(x, 1), False),
]


@pytest.mark.filterwarnings("ignore:var.*degrees of freedom:UserWarning")
@pytest.mark.parametrize("i", range(len(EMPTY)))
def test_zero_size_dims(i):
    fn, err = EMPTY[i]
    z = np.zeros((0, 3), dtype=np.float32)
    if err:
        assert_raises_same(fn, z)
    else:
        check_both(fn, z, **TOL)


def test_zero_dim_inputs():
    s = np.array(3.5, dtype=np.float32)
    check_both(lambda m, x: m.sum(x, 0), s, **TOL)
    check_both(lambda m, x: tuple(m.max(x, 0)), s, **TOL)
    check_both(lambda m, x: tuple(m.sort(x, 0)), s, **TOL)
    check_both(lambda m, x: m.cumsum(x, 0), s, **TOL)
    check_both(lambda m, x: m.argmax(x, -1, True), s, **TOL)


@pytest.mark.parametrize("fn", [lambda m, x: x.var(correction=60),
                                lambda m, x: m.std(x, 0, correction=3)])
def test_var_warns_when_degrees_of_freedom_run_out(fn):
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        fn(torch, torch.from_numpy(F32))
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        got = fn(fl, fl.from_numpy(F32))
    assert_same(got, fn(torch, torch.from_numpy(F32)), **TOL)


NONCONTIG = [
    lambda m, x: m.sum(x, 1), lambda m, x: m.sum(x, (0, 2), keepdim=True), lambda m, x: m.mean(x, 0),
    lambda m, x: m.amax(x, -1), lambda m, x: tuple(m.max(x, 1)), lambda m, x: m.argmin(x, 2),
    lambda m, x: m.var(x, 1), lambda m, x: m.norm(x, 3, 0), lambda m, x: m.logsumexp(x, 0),
    lambda m, x: m.cumsum(x, 1), lambda m, x: tuple(m.cummin(x, 0)), lambda m, x: tuple(m.sort(x, 0)),
    lambda m, x: tuple(m.topk(x, 2, 1)), lambda m, x: tuple(m.median(x, 2)), lambda m, x: m.quantile(x, 0.3, dim=1),
]


@pytest.mark.parametrize("i", range(len(NONCONTIG)))
def test_non_contiguous_inputs(i):
    base = RNG.permutation(6 * 8 * 7).reshape(7, 8, 6).astype(np.float32)
    for a in (base.transpose(2, 1, 0), base[:, ::2, 1:]):  # permuted and strided views, not copies
        assert_same(NONCONTIG[i](fl, fl.from_numpy(a)), NONCONTIG[i](torch, torch.from_numpy(a)), **TOL)
