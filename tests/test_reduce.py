"""Reductions, scans and sorting against numpy: values, shapes, dtypes, dims, keepdim, layouts."""
import numpy as np
import pytest

import flowlike as fl

RNG = np.random.default_rng(0)
BASE = RNG.standard_normal((4, 5, 6)).astype(np.float32)


def layouts():
    """The same values as contiguous, transposed and strided (non-contiguous) arrays."""
    big = RNG.standard_normal((4, 10, 6)).astype(np.float32)
    return {
        "contig": BASE,
        "transposed": np.ascontiguousarray(BASE.transpose(2, 1, 0)).transpose(2, 1, 0),
        "strided": big[:, ::2, :],
    }


DIMS = [None, 0, 1, -1, (0, 2), (-1, 0), (0, 1, 2)]


@pytest.mark.parametrize("layout", ["contig", "transposed", "strided"])
@pytest.mark.parametrize("dim", DIMS)
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("name,ref", [("sum", np.sum), ("mean", np.mean), ("prod", np.prod), ("amax", np.max),
                                      ("amin", np.min), ("nansum", np.nansum), ("logsumexp", None)])
def test_reductions_match_numpy(layout, dim, keepdim, name, ref):
    a = layouts()[layout]
    t = fl.from_numpy(a)
    if name == "prod" and isinstance(dim, tuple):  # torch's prod takes a single dim
        with pytest.raises(TypeError):
            fl.prod(t, dim, keepdim)
        return
    got = getattr(fl, name)(t, dim, keepdim)
    if ref is None:  # logsumexp
        want = np.log(np.sum(np.exp(a.astype(np.float64)), axis=dim, keepdims=keepdim))
    else:
        want = ref(a.astype(np.float64), axis=dim, keepdims=keepdim)
    assert tuple(got.shape) == np.shape(want)
    assert got.dtype == fl.float32
    np.testing.assert_allclose(got.numpy(), want, rtol=2e-5, atol=1e-5)


@pytest.mark.parametrize("layout", ["contig", "transposed", "strided"])
@pytest.mark.parametrize("dim", [None, 0, 2, (0, 1)])
@pytest.mark.parametrize("correction", [0, 1, 2])
def test_var_std(layout, dim, correction):
    a = layouts()[layout]
    t = fl.from_numpy(a)
    np.testing.assert_allclose(fl.var(t, dim, correction=correction).numpy(), np.var(a, axis=dim, ddof=correction),
                               rtol=1e-5)
    np.testing.assert_allclose(t.std(dim, keepdim=True, correction=correction).numpy(),
                               np.std(a, axis=dim, ddof=correction, keepdims=True), rtol=1e-5)
    v, m = fl.var_mean(t, dim, correction=correction)
    np.testing.assert_allclose(m.numpy(), np.mean(a, axis=dim), rtol=1e-5, atol=1e-6)
    s, m = fl.std_mean(t, dim, unbiased=False)
    np.testing.assert_allclose(s.numpy(), np.std(a, axis=dim), rtol=1e-5)


def test_var_legacy_unbiased_positional():
    a = BASE
    np.testing.assert_allclose(fl.from_numpy(a).var(False).numpy(), np.var(a), rtol=1e-5)
    np.testing.assert_allclose(fl.var(fl.from_numpy(a), 1, False, True).numpy(), np.var(a, axis=1, keepdims=True),
                               rtol=1e-5)


