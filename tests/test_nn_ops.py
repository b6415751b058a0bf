"""nn ops (softmax family, gumbel_softmax, norms, activations, scaled_dot_product_attention) against numpy."""
import math

import numpy as np
import pytest

import flowlike as fl
import flowlike.nn.functional as F

RNG = np.random.default_rng(0)


def t(a, requires_grad=False):
    x = fl.from_numpy(np.ascontiguousarray(a))
    return x.requires_grad_() if requires_grad else x


def np_softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# ---- softmax family ----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,dim", [((7,), 0), ((5, 33), 1), ((5, 33), 0), ((3, 4, 37), -1), ((3, 4, 37), 1),
                                       ((2, 1030), -1)])
def test_softmax_log_softmax_values(dtype, shape, dim):
    a = RNG.standard_normal(shape).astype(dtype) * 3
    ref = np_softmax(a.astype(np.float64), dim)
    tol = 1e-6 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(F.softmax(t(a), dim=dim).numpy(), ref, rtol=tol * 10, atol=tol)
    np.testing.assert_allclose(F.log_softmax(t(a), dim=dim).numpy(), np.log(ref), rtol=tol * 10, atol=tol * 10)
    np.testing.assert_allclose(F.softmin(t(a), dim=dim).numpy(), np_softmax(-a.astype(np.float64), dim),
                               rtol=tol * 10, atol=tol)
    assert F.softmax(t(a), dim).dtype == t(a).dtype


def test_softmax_huge_logits_stable():
    a = np.array([[1e4, 1e4 - 1, -1e4], [-1e30, 0.0, 1e30]], dtype=np.float32)
    y = F.softmax(t(a), dim=1).numpy()
    assert np.isfinite(y).all()
    np.testing.assert_allclose(y[0], np_softmax(a[0].astype(np.float64), 0), atol=1e-6)
    np.testing.assert_allclose(y[1], [0, 0, 1], atol=0)
    ly = F.log_softmax(t(a), dim=1).numpy()
    a0 = a[0].astype(np.float64)
    np.testing.assert_allclose(ly[0], a0 - (a0.max() + np.log(np.exp(a0 - a0.max()).sum())), rtol=1e-6)
    np.testing.assert_allclose(ly[1], [-2e30, -1e30, 0], rtol=1e-6)


def test_softmax_non_contiguous_and_dtype_argument():
    a = RNG.standard_normal((6, 8)).astype(np.float32)
    x = t(a).t()
    np.testing.assert_allclose(F.softmax(x, dim=1).numpy(), np_softmax(a.T.astype(np.float64), 1), atol=1e-6)
    y = F.softmax(t(a), dim=1, dtype=fl.float64)
    assert y.dtype == fl.float64
    np.testing.assert_allclose(y.numpy(), np_softmax(a.astype(np.float64), 1), atol=1e-12)


def test_softmax_method_toplevel_and_legacy_dim():
    a = RNG.standard_normal((3, 5)).astype(np.float32)
    np.testing.assert_allclose(fl.softmax(t(a), 1).numpy(), t(a).softmax(1).numpy())
    np.testing.assert_allclose(fl.log_softmax(t(a), 0).numpy(), t(a).log_softmax(0).numpy())
    with pytest.warns(UserWarning):
        y = F.softmax(t(a))  # legacy rule: dim 1 for 2-D input
    np.testing.assert_allclose(y.numpy(), np_softmax(a.astype(np.float64), 1), atol=1e-6)


def test_softmax_scalar_and_empty():
    assert F.softmax(fl.tensor(3.0), dim=0).item() == 1.0
    assert F.log_softmax(fl.tensor(3.0), dim=0).item() == 0.0
    assert tuple(F.softmax(fl.zeros(0, 4), dim=1).shape) == (0, 4)


