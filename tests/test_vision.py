"""Vision, sparse, dropout and distance functions of flowlike.nn.functional against numpy references."""
import math

import numpy as np
import pytest

import flowlike as torch
import flowlike.nn.functional as F


def t(a, requires_grad=False):
    return torch.tensor(np.asarray(a), requires_grad=requires_grad)


def rng(seed=0):
    return np.random.default_rng(seed)


# ---- pad ------------------------------------------------------------------------------------

NP_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}


@pytest.mark.parametrize("mode", list(NP_MODES))
@pytest.mark.parametrize("shape,pads", [((2, 3, 5), (2, 1)), ((2, 3, 4, 5), (1, 2, 3, 0)),
                                        ((1, 2, 3, 4, 5), (1, 1, 2, 0, 0, 2))])
def test_pad_matches_numpy(mode, shape, pads):
    x = rng().standard_normal(shape)
    k = len(pads) // 2
    width = [(0, 0)] * (len(shape) - k) + [(pads[2 * j], pads[2 * j + 1]) for j in reversed(range(k))]
    kw = {"constant_values": 1.5} if mode == "constant" else {}
    ref = np.pad(x, width, mode=NP_MODES[mode], **kw)
    out = F.pad(t(x), pads, mode=mode, value=1.5 if mode == "constant" else None)
    np.testing.assert_allclose(out.numpy(), ref)


def test_pad_constant_negative_and_many_dims():
    x = rng().standard_normal((3, 4, 5))
    out = F.pad(t(x), (-1, 2, 0, -2, 1, 1))
    ref = np.pad(x, [(1, 1), (0, 0), (0, 2)])[:, :2, 1:]
    np.testing.assert_allclose(out.numpy(), ref)
    assert F.pad(torch.ones(2, dtype=torch.int64), (1, 1), value=3).tolist() == [3, 1, 1, 3]


@pytest.mark.parametrize("mode", list(NP_MODES))
def test_pad_backward_is_adjoint(mode):
    # <pad(x), g> == <x, pad^T(g)> for the linear map pad (value 0)
    x = t(rng(1).standard_normal((2, 3, 4, 5)), requires_grad=True)
    out = F.pad(x, (2, 1, 1, 3), mode=mode)
    g = rng(2).standard_normal(tuple(out.shape))
    out.backward(t(g))
    lhs = float((out.detach().numpy() * g).sum())
    rhs = float((x.detach().numpy() * x.grad.numpy()).sum())
    assert lhs == pytest.approx(rhs, rel=1e-10)


def test_pad_errors():
    x = torch.zeros(1, 1, 3)
    with pytest.raises(RuntimeError, match="divisible by 2"):
        F.pad(x, (1,))
    with pytest.raises(RuntimeError, match="Padding size should be less than"):
        F.pad(x, (3, 3), mode="reflect")
    with pytest.raises(NotImplementedError):
        F.pad(torch.zeros(5), (1, 1), mode="reflect")
    with pytest.raises(NotImplementedError, match="Unrecognised padding mode"):
        F.pad(x, (1, 1), mode="foo")


# ---- interpolate -----------------------------------------------------------------------------

def np_linear_taps(n_in, n_out, align, scale=None):
    taps = []
    for o in range(n_out):
        if align:
            s = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
            src = s * o
        else:
            s = 1.0 / scale if scale else n_in / n_out
            src = max(s * (o + 0.5) - 0.5, 0.0)
        i0 = min(int(math.floor(src)), n_in - 1)
        lam = min(max(src - i0, 0.0), 1.0)
        i1 = i0 + (1 if i0 < n_in - 1 else 0)
        taps.append(((i0, 1 - lam), (i1, lam)))
    return taps


def np_resample(x, axis, taps):
    x = np.moveaxis(x, axis, -1)
    out = np.zeros(x.shape[:-1] + (len(taps),))
    for o, tp in enumerate(taps):
        for i, w in tp:
            out[..., o] += w * x[..., i]
    return np.moveaxis(out, -1, axis)


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("size", [(7, 9), (3, 2), (4, 5)])
def test_bilinear_matches_numpy(align, size):
    x = rng().standard_normal((2, 3, 4, 5))
    ref = np_resample(np_resample(x, 3, np_linear_taps(5, size[1], align)), 2, np_linear_taps(4, size[0], align))
    out = F.interpolate(t(x), size=size, mode="bilinear", align_corners=align)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12, atol=1e-12)