@pytest.mark.parametrize("layout", ["contig", "transposed", "strided"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_max_min_with_indices(layout, dim):
    a = layouts()[layout]
    t = fl.from_numpy(a)
    for name, ref, aref in (("max", np.max, np.argmax), ("min", np.min, np.argmin)):
        values, indices = getattr(t, name)(dim)
        r = getattr(t, name)(dim, keepdim=True)
        np.testing.assert_array_equal(values.numpy(), ref(a, axis=dim))
        np.testing.assert_array_equal(indices.numpy(), aref(a, axis=dim))
        assert r.values.shape == r.indices.shape == np.expand_dims(ref(a, axis=dim), dim).shape
        assert indices.dtype == fl.int64
        np.testing.assert_array_equal(getattr(fl, "arg" + name)(t, dim).numpy(), aref(a, axis=dim))
    assert t.argmax().item() == np.argmax(a)
    assert t.argmin(keepdim=True).shape == (1, 1, 1)
    assert fl.max(t).item() == a.max()


def test_max_of_two_tensors_and_nan_propagation():
    a = np.array([1.0, np.nan, 3.0], dtype=np.float32)
    b = np.array([2.0, 0.0, 1.0], dtype=np.float32)
    np.testing.assert_array_equal(fl.max(fl.from_numpy(a), fl.from_numpy(b)).numpy(), np.maximum(a, b))
    assert np.isnan(fl.from_numpy(a).max().item())
    assert np.isnan(fl.amin(fl.from_numpy(a)).item())
    v, i = fl.from_numpy(a).max(0)
    assert np.isnan(v.item()) and i.item() == 1


def test_first_index_of_ties():
    t = fl.tensor([[1, 3, 3, 0], [2, 2, 2, 2]])
    np.testing.assert_array_equal(t.argmax(1).numpy(), [1, 0])
    np.testing.assert_array_equal(t.min(1).indices.numpy(), [3, 0])


def test_named_tuple_results_unpack():
    r = fl.tensor([[1.0, 5.0], [7.0, 2.0]]).max(1)
    v, i = r
    assert v is r.values and i is r.indices and r[0] is v
    assert repr(r).startswith("torch.return_types.max(\nvalues=tensor(")
    mm = fl.aminmax(fl.tensor([3, 1, 2]))
    assert (mm.min.item(), mm.max.item()) == (1, 3)


def test_integer_and_bool_dtypes():
    i32 = fl.tensor([[1, 2], [3, 4]], dtype=fl.int32)
    assert i32.sum().dtype == fl.int64 and i32.sum().item() == 10
    assert i32.prod(1).dtype == fl.int64
    assert i32.sum(dtype=fl.int32).dtype == fl.int32
    assert fl.tensor([True, True, False]).sum().item() == 2
    assert i32.amax().dtype == fl.int32
    assert i32.mean(dtype=fl.float64).item() == 2.5
    with pytest.raises(RuntimeError):
        i32.mean()
    with pytest.raises(RuntimeError):
        i32.std()
    big = fl.tensor([2 ** 62, 2 ** 62], dtype=fl.int64)
    assert big.sum().item() == np.array([2 ** 62, 2 ** 62]).sum()  # wraps like int64


def test_half_precision_accumulates_in_float():
    a = np.full(10000, 0.1, dtype=np.float16)
    got = fl.from_numpy(a).sum()
    assert got.dtype == fl.float16
    assert abs(float(got.item()) - 999.5) < 1.0  # a float16 accumulator would stall at 256
    b = fl.from_numpy(a)._to_dtype(fl.bfloat16, False)
    assert abs(float(b.mean().item()) - 0.1) < 1e-3


def test_large_float32_sum_is_accurate():
    a = RNG.uniform(0, 1, size=(1 << 22)).astype(np.float32)
    got = fl.from_numpy(a).sum().item()
    assert abs(got - a.astype(np.float64).sum()) / a.size < 1e-6
    rows = fl.from_numpy(a.reshape(4, -1)).sum(1).numpy()
    np.testing.assert_allclose(rows, a.reshape(4, -1).astype(np.float64).sum(1), rtol=1e-5)


def test_long_sequential_accumulations_stay_accurate():
    a = np.full(1 << 22, 0.1, dtype=np.float32)
    want = np.float64(np.float32(0.1)) * a.size
    t = fl.from_numpy(a)
    for got in (t.nansum(), t.nanmean() * a.size, t.norm(1), t.norm(2) ** 2 * 10, fl.logsumexp(t, 0).exp() / np.exp(0.1) / 10):
        assert abs(got.item() - want) / want < 1e-5


def test_all_any_count_nonzero():
    a = np.array([[0, 1, 2], [3, 4, 5]], dtype=np.int32)
    t = fl.from_numpy(a)
    np.testing.assert_array_equal(t.all(1).numpy(), a.all(1))
    np.testing.assert_array_equal(t.any(0).numpy(), a.any(0))
    assert t.all().dtype == fl.bool
    assert fl.from_numpy(a.astype(np.uint8)).all().dtype == fl.uint8
    np.testing.assert_array_equal(fl.count_nonzero(t, 1).numpy(), np.count_nonzero(a, axis=1))
    assert fl.count_nonzero(t).item() == 5


def test_nan_reductions():
    a = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, 2.0]])
    t = fl.from_numpy(a)
    np.testing.assert_allclose(t.nansum(1).numpy(), np.nansum(a, 1))
    np.testing.assert_allclose(t.nanmean(1).numpy(), np.nanmean(a, 1))
    np.testing.assert_allclose(fl.nanmedian(t, 1).values.numpy(), [1.0, 2.0])
    assert np.isnan(fl.median(t, 1).values.numpy()).all()