def test_softmax_half_accumulates_in_float32():
    a = RNG.standard_normal((4, 300)).astype(np.float32)
    y = F.softmax(t(a).to(fl.float16), dim=1)
    assert y.dtype == fl.float16
    np.testing.assert_allclose(y.float().numpy(), np_softmax(a.astype(np.float64), 1), rtol=2e-3, atol=1e-5)
    yb = F.log_softmax(t(a).to(fl.bfloat16), dim=1)
    assert yb.dtype == fl.bfloat16


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dim", [0, 1])
def test_softmax_backward(log, dim):
    a = RNG.standard_normal((4, 70))
    w = RNG.standard_normal((4, 70))
    x = t(a, True)
    y = (F.log_softmax if log else F.softmax)(x, dim=dim)
    (y * t(w)).sum().backward()
    s = np_softmax(a, dim)
    ref = w - s * w.sum(axis=dim, keepdims=True) if log else s * (w - (w * s).sum(axis=dim, keepdims=True))
    np.testing.assert_allclose(x.grad.numpy(), ref, atol=1e-10)


def test_softmax_rejects_integers_and_bad_dim():
    with pytest.raises(RuntimeError):
        F.softmax(fl.tensor([1, 2, 3]), dim=0)
    with pytest.raises(IndexError):
        F.softmax(fl.zeros(2, 3), dim=2)


# ---- norms -----------------------------------------------------------------------------------

def np_layer_norm(x, k, w=None, b=None, eps=1e-5, rms=False):
    axes = tuple(range(x.ndim - k, x.ndim))
    mu = 0 if rms else x.mean(axis=axes, keepdims=True)
    var = (x * x).mean(axis=axes, keepdims=True) if rms else x.var(axis=axes, keepdims=True)
    y = (x - mu) / np.sqrt(var + eps)
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    return y


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_and_rms_norm_forward(dtype, affine):
    x = (RNG.standard_normal((6, 4, 70)) * 2 + 5).astype(dtype)
    w = RNG.standard_normal((4, 70)).astype(dtype) if affine else None
    b = RNG.standard_normal((4, 70)).astype(dtype) if affine else None
    tw, tb = (t(w), t(b)) if affine else (None, None)
    tol = 2e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(F.layer_norm(t(x), (4, 70), tw, tb).numpy(), np_layer_norm(x.astype(np.float64), 2, w, b),
                               rtol=tol, atol=tol)
    np.testing.assert_allclose(F.rms_norm(t(x), [70], None if w is None else t(w[0]), eps=1e-6).numpy(),
                               np_layer_norm(x.astype(np.float64), 1, None if w is None else w[0], eps=1e-6, rms=True),
                               rtol=tol, atol=tol)


def test_layer_norm_backward_matches_finite_differences():
    x = RNG.standard_normal((3, 8))
    w, b, g = RNG.standard_normal(8), RNG.standard_normal(8), RNG.standard_normal((3, 8))
    for rms in (False, True):
        tx, tw, tb = t(x, True), t(w, True), t(b, True)
        y = F.rms_norm(tx, [8], tw, eps=1e-5) if rms else F.layer_norm(tx, [8], tw, tb)
        (y * t(g)).sum().backward()

        def f(xx, ww, bb):
            return (np_layer_norm(xx, 1, ww, None if rms else bb, rms=rms) * g).sum()

        h = 1e-6
        for arr, grad in ((x, tx.grad), (w, tw.grad)) + (() if rms else ((b, tb.grad),)):
            num = np.zeros_like(arr)
            for i in np.ndindex(arr.shape):
                old = arr[i]
                arr[i] = old + h
                up = f(x, w, b)
                arr[i] = old - h
                down = f(x, w, b)
                arr[i] = old
                num[i] = (up - down) / (2 * h)
            np.testing.assert_allclose(grad.numpy(), num, rtol=1e-5, atol=1e-6)


