"""Vision, sparse, dropout and distance functions: flowlike against real torch (values, dtypes, shapes,
gradients and exception types)."""
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402
import flowlike.nn.functional as flF  # noqa: E402

from helpers import assert_raises_same, assert_same, check_both, outcome_type  # noqa: E402

TF = torch.nn.functional


def arr(shape, seed=0, dtype=np.float32, low=None, high=None):
    r = np.random.default_rng(seed)
    if low is not None:
        return r.uniform(low, high, shape).astype(dtype)
    return r.standard_normal(shape).astype(dtype)


def dual(fn, *arrays, grad=(), rtol=1e-5, atol=1e-5, grad_rtol=1e-4, grad_atol=1e-4):
    """The dual run (helpers.check_both) of fn(lib, F, *tensors), F being lib's nn.functional: equal results, and
    the gradients of the inputs at the positions in `grad`. Returns (flowlike's result, torch's)."""
    want, got = check_both(lambda lib, *ts: fn(lib, lib.nn.functional, *ts), *arrays, grad=grad or False, rtol=rtol,
                           atol=atol, grad_rtol=grad_rtol, grad_atol=grad_atol, quiet=True)
    return got, want


def same_error(fn, *arrays):
    """fn(lib, F, *tensors) raises the same exception class with both libraries (helpers.assert_raises_same)."""
    assert_raises_same(lambda lib, *ts: fn(lib, lib.nn.functional, *ts), *arrays)


# ---- pad ------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape,pads", [((2, 5), (2, 1)), ((2, 3, 5), (1, 3)), ((3, 4, 5), (1, 2, 3, 0)),
                                        ((2, 3, 4, 5), (2, 2, 1, 3)), ((1, 2, 3, 4, 5), (1, 1, 2, 0, 0, 2)),
                                        ((2, 3, 4, 5, 6), (1, 2, 0, 1, 2, 1))])
def test_pad(mode, shape, pads):
    dual(lambda lib, F, x: F.pad(x, pads, mode=mode), arr(shape), grad=(0,))


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.int32, np.bool_])
def test_pad_constant_dtypes_and_negative(dtype):
    x = (arr((2, 3, 4, 5)) * 3).astype(dtype)
    dual(lambda lib, F, x: F.pad(x, (-1, 2, 0, 0, 1, -1, 2, 0), value=1), x)


@pytest.mark.parametrize("bad", [
    lambda lib, F, x: F.pad(x, (1,)),
    lambda lib, F, x: F.pad(x, (1, 1) * 5),
    lambda lib, F, x: F.pad(x, (5, 5), mode="reflect"),
    lambda lib, F, x: F.pad(x, (6, 6), mode="circular"),
    lambda lib, F, x: F.pad(x[0, 0], (1, 1), mode="reflect"),
    lambda lib, F, x: F.pad(x, (1, 1), mode="reflect", value=2.0),
    lambda lib, F, x: F.pad(x, (1, 1), mode="wrap"),
    lambda lib, F, x: F.pad(x, (-3, -3)),
    lambda lib, F, x: F.pad(x > 0, (1, 1), mode="reflect"),
    lambda lib, F, x: F.pad(x > 0, (1, 1, 1, 1), mode="replicate"),
])
def test_pad_errors(bad):
    same_error(bad, arr((1, 2, 5)))


# ---- interpolate ------------------------------------------------------------------------------

