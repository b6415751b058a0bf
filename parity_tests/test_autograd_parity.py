"""Gradients of flowlike ops against torch 2.13, from identical inputs."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402
from helpers import assert_raises_same, assert_same, check_both, float_outputs, leaf, outcome_type, run_both  # noqa: E402

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
    ty, y = check_both(CASES[name], a, grad=True, rtol=1e-5, atol=1e-6, grad_rtol=1e-5, grad_atol=1e-5)
    assert y.grad_fn.name() == ty.grad_fn.name()


def test_double_backward_matches_torch():
    def body(m):
        x = leaf(m, [0.5, -1.5, 2.0], "float32")
        y = (x * x * x + x.sin()) * 2
        (g,) = m.autograd.grad(y, x, m.ones(3), create_graph=True)
        (gg,) = m.autograd.grad(g, x, m.ones(3))
        return g.detach(), gg
    check_both(body, rtol=1e-5, atol=0)


@pytest.mark.parametrize("case", ["leaf_inplace", "version_counter", "backward_twice", "non_scalar", "no_grad_output",
                                  "saved_operand_written"])
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
        elif case == "saved_operand_written":
            y = x * 1
            z = (y * 2 + 3 - y / 4) * y  # only the last product saves y
            y.add_(1)
            z.sum().backward()
        else:
            m.ones(3).backward(m.ones(3))

    assert_raises_same(run)


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
    def body(m):
        t = m.tensor(data, requires_grad=True)
        y = fn(m, t)
        w = m.tensor(np.random.default_rng(1).standard_normal(tuple(y.shape)))
        (y * w).sum().backward()
        return t.grad.numpy()
    grads = run_both(body)
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

    def body(m):
        x = m.tensor(a, requires_grad=True)
        (g,) = m.autograd.grad(fn(x), x, create_graph=True)
        (g * g).sum().backward()
        return x.grad.numpy()
    grads = run_both(body)
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6, atol=1e-9)


# ---- gradcheck and gradgradcheck over the op database ------------------------------------------------------------
# Every differentiable entry of opdb (the UNARY/BINARY tables and the OpInfo entries) is checked in float64: first
# derivatives against finite differences (gradcheck) and second derivatives likewise (gradgradcheck). Inputs with many
# elements are checked along random directions instead (the same finite differences, one per check), which keeps the
# suite fast whatever the sample shapes.

from opdb import BINARY, DATABASE, UNARY, _DOMAINS  # noqa: E402

_FULL_CHECK_NUMEL = 40  # up to this many input elements: full Jacobians (gradcheck/gradgradcheck)


def _grad_entries():
    entries = []
    for name, (dtypes, domain, _) in sorted(UNARY.items()):
        if "float64" in dtypes:
            entries.append((f"unary.{name}", lambda m, x, n=name: getattr(m, n)(x), [(2, 3)], domain))
    for name, (dtypes, domain) in sorted(BINARY.items()):
        if "float64" in dtypes:
            entries.append((f"binary.{name}", lambda m, x, y, n=name: getattr(m, n)(x, y), [(2, 3), (3,)], domain))
    for op in DATABASE:
        if op.grad and op.grad_inputs != ():
            entries.append((f"op.{op.id}", op, None, None))
    return entries


def _grad_samples(entry):
    """(fn(lib, *inputs), [float64 numpy inputs]) for each sample of an entry."""
    name, fn, shapes, domain = entry
    if shapes is not None:
        lo, hi = _DOMAINS[domain]
        rng = np.random.default_rng(0)
        return [(fn, [rng.uniform(lo, hi, s) for s in shapes])]
    return [(lambda m, *a: fn.call(m, *a), [t.numpy() for t in inputs]) for _, inputs in fn.samples(torch, "float64")]


def _directional_check(fn, inputs, eps=1e-6):
    """<u, J v> from one backward against the central difference of <u, f> along v, for random u and v."""
    rng = np.random.default_rng(7)
    outs = float_outputs(fn(*inputs))
    us = [fl.tensor(rng.standard_normal(tuple(o.shape))) for o in outs]
    # directions only along the inputs the op is differentiated in (the others stay constant)
    vs = [fl.tensor(rng.standard_normal(tuple(x.shape)) if x.requires_grad else np.zeros(tuple(x.shape)))
          for x in inputs]
    wrt = [(x, v) for x, v in zip(inputs, vs) if x.requires_grad]
    grads = fl.autograd.grad(outs, [x for x, _ in wrt], us, allow_unused=True)
    analytical = sum(float((g * v).sum()) for g, (_, v) in zip(grads, wrt) if g is not None)

    def projected(sign):
        with fl.no_grad():
            moved = [x + sign * eps * v for x, v in zip(inputs, vs)]
        outs = float_outputs(fn(*[m.requires_grad_(x.requires_grad) for m, x in zip(moved, inputs)]))
        return sum(float((o.detach() * u).sum()) for o, u in zip(outs, us))
    numerical = (projected(1) - projected(-1)) / (2 * eps)
    assert abs(analytical - numerical) <= 1e-5 + 1e-3 * abs(numerical), (analytical, numerical)


def _first_grads(fn, n):
    """(inputs..., grad_outputs...) -> the gradients of fn's float outputs, with create_graph: its derivatives are
    fn's second derivatives."""
    def grads(*args):
        outs = float_outputs(fn(*args[:n]))
        wrt = [x for x in args[:n] if x.requires_grad]
        return tuple(g for g in fl.autograd.grad(outs, wrt, args[n:n + len(outs)], create_graph=True,
                                                 allow_unused=True) if g is not None)
    return grads


