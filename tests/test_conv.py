"""Convolution, pooling and fold/unfold against naive numpy references (no torch): values, shapes, gradients
(by the adjoint identities and finite differences), and errors."""
import itertools

import numpy as np
import pytest

import flowlike as fl
import flowlike.nn.functional as F

RNG = np.random.default_rng(5)


def arr(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def t(a, grad=False):
    x = fl.from_numpy(np.ascontiguousarray(a))
    return x.requires_grad_(True) if grad else x


# ---- references --------------------------------------------------------------------------------------


def ref_conv(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """Direct convolution: one strided slice of the padded input per kernel tap, contracted over channels."""
    nd = x.ndim - 2
    stride = [stride] * nd if np.isscalar(stride) else stride
    dilation = [dilation] * nd if np.isscalar(dilation) else dilation
    padding = [(padding, padding)] * nd if np.isscalar(padding) else [(p, p) if np.isscalar(p) else p for p in padding]
    xp = np.pad(x, [(0, 0), (0, 0)] + list(padding))
    k = w.shape[2:]
    out = [(xp.shape[2 + i] - dilation[i] * (k[i] - 1) - 1) // stride[i] + 1 for i in range(nd)]
    N, cin, cout = x.shape[0], x.shape[1], w.shape[0]
    cig, cog = cin // groups, cout // groups
    y = np.zeros((N, cout, *out))
    for tap in itertools.product(*[range(s) for s in k]):
        sl = tuple(slice(tap[i] * dilation[i], tap[i] * dilation[i] + stride[i] * (out[i] - 1) + 1, stride[i])
                   for i in range(nd))
        patch = xp[(slice(None), slice(None)) + sl]
        for g in range(groups):
            wt = w[(slice(g * cog, (g + 1) * cog), slice(None)) + tap]
            y[:, g * cog:(g + 1) * cog] += np.einsum("nc...,oc->no...", patch[:, g * cig:(g + 1) * cig], wt)
    if b is not None:
        y += b.reshape(1, -1, *[1] * nd)
    return y


def ref_conv_transpose(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Scatter form: every input element adds weight * value into the (uncropped) output, then the crop."""
    nd = x.ndim - 2
    rep = lambda v: [v] * nd if np.isscalar(v) else list(v)  # noqa: E731
    stride, padding, output_padding, dilation = rep(stride), rep(padding), rep(output_padding), rep(dilation)
    k, sp = w.shape[2:], x.shape[2:]
    full = [(sp[i] - 1) * stride[i] + dilation[i] * (k[i] - 1) + 1 + output_padding[i] for i in range(nd)]
    N, cin = x.shape[:2]
    cog, cig = w.shape[1], cin // groups
    y = np.zeros((N, cog * groups, *full))
    for tap in itertools.product(*[range(s) for s in k]):
        sl = tuple(slice(tap[i] * dilation[i], tap[i] * dilation[i] + stride[i] * (sp[i] - 1) + 1, stride[i])
                   for i in range(nd))
        for g in range(groups):
            wt = w[(slice(g * cig, (g + 1) * cig), slice(None)) + tap]
            contrib = np.einsum("nc...,co->no...", x[:, g * cig:(g + 1) * cig], wt)
            y[(slice(None), slice(g * cog, (g + 1) * cog)) + sl] += contrib
    crop = tuple(slice(padding[i], full[i] - padding[i]) for i in range(nd))
    y = y[(slice(None), slice(None)) + crop]
    if b is not None:
        y = y + b.reshape(1, -1, *[1] * nd)
    return y


def windows(n_in, n_out, k, s, p, d):
    """Per output index, the valid input positions of a pooling window."""
    return [[o * s - p + j * d for j in range(k) if 0 <= o * s - p + j * d < n_in] for o in range(n_out)]


def pooled(n, k, s, p, d, ceil):
    num = n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)
    o = num // s + 1
    return o - 1 if ceil and (o - 1) * s >= n + p else o


def ref_pool2d(x, k, s, p, d=1, ceil=False, mode="max", include_pad=True):
    N, C, H, W = x.shape
    oh, ow = pooled(H, k, s, p, d, ceil), pooled(W, k, s, p, d, ceil)
    y = np.zeros((N, C, oh, ow))
    idx = np.zeros((N, C, oh, ow), dtype=np.int64)
    wh, ww = windows(H, oh, k, s, p, d), windows(W, ow, k, s, p, d)
    for i in range(oh):
        for j in range(ow):
            block = x[:, :, wh[i]][:, :, :, ww[j]].reshape(N, C, -1)
            if mode == "max":
                a = block.argmax(-1)
                y[:, :, i, j] = block.max(-1)
                idx[:, :, i, j] = np.array(wh[i])[a // len(ww[j])] * W + np.array(ww[j])[a % len(ww[j])]
            else:
                hs, ws = i * s - p, j * s - p
                padded = (min(hs + k, H + p) - hs) * (min(ws + k, W + p) - ws)
                y[:, :, i, j] = block.sum(-1) / (padded if include_pad else block.shape[-1])
    return y, idx


def numeric_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (f(xp) - f(xm)) / (2 * eps)
    return g


# ---- convolution -------------------------------------------------------------------------------------

CASES = [
    ((2, 3, 7, 6), (4, 3, 3, 3), dict()),
    ((2, 3, 7, 6), (4, 3, 3, 3), dict(padding=1)),
    ((2, 4, 9, 8), (6, 2, 3, 2), dict(stride=(2, 1), padding=(1, 0), groups=2)),
    ((1, 4, 9, 9), (4, 1, 3, 3), dict(dilation=2, padding=2, groups=4)),
    ((2, 4, 9, 9), (8, 1, 3, 3), dict(stride=2, groups=4)),
    ((2, 3, 5, 5), (2, 3, 1, 1), dict()),
    ((3, 2, 13), (3, 2, 4), dict(stride=3, padding=2)),
    ((1, 2, 4, 5, 6), (3, 2, 2, 3, 2), dict(stride=(1, 2, 1), padding=1)),
]


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-10), (np.float32, 1e-4)])  # float32: the packed sgemm path
@pytest.mark.parametrize("xs,ws,kw", CASES)
def test_conv_matches_reference(xs, ws, kw, dtype, tol):
    x, w, b = arr(*xs, dtype=dtype), arr(*ws, dtype=dtype), arr(ws[0], dtype=dtype)
    fn = getattr(F, f"conv{len(xs) - 2}d")
    got = fn(t(x), t(w), t(b), **kw)
    np.testing.assert_allclose(got.numpy(), ref_conv(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64), **kw),
                               rtol=tol, atol=tol)


@pytest.mark.parametrize("threads", [1, 2])
def test_conv_float32_stride1_random_geometries(threads):
    # float32 stride-1 1-d/2-d forwards of wide planes read the padded input rows in place (no im2col): against
    # float64
    prev = fl.get_num_threads()
    fl.set_num_threads(threads)
    try:
        for _ in range(25):
            groups = int(RNG.integers(1, 3))
            cin, cout = groups * int(RNG.integers(1, 5)), groups * int(RNG.integers(1, 5))
            k = [int(v) for v in RNG.integers(1, 5, 2)]
            dil = [int(v) for v in RNG.integers(1, 3, 2)]
            pad = [int(v) for v in RNG.integers(0, 4, 2)]
            # wide rows: narrow planes (junk columns over 10% of the work) take the im2col path instead
            hw = [int(RNG.integers(max(1, (k[0] - 1) * dil[0] + 1 - 2 * pad[0]), 12)), int(RNG.integers(60, 140))]
            x, w, b = arr(int(RNG.integers(1, 4)), cin, *hw), arr(cout, cin // groups, *k), arr(cout)
            kw = dict(padding=pad, dilation=dil, groups=groups)
            got = F.conv2d(t(x.astype(np.float32)), t(w.astype(np.float32)), t(b.astype(np.float32)), **kw)
            np.testing.assert_allclose(got.numpy(), F.conv2d(t(x), t(w), t(b), **kw).numpy(), rtol=1e-4, atol=1e-4)
            got = F.conv1d(t(x[:, :, 0].astype(np.float32)), t(w[:, :, 0].astype(np.float32)), None,
                           padding=pad[1], dilation=dil[1], groups=groups)
            want = F.conv1d(t(x[:, :, 0]), t(w[:, :, 0]), None, padding=pad[1], dilation=dil[1], groups=groups)
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-4)
    finally:
        fl.set_num_threads(prev)


def test_conv_float32_and_same_padding():
    x, w = arr(2, 3, 8, 7, dtype=np.float32), arr(5, 3, 4, 4, dtype=np.float32)
    got = F.conv2d(t(x), t(w), padding="same")
    assert got.dtype == fl.float32 and tuple(got.shape) == (2, 5, 8, 7)
    np.testing.assert_allclose(got.numpy(), ref_conv(x, w, padding=[(1, 2), (1, 2)]), rtol=1e-4, atol=1e-4)
    got = F.conv1d(t(x[:, :, 0]), t(w[:, :, 0]), padding="valid")
    np.testing.assert_allclose(got.numpy(), ref_conv(x[:, :, 0], w[:, :, 0]), rtol=1e-4, atol=1e-4)


def test_conv_half_precision_computes_in_float32():
    x, w = arr(1, 2, 6, 6, dtype=np.float32), arr(3, 2, 3, 3, dtype=np.float32)
    got = F.conv2d(t(x).to(fl.float16), t(w).to(fl.float16))
    assert got.dtype == fl.float16
    ref = ref_conv(x.astype(np.float16).astype(np.float64), w.astype(np.float16).astype(np.float64))
    np.testing.assert_allclose(got.to(fl.float32).numpy(), ref, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("xs,ws,kw", CASES)
def test_conv_gradients_by_adjoint(xs, ws, kw):
    # <conv(x), g> is linear in x and in w: its gradients must equal the numeric ones of the reference
    x, w, b = arr(*xs), arr(*ws), arr(ws[0])
    fn = getattr(F, f"conv{len(xs) - 2}d")
    xt, wt, bt = t(x, True), t(w, True), t(b, True)
    out = fn(xt, wt, bt, **kw)
    g = arr(*out.shape)
    out.backward(t(g))
    # linear functions: a finite difference with eps=1 is exact up to rounding
    np.testing.assert_allclose(xt.grad.numpy(), numeric_grad(lambda v: (ref_conv(v, w, b, **kw) * g).sum(), x, 1.0),
                               rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(wt.grad.numpy(), numeric_grad(lambda v: (ref_conv(x, v, b, **kw) * g).sum(), w, 1.0),
                               rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(bt.grad.numpy(), g.sum(axis=tuple(i for i in range(g.ndim) if i != 1)), rtol=1e-10)


@pytest.mark.parametrize("transposed", [False, True])
def test_conv_double_backward_by_finite_differences(transposed):
    # d/dw |dL/dx|^2 through create_graph=True against central differences of the first-order gradient
    fn = F.conv_transpose2d if transposed else F.conv2d
    x, w = arr(1, 2, 5, 5), arr(2, 3, 3, 3) if transposed else arr(3, 2, 3, 3)
    g = arr(*fn(t(x), t(w), stride=2, padding=1).shape)

    def penalty(wv):
        xt = t(x, True)
        (gx,) = fl.autograd.grad(fn(xt, t(wv), stride=2, padding=1), [xt], grad_outputs=t(g))
        return (gx * gx).sum().item()

    xt, wt = t(x, True), t(w, True)
    (gx,) = fl.autograd.grad(fn(xt, wt, stride=2, padding=1), [xt], grad_outputs=t(g), create_graph=True)
    (gx * gx).sum().backward()
    np.testing.assert_allclose(wt.grad.numpy(), numeric_grad(penalty, w), rtol=1e-6, atol=1e-6)


def test_conv_noncontiguous_and_unbatched():
    x, w = arr(2, 7, 6, 3), arr(4, 3, 3, 3)
    xt = t(x).permute(0, 3, 1, 2)
    np.testing.assert_allclose(F.conv2d(xt, t(w), padding=1).numpy(), ref_conv(x.transpose(0, 3, 1, 2), w, padding=1),
                               rtol=1e-10, atol=1e-10)
    got = F.conv2d(t(x[0].transpose(2, 0, 1)), t(w))
    assert tuple(got.shape) == (4, 5, 4)
    np.testing.assert_allclose(got.numpy(), ref_conv(x[:1].transpose(0, 3, 1, 2), w)[0], rtol=1e-10, atol=1e-10)


def test_toplevel_conv():
    x, w = arr(2, 3, 9), arr(4, 3, 3)
    np.testing.assert_allclose(fl.conv1d(t(x), t(w), stride=2).numpy(), ref_conv(x, w, stride=2), rtol=1e-10)
    assert fl.conv2d is F.conv2d and fl.conv3d is F.conv3d


TRANSPOSED = [
    ((2, 4, 5, 6), (4, 3, 3, 3), dict()),
    ((2, 4, 5, 6), (4, 3, 3, 3), dict(stride=2, padding=1, output_padding=1)),
    ((1, 4, 4, 4), (4, 3, 3, 2), dict(stride=(2, 3), dilation=(2, 1), output_padding=(1, 2), groups=2)),
    ((2, 3, 7), (3, 2, 4), dict(stride=3, padding=2, output_padding=2)),
    ((1, 2, 3, 4, 3), (2, 3, 2, 3, 2), dict(stride=(2, 1, 2), padding=(0, 1, 1))),
]


@pytest.mark.parametrize("xs,ws,kw", TRANSPOSED)
def test_conv_transpose_matches_reference(xs, ws, kw):
    x, w, b = arr(*xs), arr(*ws), arr(ws[1] * kw.get("groups", 1))
    fn = getattr(F, f"conv_transpose{len(xs) - 2}d")
    xt, wt = t(x, True), t(w, True)
    out = fn(xt, wt, t(b), **kw)
    ref = ref_conv_transpose(x, w, b, **kw)
    np.testing.assert_allclose(out.detach().numpy(), ref, rtol=1e-10, atol=1e-10)
    g = arr(*out.shape)
    out.backward(t(g))
    np.testing.assert_allclose(
        xt.grad.numpy(), numeric_grad(lambda v: (ref_conv_transpose(v, w, b, **kw) * g).sum(), x, 1.0), atol=1e-8)
    np.testing.assert_allclose(
        wt.grad.numpy(), numeric_grad(lambda v: (ref_conv_transpose(x, v, b, **kw) * g).sum(), w, 1.0), atol=1e-8)


def test_conv_errors():
    x, w = t(arr(16, 4, 56, 56, dtype=np.float32)), t(arr(64, 3, 3, 3, dtype=np.float32))
    with pytest.raises(RuntimeError, match=r"Given groups=1, weight of size \[64, 3, 3, 3\], expected "
                                           r"input\[16, 4, 56, 56\] to have 3 channels, but got 4 channels instead"):
        F.conv2d(x, w)
    small, w3 = t(arr(1, 3, 2, 2)), t(arr(4, 3, 3, 3))
    with pytest.raises(RuntimeError, match="Kernel size can't be greater than actual input size"):
        F.conv2d(small, w3)
    with pytest.raises(RuntimeError, match="non-positive stride is not supported"):
        F.conv2d(t(arr(1, 3, 5, 5)), w3, stride=0)
    with pytest.raises(RuntimeError, match="Expected 3D .unbatched. or 4D .batched. input to conv2d"):
        F.conv2d(t(arr(5, 5)), w3)
    with pytest.raises(RuntimeError, match="strided convolutions"):
        F.conv2d(t(arr(1, 3, 5, 5)), w3, padding="same", stride=2)
    with pytest.raises(RuntimeError):
        F.conv2d(t(arr(1, 3, 5, 5)).to(fl.int64), w3.to(fl.int64))
    with pytest.raises(RuntimeError, match="expected bias to be 1-dimensional with 4 elements"):
        F.conv2d(t(arr(1, 3, 5, 5)), w3, t(arr(3)))


# ---- pooling -----------------------------------------------------------------------------------------

POOLS = [(3, 2, 1, 1, False), (2, 2, 0, 1, False), (3, 2, 0, 1, True), (3, 1, 1, 2, False), (2, 3, 1, 1, True)]


@pytest.mark.parametrize("k,s,p,d,ceil", POOLS)
def test_max_pool2d_values_indices_grad(k, s, p, d, ceil):
    x = arr(2, 3, 9, 8)
    xt = t(x, True)
    y, idx = F.max_pool2d(xt, k, s, p, d, ceil_mode=ceil, return_indices=True)
    ry, ridx = ref_pool2d(x, k, s, p, d, ceil)
    np.testing.assert_array_equal(y.detach().numpy(), ry)
    np.testing.assert_array_equal(idx.numpy(), ridx)
    g = arr(*y.shape)
    y.backward(t(g))
    expect = np.zeros_like(x).reshape(2, 3, -1)
    for n, c in np.ndindex(2, 3):
        np.add.at(expect[n, c], ridx[n, c].ravel(), g[n, c].ravel())
    np.testing.assert_allclose(xt.grad.numpy(), expect.reshape(x.shape))


AVG_CASES = [(3, 2, 1, False, True), (3, 2, 1, False, False), (3, 2, 1, True, True), (2, 3, 1, True, False),
             (2, 2, 0, False, True)]


@pytest.mark.parametrize("k,s,p,ceil,include_pad", AVG_CASES)
def test_avg_pool2d_values_and_grad(k, s, p, ceil, include_pad):
    x = arr(2, 3, 9, 8)
    xt = t(x, True)
    y = F.avg_pool2d(xt, k, s, p, ceil_mode=ceil, count_include_pad=include_pad)
    np.testing.assert_allclose(y.detach().numpy(), ref_pool2d(x, k, s, p, 1, ceil, "avg", include_pad)[0], rtol=1e-12)
    g = arr(*y.shape)
    y.backward(t(g))
    num = numeric_grad(lambda v: (ref_pool2d(v, k, s, p, 1, ceil, "avg", include_pad)[0] * g).sum(), x, 1.0)
    np.testing.assert_allclose(xt.grad.numpy(), num, atol=1e-10)


def test_avg_pool_divisor_override_and_1d_3d():
    x = arr(1, 2, 6, 6)
    np.testing.assert_allclose(F.avg_pool2d(t(x), 2, divisor_override=3).numpy(),
                               x.reshape(1, 2, 3, 2, 3, 2).sum((3, 5)) / 3, rtol=1e-12)
    np.testing.assert_allclose(F.avg_pool1d(t(x[:, :, 0]), 3).numpy(), x[:, :, 0].reshape(1, 2, 2, 3).mean(-1),
                               rtol=1e-12)
    x3 = arr(1, 2, 4, 4, 4)
    np.testing.assert_allclose(F.avg_pool3d(t(x3), 2).numpy(), x3.reshape(1, 2, 2, 2, 2, 2, 2, 2).mean((3, 5, 7)),
                               rtol=1e-12)
    np.testing.assert_allclose(F.max_pool3d(t(x3), 2).numpy(), x3.reshape(1, 2, 2, 2, 2, 2, 2, 2).max((3, 5, 7)))
    np.testing.assert_allclose(F.max_pool1d(t(x[0, :, 0]), 2).numpy(), x[0, :, 0].reshape(2, 3, 2).max(-1))


def test_max_pool_nan_propagates():
    x = arr(1, 1, 4, 4)
    x[0, 0, 0, 1] = np.nan
    y = F.max_pool2d(t(x), 2)
    assert np.isnan(y.numpy()[0, 0, 0, 0]) and not np.isnan(y.numpy()[0, 0, 1, 1])


def test_adaptive_pools():
    x = arr(2, 3, 7, 10)
    y = F.adaptive_avg_pool2d(t(x), (3, 4))
    ref = np.zeros((2, 3, 3, 4))
    mref = np.zeros((2, 3, 3, 4))
    for i, j in np.ndindex(3, 4):
        h0, h1 = (i * 7) // 3, -((-(i + 1) * 7) // 3)
        w0, w1 = (j * 10) // 4, -((-(j + 1) * 10) // 4)
        ref[:, :, i, j] = x[:, :, h0:h1, w0:w1].mean((2, 3))
        mref[:, :, i, j] = x[:, :, h0:h1, w0:w1].max((2, 3))
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-12)
    m, idx = F.adaptive_max_pool2d(t(x), (3, 4), return_indices=True)
    np.testing.assert_allclose(m.numpy(), mref)
    np.testing.assert_allclose(np.take_along_axis(x.reshape(2, 3, -1), idx.numpy().reshape(2, 3, -1), -1),
                               mref.reshape(2, 3, -1))
    np.testing.assert_allclose(F.adaptive_avg_pool1d(t(x[:, :, 0]), 1).numpy(), x[:, :, 0].mean(-1, keepdims=True))
    assert tuple(F.adaptive_avg_pool2d(t(x), (None, 2)).shape) == (2, 3, 7, 2)
    xt = t(x, True)
    F.adaptive_avg_pool2d(xt, 1).sum().backward()
    np.testing.assert_allclose(xt.grad.numpy(), np.full(x.shape, 1 / 70), rtol=1e-12)


def test_lp_pool_and_unpool():
    x = np.abs(arr(1, 2, 6, 6)) + 0.1
    np.testing.assert_allclose(F.lp_pool2d(t(x), 2, 2).numpy(), np.sqrt((x ** 2).reshape(1, 2, 3, 2, 3, 2).sum((3, 5))),
                               rtol=1e-10)
    y, idx = F.max_pool2d(t(x), 2, return_indices=True)
    up = F.max_unpool2d(y, idx, 2).numpy()
    mask = up != 0
    assert mask.sum() == 18
    np.testing.assert_allclose(up[mask], x[mask])
    assert tuple(F.max_unpool2d(y, idx, 2, output_size=(7, 7)).shape) == (1, 2, 7, 7)


def test_fold_unfold_are_adjoint():
    x = arr(2, 3, 6, 7)
    cols = F.unfold(t(x), (2, 3), dilation=(2, 1), padding=1, stride=(1, 2))
    assert tuple(cols.shape) == (2, 18, 6 * 4)
    ref = np.stack([np.pad(x, [(0, 0), (0, 0), (1, 1), (1, 1)])[:, :, i * 2: i * 2 + 6, j: j + 8: 2].reshape(2, 3, -1)
                    for i in range(2) for j in range(3)], 2).reshape(2, 18, -1)
    np.testing.assert_allclose(cols.numpy(), ref)
    c = arr(*cols.shape)
    back = F.fold(t(c), (6, 7), (2, 3), dilation=(2, 1), padding=1, stride=(1, 2))
    np.testing.assert_allclose((cols.numpy() * c).sum(), (x * back.numpy()).sum(), rtol=1e-12)
    np.testing.assert_allclose(F.fold(F.unfold(t(x), 2, stride=2), (6, 6), 2, stride=2).numpy(), x[:, :, :, :6])


@pytest.mark.parametrize("bad", [
    lambda x: F.max_pool2d(x, 3, padding=2),
    lambda x: F.max_pool2d(x, 9),
    lambda x: F.max_pool2d(x, 2, stride=0),
    lambda x: F.avg_pool2d(x, 2, divisor_override=0),
    lambda x: F.max_pool2d(x[0, 0, 0], 2),
    lambda x: F.max_unpool2d(x, (x * 100).to(fl.int64), 2),
    lambda x: F.fold(x[0], (3, 3), 2),
    lambda x: F.unfold(x, 10),
])
def test_pool_errors_are_runtime_errors(bad):
    with pytest.raises(RuntimeError):
        bad(t(np.abs(arr(2, 3, 8, 8))))


def test_fractional_max_pool_output_is_window_max():
    fl.manual_seed(0)
    x = fl.randn(2, 3, 12, 10, requires_grad=True)
    out, idx = F.fractional_max_pool2d(x, 3, output_size=(5, 4), return_indices=True)
    assert tuple(out.shape) == (2, 3, 5, 4) and idx.dtype == fl.int64
    flat = x.detach().reshape(6, -1).numpy()
    np.testing.assert_array_equal(np.take_along_axis(flat, idx.reshape(6, -1).numpy(), 1),
                                  out.detach().reshape(6, -1).numpy())
    out.sum().backward()
    grad = x.grad.reshape(6, -1).numpy()
    counts = np.zeros_like(grad)
    for p, row in enumerate(idx.reshape(6, -1).numpy()):
        np.add.at(counts[p], row, 1)
    np.testing.assert_array_equal(grad, counts)
    samples = fl.rand(2, 3, 2)
    a = fl.nn.FractionalMaxPool2d(3, output_ratio=0.5, _random_samples=samples)(x)
    b = F.fractional_max_pool2d(x, 3, output_ratio=(0.5, 0.5), _random_samples=samples)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    assert tuple(a.shape) == (2, 3, 6, 5)