@pytest.mark.parametrize("mode,shape,kw", [
    ("nearest", (2, 3, 5), {"size": 9}),
    ("nearest", (2, 3, 4, 5), {"scale_factor": 2}),
    ("nearest", (2, 3, 4, 5), {"size": (3, 7)}),
    ("nearest", (1, 2, 3, 4, 5), {"scale_factor": (1.5, 2, 0.5)}),
    ("nearest-exact", (2, 3, 4, 5), {"size": (7, 3)}),
    ("nearest-exact", (2, 3, 7), {"scale_factor": 0.6}),
    ("linear", (2, 3, 5), {"size": 8}),
    ("linear", (2, 3, 5), {"scale_factor": 1.7, "align_corners": True}),
    ("bilinear", (2, 3, 4, 5), {"size": (8, 10)}),
    ("bilinear", (2, 3, 4, 5), {"size": (3, 7), "align_corners": True}),
    ("bilinear", (2, 3, 6, 6), {"scale_factor": 0.5}),
    ("bilinear", (2, 3, 6, 6), {"scale_factor": 1.3, "recompute_scale_factor": True}),
    ("bilinear", (2, 3, 6, 6), {"scale_factor": 1.3}),
    ("bicubic", (2, 3, 4, 5), {"size": (7, 9)}),
    ("bicubic", (2, 3, 4, 5), {"size": (3, 2), "align_corners": True}),
    ("bicubic", (1, 2, 5, 5), {"scale_factor": 2.5}),
    ("trilinear", (1, 2, 3, 4, 5), {"size": (5, 3, 8)}),
    ("trilinear", (1, 2, 3, 4, 5), {"scale_factor": 2, "align_corners": True}),
    ("area", (2, 3, 7), {"size": 3}),
    ("area", (2, 3, 6, 7), {"size": (4, 3)}),
    ("area", (2, 3, 8, 8), {"scale_factor": 0.5}),
    ("area", (1, 2, 4, 5, 6), {"size": (2, 3, 4)}),
])
def test_interpolate(mode, shape, kw):
    dual(lambda lib, F, x: F.interpolate(x, mode=mode, **kw), arr(shape), grad=(0,))


def test_interpolate_float64_and_half():
    dual(lambda lib, F, x: F.interpolate(x, scale_factor=2, mode="bilinear"), arr((1, 2, 3, 4), dtype=np.float64),
         grad=(0,), rtol=1e-12, atol=1e-12)
    x = arr((1, 2, 3, 4))
    rt = TF.interpolate(torch.tensor(x).half(), scale_factor=2, mode="bilinear")
    rf = flF.interpolate(fl.tensor(x).half(), scale_factor=2, mode="bilinear")
    assert_same(rf, rt, rtol=2e-3, atol=2e-3)
    rt = TF.interpolate(torch.tensor(x).bfloat16(), size=(5, 5), mode="bicubic")
    rf = flF.interpolate(fl.tensor(x).bfloat16(), size=(5, 5), mode="bicubic")
    assert_same(rf, rt, rtol=2e-2, atol=2e-2)


def test_upsample_aliases():
    x = arr((1, 2, 3, 4))
    dual(lambda lib, F, x: F.upsample(x, scale_factor=2, mode="bilinear"), x)
    dual(lambda lib, F, x: F.upsample_nearest(x, size=(5, 7)), x)
    dual(lambda lib, F, x: F.upsample_bilinear(x, scale_factor=2), x, grad=(0,))


@pytest.mark.parametrize("bad", [
    lambda lib, F, x: F.interpolate(x, size=(4, 4), mode="bilinear"),
    lambda lib, F, x: F.interpolate(x.unsqueeze(0), size=(4, 4, 4), mode="bilinear"),
    lambda lib, F, x: F.interpolate(x, size=4, mode="trilinear"),
    lambda lib, F, x: F.interpolate(x, size=4, scale_factor=2),
    lambda lib, F, x: F.interpolate(x),
    lambda lib, F, x: F.interpolate(x, size=(4, 5)),
    lambda lib, F, x: F.interpolate(x, scale_factor=(2, 2)),
    lambda lib, F, x: F.interpolate(x, size=4, align_corners=True),
    lambda lib, F, x: F.interpolate(x, size=4, mode="linear", recompute_scale_factor=True),
    lambda lib, F, x: F.interpolate(x, size=4, mode="linear", antialias=True),
    lambda lib, F, x: F.interpolate(x, size=4, mode="foo"),
    lambda lib, F, x: F.interpolate(x, size=0, mode="linear"),
    lambda lib, F, x: F.interpolate(x.long(), size=4, mode="linear"),
])
def test_interpolate_errors(bad):
    same_error(bad, arr((1, 2, 5)))


# ---- pixel shuffle ---------------------------------------------------------------------------