def test_linear_trilinear_and_scale_factor():
    x = rng().standard_normal((1, 2, 6))
    out = F.interpolate(t(x), scale_factor=1.5, mode="linear")
    ref = np_resample(x, 2, np_linear_taps(6, 9, False, 1.5))
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12)
    x3 = rng(1).standard_normal((1, 1, 3, 4, 2))
    out3 = F.interpolate(t(x3), size=(5, 3, 4), mode="trilinear", align_corners=True)
    ref3 = x3
    for ax, (n_in, n_out) in zip((4, 3, 2), ((2, 4), (4, 3), (3, 5))):
        ref3 = np_resample(ref3, ax, np_linear_taps(n_in, n_out, True))
    np.testing.assert_allclose(out3.numpy(), ref3, rtol=1e-12)


def test_nearest_and_area():
    x = rng().standard_normal((1, 2, 4, 6))
    out = F.interpolate(t(x), size=(8, 3), mode="nearest")
    rows = [min(int(math.floor(o * 0.5)), 3) for o in range(8)]
    cols = [min(int(math.floor(o * 2.0)), 5) for o in range(3)]
    np.testing.assert_allclose(out.numpy(), x[:, :, rows][:, :, :, cols])
    ex = F.interpolate(t(x), size=(3, 4), mode="nearest-exact")
    rows = [min(int(math.floor((o + 0.5) * 4 / 3)), 3) for o in range(3)]
    cols = [min(int(math.floor((o + 0.5) * 1.5)), 5) for o in range(4)]
    np.testing.assert_allclose(ex.numpy(), x[:, :, rows][:, :, :, cols])
    area = F.interpolate(t(x), size=(2, 4), mode="area")
    ref = np.zeros((1, 2, 2, 4))
    for i in range(2):
        for j in range(4):
            h0, h1 = (i * 4) // 2, -(-((i + 1) * 4) // 2)
            w0, w1 = (j * 6) // 4, -(-((j + 1) * 6) // 4)
            ref[:, :, i, j] = x[:, :, h0:h1, w0:w1].mean(axis=(2, 3))
    np.testing.assert_allclose(area.numpy(), ref, rtol=1e-12)


def cubic_w(tt, A=-0.75):
    c1 = lambda v: ((A + 2) * v - (A + 3)) * v * v + 1  # noqa: E731
    c2 = lambda v: ((A * v - 5 * A) * v + 8 * A) * v - 4 * A  # noqa: E731
    return [c2(tt + 1), c1(tt), c1(1 - tt), c2(2 - tt)]


def test_bicubic_matches_numpy():
    x = rng().standard_normal((1, 1, 4, 5))

    def taps(n_in, n_out):
        s = n_in / n_out
        out = []
        for o in range(n_out):
            src = s * (o + 0.5) - 0.5
            i0 = math.floor(src)
            w = cubic_w(src - i0)
            out.append([(min(max(i0 - 1 + j, 0), n_in - 1), w[j]) for j in range(4)])
        return out
    ref = np_resample(np_resample(x, 3, taps(5, 7)), 2, taps(4, 6))
    out = F.interpolate(t(x), size=(6, 7), mode="bicubic")
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode,shape,size", [("bilinear", (2, 3, 4, 5), (7, 3)), ("bicubic", (1, 2, 4, 4), (6, 9)),
                                             ("nearest", (1, 2, 5), (9,)), ("area", (1, 2, 6, 7), (4, 3)),
                                             ("trilinear", (1, 1, 2, 3, 4), (3, 5, 2))])
def test_interpolate_backward_is_adjoint(mode, shape, size):
    x = t(rng(3).standard_normal(shape), requires_grad=True)
    out = F.interpolate(x, size=size, mode=mode)
    g = rng(4).standard_normal(tuple(out.shape))
    out.backward(t(g))
    lhs = float((out.detach().numpy() * g).sum())
    rhs = float((x.detach().numpy() * x.grad.numpy()).sum())
    assert lhs == pytest.approx(rhs, rel=1e-10)


