"""The losses of flowlike.nn.functional against numpy references (values and gradients)."""
import itertools
import math
import warnings

import numpy as np
import pytest

import flowlike
import flowlike.nn.functional as F

rng = np.random.RandomState(0)


def t(a, grad=False):
    x = flowlike.tensor(a)
    if grad:
        x.requires_grad_(True)
    return x


def log_softmax(x, axis):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def reduce_np(loss, reduction):
    return {"none": loss, "mean": loss.mean(), "sum": loss.sum()}[reduction]


# ---- cross_entropy / nll_loss ------------------------------------------------------------------

def ce_reference(x, target, weight=None, ignore_index=-100, reduction="mean", ls=0.0):
    """cross_entropy with class indices, class dim 1 (or 0 for 1-D input), in float64."""
    x = x.astype(np.float64)
    cdim = 0 if x.ndim == 1 else 1
    C = x.shape[cdim]
    logp = np.moveaxis(log_softmax(x, cdim), cdim, -1)  # positions..., C
    w = np.ones(C) if weight is None else weight.astype(np.float64)
    valid = target != ignore_index
    tc = np.where(valid, target, 0)
    lp_t = np.take_along_axis(logp, tc[..., None], -1)[..., 0]
    nll = np.where(valid, -w[tc] * lp_t, 0.0)
    smooth = np.where(valid, -(logp * w).sum(-1), 0.0)
    loss = (1 - ls) * nll + ls / C * smooth
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / np.where(valid, w[tc], 0.0).sum()


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("shape", [(5,), (8, 5), (3, 5, 4), (2, 5, 3, 2)])
def test_cross_entropy_matches_numpy(shape, reduction):
    x = rng.standard_normal(shape).astype(np.float32)
    tshape = () if len(shape) == 1 else (shape[0],) + shape[2:]
    target = rng.randint(0, 5, tshape)
    w = rng.uniform(0.2, 2.0, 5).astype(np.float32)
    if target.ndim:
        target.reshape(-1)[0] = 3
    for kw in [{}, dict(weight=w), dict(ignore_index=3), dict(weight=w, ignore_index=3, ls=0.3)]:
        ls = kw.pop("ls", 0.0)
        ref = ce_reference(x, target, kw.get("weight"), kw.get("ignore_index", -100), reduction, ls)
        fk = {k: (t(v) if isinstance(v, np.ndarray) else v) for k, v in kw.items()}
        out = F.cross_entropy(t(x), t(target), reduction=reduction, label_smoothing=ls, **fk)
        assert out.dtype == flowlike.float32 and tuple(out.shape) == np.shape(ref)
        np.testing.assert_allclose(out.numpy(), ref, rtol=1e-5, atol=1e-6)