@pytest.mark.parametrize("shape,r", [((2, 8, 3, 4), 2), ((18, 2, 3), 3), ((2, 1, 4, 2, 2), 2)])
def test_pixel_shuffle(shape, r):
    dual(lambda lib, F, x: F.pixel_shuffle(x, r), arr(shape), grad=(0,))
    dual(lambda lib, F, x: lib.pixel_shuffle(x, r), arr(shape))
    out_shape = tuple(shape[:-3]) + (shape[-3] // (r * r), shape[-2] * r, shape[-1] * r)
    dual(lambda lib, F, x: F.pixel_unshuffle(x, r), arr(out_shape), grad=(0,))


@pytest.mark.parametrize("bad", [
    lambda lib, F, x: F.pixel_shuffle(x, 2),
    lambda lib, F, x: F.pixel_shuffle(x[0], 2),
    lambda lib, F, x: F.pixel_unshuffle(x, 2),
    lambda lib, F, x: F.pixel_shuffle(x, 0),
])
def test_pixel_shuffle_errors(bad):
    same_error(bad, arr((1, 5, 3, 3)))


# ---- grid_sample / affine_grid ------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample_2d(mode, padding, align):
    x = arr((2, 3, 5, 6))
    g = arr((2, 4, 7, 2), seed=1, low=-1.3, high=1.3)
    grad = (0, 1) if mode != "nearest" else (0,)
    dual(lambda lib, F, x, g: F.grid_sample(x, g, mode=mode, padding_mode=padding, align_corners=align), x, g,
         grad=grad, rtol=1e-4, atol=1e-5, grad_rtol=1e-3, grad_atol=1e-3)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample_3d(mode, padding, align):
    x = arr((2, 2, 3, 4, 5))
    g = arr((2, 3, 2, 4, 3), seed=1, low=-1.2, high=1.2)
    grad = (0, 1) if mode != "nearest" else (0,)
    dual(lambda lib, F, x, g: F.grid_sample(x, g, mode=mode, padding_mode=padding, align_corners=align), x, g,
         grad=grad, rtol=1e-4, atol=1e-5, grad_rtol=1e-3, grad_atol=1e-3)


def test_grid_sample_float64():
    x = arr((1, 2, 4, 4), dtype=np.float64)
    g = arr((1, 3, 3, 2), seed=3, dtype=np.float64, low=-1, high=1)
    dual(lambda lib, F, x, g: F.grid_sample(x, g, mode="bicubic", align_corners=False), x, g, grad=(0, 1),
         rtol=1e-12, atol=1e-12, grad_rtol=1e-10, grad_atol=1e-10)


@pytest.mark.parametrize("bad", [
    lambda lib, F, x, g: F.grid_sample(x, g, mode="foo", align_corners=False),
    lambda lib, F, x, g: F.grid_sample(x, g, padding_mode="foo", align_corners=False),
    lambda lib, F, x, g: F.grid_sample(x, g[..., :1], align_corners=False),
    lambda lib, F, x, g: F.grid_sample(x, g[:, 0], align_corners=False),
    lambda lib, F, x, g: F.grid_sample(x.unsqueeze(2), g.unsqueeze(1)[..., :1].expand(1, 1, 2, 2, 3),
                                       mode="bicubic", align_corners=False),
    lambda lib, F, x, g: F.grid_sample(x.double(), g, align_corners=False),
])
def test_grid_sample_errors(bad):
    same_error(bad, arr((1, 2, 3, 3)), arr((1, 2, 2, 2), seed=1))


@pytest.mark.parametrize("size", [(2, 3, 4, 5), (2, 3, 1, 5), (2, 1, 3, 4, 5)])
@pytest.mark.parametrize("align", [False, True])
def test_affine_grid(size, align):
    theta = arr((2, 2, 3) if len(size) == 4 else (2, 3, 4), seed=2)
    dual(lambda lib, F, th: F.affine_grid(th, size, align_corners=align), theta, grad=(0,))


@pytest.mark.parametrize("bad", [
    lambda lib, F, th: F.affine_grid(th, (2, 3, 4), align_corners=False),
    lambda lib, F, th: F.affine_grid(th, (2, 3, 4, 5, 6), align_corners=False),
    lambda lib, F, th: F.affine_grid(th, (2, 3, 0, 5), align_corners=False),
    lambda lib, F, th: F.affine_grid(th.long(), (2, 3, 4, 5), align_corners=False),
])
def test_affine_grid_errors(bad):
    same_error(bad, arr((2, 2, 3)))


# ---- embedding -------------------------------------------------------------------------------

@pytest.mark.parametrize("kw", [{}, {"padding_idx": 3}, {"padding_idx": -2}, {"scale_grad_by_freq": True},
                                {"padding_idx": 0, "scale_grad_by_freq": True}])
def test_embedding(kw):
    idx = np.array([[0, 3, 3, 8], [9, 1, 0, 0]])
    dual(lambda lib, F, w, i: F.embedding(i, w, **kw), arr((10, 5)), idx, grad=(0,))


def test_embedding_max_norm_and_dtypes():
    w = arr((10, 4)) * 3
    idx = np.array([1, 4, 4, 7])
    wt, wf = torch.tensor(w), fl.tensor(w)
    rt = TF.embedding(torch.tensor(idx), wt, max_norm=1.5, norm_type=1.0)
    rf = flF.embedding(fl.tensor(idx), wf, max_norm=1.5, norm_type=1.0)
    assert_same(rf, rt)
    assert_same(wf, wt)
    dual(lambda lib, F, w, i: F.embedding(i, w), arr((6, 3), dtype=np.float64), np.array([5, 0], dtype=np.int32))
    dual(lambda lib, F, w, i: F.embedding(i, w), np.arange(12).reshape(6, 2), np.array([[5, 0]]))


def test_embedding_indices_changed_in_place_before_backward():
    # as torch: the indices are a saved (version-checked) variable of the backward node
    def body(lib, change):
        w, i = lib.tensor(arr((6, 3)), requires_grad=True), lib.tensor([0, 2, 5])
        y = lib.nn.functional.embedding(i, w)
        if change:
            i.add_(0)
        return outcome_type(lambda: y.sum().backward())

    for change in (False, True):
        want, got = body(torch, change), body(fl, change)
        assert got is want and (want is None) != change


@pytest.mark.parametrize("bad", [
    lambda lib, F, w, i: F.embedding(i + 10, w),
    lambda lib, F, w, i: F.embedding(i.float(), w),
    lambda lib, F, w, i: F.embedding(i, w[0]),
    lambda lib, F, w, i: F.embedding(i, w, padding_idx=20),
])
def test_embedding_errors(bad):
    same_error(bad, arr((10, 3)), np.array([1, 2]))


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("last", [False, True])
def test_embedding_bag(mode, last):
    idx = np.array([1, 2, 4, 5, 4, 3, 2, 9, 0])
    offsets = np.array([0, 2, 2, 5, 9] if last else [0, 2, 2, 5])
    dual(lambda lib, F, w, i, o: F.embedding_bag(i, w, o, mode=mode, include_last_offset=last), arr((10, 4)), idx,
         offsets, grad=(0,))


def test_embedding_bag_2d_weights_padding():
    idx = np.array([[1, 2, 3], [3, 3, 0]])
    psw = arr((2, 3), seed=4)
    dual(lambda lib, F, w, i, p: F.embedding_bag(i, w, mode="sum", per_sample_weights=p), arr((5, 3)), idx, psw,
         grad=(0, 2))
    for mode in ("sum", "mean", "max"):
        dual(lambda lib, F, w, i: F.embedding_bag(i, w, mode=mode, padding_idx=3), arr((5, 3)), idx, grad=(0,))


@pytest.mark.parametrize("bad", [
    lambda lib, F, w, i, o: F.embedding_bag(i, w),
    lambda lib, F, w, i, o: F.embedding_bag(i, w, o, mode="foo"),
    lambda lib, F, w, i, o: F.embedding_bag(i.view(2, 2), w, o),
    lambda lib, F, w, i, o: F.embedding_bag(i, w, o, mode="mean", per_sample_weights=w[0, :4]),
    lambda lib, F, w, i, o: F.embedding_bag(i, w, o, per_sample_weights=w[0, :3]),
    lambda lib, F, w, i, o: F.embedding_bag(i, w[0], o),
    lambda lib, F, w, i, o: F.embedding_bag(i, w, o + 1),
])
def test_embedding_bag_errors(bad):
    same_error(bad, arr((10, 4)), np.array([1, 2, 3, 4]), np.array([0, 2]))


def test_one_hot():
    x = np.array([[0, 3], [1, 1]])
    dual(lambda lib, F, x: F.one_hot(x), x)
    dual(lambda lib, F, x: F.one_hot(x, 7), x)
    same_error(lambda lib, F, x: F.one_hot(x, 2), x)
    same_error(lambda lib, F, x: F.one_hot(x - 1), x)
    same_error(lambda lib, F, x: F.one_hot(x.int()), x)


# ---- dropout --------------------------------------------------------------------------------

@pytest.mark.parametrize("fn,shape", [("dropout", (1000, 100)), ("dropout1d", (50, 200, 10)),
                                      ("dropout2d", (50, 200, 3, 3)), ("dropout3d", (20, 200, 2, 2, 2)),
                                      ("alpha_dropout", (1000, 100)), ("feature_alpha_dropout", (50, 200, 4))])
def test_dropout_shapes_statistics(fn, shape):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32) if "alpha" in fn else np.ones(shape, np.float32)
    y = getattr(flF, fn)(fl.tensor(x), 0.25, training=True)
    assert tuple(y.shape) == shape and y.dtype == fl.float32
    if "alpha" in fn:
        assert abs(float(y.mean())) < 0.05 and abs(float(y.std()) - 1) < 0.05
        return
    yn = y.numpy()
    assert abs((yn != 0).mean() - 0.75) < 0.02
    np.testing.assert_allclose(np.unique(yn), [0, 1 / 0.75], rtol=1e-6)
    if fn != "dropout":
        per = yn.reshape(shape[0], shape[1], -1)
        assert np.all((per == 0).all(-1) | (per != 0).all(-1))
    assert getattr(flF, fn)(fl.tensor(x), 0.25, training=False).numpy().tolist() == x.tolist()