def test_layer_norm_shape_errors():
    with pytest.raises(RuntimeError):
        F.layer_norm(fl.zeros(2, 3), [4])
    with pytest.raises(RuntimeError):
        F.layer_norm(fl.zeros(2, 3), [3], weight=fl.ones(4))


def test_group_norm_and_instance_norm():
    x = RNG.standard_normal((2, 6, 5, 3))
    w, b = RNG.standard_normal(6), RNG.standard_normal(6)
    y = F.group_norm(t(x), 3, t(w), t(b)).numpy()
    g = x.reshape(2, 3, -1)
    ref = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5)).reshape(x.shape)
    np.testing.assert_allclose(y, ref * w[:, None, None] + b[:, None, None], atol=1e-10)
    yi = F.instance_norm(t(x)).numpy()
    r = x.reshape(2, 6, -1)
    ref = ((r - r.mean(-1, keepdims=True)) / np.sqrt(r.var(-1, keepdims=True) + 1e-5)).reshape(x.shape)
    np.testing.assert_allclose(yi, ref, atol=1e-10)
    with pytest.raises(RuntimeError):
        F.group_norm(t(x), 4)


def test_batch_norm_training_updates_running_stats():
    x = RNG.standard_normal((8, 3, 4))
    rm, rv = fl.zeros(3, dtype=fl.float64), fl.ones(3, dtype=fl.float64)
    y = F.batch_norm(t(x), rm, rv, training=True, momentum=0.1).numpy()
    mu, var = x.mean(axis=(0, 2)), x.var(axis=(0, 2))
    np.testing.assert_allclose(y, (x - mu[None, :, None]) / np.sqrt(var[None, :, None] + 1e-5), atol=1e-10)
    np.testing.assert_allclose(rm.numpy(), 0.1 * mu, atol=1e-12)
    np.testing.assert_allclose(rv.numpy(), 0.9 + 0.1 * x.var(axis=(0, 2), ddof=1), atol=1e-12)
    ye = F.batch_norm(t(x), rm, rv, training=False).numpy()
    np.testing.assert_allclose(ye, (x - rm.numpy()[None, :, None]) / np.sqrt(rv.numpy()[None, :, None] + 1e-5), atol=1e-10)
    with pytest.raises(ValueError):
        F.batch_norm(fl.zeros(1, 3), None, None, training=True)