def test_cross_entropy_gradient_is_softmax_minus_onehot():
    x = rng.standard_normal((6, 7))
    target = rng.randint(0, 7, 6)
    xt = t(x, grad=True)
    F.cross_entropy(xt, t(target), reduction="sum").backward()
    p = np.exp(log_softmax(x, 1))
    p[np.arange(6), target] -= 1
    np.testing.assert_allclose(xt.grad.numpy(), p, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("shape", [(6, 5), (3, 5, 4)])
def test_cross_entropy_gradient_numerical(shape):
    x = rng.standard_normal(shape)
    target = rng.randint(0, 5, (shape[0],) + shape[2:])
    target.reshape(-1)[1] = 2
    w = rng.uniform(0.5, 2.0, 5)
    kw = dict(weight=w, ignore_index=2, ls=0.2)
    xt = t(x, grad=True)
    F.cross_entropy(xt, t(target), weight=t(w), ignore_index=2, label_smoothing=0.2).backward()
    num = np.zeros_like(x)
    eps = 1e-6
    for idx in np.ndindex(*shape):
        xp, xm = x.copy(), x.copy()
        xp[idx] += eps
        xm[idx] -= eps
        num[idx] = (ce_reference(xp, target, **{"weight": w, "ignore_index": 2, "ls": 0.2}) -
                    ce_reference(xm, target, **{"weight": w, "ignore_index": 2, "ls": 0.2})) / (2 * eps)
    assert kw
    np.testing.assert_allclose(xt.grad.numpy(), num, rtol=1e-5, atol=1e-7)


def test_cross_entropy_large_logits_and_float64():
    x = np.array([[1e4, 0.0, -1e4], [5e3, 5e3 - 2.0, 0.0]], dtype=np.float32)
    out = F.cross_entropy(t(x), t(np.array([0, 1])), reduction="none")
    np.testing.assert_allclose(out.numpy(), [0.0, 2.0 + math.log1p(math.exp(-2.0))], rtol=1e-6, atol=1e-6)
    x64 = rng.standard_normal((4, 3))
    out = F.cross_entropy(t(x64), t(np.array([0, 1, 2, 0])))
    assert out.dtype == flowlike.float64
    np.testing.assert_allclose(out.item(), ce_reference(x64, np.array([0, 1, 2, 0])), rtol=1e-12)


def test_cross_entropy_probabilities():
    x = rng.standard_normal((4, 5)).astype(np.float32)
    p = rng.dirichlet(np.ones(5), 4).astype(np.float32)
    out = F.cross_entropy(t(x), t(p), reduction="none")
    np.testing.assert_allclose(out.numpy(), -(p * log_softmax(x.astype(np.float64), 1)).sum(1), rtol=1e-5)


def test_nll_loss_matches_numpy():
    logp = log_softmax(rng.standard_normal((6, 4)), 1)
    target = np.array([0, 3, 1, -100, 2, 3])
    w = rng.uniform(0.5, 2.0, 4)
    out = F.nll_loss(t(logp), t(target), weight=t(w))
    valid = target != -100
    tc = np.where(valid, target, 0)
    ref = -(w[tc] * logp[np.arange(6), tc])[valid].sum() / w[tc][valid].sum()
    np.testing.assert_allclose(out.item(), ref, rtol=1e-12)
    xt = t(logp, grad=True)
    F.nll_loss(xt, t(target), reduction="sum").backward()
    g = np.zeros_like(logp)
    g[np.arange(6)[valid], tc[valid]] = -1
    np.testing.assert_array_equal(xt.grad.numpy(), g)


def test_classification_errors():
    x = t(rng.standard_normal((3, 5)).astype(np.float32))
    with pytest.raises(IndexError, match="Target 5 is out of bounds."):
        F.cross_entropy(x, t(np.array([0, 1, 5])))
    with pytest.raises(IndexError, match="Target -1 is out of bounds."):
        F.nll_loss(x, t(np.array([0, -1, 2])))
    with pytest.raises(ValueError, match="foo is not a valid value for reduction"):
        F.cross_entropy(x, t(np.array([0, 1, 2])), reduction="foo")
    with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target batch_size \(2\)."):
        F.cross_entropy(x, t(np.array([0, 1])))
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got Int"):
        F.cross_entropy(x, t(np.array([0, 1, 2], dtype=np.int32)))
    with pytest.raises(RuntimeError, match="weight tensor should be defined either for all 5 classes"):
        F.nll_loss(x, t(np.array([0, 1, 2])), weight=t(np.ones(4, np.float32)))


def test_legacy_size_average_reduce():
    x = t(rng.standard_normal((3, 5)).astype(np.float32))
    target = t(np.array([0, 1, 2]))
    with pytest.warns(UserWarning, match="please use reduction='sum' instead"):
        s = F.cross_entropy(x, target, size_average=False)
    np.testing.assert_allclose(s.item(), F.cross_entropy(x, target, reduction="sum").item(), rtol=1e-6)
    with pytest.warns(UserWarning, match="please use reduction='none' instead"):
        assert F.nll_loss(x, target, reduce=False).shape == (3,)


# ---- binary cross entropies --------------------------------------------------------------------

def test_binary_cross_entropy():
    x = rng.uniform(0.01, 0.99, (4, 3))
    y = rng.uniform(0, 1, (4, 3))
    w = rng.uniform(0.5, 2, 3)
    xt = t(x, grad=True)
    out = F.binary_cross_entropy(xt, t(y), weight=t(w))
    ref = -(w * (y * np.log(x) + (1 - y) * np.log1p(-x)))
    np.testing.assert_allclose(out.item(), ref.mean(), rtol=1e-12)
    out.backward()
    np.testing.assert_allclose(xt.grad.numpy(), w * (x - y) / (x * (1 - x)) / x.size, rtol=1e-10)
    edge = F.binary_cross_entropy(t(np.array([0.0, 1.0])), t(np.array([1.0, 0.0])), reduction="none")
    np.testing.assert_array_equal(edge.numpy(), [100.0, 100.0])
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(t(np.array([1.5])), t(np.array([1.0])))


def test_binary_cross_entropy_with_logits_stable():
    x = np.array([-1e4, -30.0, -1.0, 0.0, 2.0, 40.0, 1e4])
    y = np.array([1.0, 0.0, 0.3, 0.5, 1.0, 0.0, 1.0])
    pw = 2.5
    xt = t(x, grad=True)
    out = F.binary_cross_entropy_with_logits(xt, t(y), pos_weight=t(np.array([pw])), reduction="none")
    softplus = lambda v: np.maximum(v, 0) + np.log1p(np.exp(-np.abs(v)))  # noqa: E731
    ref = pw * y * softplus(-x) + (1 - y) * softplus(x)
    np.testing.assert_allclose(out.detach().numpy(), ref, rtol=1e-12, atol=1e-12)  # PyTorch's form cancels at y = 0
    out.sum().backward()
    with np.errstate(over="ignore"):
        s = 1 / (1 + np.exp(-x))
    np.testing.assert_allclose(xt.grad.numpy(), (1 + (pw - 1) * y) * s - pw * y, rtol=1e-10, atol=1e-12)


def test_binary_cross_entropy_with_logits_double_backward():
    xt = t(np.array([0.3, -1.2]), grad=True)
    loss = F.binary_cross_entropy_with_logits(xt, t(np.array([1.0, 0.0])), reduction="sum")
    (g,) = flowlike.autograd.grad(loss, xt, create_graph=True)
    g.sum().backward()
    s = 1 / (1 + np.exp(-np.array([0.3, -1.2])))
    np.testing.assert_allclose(xt.grad.numpy(), s * (1 - s), rtol=1e-10)


# ---- regression and probabilistic losses -------------------------------------------------------

@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_regression_losses(reduction):
    x, y = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
    d = x - y
    z = np.abs(d)
    cases = {
        "mse_loss": ({}, d * d),
        "l1_loss": ({}, z),
        "smooth_l1_loss": (dict(beta=0.5), np.where(z < 0.5, 0.5 * d * d / 0.5, z - 0.25)),
        "huber_loss": (dict(delta=0.7), np.where(z < 0.7, 0.5 * d * d, 0.7 * (z - 0.35))),
    }
    for name, (kw, ref) in cases.items():
        out = getattr(F, name)(t(x), t(y), reduction=reduction, **kw)
        np.testing.assert_allclose(out.numpy(), reduce_np(ref, reduction), rtol=1e-12, err_msg=name)


def test_regression_warning_and_weight():
    with pytest.warns(UserWarning, match="that is different to the input size"):
        F.mse_loss(t(np.ones((3, 2))), t(np.ones(2)))
    x, y, w = rng.standard_normal(5), rng.standard_normal(5), rng.uniform(0.1, 1, 5)
    out = F.mse_loss(t(x), t(y), weight=t(w))
    np.testing.assert_allclose(out.item(), (w * (x - y) ** 2).sum() / w.sum(), rtol=1e-12)


def test_kl_div_poisson_gaussian():
    logq = log_softmax(rng.standard_normal((3, 4)), 1)
    p = np.exp(log_softmax(rng.standard_normal((3, 4)), 1))
    out = F.kl_div(t(logq), t(p), reduction="batchmean")
    np.testing.assert_allclose(out.item(), (p * (np.log(p) - logq)).sum() / 3, rtol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.kl_div(t(logq), t(np.log(p)), reduction="sum", log_target=True)
    x, y = rng.standard_normal(6), rng.poisson(3, 6).astype(np.float64)
    np.testing.assert_allclose(F.poisson_nll_loss(t(x), t(y)).item(), (np.exp(x) - y * x).mean(), rtol=1e-12)
    var = rng.uniform(0.5, 2, 6)
    ref = 0.5 * (np.log(var) + (x - y) ** 2 / var) + 0.5 * math.log(2 * math.pi)
    np.testing.assert_allclose(F.gaussian_nll_loss(t(x), t(y), t(var), full=True, reduction="sum").item(), ref.sum(),
                               rtol=1e-12)
    with pytest.raises(ValueError, match="var has negative entry"):
        F.gaussian_nll_loss(t(x), t(y), t(-var))


# ---- margin and embedding losses ---------------------------------------------------------------

def test_margin_losses_match_numpy():
    x = rng.standard_normal((4, 5))
    target = np.array([1, 4, 0, 2])
    C = 5
    xy = x[np.arange(4), target][:, None]
    z = np.maximum(0, 1 - xy + x)
    z[np.arange(4), target] = 0
    np.testing.assert_allclose(F.multi_margin_loss(t(x), t(target), reduction="none").numpy(), z.sum(1) / C, rtol=1e-12)
    mt = np.array([[1, 2, -1, 0, 0], [4, -1, 0, 0, 0], [0, 1, 2, 3, 4], [-1, 0, 0, 0, 0]])
    ref = []
    for n in range(4):
        labels = []
        for v in mt[n]:
            if v == -1:
                break
            labels.append(v)
        others = [i for i in range(C) if i not in labels]
        ref.append(sum(max(0, 1 - (x[n, j] - x[n, i])) for j in labels for i in others) / C)
    np.testing.assert_allclose(F.multilabel_margin_loss(t(x), t(mt), reduction="none").numpy(), ref, rtol=1e-12)
    y = np.where(rng.rand(4, 5) < 0.5, -1.0, 1.0)
    np.testing.assert_allclose(F.soft_margin_loss(t(x), t(y)).item(), np.log1p(np.exp(-x * y)).mean(), rtol=1e-12)
    np.testing.assert_allclose(F.hinge_embedding_loss(t(x), t(y), reduction="sum").item(),
                               np.where(y == 1, x, np.maximum(0, 1 - x)).sum(), rtol=1e-12)
    a, b = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
    cos = (a * b).sum(1) / np.sqrt(((a * a).sum(1) + 1e-12) * ((b * b).sum(1) + 1e-12))
    s = np.array([1.0, -1.0, 1.0, -1.0])
    np.testing.assert_allclose(F.cosine_embedding_loss(t(a), t(b), t(s), margin=0.1, reduction="none").numpy(),
                               np.where(s == 1, 1 - cos, np.maximum(0, cos - 0.1)), rtol=1e-12)
    n = rng.standard_normal((4, 5))
    dp = np.linalg.norm(a - b + 1e-6, axis=1)
    dn = np.linalg.norm(a - n + 1e-6, axis=1)
    np.testing.assert_allclose(F.triplet_margin_loss(t(a), t(b), t(n), margin=2.0, reduction="none").numpy(),
                               np.maximum(0, 2.0 + dp - dn), rtol=1e-12)
    with pytest.raises(RuntimeError, match="target out of range"):
        F.multi_margin_loss(t(x), t(np.array([1, 5, 0, 0])))


# ---- CTC against brute-force enumeration of alignments -----------------------------------------

def ctc_brute_force(lp, target, blank=0):
    """-log of the total probability of all alignments of length T collapsing to target."""
    T, C = lp.shape
    total = 0.0
    for path in itertools.product(range(C), repeat=T):
        collapsed = [c for i, c in enumerate(path) if c != blank and (i == 0 or path[i - 1] != c)]
        if collapsed == list(target):
            total += np.exp(sum(lp[i, c] for i, c in enumerate(path)))
    return -np.log(total)


def test_ctc_loss_matches_brute_force_and_its_gradient():
    T, C = 5, 3
    logits = rng.standard_normal((T, 2, C))
    lp = log_softmax(logits, 2)
    targets = np.array([[1, 1], [2, 0]])
    il, tl = [5, 4], [2, 1]
    lpt = t(lp, grad=True)
    out = F.ctc_loss(lpt, t(targets), il, tl, reduction="none")
    ref = [ctc_brute_force(lp[:5, 0], [1, 1]), ctc_brute_force(lp[:4, 1], [2])]
    np.testing.assert_allclose(out.detach().numpy(), ref, rtol=1e-10)
    out.sum().backward()
    # PyTorch's gradient is exp(log_probs) + d(nll)/d(log_probs) over the valid frames, 0 past them
    eps = 1e-6
    for b, (length, tgt) in enumerate([(5, [1, 1]), (4, [2])]):
        num = np.zeros((T, C))
        for i in range(length):
            for c in range(C):
                p, m = lp[:length, b].copy(), lp[:length, b].copy()
                p[i, c] += eps
                m[i, c] -= eps
                num[i, c] = (ctc_brute_force(p, tgt) - ctc_brute_force(m, tgt)) / (2 * eps)
        expected = num + np.where(np.arange(T)[:, None] < length, np.exp(lp[:, b]), 0.0)
        np.testing.assert_allclose(lpt.grad.numpy()[:, b], expected, rtol=1e-5, atol=1e-7)


def test_ctc_loss_reductions_and_zero_infinity():
    lp = log_softmax(rng.standard_normal((4, 2, 3)), 2).astype(np.float32)
    targets = np.array([[1, 2, 1], [1, 1, 1]])
    per = F.ctc_loss(t(lp), t(targets), [4, 4], [3, 3], reduction="none").numpy()
    assert np.isfinite(per[0]) and per[1] == np.inf  # 1,1,1 needs 5 frames
    zi = F.ctc_loss(t(lp), t(targets), [4, 4], [3, 3], reduction="none", zero_infinity=True).numpy()
    np.testing.assert_array_equal(zi, [per[0], 0.0])
    mean = F.ctc_loss(t(lp), t(targets), [4, 4], [3, 3], zero_infinity=True).item()
    np.testing.assert_allclose(mean, (per[0] / 3 + 0.0) / 2, rtol=1e-6)
    with pytest.raises(RuntimeError, match="blank must be in label range"):
        F.ctc_loss(t(lp), t(targets), [4, 4], [3, 3], blank=3)