def test_interpolate_float16_and_errors():
    x = torch.ones(1, 1, 2, 2, dtype=torch.float16)
    out = F.interpolate(x, scale_factor=2, mode="bilinear")
    assert out.dtype == torch.float16 and tuple(out.shape) == (1, 1, 4, 4)
    with pytest.raises(NotImplementedError, match="bilinear mode needs 4D input"):
        F.interpolate(torch.ones(1, 1, 3), size=4, mode="bilinear")
    with pytest.raises(ValueError, match="only one of size or scale_factor"):
        F.interpolate(x, size=3, scale_factor=2)
    with pytest.raises(ValueError, match="align_corners option"):
        F.interpolate(x, size=3, align_corners=True)


# ---- pixel shuffle --------------------------------------------------------------------------

def test_pixel_shuffle_roundtrip():
    x = rng().standard_normal((2, 8, 3, 4))
    y = F.pixel_shuffle(t(x), 2)
    ref = x.reshape(2, 2, 2, 2, 3, 4).transpose(0, 1, 4, 2, 5, 3).reshape(2, 2, 6, 8)
    np.testing.assert_allclose(y.numpy(), ref)
    np.testing.assert_allclose(F.pixel_unshuffle(y, 2).numpy(), x)
    assert torch.pixel_shuffle is F.pixel_shuffle
    with pytest.raises(RuntimeError, match="divisible"):
        F.pixel_shuffle(torch.zeros(1, 5, 2, 2), 2)


# ---- grid_sample / affine_grid ---------------------------------------------------------------

def np_grid_sample_bilinear(x, grid, align):
    n, c, h, w = x.shape
    out = np.zeros((n, c) + grid.shape[1:3])
    for b in range(n):
        for i in range(grid.shape[1]):
            for j in range(grid.shape[2]):
                gx, gy = grid[b, i, j]
                ix = ((gx + 1) / 2) * (w - 1) if align else ((gx + 1) * w - 1) / 2
                iy = ((gy + 1) / 2) * (h - 1) if align else ((gy + 1) * h - 1) / 2
                x0, y0 = math.floor(ix), math.floor(iy)
                for dy in (0, 1):
                    for dx in (0, 1):
                        xx, yy = x0 + dx, y0 + dy
                        wt = (1 - abs(ix - xx)) * (1 - abs(iy - yy))
                        if 0 <= xx < w and 0 <= yy < h:
                            out[b, :, i, j] += wt * x[b, :, yy, xx]
    return out


@pytest.mark.parametrize("align", [False, True])
def test_grid_sample_bilinear_matches_numpy(align):
    x = rng().standard_normal((2, 3, 4, 5))
    grid = rng(1).uniform(-1.2, 1.2, (2, 3, 6, 2))
    out = F.grid_sample(t(x), t(grid), align_corners=align)
    np.testing.assert_allclose(out.numpy(), np_grid_sample_bilinear(x, grid, align), rtol=1e-12, atol=1e-12)


def test_affine_grid_identity_samples_input():
    x = rng().standard_normal((2, 3, 4, 5))
    theta = t(np.tile(np.array([[1.0, 0, 0], [0, 1.0, 0]]), (2, 1, 1)))
    for align in (False, True):
        g = F.affine_grid(theta, (2, 3, 4, 5), align_corners=align)
        assert tuple(g.shape) == (2, 4, 5, 2)
        np.testing.assert_allclose(F.grid_sample(t(x), g, align_corners=align).numpy(), x, atol=1e-12)
    theta3 = t(np.tile(np.eye(3, 4), (1, 1, 1)))
    g3 = F.affine_grid(theta3, (1, 1, 2, 3, 4), align_corners=True)
    x3 = rng(2).standard_normal((1, 1, 2, 3, 4))
    np.testing.assert_allclose(F.grid_sample(t(x3), g3, align_corners=True).numpy(), x3, atol=1e-12)


@pytest.mark.parametrize("mode,padding", [("bilinear", "zeros"), ("bilinear", "border"), ("bilinear", "reflection"),
                                          ("bicubic", "zeros"), ("bicubic", "reflection")])