def test_local_response_norm_and_normalize():
    x = RNG.standard_normal((2, 7, 3))
    size, alpha, beta, k = 3, 1e-2, 0.75, 1.0
    sq = np.pad(x * x, ((0, 0), (size // 2, (size - 1) // 2), (0, 0)))
    avg = np.stack([sq[:, c:c + size].sum(1) / size for c in range(7)], 1)
    np.testing.assert_allclose(F.local_response_norm(t(x), size, alpha, beta, k).numpy(), x / (k + alpha * avg) ** beta,
                               atol=1e-12)
    np.testing.assert_allclose(F.normalize(t(x), dim=1).numpy(), x / np.linalg.norm(x, axis=1, keepdims=True), atol=1e-12)


# ---- activations ------------------------------------------------------------------------------

def _erf(v):
    return np.vectorize(math.erf)(v)


SIG = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
ACTS = {
    "relu": (F.relu, lambda v: np.maximum(v, 0)),
    "relu6": (F.relu6, lambda v: np.clip(v, 0, 6)),
    "leaky_relu": (lambda v: F.leaky_relu(v, 0.2), lambda v: np.where(v > 0, v, 0.2 * v)),
    "elu": (lambda v: F.elu(v, 1.5), lambda v: np.where(v > 0, v, 1.5 * np.expm1(v))),
    "selu": (F.selu, lambda v: 1.0507009873554805 * np.where(v > 0, v, 1.6732632423543772 * np.expm1(v))),
    "celu": (lambda v: F.celu(v, 2.0), lambda v: np.where(v > 0, v, 2.0 * np.expm1(v / 2.0))),
    "gelu": (F.gelu, lambda v: 0.5 * v * (1 + _erf(v / math.sqrt(2)))),
    "gelu_tanh": (lambda v: F.gelu(v, approximate="tanh"),
                  lambda v: 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3)))),
    "silu": (F.silu, lambda v: v * SIG(v)),
    "mish": (F.mish, lambda v: v * np.tanh(np.log1p(np.exp(v)))),
    "hardswish": (F.hardswish, lambda v: v * np.clip(v + 3, 0, 6) / 6),
    "hardsigmoid": (F.hardsigmoid, lambda v: np.clip(v + 3, 0, 6) / 6),
    "hardtanh": (lambda v: F.hardtanh(v, -0.5, 1.5), lambda v: np.clip(v, -0.5, 1.5)),
    "hardshrink": (F.hardshrink, lambda v: np.where(np.abs(v) > 0.5, v, 0)),
    "softshrink": (F.softshrink, lambda v: np.where(v > 0.5, v - 0.5, np.where(v < -0.5, v + 0.5, 0))),
    "softplus": (lambda v: F.softplus(v, 2.0, 3.0), lambda v: np.where(2 * v > 3, v, np.log1p(np.exp(2 * v)) / 2)),
    "softsign": (F.softsign, lambda v: v / (1 + np.abs(v))),
    "tanhshrink": (F.tanhshrink, lambda v: v - np.tanh(v)),
    "threshold": (lambda v: F.threshold(v, 0.3, -2.0), lambda v: np.where(v > 0.3, v, -2.0)),
    "logsigmoid": (F.logsigmoid, lambda v: np.log(SIG(v))),
    "glu": (F.glu, lambda v: v[..., :4] * SIG(v[..., 4:])),
    "sigmoid": (F.sigmoid, SIG),
    "tanh": (F.tanh, np.tanh),
}


@pytest.mark.parametrize("name", sorted(ACTS))
def test_activation_values_and_gradients(name):
    fn, ref = ACTS[name]
    a = RNG.standard_normal((5, 8)) * 3
    a[np.abs(np.abs(a) - 0.5) < 1e-3] += 0.01  # keep away from kinks
    np.testing.assert_allclose(fn(t(a.astype(np.float32))).numpy(), ref(a), rtol=1e-5, atol=1e-6)
    x = t(a, True)
    g = RNG.standard_normal(ref(a).shape)
    (fn(x) * t(g)).sum().backward()
    h = 1e-6
    num = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        up, down = a.copy(), a.copy()
        up[i] += h
        down[i] -= h
        num[i] = ((ref(up) - ref(down)) * g).sum() / (2 * h)
    np.testing.assert_allclose(x.grad.numpy(), num, rtol=1e-5, atol=1e-5)


def test_inplace_activations():
    a = RNG.standard_normal((4, 5)).astype(np.float32)
    x = t(a.copy())
    assert F.relu_(x) is x
    np.testing.assert_allclose(x.numpy(), np.maximum(a, 0))
    x = t(a.copy())
    F.elu(x, inplace=True)
    np.testing.assert_allclose(x.numpy(), np.where(a > 0, a, np.expm1(a)), rtol=1e-6)
    x = t(a.copy())
    F.leaky_relu_(x, 0.1)
    np.testing.assert_allclose(x.numpy(), np.where(a > 0, a, 0.1 * a), rtol=1e-6)
    # in-place on a non-leaf that takes part in autograd records the op
    w = t(a.astype(np.float64), True)
    y = w * 2
    F.relu_(y)
    y.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), np.where(a > 0, 2.0, 0.0))