def _torch_backward_raises(fn, arrays):
    inputs = [torch.tensor(a, requires_grad=True) for a in arrays]
    outs = float_outputs(fn(torch, *inputs))
    try:
        torch.autograd.grad(outs, inputs, [torch.ones_like(o) for o in outs], allow_unused=True)
    except RuntimeError:
        return True
    return False


@pytest.mark.parametrize("entry", _grad_entries(), ids=lambda e: e[0])
def test_gradcheck_and_gradgradcheck_over_opdb(entry):
    op = entry[1] if entry[2] is None else None
    differentiable = op.grad_inputs if op is not None and op.grad_inputs is not None else None
    check_second = op is None or op.gradgrad
    for fn, arrays in _grad_samples(entry):
        inputs = [fl.tensor(a.copy(), dtype=fl.float64, requires_grad=differentiable is None or i in differentiable)
                  for i, a in enumerate(arrays)]
        call = lambda *a, fn=fn: fn(fl, *a)  # noqa: E731
        outs = float_outputs(call(*inputs))
        if not outs:
            continue
        if _torch_backward_raises(fn, arrays):  # no derivative in torch either (heaviside): the same refusal
            with pytest.raises(RuntimeError, match="derivative for .* is not implemented"):
                fl.autograd.grad(outs, inputs, [fl.ones_like(o) for o in outs], allow_unused=True)
            continue
        rng = np.random.default_rng(3)
        grad_outputs = [fl.tensor(rng.standard_normal(tuple(o.shape)), requires_grad=True) for o in outs]
        if sum(a.size for a in arrays) <= _FULL_CHECK_NUMEL:
            assert fl.autograd.gradcheck(call, inputs)
            if check_second:
                assert fl.autograd.gradgradcheck(call, inputs, grad_outputs)
        else:
            _directional_check(call, inputs)
            if check_second:
                _directional_check(_first_grads(call, len(inputs)), inputs + grad_outputs)


# ---- quantile, logcumsumexp's double backward, views of a base written in place ------------------------------------

