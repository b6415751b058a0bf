"""Gradients of flowlike ops against torch 2.13, from identical inputs."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402

CASES = {
    "pointwise_chain": lambda m, x: (x * 2 + 1).exp().sin() / (x.abs() + 1),
    "broadcast_binary": lambda m, x: x * x[:1] + x[:, :1] ** 2,
    "unary_family": lambda m, x: m.tanh(x) + m.sigmoid(x) + m.atan(x) + m.erf(x) + m.log1p(x.abs()) + m.sqrt(x.abs() + 1),
    "binary_family": lambda m, x: m.maximum(x, x.flip(1)) + m.atan2(x, x + 3) + m.pow(x.abs() + 1, x) + m.hypot(x, x + 1),
    "division_and_remainder": lambda m, x: x / (x.abs() + 1) + m.remainder(x, 0.7) + m.logaddexp(x, -x),
    "basic_indexing": lambda m, x: x[1:, ::2] * 3,
    "advanced_indexing": lambda m, x: x[[0, 2, 2]] * 3,
    "views": lambda m, x: x.reshape(2, 6).permute(1, 0).unsqueeze(0).squeeze(0).t() ** 2,
    "expand": lambda m, x: x.expand(2, 3, 4) * 1.5,
    "cat_repeat": lambda m, x: m.cat([x, x * 2], 1).repeat(2, 1) ** 2,
    "select_flip_roll_tril": lambda m, x: x.flip(0).roll(1, 1).tril() + x.select(1, 2).unsqueeze(1),
    "where_gather_index_select": lambda m, x: m.where(x > 0, x, x * x)
    + m.gather(x, 1, m.tensor([[0, 0, 1, 1], [1, 2, 2, 2], [3, 3, 0, 0]]))
    + m.index_select(x, 1, m.tensor([0, 0, 3, 1])),
    "masked_select": lambda m, x: m.masked_select(x, x > 0) * 2,
    "inplace_on_non_leaf": lambda m, x: (x * 1).mul_(x).add_(1),
    "sum_mean": lambda m, x: x.sum(1, keepdim=True) * x.mean(0) + x.sum() * x,
    "amax_amin": lambda m, x: m.amax(m.cat([x, x], 1), 1) + m.amin(x, 0).sum(),
    "logsumexp": lambda m, x: m.logsumexp(x * 3, 1),
    "prod_with_zero": lambda m, x: m.prod(m.where(x > 1.0, m.zeros_like(x), x), 1),
    "max_min_dim": lambda m, x: x.max(1).values + x.min(0, keepdim=True).values.sum(),
    "cumsum": lambda m, x: x.cumsum(1) * x.cumsum(0),
    "norm": lambda m, x: m.norm(x) * x + x.norm(p=3, dim=1, keepdim=True) + x.norm(p=float("inf"), dim=0),
    "var_std": lambda m, x: x.var(1) + x.std(0).sum() + m.var_mean(x, 1)[1],
    "softmax_by_hand": lambda m, x: (x - m.logsumexp(x, 1, keepdim=True)).exp(),
    "sort_topk": lambda m, x: x.sort(1, descending=True).values * m.arange(4.0) + x.topk(2, dim=0).values.sum(),
    "kthvalue_median_mode": lambda m, x: x.kthvalue(2, 1).values + x.median(1).values + m.mode(x.round(), 1).values,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients_match_torch(name):
    a = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    x = fl.from_numpy(a.copy()).requires_grad_()
    tx = torch.from_numpy(a.copy()).requires_grad_()
    y, ty = CASES[name](fl, x), CASES[name](torch, tx)
    gy = np.random.default_rng(1).standard_normal(tuple(ty.shape)).astype(np.float32)
    y.backward(fl.from_numpy(gy.copy()))
    ty.backward(torch.from_numpy(gy.copy()))
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-5)
    assert y.grad_fn.name() == ty.grad_fn.name()


def test_double_backward_matches_torch():
    a = np.array([0.5, -1.5, 2.0], dtype=np.float32)
    results = []
    for m in (fl, torch):
        x = m.tensor(a, requires_grad=True)
        y = (x * x * x + x.sin()) * 2
        (g,) = m.autograd.grad(y, x, m.ones(3), create_graph=True)
        (gg,) = m.autograd.grad(g, x, m.ones(3))
        results.append((g.detach().numpy(), gg.numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-5)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-5)


@pytest.mark.parametrize("case", ["leaf_inplace", "version_counter", "backward_twice", "non_scalar", "no_grad_output"])
def test_autograd_errors_match_torch(case):
    def run(m):
        x = m.ones(3, requires_grad=True)
        if case == "leaf_inplace":
            x.add_(1)
        elif case == "version_counter":
            y = x.exp()
            y.add_(1)
            y.backward(m.ones(3))
        elif case == "backward_twice":
            y = (x * x).exp()
            y.backward(m.ones(3))
            y.backward(m.ones(3))
        elif case == "non_scalar":
            (x * 2).backward()
        else:
            m.ones(3).backward(m.ones(3))

    def kind(m):
        try:
            run(m)
        except Exception as e:  # noqa: BLE001
            return type(e)
        return None

    assert kind(torch) is not None
    assert kind(fl) is kind(torch)


SCAN_X = np.random.default_rng(11).standard_normal((3, 5))
SCAN_X[1, 2] = SCAN_X[2, 0] = SCAN_X[2, 3] = 0.0  # zeros: cumprod's exact rule
SCAN_NAN = SCAN_X.copy()
SCAN_NAN[0, 1] = np.nan


@pytest.mark.parametrize("name,fn,data", [
    ("cumprod_dim1", lambda m, t: m.cumprod(t, 1), SCAN_X), ("cumprod_dim0", lambda m, t: m.cumprod(t, 0), SCAN_X),
    ("logcumsumexp", lambda m, t: m.logcumsumexp(t, 1), SCAN_X * 30),
    ("cummax", lambda m, t: m.cummax(t, 1).values, SCAN_X), ("cummin", lambda m, t: m.cummin(t, 0).values, SCAN_X),
    ("nanmean", lambda m, t: m.nanmean(t, 1), SCAN_NAN), ("nanmean_all", lambda m, t: m.nanmean(t), SCAN_NAN),
])
def test_scan_and_nan_reduction_gradients(name, fn, data):
    grads = []
    for m in (torch, fl):
        t = m.tensor(data, requires_grad=True)
        y = fn(m, t)
        w = m.tensor(np.random.default_rng(1).standard_normal(tuple(y.shape)))
        (y * w).sum().backward()
        grads.append(t.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6, atol=1e-9)


def test_cumprod_double_backward_without_zeros():
    x = fl.tensor(np.random.default_rng(2).standard_normal((2, 4)), requires_grad=True)
    assert fl.autograd.gradgradcheck(lambda a: a.cumprod(1), (x,))


@pytest.mark.parametrize("name,fn", [
    ("broadcast_sum", lambda t: (t.sum(-1, keepdim=True) * t).pow(2).sum()),
    ("slices_and_select", lambda t: ((t[1:, 1:3] * t[1:, :2]).pow(2).sum(0) + t[0, :2] * t.diagonal().sum()).sum()),
    ("transposed_slice", lambda t: (t.t()[1:] * 2).exp().sum()),
])
def test_double_backward_through_broadcasting_and_views(name, fn):
    a = np.random.default_rng(4).standard_normal((3, 4))
    grads = []
    for m in (torch, fl):
        x = m.tensor(a, requires_grad=True)
        (g,) = m.autograd.grad(fn(x), x, create_graph=True)
        (g * g).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6, atol=1e-9)