def test_prelu_rrelu_and_integer_relu():
    a = RNG.standard_normal((2, 3, 4))
    w = np.array([0.1, 0.2, 0.3])
    np.testing.assert_allclose(F.prelu(t(a), t(w)).numpy(), np.where(a > 0, a, w[None, :, None] * a))
    np.testing.assert_allclose(F.rrelu(t(a)).numpy(), np.where(a >= 0, a, a * (1 / 8 + 1 / 3) / 2))
    fl.manual_seed(0)
    y = F.rrelu(t(a), training=True).numpy()
    neg = a < 0
    slope = y[neg] / a[neg]
    assert ((slope >= 1 / 8) & (slope <= 1 / 3)).all() and np.unique(slope).size > 1
    assert F.relu(fl.tensor([-1, 2])).tolist() == [0, 2]
    with pytest.raises(RuntimeError):
        F.prelu(t(a), fl.ones(2, dtype=fl.float64))
    with pytest.raises(RuntimeError):
        F.gelu(t(a), approximate="fast")


# ---- scaled_dot_product_attention ----------------------------------------------------------------

def np_attention(q, k, v, mask=None, causal=False, scale=None):
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    group = q.shape[-3] // k.shape[-3]
    k, v = np.repeat(k, group, axis=-3), np.repeat(v, group, axis=-3)
    s = q @ np.swapaxes(k, -1, -2) * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    if mask is not None:
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask
    return np_softmax(s, -1) @ v


@pytest.mark.parametrize("L,S", [(5, 5), (70, 130), (130, 70)])
@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_matches_reference(L, S, causal):
    q = RNG.standard_normal((2, 3, L, 16)).astype(np.float32)
    k = RNG.standard_normal((2, 3, S, 16)).astype(np.float32)
    v = RNG.standard_normal((2, 3, S, 24)).astype(np.float32)
    out = F.scaled_dot_product_attention(t(q), t(k), t(v), is_causal=causal)
    np.testing.assert_allclose(out.numpy(), np_attention(q, k, v, causal=causal), atol=2e-5)


def test_sdpa_masks_scale_and_gqa():
    q = RNG.standard_normal((2, 4, 9, 8))
    k = RNG.standard_normal((2, 2, 11, 8))
    v = RNG.standard_normal((2, 2, 11, 8))
    bmask = RNG.random((9, 11)) > 0.3
    bmask[:, 0] = True
    fmask = RNG.standard_normal((2, 1, 9, 11))
    out = F.scaled_dot_product_attention(t(q), t(k), t(v), attn_mask=t(bmask), scale=0.7, enable_gqa=True)
    np.testing.assert_allclose(out.numpy(), np_attention(q, k, v, bmask, scale=0.7), atol=1e-12)
    out = F.scaled_dot_product_attention(t(q), t(k), t(v), attn_mask=t(fmask), enable_gqa=True)
    np.testing.assert_allclose(out.numpy(), np_attention(q, k, v, fmask), atol=1e-12)
    with pytest.raises(RuntimeError):
        F.scaled_dot_product_attention(t(q), t(k), t(v))  # heads differ without enable_gqa
    with pytest.raises(RuntimeError):
        F.scaled_dot_product_attention(t(q), t(q), t(q), attn_mask=t(np.ones((9, 9), bool)), is_causal=True)


def test_sdpa_fully_masked_row_gives_zero():
    q, k, v = (RNG.standard_normal((1, 3, 4)) for _ in range(3))
    mask = np.ones((3, 3), bool)
    mask[1] = False
    out = F.scaled_dot_product_attention(t(q), t(k), t(v), attn_mask=t(mask)).numpy()
    assert (out[0, 1] == 0).all() and np.isfinite(out).all()