QX = np.random.default_rng(21).standard_normal((4, 7))
QX_NAN = QX.copy()
QX_NAN[1, 3] = QX_NAN[2, 0] = QX_NAN[2, 5] = np.nan


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
@pytest.mark.parametrize("name,kwargs,data", [
    ("quantile", dict(dim=1), QX), ("quantile", dict(dim=0, keepdim=True), QX), ("quantile", dict(), QX),
    ("quantile", dict(dim=1), QX_NAN), ("nanquantile", dict(dim=1), QX_NAN), ("nanquantile", dict(), QX_NAN),
])
def test_quantile_gradients_match_torch(name, kwargs, data, interpolation):
    q = [0.0, 0.25, 0.5, 0.9, 1.0]

    def body(m):
        x = m.tensor(data, requires_grad=True)
        qt = m.tensor(q, dtype=x.dtype, requires_grad=True)
        y = getattr(m, name)(x, qt, interpolation=interpolation, **kwargs)
        w = m.tensor(np.random.default_rng(1).standard_normal(tuple(y.shape)))
        (y.nan_to_num() * w).sum().backward()
        return (x.grad.numpy(), None if qt.grad is None else qt.grad.numpy())
    grads = run_both(body)
    np.testing.assert_allclose(grads[1][0], grads[0][0], rtol=1e-9, atol=1e-12)
    assert (grads[1][1] is None) == (grads[0][1] is None)  # q's gradient: linear interpolation only
    if grads[0][1] is not None:
        np.testing.assert_allclose(grads[1][1], grads[0][1], rtol=1e-9, atol=1e-12)


def test_quantile_double_backward_matches_torch():
    x0, q0 = np.random.default_rng(5).standard_normal((3, 6)), np.array([0.2, 0.65])

    def body(m):
        x, q = m.tensor(x0, requires_grad=True), m.tensor(q0, requires_grad=True)
        y = m.quantile(x, q.sigmoid(), dim=1)
        gx, gq = m.autograd.grad((y * y).sum(), (x, q), create_graph=True)
        return [g.detach().numpy() for g in (gx, gq, *m.autograd.grad((gx * gx).sum() + gq.sum(), (x, q)))]
    results = run_both(body)
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    x = fl.tensor(x0, requires_grad=True)
    assert fl.autograd.gradcheck(lambda t: fl.quantile(t, fl.tensor([0.3, 0.8], dtype=fl.float64), dim=0), (x,))
    assert fl.autograd.gradgradcheck(lambda t: fl.nanquantile(t, 0.4, dim=1), (x,))


def test_logcumsumexp_double_backward_matches_torch():
    a = np.random.default_rng(6).standard_normal((3, 5)) * 4

    def body(m):
        x = m.tensor(a, requires_grad=True)
        y = m.logcumsumexp(x, 1)
        (g,) = m.autograd.grad(y, x, m.tensor(np.linspace(-1, 1, 15).reshape(3, 5)), create_graph=True)
        assert g.grad_fn is not None
        (gg,) = m.autograd.grad((g * g).sum(), x)
        return (g.detach().numpy(), gg.numpy())
    results = run_both(body)
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-9, atol=1e-12)
    assert fl.autograd.gradgradcheck(lambda t: fl.logcumsumexp(t, 0), (fl.tensor(a[:, :3] / 4, requires_grad=True),))


def _base_written_after_view(m, case):
    a = m.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    b = a.clone()
    if case == "select_then_base_mul":
        v = b[0]
        b.mul_(2)
    elif case == "slice_then_write_through_other_view":
        v = b[:, 1:]
        b[:, 1].mul_(5)
    elif case == "transposed_view_then_base_add":
        v = b.t()[1:]
        b.add_(b.detach() * 3)
    elif case == "view_read_between_two_writes":
        v = b[0]
        b.mul_(2)
        y1 = v * 1  # saves only the 1: the next write into b is fine
        b.add_(1)
        return a, v, y1 * v
    elif case == "stale_view_written_in_place":
        v = b[1]
        b.mul_(2)
        v.add_(a[2])  # v's old history must be the regenerated one: b's, after mul_
        return a, b, b * b
    else:  # a view made from the base under no_grad writes: regenerated, same gradient
        v = b.narrow(0, 1, 2)
        with m.no_grad():
            b.mul_(3)
    return a, v, v * v


@pytest.mark.parametrize("case", ["select_then_base_mul", "slice_then_write_through_other_view",
                                  "transposed_view_then_base_add", "view_read_between_two_writes",
                                  "stale_view_written_in_place", "no_grad_write"])
