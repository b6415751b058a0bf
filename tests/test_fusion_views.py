"""Fusion groups that reach through view ops (codegen/fusion.py: _view_chain, _through_view, _respace): a member
reading a reshape / transpose / permute / expand / (un)squeeze / contiguous of a value reads the value at the view's
index map, and a pointwise group making the viewed value joins in the view's space; and groups ending in a sum or
mean over every dimension but the last (bias gradients), which run eager's column kernel order. Each graph's result
is checked against eager's bit for bit."""
import numpy as np
import pytest

import flowlike as fl
from flowlike import codegen, nn
from flowlike.codegen import fusion

from test_fusion import bits, graph_of, plan_of, softmax_primitives


@pytest.fixture(autouse=True)
def sync_compile(tmp_path_factory, monkeypatch):
    """Kernels built before the first run returns, in a cache of this test session."""
    monkeypatch.setattr(codegen.config, "async_compile", False)
    monkeypatch.setenv("FLOWLIKE_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "kernel-cache"))


def run_fused(fn, *args):
    """(the graph's groups, its result) after checking the fused result equals eager's bit for bit."""
    graph = graph_of(fn)
    graph(*args)
    plan = plan_of(graph)
    got, want = graph(*args), fn(*args)
    for a, b in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert np.array_equal(bits(a), bits(b)), (a, b)
    assert plan.program.unfused_group_runs == 0
    assert plan.fusion.installed == bool(plan.fusion.groups)
    return plan.fusion.groups


def ops_of(groups):
    return [[n.op for n in g.nodes] for g in groups]


VIEW_CASES = {
    # a chain made in one shape, continued after a view of it: one kernel, the intermediate never written
    "transpose": (lambda x, b: fl.tanh(x * 2).t() + b.unsqueeze(1), [["mul", "tanh", "add"]]),
    "reshape_then_broadcast": (lambda x, b: (x + 1).reshape(2, 3, 4).sigmoid() * b, [["add", "sigmoid", "mul"]]),
    "permute": (lambda x, b: (x.exp() * 3).reshape(2, 3, 4).permute(2, 0, 1) - 1, [["exp", "mul", "sub"]]),
    "expand_unsqueeze": (lambda x, b: (x * 3).unsqueeze(0).expand(5, 6, 4) + b, [["mul", "add"]]),
    # (not back to x's own shape: the graph passes would read x itself, leaving no view to cross)
    "squeeze": (lambda x, b: (x - 1).reshape(2, 1, 12).squeeze(1).abs() / 2, [["sub", "abs", "div"]]),
    # an input read through views: the copy `contiguous` makes is never made
    "input_through_contiguous": (lambda x, b: fl.exp(x.t().contiguous()) * 2, [["exp", "mul"]]),
    "bias_after_view": (lambda x, b: nn.functional.gelu((x * 0.5).view(2, 3, 4) + b), [["mul", "add", "gelu"]]),
}


@pytest.mark.parametrize("dtype", [fl.float32, fl.float64])
@pytest.mark.parametrize("case", sorted(VIEW_CASES))
def test_chains_continue_through_views(case, dtype):
    fn, ops = VIEW_CASES[case]
    g = fl.Generator().manual_seed(len(case))
    x, b = fl.randn(6, 4, generator=g, dtype=dtype), fl.randn(4, generator=g, dtype=dtype) + 7
    groups = run_fused(fn, x, b)
    assert ops_of(groups) == ops
    assert groups[0].views, "the view calls are members"
    assert len(groups[0].outputs) == 1


def test_non_contiguous_input_read_through_a_view():
    # the input is itself a strided slice; the view maps compose with its strides
    x = fl.randn(8, 10)[:, ::2][1:7]
    groups = run_fused(lambda x: (x * 2).t().exp() + 1, x)
    assert ops_of(groups) == [["mul", "exp", "add"]]


def test_value_read_outside_is_written_through_its_layout():
    # the value before the view is also returned: the kernel (iterating the view's space) writes it where its own
    # layout puts each element
    def fn(x):
        a = fl.tanh(x * 2)
        return a, a.t() * 3
    groups = run_fused(fn, fl.randn(5, 7))
    assert ops_of(groups) == [["mul", "tanh", "mul"]] and len(groups[0].outputs) == 2


def test_a_value_read_directly_and_transposed_is_indexed_both_ways():
    # x + x.t(): one value read by two layouts in one member: it reads the transposed view value instead
    x = fl.randn(5, 5)
    groups = run_fused(lambda x: (x + x.t()).exp() * 2, x)
    assert ops_of(groups) == [["add", "exp", "mul"]]
    # a chain made once, read directly and through a transpose: the joins that would index it two ways are refused
    def made_once(x):
        a = x * 2
        return (a + a.t()).exp()
    groups = run_fused(made_once, x)
    assert ["mul", "add", "exp"] not in ops_of(groups)


def test_reshape_that_copies_is_not_crossed():
    # a transposed value reshaped into one dimension is a copy whose order is no strided view of it: not crossed
    fn = lambda x: (x * 2).t().reshape(-1).exp() + 1  # noqa: E731
    groups = run_fused(fn, fl.randn(4, 6))
    assert ["mul", "exp", "add"] not in ops_of(groups)


def test_zero_dim_and_empty_values():
    run_fused(lambda x: (x * 2).reshape(1, 1).exp() + 1, fl.tensor(0.5))
    groups = run_fused(lambda x: (x * 2).reshape(3, 0).exp() + 1, fl.randn(0, 3))
    assert all(not g.geometry for g in groups)  # an empty value is never indexed through a view


def test_row_group_after_a_view():
    # scores made in (batch*heads, t, t), viewed as (batch, heads, t, t), masked and normalized: one row group
    def fn(s, mask):
        return softmax_primitives((s * 0.125).view(2, 3, 5, 5) + mask)
    s, mask = fl.randn(6, 5, 5), fl.randn(5, 5)
    graph = graph_of(fn)
    graph(s, mask)
    plan = plan_of(graph)
    assert ops_of(plan.fusion.groups) == [["mul", "add", "amax", "sub", "exp", "sum", "div"]]
    assert plan.fusion.groups[0].rows and plan.fusion.groups[0].views
    want = fl.softmax((s * 0.125).view(2, 3, 5, 5) + mask, -1)
    fl.testing.assert_close(graph(s, mask), want, rtol=1e-5, atol=1e-6)
    assert plan.program.unfused_group_runs == 0


def test_training_step_with_3d_linear_layers_equals_eager():
    # the bias adds of 3-D linears (mm -> reshape -> add) and the chains around them, forward and backward
    models = []
    for _ in range(2):
        fl.manual_seed(0)
        models.append(nn.Sequential(nn.Linear(12, 40), nn.GELU(), nn.Linear(40, 12), nn.Tanh()))
    opts = [fl.optim.SGD(m.parameters(), lr=0.1) for m in models]

    class Step(nn.Graph):
        def __init__(self):
            super().__init__()
            self.m = models[1]
            self.add_optimizer(opts[1])

        def build(self, x):
            h = self.m(x)
            loss = (h.transpose(0, 1) * 1.5 + 0.1).square().mean()
            loss.backward()
            opts[1].step()
            opts[1].zero_grad()
            return loss

    step = Step()
    g = fl.Generator().manual_seed(1)
    for _ in range(3):
        x = fl.randn(3, 7, 12, generator=g)
        want = (models[0](x).transpose(0, 1) * 1.5 + 0.1).square().mean()
        want.backward()
        opts[0].step()
        opts[0].zero_grad()
        assert step(x).item() == want.item()
    plan = plan_of(step)
    assert plan.fusion.installed and any(g.views for g in plan.fusion.groups)
    assert plan.program.unfused_group_runs == 0
    for a, b in zip(models[0].parameters(), models[1].parameters()):
        assert fl.equal(a, b)


@pytest.mark.parametrize("sizes, strides, shape, want", [
    ((6, 4), (4, 1), (2, 3, 4), (12, 4, 1)),
    ((6, 4), (0, 1), (2, 3, 4), (0, 0, 1)),          # a broadcast row stays broadcast
    ((4, 6), (1, 4), (24,), None),                   # a transposed value read flat: no strides do
    ((4, 6), (1, 4), (4, 2, 3), (1, 12, 4)),         # splitting a dimension of it does
    ((), (), (1, 1), (0, 0)),
    ((2, 0), (0, 1), (0,), None),
])
def test_restride_follows_torch_view_rule(sizes, strides, shape, want):
    got = fusion._restride(sizes, strides, shape)
    assert (got is None and want is None) or tuple(got) == want
    if want is not None and sizes and 0 not in strides:
        # torch's own view of such a tensor has these strides
        base = fl.empty_strided(sizes, strides)
        assert base.view(*shape).stride() == want


# ---- column reductions: sum / mean over all dimensions but the last ----------------------------------------------

@pytest.mark.parametrize("dtype", [fl.float32, fl.float64])
@pytest.mark.parametrize("shape", [(16, 64, 600), (300, 33), (3, 1, 8), (129, 1030)])
def test_chain_ending_in_a_column_sum(shape, dtype):
    # eager's column kernel sums bands of 512 columns in blocks of 128 rows: the group does the same, bit for bit
    g = fl.Generator().manual_seed(sum(shape))
    x, b = fl.randn(*shape, generator=g, dtype=dtype), fl.randn(shape[-1], generator=g, dtype=dtype)
    lead = list(range(len(shape) - 1))
    groups = run_fused(lambda x, b: (x * b + 1).exp().sum(lead, keepdim=True), x, b)
    assert ops_of(groups) == [["mul", "add", "exp", "sum"]] and groups[0].columns
    groups = run_fused(lambda x: (x * 0.5).mean(lead), x)
    assert ops_of(groups) == [["mul", "mean"]]


def test_column_sum_of_a_transposed_input_and_a_written_member():
    # a member another group reads is stored as the sums run; a transposed input is read through its strides
    def fn(x, y):
        a = x * 2
        return a.sum(0), (a.tanh() + y.t()).sum(0)
    groups = run_fused(fn, fl.randn(300, 20), fl.randn(20, 300))
    assert ops_of(groups) == [["mul", "sum"], ["tanh", "add", "sum"]]
    assert len(groups[0].outputs) == 2  # a, and its sums


def test_column_sums_end_their_group():
    # nothing after the sum joins it (it is complete only at the end); 0-dim and empty sums stay eager
    groups = run_fused(lambda x: ((x * 2).sum(0) + 1).exp(), fl.randn(40, 16))
    assert ops_of(groups) == [["mul", "sum"], ["add", "exp"]]
    assert ops_of(run_fused(lambda x: (x * 2).sum([0]) * 3, fl.randn(0, 16))) == []
    assert ops_of(run_fused(lambda x: (x * 2).sum([0, 1]), fl.randn(4, 16, 3))) == []  # fewer than 8 columns
    assert ops_of(run_fused(lambda x: (x * 2).sum() * 3, fl.tensor(2.0))) == []


class MatmulAddBias(nn.Linear):
    """A linear layer written as a matmul and a broadcast add (as model code often does): its bias gradient is a
    column sum over every leading dimension of the incoming gradient (F.linear itself folds the bias into addmm)."""

    def forward(self, x):
        return x @ self.weight.t() + self.bias


def test_bias_gradients_of_a_training_step_equal_eager(monkeypatch):
    # the bias gradients are column sums of the chain rule's products (the `grad * 1` in front of each sum is what
    # fuses with it here; the graph passes would drop it)
    from flowlike.graph import passes
    monkeypatch.setattr(passes.config, "enabled", False)
    models = []
    for _ in range(2):
        fl.manual_seed(0)
        models.append(nn.Sequential(MatmulAddBias(16, 64), nn.GELU(), MatmulAddBias(64, 16)))
    opts = [fl.optim.AdamW(m.parameters(), lr=0.01) for m in models]

    class Step(nn.Graph):
        def __init__(self):
            super().__init__()
            self.m = models[1]
            self.add_optimizer(opts[1])

        def build(self, x):
            loss = (self.m(x.transpose(0, 1)) * 1.5).square().mean()
            loss.backward()
            opts[1].step()
            opts[1].zero_grad()
            return loss

    step = Step()
    g = fl.Generator().manual_seed(2)
    for _ in range(3):
        x = fl.randn(33, 4, 16, generator=g)
        want = (models[0](x.transpose(0, 1)) * 1.5).square().mean()
        want.backward()
        opts[0].step()
        opts[0].zero_grad()
        assert step(x).item() == want.item()
    plan = plan_of(step)
    assert any(g.columns for g in plan.fusion.groups), plan.program.listing()
    assert plan.program.unfused_group_runs == 0
    for a, b in zip(models[0].parameters(), models[1].parameters()):
        assert fl.equal(a, b)


@pytest.mark.parametrize("case", ["permute", "bias_after_view", "input_through_contiguous"])
def test_triton_kernels_read_through_views_as_the_cpp_kernels(case):
    # the Triton generator indexes with the same layouts (cpp._loop_dims): its results equal the C++ kernels'
    from test_fusion import _triton_vs_cpp
    fn, _ = VIEW_CASES[case]
    g = fl.Generator().manual_seed(5)
    for got, want in _triton_vs_cpp(fn, fl.randn(6, 4, generator=g), fl.randn(4, generator=g)):
        assert got.dtype == want.dtype and got.shape == want.shape
        assert np.array_equal(bits(got), bits(want)), (got, want)


def test_column_sum_after_ops_that_fall_back_to_libm():
    # a row with an element the vectorized sigmoid/exp hands to libm runs again exactly before its sums
    x = fl.randn(70, 600)
    x[3, 5], x[40, 599] = -100.0, 95.0
    groups = run_fused(lambda g, x: (g * x.sigmoid() + x.exp()).sum(0), fl.randn(70, 600), x)
    assert ops_of(groups) == [["sigmoid", "mul", "exp", "add", "sum"]]