def test_dropout_gradient_and_errors():
    x = fl.ones(1000, requires_grad=True)
    y = flF.dropout(x, 0.5)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.detach().numpy())
    for p in (1.5, -0.1):
        for name in ("dropout", "dropout2d", "alpha_dropout", "feature_alpha_dropout"):
            with pytest.raises(ValueError) as ef:
                getattr(flF, name)(fl.ones(2, 2, 2, 2), p)
            with pytest.raises(ValueError) as et:
                getattr(TF, name)(torch.ones(2, 2, 2, 2), p)
            assert str(ef.value) == str(et.value)
    same_error(lambda lib, F, x: F.dropout1d(x), arr((2, 2, 2, 2)))
    assert_same(flF.dropout(fl.ones(3), 1.0), TF.dropout(torch.ones(3), 1.0))


# ---- distances ------------------------------------------------------------------------------

@pytest.mark.parametrize("p", [0, 1, 1.5, 2, 3, math.inf])
@pytest.mark.parametrize("shapes", [((4, 5), (6, 5)), ((2, 30, 3), (1, 27, 3)), ((3, 4, 2), (3, 2))])
def test_cdist(p, shapes):
    a, b = shapes
    grad = (0, 1) if p not in (0,) else ()
    if len(b) == 2 and len(a) == 3:
        b = (1,) + b
    dual(lambda lib, F, x, y: lib.cdist(x, y, p=p), arr(a), arr(b, seed=1), grad=grad, rtol=1e-4, atol=1e-4,
         grad_rtol=1e-3, grad_atol=1e-3)