def test_view_of_a_base_written_in_place_regenerates_its_grad_fn(case):
    def body(m):
        a, v, y = _base_written_after_view(m, case)
        name = v.grad_fn.name()
        y.sum().backward()
        return (name, a.grad.numpy(), v.detach().numpy())
    results = run_both(body)
    assert results[1][0] == results[0][0]
    np.testing.assert_allclose(results[1][1], results[0][1])
    np.testing.assert_allclose(results[1][2], results[0][2])



@pytest.mark.parametrize("write", ["copy_", "fill_tensor", "fill_number", "zero_", "setitem_view"])
def test_overwritten_values_get_zero_gradients_as_torch(write):
    def body(m):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        v = m.tensor(2.5, requires_grad=True)
        y = x * 2
        if write == "copy_":
            y.copy_(v * 3)
        elif write == "fill_tensor":
            y.fill_(v)
        elif write == "fill_number":
            y.fill_(4.0)
        elif write == "zero_":
            y.zero_()
        else:
            y[1:] = v
        (y * m.tensor([1.0, 2.0, 3.0])).sum().backward()
        return (y.grad_fn.name(), x.grad.numpy(), None if v.grad is None else v.grad.numpy())
    results = run_both(body)
    assert results[1][0] == results[0][0]
    np.testing.assert_allclose(results[1][1], results[0][1])
    assert (results[1][2] is None) == (results[0][2] is None)
    if results[0][2] is not None:
        np.testing.assert_allclose(results[1][2], results[0][2])


@pytest.mark.parametrize("index", [
    0, (0, 1), (slice(1, None),), (slice(None), 1), (0, slice(1, None)), (slice(1, None), 0), (None,),
    (slice(None), None), (Ellipsis, 0), (Ellipsis,), (slice(None),), (slice(None, None, 2),), (None, 0),
    (1, slice(None), None), (True,), ([0, 2],),
], ids=repr)
def test_basic_indexing_grad_fn_names_match_torch(index):
    def body(m):
        x = leaf(m, np.arange(60.0).reshape(3, 4, 5))
        v = (x * 1)[index]
        (v * v).sum().backward()
        return v.grad_fn.name(), x.grad
    check_both(body, rtol=1e-7, atol=0)