@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_backward(causal):
    q = RNG.standard_normal((2, 2, 70, 8))
    k = RNG.standard_normal((2, 1, 80, 8))
    v = RNG.standard_normal((2, 1, 80, 6))
    g = RNG.standard_normal((2, 2, 70, 6))
    tq, tk, tv = t(q, True), t(k, True), t(v, True)
    out = F.scaled_dot_product_attention(tq, tk, tv, is_causal=causal, enable_gqa=True)
    (out * t(g)).sum().backward()
    scale = 1 / math.sqrt(8)
    kk, vv = np.repeat(k, 2, 1), np.repeat(v, 2, 1)
    s = q @ np.swapaxes(kk, -1, -2) * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    p = np_softmax(s, -1)
    dv = (np.swapaxes(p, -1, -2) @ g).reshape(2, 1, 2, 80, 6).sum(2)
    dp = g @ np.swapaxes(vv, -1, -2)
    ds = p * (dp - (dp * p).sum(-1, keepdims=True))
    dq = ds @ kk * scale
    dk = (np.swapaxes(ds, -1, -2) @ q * scale).reshape(2, 1, 2, 80, 8).sum(2)
    np.testing.assert_allclose(tq.grad.numpy(), dq, atol=1e-10)
    np.testing.assert_allclose(tk.grad.numpy(), dk, atol=1e-10)
    np.testing.assert_allclose(tv.grad.numpy(), dv, atol=1e-10)


def test_sdpa_dropout_is_reproducible_and_scaled():
    q, k, v = (t(RNG.standard_normal((1, 1, 64, 8))) for _ in range(3))
    fl.manual_seed(3)
    a = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    fl.manual_seed(3)
    b = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    c = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert not np.array_equal(a.numpy(), c.numpy())
    # expectation over many draws approaches the dropout-free output
    ref = F.scaled_dot_product_attention(q, k, v).numpy()
    mean = np.mean([F.scaled_dot_product_attention(q, k, v, dropout_p=0.5).numpy() for _ in range(200)], 0)
    assert np.abs(mean - ref).mean() < 0.05


@pytest.mark.parametrize("name", ["elu", "selu", "celu", "gelu", "gelu_tanh", "silu", "mish", "softplus", "softsign",
                                  "tanhshrink", "logsigmoid", "hardswish"])
def test_activation_second_derivative(name):
    fn, ref = ACTS[name]
    a = RNG.standard_normal(40) * 2.5
    a[np.abs(np.abs(a) - 3) < 1e-2] += 0.05  # hardswish kinks
    x = t(a, True)
    g, = fl.autograd.grad(fn(x).sum(), x, create_graph=True)
    g.sum().backward()
    h = 1e-4
    np.testing.assert_allclose(x.grad.numpy(), (ref(a + h) - 2 * ref(a) + ref(a - h)) / h ** 2, rtol=1e-4, atol=1e-5)


def test_large_outputs_take_the_streaming_store_path():
    # over 8 MiB of float32 output: written with non-temporal stores; odd row length covers the
    # unaligned head and the tail of each row
    a = RNG.standard_normal((2101, 1031)).astype(np.float32)
    w = RNG.standard_normal((2101, 1031)).astype(np.float32)
    ref = np_softmax(a.astype(np.float64), 1)
    np.testing.assert_allclose(F.softmax(t(a), 1).numpy(), ref, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(F.log_softmax(t(a), 1).numpy(), np.log(ref), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(F.layer_norm(t(a), [1031]).numpy(), np_layer_norm(a.astype(np.float64), 1),
                               rtol=1e-4, atol=1e-5)
    x = t(a, True)
    (F.softmax(x, 1) * t(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), ref * (w - (w * ref).sum(1, keepdims=True)), rtol=1e-4, atol=1e-6)


def test_gumbel_softmax_hard_is_one_hot_with_soft_gradient():
    fl.manual_seed(1)
    logits = fl.randn(5, 4, requires_grad=True)
    y = F.gumbel_softmax(logits, tau=0.7, hard=True)
    np.testing.assert_array_equal(y.detach().numpy().sum(-1), np.ones(5))
    assert set(np.unique(y.detach().numpy())) == {0.0, 1.0}
    y.sum().backward()  # the one-hot sums to 1 per row: the soft sample's gradient of a constant is 0
    np.testing.assert_allclose(logits.grad.numpy(), 0, atol=1e-6)