@pytest.mark.parametrize("mode", ["use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"])
def test_cdist_compute_modes(mode):
    dual(lambda lib, F, x, y: lib.cdist(x, y, compute_mode=mode), arr((5, 3)), arr((4, 3), seed=1), grad=(0, 1),
         rtol=1e-4, atol=1e-4)


def test_pdist_cosine_pairwise():
    for p in (0, 1, 2, 3.5, math.inf):
        dual(lambda lib, F, x: F.pdist(x, p), arr((6, 4)), grad=(0,) if p else (), rtol=1e-4, atol=1e-5)
    dual(lambda lib, F, x: lib.pdist(x), arr((5, 3)))
    dual(lambda lib, F, x, y: F.cosine_similarity(x, y), arr((4, 5)), arr((4, 5), seed=1), grad=(0, 1))
    dual(lambda lib, F, x, y: lib.cosine_similarity(x, y, dim=-1, eps=1e-3), arr((3, 1, 5)), arr((4, 5), seed=1),
         grad=(0, 1))
    dual(lambda lib, F, x, y: F.cosine_similarity(x, y, dim=0), arr((4, 5)), np.zeros((4, 5), np.float32))
    for p, keep in ((2, False), (1, True), (3, False)):
        dual(lambda lib, F, x, y: F.pairwise_distance(x, y, p=p, keepdim=keep), arr((4, 5)), arr((4, 5), seed=1),
             grad=(0, 1))
    dual(lambda lib, F, x, y: lib.pairwise_distance(x, y), arr((4, 5)), arr((5,), seed=1), grad=(0, 1))