def _attention_by_hand(q, k, v, mask, is_causal, scale):
    """torch's math path written out (torch's fused CPU kernel has no double backward to compare with)."""
    if k.shape[-3] != q.shape[-3]:
        k = k.repeat_interleave(q.shape[-3] // k.shape[-3], -3)
        v = v.repeat_interleave(q.shape[-3] // v.shape[-3], -3)
    s = q @ k.transpose(-1, -2) * (scale if scale is not None else q.shape[-1] ** -0.5)
    if is_causal:
        s = s.masked_fill(~torch.ones(s.shape[-2], s.shape[-1], dtype=torch.bool).tril(), float("-inf"))
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf")) if mask.dtype == torch.bool else s + mask
    return s.softmax(-1) @ v


@pytest.mark.parametrize("case", ["causal", "bool_mask", "float_mask_with_grad", "gqa", "scale_and_broadcast"])
def test_attention_double_backward_matches_math_path(case):
    rng = np.random.default_rng(8)
    qs, ks = ((2, 4, 3, 5), (2, 2, 4, 5)) if case == "gqa" else ((1, 2, 3, 5), (2, 1, 4, 5)) \
        if case == "scale_and_broadcast" else ((2, 2, 3, 5), (2, 2, 4, 5))
    arrays = [rng.standard_normal(qs), rng.standard_normal(ks), rng.standard_normal(ks)]
    mask_np = rng.standard_normal((3, 4)) if case == "float_mask_with_grad" else rng.random((3, 4)) > 0.3
    mask_np[:, 0] = True if mask_np.dtype == bool else mask_np[:, 0]
    kw = dict(is_causal=case == "causal", scale=0.7 if case == "scale_and_broadcast" else None)
    go_np = None

    def body(m):
        nonlocal go_np
        q, k, v = (m.tensor(a, requires_grad=True) for a in arrays)
        mask = None
        if case in ("bool_mask", "float_mask_with_grad"):
            mask = m.tensor(mask_np, requires_grad=mask_np.dtype != bool)
        inputs = [q, k, v] + ([mask] if mask is not None and mask.requires_grad else [])
        if m is torch:
            out = _attention_by_hand(q, k, v, mask, **kw)
        else:
            out = m.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=case == "gqa", **kw)
        go_np = rng.standard_normal(tuple(out.shape)) if go_np is None else go_np  # one draw for both
        go = m.tensor(go_np)
        grads = m.autograd.grad(out, inputs, go, create_graph=True)
        penalty = sum((g * g).sum() for g in grads)
        second = m.autograd.grad(penalty, inputs)
        return [g.detach() for g in grads] + list(second)
    want, got = run_both(body)
    assert_same(got, want, rtol=1e-7, atol=1e-10)


# ---- pointwise gradients at the edges: zeros, ties, infinities, NaN, values whose square underflows ---------------

EDGES = np.array([0.0, -0.0, 1.0, -1.0, 0.5, 2.0, np.inf, -np.inf, np.nan, 1e-300, -3.0, 3.0])


def _pointwise_grads(m, name, arrays):
    """The gradients of name(*arrays) for a gradient of ones (the values themselves may differ at NaN)."""
    xs = [leaf(m, a) for a in arrays]
    y = getattr(m, name)(*xs)
    y.backward(m.ones_like(y))
    return [x.grad for x in xs]


@pytest.mark.parametrize("name", sorted(n for n, (dts, _, _) in UNARY.items() if "float64" in dts
                                        and n not in ("bitwise_not", "logical_not", "isnan", "isinf", "isfinite",
                                                      "isposinf", "isneginf", "signbit")))
def test_unary_gradients_at_edge_values_match_torch(name):
    # (abs: torch's sign(nan) is 0, flowlike's NaN, so abs's gradient at NaN differs)
    arrays = [EDGES[~np.isnan(EDGES)] if name == "abs" else EDGES]
    with np.errstate(all="ignore"):
        want, got = run_both(_pointwise_grads, name, arrays)
    assert_same(got, want, rtol=1e-6, atol=0)


_NO_DERIVATIVE = ("heaviside", "bitwise_and", "bitwise_or", "bitwise_xor", "eq", "ne", "lt", "le", "gt", "ge",
                  "logical_and", "logical_or", "logical_xor")


@pytest.mark.parametrize("name", sorted(n for n, (dts, _) in BINARY.items() if "float64" in dts and n not in _NO_DERIVATIVE))
def test_binary_gradients_at_edge_values_match_torch(name):
    a, b = (g.ravel() for g in np.meshgrid(EDGES, EDGES))
    with np.errstate(all="ignore"):
        want, got = run_both(_pointwise_grads, name, [a, b])
    assert_same(got, want, rtol=1e-6, atol=0)


@pytest.mark.parametrize("bounds", ["numbers", "tensors", "min_above_max", "min_only", "max_only"])
def test_clamp_gradients_at_ties_match_torch(bounds):
    x0 = np.array([0.1, 0.5, 1.0, 2.0, -3.0])
    lo0, hi0 = np.array([0.1, 0.6, 0.0, 0.0, -3.0]), np.array([1.0, 1.0, 1.0, 2.0, 0.0])

    def body(m):
        x, lo, hi = (m.tensor(a, requires_grad=True) for a in (x0, lo0, hi0))
        if bounds == "numbers":
            y = x.clamp(0.1, 1.0)
        elif bounds == "tensors":
            y = m.clamp(x, lo, hi)
        elif bounds == "min_above_max":
            y = m.clamp(x, hi + 1, hi)
        elif bounds == "min_only":
            y = m.clamp(x, min=lo)
        else:
            y = x.clamp(max=1.0)
        (y * m.tensor([1.0, 2.0, 3.0, 4.0, 5.0])).sum().backward()
        return [y.detach().numpy()] + [None if t.grad is None else t.grad.numpy() for t in (x, lo, hi)]
    results = run_both(body)
    for got, want in zip(results[1], results[0]):
        assert (got is None) == (want is None)
        if want is not None:
            np.testing.assert_allclose(got, want)


@pytest.mark.parametrize("op", ["t_", "transpose_", "squeeze_", "unsqueeze_", "as_strided_"])
def test_inplace_view_ops_take_the_views_history(op):
    call = {"t_": lambda t: t.t_(), "transpose_": lambda t: t.transpose_(0, 1), "squeeze_": lambda t: t.squeeze_(1),
            "unsqueeze_": lambda t: t.unsqueeze_(0), "as_strided_": lambda t: t.as_strided_((2, 2), (1, 3))}[op]

    def body(m):
        x = m.tensor(np.arange(6.0).reshape((3, 1, 2) if op == "squeeze_" else (3, 2)), requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf Variable"):
            call(x)
        y = call(x * 1)
        (y * m.tensor(np.arange(float(y.numel())).reshape(tuple(y.shape)))).sum().backward()
        return (tuple(y.shape), x.grad.numpy())
    results = run_both(body)
    assert results[1][0] == results[0][0]
    np.testing.assert_allclose(results[1][1], results[0][1])


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode,nd", [("bilinear", 2), ("bilinear", 3), ("nearest", 2), ("nearest", 3), ("bicubic", 2)])
def test_grid_sample_double_backward_matches_torch(mode, nd, padding, align):
    """Both first derivatives (input and grid) differentiated again, in all three inputs (grid points outside
    [-1, 1] exercise the padding)."""
    rng = np.random.default_rng(0)
    arrays = (rng.standard_normal((2, 2) + (4,) * nd), rng.uniform(-1.3, 1.3, (2,) + (3,) * nd + (nd,)),
              rng.standard_normal((2, 2) + (3,) * nd))

    def body(m):
        x, grid, w = (m.tensor(a, requires_grad=True) for a in arrays)
        y = m.nn.functional.grid_sample(x, grid, mode=mode, padding_mode=padding, align_corners=align)
        gx, gg = m.autograd.grad((y * w).sum(), (x, grid), create_graph=True)
        loss = (gx * gx).sum() + (gg * gg).sum() + gg.sin().sum()
        return [g.numpy() for g in m.autograd.grad(loss, (x, grid, w), allow_unused=True, materialize_grads=True)]
    results = run_both(body)
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode,nd", [("bilinear", 2), ("bilinear", 3), ("nearest", 2), ("nearest", 3), ("bicubic", 2)])
def test_grid_sample_third_derivatives_match_torch(mode, nd, padding, align):
    """The second derivatives (of the grid gradient too) differentiated again, in a graph (create_graph) and not."""
    rng = np.random.default_rng(1)
    arrays = (rng.standard_normal((1, 2) + (4,) * nd), rng.uniform(-1.3, 1.3, (1,) + (3,) * nd + (nd,)),
              rng.standard_normal((1, 2) + (3,) * nd))

    def body(m):
        out = []
        for create_graph in (False, True):
            x, grid, w = (m.tensor(a, requires_grad=True) for a in arrays)
            y = m.nn.functional.grid_sample(x, grid, mode=mode, padding_mode=padding, align_corners=align)
            gx, gg = m.autograd.grad((y * w).sum(), (x, grid), create_graph=True)
            second = m.autograd.grad((gx * gx).sum() + (gg * gg).sum() + gg.sin().sum(), (x, grid, w),
                                     create_graph=True, allow_unused=True, materialize_grads=True)
            out += m.autograd.grad(sum((s * s.cos()).sum() for s in second), (x, grid, w), create_graph=create_graph,
                                   allow_unused=True, materialize_grads=True)
        return [g.detach().numpy() for g in out]
    results = run_both(body)
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("mode,nd,padding", [("bilinear", 2, "zeros"), ("bilinear", 3, "reflection"),
                                            ("bicubic", 2, "border")])
def test_grid_sample_fourth_and_fifth_derivatives_match_torch(mode, nd, padding, create_graph):
    """Each order differentiates the previous grid gradient again (gg_grid depends on grid: the composite's
    derivatives must be partial ones), up to the fifth in a graph (the /50 keeps each order's values near 1, where
    the comparison is well conditioned)."""
    rng = np.random.default_rng(2)
    arrays = (rng.standard_normal((1, 2) + (3,) * nd), rng.uniform(-1.2, 1.2, (1,) + (2,) * nd + (nd,)))

    def body(m):
        x, grid = (m.tensor(a, requires_grad=True) for a in arrays)
        y = m.nn.functional.grid_sample(x, grid, mode=mode, padding_mode=padding, align_corners=False)
        d = m.autograd.grad((y * y).sum(), grid, create_graph=True)[0]
        out = []
        for _ in range(4 if create_graph else 3):
            d, dx = m.autograd.grad((d / 50).sin().sum(), (grid, x), create_graph=True, allow_unused=True,
                                    materialize_grads=True)
            out += [d, dx]
        out += m.autograd.grad((d * d).sum(), (grid, x), create_graph=create_graph, allow_unused=True,
                               materialize_grads=True)
        return [g.detach().numpy() for g in out]
    results = run_both(body)
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-14)


def _hooked_graph(m, log):
    """Two leaves x, y feeding a shared loss through separate branches, each tensor with a hook that logs."""
    x = m.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = m.tensor([0.5, 4.0, -1.0], requires_grad=True)
    a, b = x * 2, y.exp()
    for name, t in (("x", x), ("y", y), ("a", a), ("b", b)):
        t.register_hook(lambda g, name=name: log.append(name))
    return x, y, a, b, (a * b).sum() + a.sin().sum()


@pytest.mark.parametrize("wrt", ["x", "y", "a", "b", "xy", "ab", "ax"])
def test_grad_runs_only_the_nodes_leading_to_the_inputs(wrt):
    """autograd.grad on part of a graph: only the hooks (and backward nodes) on a path to the inputs run, the
    inputs' own hooks included, and no .grad is touched; as torch's exec_info."""
    def body(m):
        log = []
        x, y, a, b, loss = _hooked_graph(m, log)
        named = dict(x=x, y=y, a=a, b=b)
        grads = m.autograd.grad(loss, [named[k] for k in wrt])
        return sorted(log), [g.numpy() for g in grads], x.grad is None and y.grad is None
    want, got = run_both(body)
    assert got[0] == want[0]
    assert got[2] and want[2]
    for g, w in zip(got[1], want[1]):
        np.testing.assert_allclose(g, w)


@pytest.mark.parametrize("inputs", ["x", "y", "a", "xb"])
def test_backward_inputs_runs_only_the_nodes_leading_to_them(inputs):
    """backward(inputs=...) accumulates only into those (a non-leaf input gets its .grad) and runs only the hooks
    on a path to them, as torch."""
    def body(m):
        log = []
        x, y, a, b, loss = _hooked_graph(m, log)
        named = dict(x=x, y=y, a=a, b=b)
        loss.backward(inputs=[named[k] for k in inputs])
        wanted = {k: t for k, t in named.items() if t.is_leaf or k in inputs}  # (.grad of other non-leaves warns)
        return sorted(log), {k: None if t.grad is None else t.grad.numpy() for k, t in wanted.items()}
    want, got = run_both(body)
    assert got[0] == want[0]
    assert got[1].keys() == want[1].keys()
    for k in want[1]:
        assert (got[1][k] is None) == (want[1][k] is None), k
        if want[1][k] is not None:
            np.testing.assert_allclose(got[1][k], want[1][k])


@pytest.mark.parametrize("op", ["gammainc", "gammaincc"])
def test_grad_computes_only_the_requested_outputs_of_a_node(op):
    """A node on the path computes only the gradients that lead to the inputs (torch's should_compute_output): igamma
    has no derivative for its first argument, so the gradient for the second alone works while both require grad."""
    def body(m):
        a = m.tensor([1.5, 2.0, 0.7], dtype=m.float64, requires_grad=True)
        b = m.tensor([0.5, 3.0, 1.1], dtype=m.float64, requires_grad=True)
        y = getattr(m.special, op)(a, b)
        return m.autograd.grad(y.sum(), b, retain_graph=True)[0].numpy(), outcome_type(lambda: m.autograd.grad(y.sum(), a))
    want, got = run_both(body)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    assert got[1] is want[1] is NotImplementedError


def test_grad_stops_at_a_non_leaf_input():
    """The history behind a requested non-leaf input never runs: a backward that would raise there is not called."""
    def body(m):
        class Boom(m.autograd.Function):
            @staticmethod
            def forward(ctx, t):
                return t * 1

            @staticmethod
            def backward(ctx, g):
                raise RuntimeError("Boom.backward was called")
        x = m.tensor([1.0, 2.0], requires_grad=True)
        z = Boom.apply(x)
        w = z * z
        first = m.autograd.grad(w.sum(), z, create_graph=True)[0]
        second = m.autograd.grad((first * w).sum(), [z, w])
        return [first.detach().numpy()] + [g.numpy() for g in second]
    want, got = run_both(body)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w)