def test_grid_sample_gradients_match_finite_differences(mode, padding):
    x = rng(5).standard_normal((1, 2, 3, 4))
    grid = rng(6).uniform(-0.9, 0.9, (1, 2, 3, 2))
    xt, gt = t(x, True), t(grid, True)
    w = rng(7).standard_normal((1, 2, 2, 3))
    (F.grid_sample(xt, gt, mode=mode, padding_mode=padding, align_corners=False) * t(w)).sum().backward()

    def f(xv, gv):
        return float((F.grid_sample(t(xv), t(gv), mode=mode, padding_mode=padding, align_corners=False).numpy() * w).sum())
    eps = 1e-6
    num_g = np.zeros_like(grid)
    for idx in np.ndindex(grid.shape):
        d = np.zeros_like(grid)
        d[idx] = eps
        num_g[idx] = (f(x, grid + d) - f(x, grid - d)) / (2 * eps)
    num_x = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[idx] = eps
        num_x[idx] = (f(x + d, grid) - f(x - d, grid)) / (2 * eps)
    np.testing.assert_allclose(gt.grad.numpy(), num_g, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(xt.grad.numpy(), num_x, rtol=1e-5, atol=1e-6)


def test_grid_sample_errors():
    with pytest.raises(ValueError, match="expected mode"):
        F.grid_sample(torch.zeros(1, 1, 2, 2), torch.zeros(1, 2, 2, 2), mode="foo", align_corners=False)
    with pytest.raises(RuntimeError):
        F.grid_sample(torch.zeros(1, 1, 2, 2), torch.zeros(1, 2, 2, 3), align_corners=False)


# ---- embedding ----------------------------------------------------------------------------

def test_embedding_forward_backward_padding_and_freq():
    w = rng().standard_normal((6, 3))
    idx = np.array([[0, 2, 2], [5, 1, 2]])
    wt = t(w, True)
    out = F.embedding(t(idx), wt, padding_idx=1, scale_grad_by_freq=True)
    np.testing.assert_allclose(out.detach().numpy(), w[idx])
    g = rng(1).standard_normal((2, 3, 3))
    out.backward(t(g))
    ref = np.zeros_like(w)
    counts = np.bincount(idx.ravel(), minlength=6)
    for i, r in enumerate(idx.ravel()):
        if r != 1:
            ref[r] += g.reshape(-1, 3)[i] / counts[r]
    np.testing.assert_allclose(wt.grad.numpy(), ref, rtol=1e-12)
    with pytest.raises(IndexError):
        F.embedding(t(np.array([6])), wt)


def test_embedding_max_norm_renormalizes_in_place():
    w = t(np.array([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]]))
    F.embedding(t(np.array([0, 1])), w, max_norm=1.0)
    np.testing.assert_allclose(w.numpy()[0], np.array([3.0, 4.0]) / (5 + 1e-7))
    np.testing.assert_allclose(w.numpy()[1:], [[0.3, 0.4], [6.0, 8.0]])


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_matches_numpy(mode):
    w = rng().standard_normal((7, 4))
    idx = np.array([1, 2, 4, 5, 4, 3, 2, 6])
    offsets = np.array([0, 2, 2, 5])
    out = F.embedding_bag(t(idx), t(w), t(offsets), mode=mode)
    ref = []
    for b, e in zip(offsets, list(offsets[1:]) + [len(idx)]):
        rows = w[idx[b:e]]
        if len(rows) == 0:
            ref.append(np.zeros(4))
        else:
            ref.append({"sum": rows.sum(0), "mean": rows.mean(0), "max": rows.max(0)}[mode])
    np.testing.assert_allclose(out.numpy(), np.array(ref), rtol=1e-12)


def test_embedding_bag_weights_padding_and_grad():
    w = t(rng().standard_normal((5, 3)), True)
    idx = t(np.array([[0, 1, 2], [2, 2, 4]]))
    psw = t(np.array([[1.0, 2.0, 0.5], [1.0, -1.0, 3.0]]))
    out = F.embedding_bag(idx, w, mode="sum", per_sample_weights=psw, padding_idx=2)
    wn = w.detach().numpy()
    ref = np.stack([wn[0] + 2 * wn[1], 3 * wn[4]])
    np.testing.assert_allclose(out.detach().numpy(), ref, rtol=1e-12)
    out.sum().backward()
    np.testing.assert_allclose(w.grad.numpy()[:, 0], [1.0, 2.0, 0.0, 0.0, 3.0])