@pytest.mark.parametrize("p", [1, 2, 3, 0.5, float("inf"), -float("inf"), 0, "fro"])
def test_norm(p):
    a = layouts()["strided"]
    t = fl.from_numpy(a)
    flat = a.reshape(-1).astype(np.float64)
    q = 2 if p == "fro" else p
    want = np.count_nonzero(flat) if q == 0 else np.linalg.norm(flat, q)
    np.testing.assert_allclose(t.norm(p).item(), want, rtol=1e-5)
    np.testing.assert_allclose(fl.norm(t, q, dim=1).numpy(), np.linalg.norm(a, q, axis=1), rtol=1e-5)


def test_logsumexp_is_stable():
    a = np.array([[1000.0, 1000.0], [-np.inf, -np.inf]], dtype=np.float32)
    got = fl.logsumexp(fl.from_numpy(a), 1).numpy()
    np.testing.assert_allclose(got[0], 1000 + np.log(2), rtol=1e-6)
    assert got[1] == -np.inf


def test_empty_reductions():
    z = fl.zeros(0, 3)
    np.testing.assert_array_equal(z.sum(0).numpy(), np.zeros(3))
    assert z.sum().item() == 0
    assert z.prod().item() == 1
    assert np.isnan(z.mean().item())
    assert fl.amax(z, 1).shape == (0,)
    with pytest.raises(IndexError):
        z.max(0)
    with pytest.raises(RuntimeError):
        z.max()
    with pytest.raises(IndexError):
        z.argmax()
    assert fl.logsumexp(z, 0).numpy().tolist() == [-np.inf] * 3


def test_bad_dims_raise():
    t = fl.ones(2, 3)
    with pytest.raises(IndexError):
        t.sum(2)
    with pytest.raises(IndexError):
        t.max(-3)
    with pytest.raises(RuntimeError):
        t.sum((0, 0))
    with pytest.raises(IndexError):
        t.sort(5)
    assert fl.tensor(5.0).sum(0).item() == 5.0


# ---- scans ------------------------------------------------------------------------------------