@pytest.mark.parametrize("mode", ["floor", "trunc"])
def test_rounding_division_has_zero_gradients_as_torch(mode):
    def body(m):
        x, y = m.tensor([1.5, -2.5, 3.0], requires_grad=True), m.tensor([2.0, 0.7, -1.1], requires_grad=True)
        r = m.div(x, y, rounding_mode=mode)
        assert r.requires_grad
        r.sum().backward()
        return (x.grad.numpy(), y.grad.numpy())
    results = run_both(body)
    for got, want in zip(results[1], results[0]):
        np.testing.assert_array_equal(got, want)


def test_clamp_gradient_at_nan_matches_torch():
    """A NaN input stays NaN and passes no gradient to itself or to a tensor bound, as in PyTorch."""
    def body(m):
        a = m.tensor([1.0, float("nan"), -2.0, 3.0], requires_grad=True)
        lo = m.tensor([0.0, 0.0, 0.0, float("nan")], requires_grad=True)
        y = m.clamp(a, min=lo, max=m.full((4,), 2.5))
        (y * m.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
        return (y.detach().numpy(), a.grad.numpy(), lo.grad.numpy())
    results = run_both(body)
    for got, want in zip(results[1], results[0]):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("view", [
    lambda t: t.expand(5, 3)[:, 0],
    lambda t: t.expand(5, 3).select(1, 2),
    lambda t: t.expand(5, 3).unbind(1)[1],
    lambda t: t.expand(5, 3)[1:4, 1:],
    lambda t: t.expand(2, 5, 3).narrow(2, 1, 2).select(0, 1),
    lambda t: t.expand(5, 3).as_strided((2, 2), (1, 1), 0),
    lambda t: t.reshape(3)[1:].as_strided((2, 2), (1, 1), 0),  # reaches before the slice: the storage, as torch
], ids=["slice", "select", "unbind", "slice2", "narrow_select", "as_strided", "as_strided_outside"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_gradient_of_a_view_of_an_expanded_or_partial_view_matches_torch(view, create_graph):
    """Views whose input shares memory between its elements (expand) or that reach past their input (as_strided of
    a partial view): the gradient is split as torch's as_strided_backward does."""
    w = np.arange(1.0, 11.0)

    def body(m):
        x = m.tensor([[1.0, 2.0, 3.0]], dtype=m.float64, requires_grad=True)
        y = view(x * 1)
        (g,) = m.autograd.grad((y * m.tensor(w[:y.numel()]).reshape(y.shape)).sum() * (x * x).sum(), x,
                               create_graph=create_graph)
        out = [g.detach().numpy()]
        if create_graph:
            out.append(m.autograd.grad((g * g).sum(), x)[0].numpy())
        return out
    results = run_both(body)
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got, want, rtol=1e-12)