def test_one_hot():
    x = t(np.array([[0, 3], [1, 1]]))
    out = F.one_hot(x)
    assert out.dtype == torch.int64
    np.testing.assert_array_equal(out.numpy(), np.eye(4, dtype=np.int64)[x.numpy()])
    assert tuple(F.one_hot(x, 6).shape) == (2, 2, 6)
    with pytest.raises(RuntimeError, match="smaller than num_classes"):
        F.one_hot(x, 3)
    with pytest.raises(RuntimeError, match="non-negative"):
        F.one_hot(t(np.array([-1])))


# ---- dropout --------------------------------------------------------------------------------

def test_dropout_statistics_and_reproducibility():
    x = torch.ones(200000)
    torch.manual_seed(0)
    y = F.dropout(x, 0.3)
    kept = (y.numpy() != 0).mean()
    assert abs(kept - 0.7) < 0.01
    np.testing.assert_allclose(np.unique(y.numpy()), [0.0, 1 / 0.7], rtol=1e-6)
    torch.manual_seed(0)
    np.testing.assert_array_equal(F.dropout(x, 0.3).numpy(), y.numpy())
    assert F.dropout(x, 0.3, training=False) is x
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        F.dropout(x, 1.5)


def test_dropout2d_zeroes_whole_channels_and_inplace():
    x = torch.ones(64, 32, 3, 3)
    y = F.dropout2d(x, 0.5).numpy()
    per_channel = y.reshape(64, 32, 9)
    assert np.all((per_channel == 0).all(-1) | (per_channel == 2.0).all(-1))
    assert 0.4 < (per_channel[:, :, 0] == 0).mean() < 0.6
    z = torch.ones(1000)
    r = F.dropout(z, 0.5, inplace=True)
    assert r is z and (z.numpy() == 0).any()
    a = F.alpha_dropout(torch.randn(100000), 0.2, training=True)
    assert abs(float(a.mean())) < 0.05 and abs(float(a.std()) - 1) < 0.05


# ---- distances ------------------------------------------------------------------------------

def test_distances_match_numpy():
    a = rng().standard_normal((4, 5))
    b = rng(1).standard_normal((6, 5))
    for p in (0, 1, 2, 3, math.inf):
        d = a[:, None] - b[None]
        if p == 0:
            ref = (d != 0).sum(-1)
        elif p == math.inf:
            ref = np.abs(d).max(-1)
        else:
            ref = (np.abs(d) ** p).sum(-1) ** (1 / p)
        np.testing.assert_allclose(torch.cdist(t(a), t(b), p=p).numpy(), ref, rtol=1e-10)
    np.testing.assert_allclose(torch.cdist(t(a), t(b), compute_mode="use_mm_for_euclid_dist").numpy(),
                               np.sqrt(((a[:, None] - b[None]) ** 2).sum(-1)), rtol=1e-10)
    cs = F.cosine_similarity(t(a), t(a[::-1].copy()), dim=1)
    ref = (a * a[::-1]).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(a[::-1], axis=1))
    np.testing.assert_allclose(cs.numpy(), ref, rtol=1e-12)
    pd = F.pairwise_distance(t(a), t(a[::-1].copy()))
    np.testing.assert_allclose(pd.numpy(), np.linalg.norm(a - a[::-1] + 1e-6, axis=1), rtol=1e-12)
    i, j = np.triu_indices(4, 1)
    np.testing.assert_allclose(torch.pdist(t(a)).numpy(), np.linalg.norm(a[i] - a[j], axis=1), rtol=1e-12)


def test_cdist_zero_distance_has_zero_gradient():
    a = t(np.array([[1.0, 2.0], [3.0, 4.0]]), True)
    torch.cdist(a, a.detach()).sum().backward()
    assert np.isfinite(a.grad.numpy()).all()