@pytest.mark.parametrize("layout", ["contig", "transposed", "strided"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_scans(layout, dim):
    a = layouts()[layout]
    t = fl.from_numpy(a)
    np.testing.assert_allclose(fl.cumsum(t, dim).numpy(), np.cumsum(a, axis=dim), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(t.cumprod(dim).numpy(), np.cumprod(a, axis=dim), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fl.logcumsumexp(t, dim).numpy(),
                               np.logaddexp.accumulate(a.astype(np.float64), axis=dim), rtol=1e-5)
    v, i = fl.cummax(t, dim)
    np.testing.assert_array_equal(v.numpy(), np.maximum.accumulate(a, axis=dim))
    np.testing.assert_array_equal(np.take_along_axis(a, i.numpy(), dim), v.numpy())
    np.testing.assert_array_equal(t.cummin(dim).values.numpy(), np.minimum.accumulate(a, axis=dim))
    assert fl.cumsum(t, dim).is_contiguous()


def test_scan_dtypes():
    i8 = fl.tensor([100, 100, 100], dtype=fl.int8)
    assert i8.cumsum(0).dtype == fl.int64 and i8.cumsum(0).tolist() == [100, 200, 300]
    assert i8.cumsum(0, dtype=fl.float32).dtype == fl.float32
    assert fl.tensor([True, True]).cumprod(0).dtype == fl.int64
    t = fl.tensor([1.0, 2.0, 3.0])
    t.cumsum_(0)
    assert t.tolist() == [1.0, 3.0, 6.0]


# ---- sorting ----------------------------------------------------------------------------------

@pytest.mark.parametrize("layout", ["contig", "transposed", "strided"])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("descending", [False, True])
def test_sort(layout, dim, descending):
    a = layouts()[layout]
    v, i = fl.sort(fl.from_numpy(a), dim, descending)
    want = np.sort(a, axis=dim)
    if descending:
        want = np.flip(want, dim)
    np.testing.assert_array_equal(v.numpy(), want)
    np.testing.assert_array_equal(np.take_along_axis(a, i.numpy(), dim), want)
    np.testing.assert_array_equal(fl.from_numpy(a).argsort(dim, descending).numpy(), i.numpy())


def test_sort_stable_and_nan_last():
    a = np.array([2.0, np.nan, 1.0, 2.0, 1.0, np.nan])
    v, i = fl.sort(fl.from_numpy(a), stable=True)
    np.testing.assert_array_equal(i.numpy(), np.argsort(a, kind="stable"))
    v, i = fl.from_numpy(a).sort(descending=True, stable=True)
    assert np.isnan(v.numpy()[:2]).all() and i.numpy().tolist() == [1, 5, 0, 3, 2, 4]
    np.testing.assert_array_equal(fl.msort(fl.from_numpy(BASE)).numpy(), np.sort(BASE, axis=0))


def test_topk_kthvalue_median_mode():
    a = RNG.permutation(60).reshape(3, 20).astype(np.float64)
    t = fl.from_numpy(a)
    v, i = t.topk(4)
    np.testing.assert_array_equal(v.numpy(), -np.sort(-a, 1)[:, :4])
    np.testing.assert_array_equal(np.take_along_axis(a, i.numpy(), 1), v.numpy())
    np.testing.assert_array_equal(t.topk(3, dim=0, largest=False).values.numpy(), np.sort(a, 0)[:3])
    k = fl.kthvalue(t, 5, 1, keepdim=True)
    np.testing.assert_array_equal(k.values.numpy(), np.sort(a, 1)[:, 4:5])
    np.testing.assert_array_equal(np.take_along_axis(a, k.indices.numpy(), 1), k.values.numpy())
    m = t.median(1)
    np.testing.assert_array_equal(m.values.numpy(), np.sort(a, 1)[:, 9])  # lower median of 20
    assert t.median().item() == np.sort(a.ravel())[29]
    mo = fl.mode(fl.tensor([[3, 1, 1, 3, 2], [5, 5, 4, 4, 4]]), 1)
    assert mo.values.tolist() == [1, 4] and mo.indices.tolist() == [2, 4]
    with pytest.raises(RuntimeError):
        t.topk(21)
    with pytest.raises(RuntimeError):
        t.kthvalue(0)


@pytest.mark.parametrize("interp", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile(interp):
    a = RNG.standard_normal((5, 7))
    t = fl.from_numpy(a)
    q = [0.0, 0.25, 0.5, 0.9, 1.0]
    got = fl.quantile(t, fl.tensor(q, dtype=fl.float64), dim=1, keepdim=True, interpolation=interp)
    np.testing.assert_allclose(got.numpy(), np.quantile(a, q, axis=1, keepdims=True, method=interp))
    np.testing.assert_allclose(t.quantile(0.3, interpolation=interp).item(), np.quantile(a, 0.3, method=interp))
    a[0, 0] = np.nan
    np.testing.assert_allclose(fl.nanquantile(fl.from_numpy(a), 0.5, dim=1).numpy(), np.nanquantile(a, 0.5, axis=1))
    assert np.isnan(fl.quantile(fl.from_numpy(a), 0.5, dim=1).numpy()[0])


def test_unique_and_consecutive():
    a = np.array([[3, 1, 2], [1, 3, 3]])
    t = fl.from_numpy(a)
    v, inv, c = fl.unique(t, return_inverse=True, return_counts=True)
    wv, winv, wc = np.unique(a, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(v.numpy(), wv)
    np.testing.assert_array_equal(inv.numpy(), winv.reshape(a.shape))
    np.testing.assert_array_equal(c.numpy(), wc)
    rows = np.array([[1, 2], [0, 5], [1, 2], [0, 4]])
    v, inv, c = fl.unique(fl.from_numpy(rows), dim=0, return_inverse=True, return_counts=True)
    wv, winv, wc = np.unique(rows, axis=0, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(v.numpy(), wv)
    np.testing.assert_array_equal(inv.numpy(), winv.ravel())
    np.testing.assert_array_equal(c.numpy(), wc)
    np.testing.assert_array_equal(fl.unique(fl.from_numpy(rows.T.copy()), dim=1).numpy(), wv.T)
    v, c = fl.unique_consecutive(fl.tensor([1, 1, 2, 2, 3, 1, 1]), return_counts=True)
    assert v.tolist() == [1, 2, 3, 1] and c.tolist() == [2, 2, 1, 2]


def test_bincount_histc_searchsorted_bucketize():
    x = np.array([0, 1, 1, 3, 2, 1, 7])
    np.testing.assert_array_equal(fl.bincount(fl.from_numpy(x)).numpy(), np.bincount(x))
    w = np.linspace(0, 1, 7)
    np.testing.assert_allclose(fl.bincount(fl.from_numpy(x), fl.from_numpy(w), minlength=10).numpy(),
                               np.bincount(x, w, minlength=10))
    with pytest.raises(RuntimeError):
        fl.bincount(fl.tensor([-1, 2]))
    d = RNG.standard_normal(1000).astype(np.float32)
    np.testing.assert_array_equal(fl.histc(fl.from_numpy(d), 10, -2, 2).numpy(), np.histogram(d, 10, (-2, 2))[0])
    s = np.array([1, 3, 5, 7, 9])
    v = np.array([[3, 6, 9], [0, 1, 10]])
    for side in ("left", "right"):
        np.testing.assert_array_equal(fl.searchsorted(fl.from_numpy(s), fl.from_numpy(v), side=side).numpy(),
                                      np.searchsorted(s, v, side=side))
    perm = RNG.permutation(5)
    got = fl.searchsorted(fl.from_numpy(s[perm]), fl.from_numpy(v), sorter=fl.from_numpy(np.argsort(s[perm])))
    np.testing.assert_array_equal(got.numpy(), np.searchsorted(s, v))
    assert fl.searchsorted(fl.from_numpy(s), 4).item() == 2
    np.testing.assert_array_equal(fl.bucketize(fl.from_numpy(v), fl.from_numpy(s), right=True).numpy(),
                                  np.digitize(v, s, right=False))
    rows = np.sort(RNG.standard_normal((3, 6)), 1)
    vals = RNG.standard_normal((3, 4))
    got = fl.searchsorted(fl.from_numpy(rows), fl.from_numpy(vals), out_int32=True)
    assert got.dtype == fl.int32
    np.testing.assert_array_equal(got.numpy(), [np.searchsorted(r, q) for r, q in zip(rows, vals)])


@pytest.mark.parametrize("name,ref", [("sum", np.sum), ("mean", np.mean), ("prod", np.prod), ("amax", np.max),
                                      ("amin", np.min)])
@pytest.mark.parametrize("shape,dim", [((300, 70), 0), ((3, 50, 130), (0, 1)), ((3, 50, 130), 0), ((200, 3, 40), 0),
                                       ((3, 50, 130), 1), ((2, 3, 40, 70), (1, 2)), ((2, 3, 40, 70), (0, 2)),
                                       ((5000, 8), 0), ((6, 1, 9, 1, 50), (0, 4)), ((4, 9, 3, 60), (0, 2, 3))])
def test_column_reductions(name, ref, shape, dim):
    a = RNG.uniform(0.9, 1.1, size=shape).astype(np.float32)
    if name == "prod" and isinstance(dim, tuple):
        return
    got = getattr(fl, name)(fl.from_numpy(a), dim, True)
    np.testing.assert_allclose(got.numpy(), ref(a.astype(np.float64), axis=dim, keepdims=True), rtol=1e-4)
    if name in ("amax", "amin"):
        a.flat[777] = np.nan
        got = getattr(fl, name)(fl.from_numpy(a), dim).numpy()
        np.testing.assert_array_equal(np.isnan(got), np.isnan(ref(a, axis=dim)))


@pytest.mark.parametrize("pos", [0, 37, 1000, 99999])
def test_vectorized_extremes_see_every_nan(pos):
    a = RNG.standard_normal(100000).astype(np.float32)
    t = fl.from_numpy(a)
    assert t.amax().item() == a.max() and t.amin().item() == a.min()
    assert t.argmax().item() == a.argmax() and t.max(0).indices.item() == a.argmax()
    a[pos] = np.nan
    assert np.isnan(fl.amax(t).item()) and np.isnan(fl.amin(t).item())
    assert t.argmax().item() == pos and t.min(0).indices.item() == pos
    d = a.astype(np.float64)
    assert np.isnan(fl.from_numpy(d).amax().item())


def test_quantile_of_a_python_float_keeps_the_input_precision():
    # q = 0.3 is taken in the input's dtype (torch's scalar_tensor(q, self.options())), not rounded to float32 first
    a = np.random.default_rng(5).standard_normal((5, 7))
    assert fl.from_numpy(a).quantile(0.3).item() == np.quantile(a, 0.3)
    assert fl.from_numpy(a).nanquantile(0.3, dim=1)[2].item() == np.quantile(a[2], 0.3)