@pytest.mark.parametrize("bad", [
    lambda lib, F, x, y: lib.cdist(x[0], y),
    lambda lib, F, x, y: lib.cdist(x, y[:, :2]),
    lambda lib, F, x, y: lib.cdist(x, y, p=-1),
    lambda lib, F, x, y: lib.cdist(x, y, compute_mode="foo"),
    lambda lib, F, x, y: F.pdist(x.unsqueeze(0)),
    lambda lib, F, x, y: F.pdist(x, -1),
    lambda lib, F, x, y: F.cosine_similarity(x.long(), y.long()),
    lambda lib, F, x, y: F.cosine_similarity(x, y, dim=3),
])
def test_distance_errors(bad):
    same_error(bad, arr((4, 3)), arr((5, 3), seed=1))


@pytest.mark.parametrize("mode,shape,size", [("nearest", (2, 3, 5, 6), (7, 9)), ("nearest-exact", (2, 3, 5), (8,)),
                                             ("bilinear", (2, 3, 5, 6), (7, 9)), ("bicubic", (2, 3, 5, 6), (9, 4))])
def test_interpolate_uint8(mode, shape, size):
    x = np.random.default_rng(0).integers(0, 256, shape).astype(np.uint8)
    exact = mode.startswith("nearest")
    dual(lambda lib, F, x: F.interpolate(x, size=size, mode=mode), x, rtol=0, atol=0 if exact else 1)


def test_double_backward_through_pad_and_interpolate():
    for op in (lambda lib, F, x: F.pad(x, (1, 2, 2, 1), mode="reflect"),
               lambda lib, F, x: F.pad(x, (1, -1, 2, 0)),
               lambda lib, F, x: F.interpolate(x, scale_factor=2, mode="bilinear")):
        res = []
        for lib, F in ((torch, TF), (fl, flF)):
            x = lib.tensor(arr((1, 2, 3, 4), dtype=np.float64), requires_grad=True)
            g = lib.tensor(np.ones(tuple(op(lib, F, x.detach()).shape)), requires_grad=True)
            (gx,) = lib.autograd.grad(op(lib, F, x), x, g, create_graph=True)
            (gg,) = lib.autograd.grad((gx * gx).sum(), g)
            res.append(gg)
        assert_same(res[1], res[0], rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("case", [
    lambda lib, F, x: F.pdist(x, float("inf")),
    lambda lib, F, x: F.pdist(x, 0.5),
    lambda lib, F, x: F.pdist(x[:1]),
    lambda lib, F, x: lib.cdist(x, x.detach(), p=0),
    lambda lib, F, x: lib.cdist(x, x.detach(), p=0.5),
    lambda lib, F, x: lib.cdist(x, x.detach(), p=3),
    lambda lib, F, x: lib.cdist(x, x.detach()),
    lambda lib, F, x: F.cosine_similarity(x, x * 0),
])
def test_distance_gradients_at_zero_distance_and_ties(case):
    x = np.array([[1.0, 2.0, 0.5], [1.0, 2.0, 0.5], [3.0, 4.0, 3.5], [0.0, 1.0, 2.0]], np.float32)
    dual(case, x, grad=(0,))


@pytest.mark.parametrize("pads", [(-1, 1), (1, -1), (2, -1), (-2, 0), (3, 3), (4, 4)])
def test_pad_circular_negative(pads):
    dual(lambda lib, F, x: F.pad(x, pads, mode="circular"), arr((1, 2, 4)), grad=(0,))


def test_embedding_bag_all_empty():
    dual(lambda lib, F, w, i, o: F.embedding_bag(i, w, o, mode="max"), arr((4, 3)), np.zeros((0,), np.int64),
         np.array([0, 0]), grad=(0,))
