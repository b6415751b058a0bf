"""The IR passes of nn.Graph (graph/passes.py) and the memory plan of its runs (csrc/graph/memory_plan.h): each
pass removes what it should from a captured program, never what it must keep (values written later, random
draws, what a step hands back), and a program runs to eager's results with and without them. The passes also run
under every other nn.Graph test (test_graph.py: 20 training steps bit for bit equal to eager; the op-database sweep
in parity_tests/test_opdb_graph_parity.py)."""
import collections

import pytest

import flowlike as fl
import flowlike.nn as nn
import flowlike.utils._pytree as pytree
from flowlike.graph import passes


class Fn(nn.Graph):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def build(self, *args):
        return self.fn(*args)


def ops_of(graph):
    (plan,) = graph._plans.values()
    return collections.Counter(plan.program.ops)


def both(fn, *make_args):
    """fn run eagerly, as a graph with the passes and as a graph without them (each on fresh inputs, twice: the
    capture and a replay); returns the three results of the replay and the optimized graph."""
    results, graphs = [], []
    for mode in ("eager", "passes", "plain"):
        args = [m() for m in make_args]
        if mode == "eager":
            out = fn(*args)
            args = [m() for m in make_args]
            out = fn(*args)
        else:
            passes.config.enabled = mode == "passes"
            try:
                g = Fn(fn)
                g(*args)
                args = [m() for m in make_args]
                out = g(*args)
            finally:
                passes.config.enabled = True
            graphs.append(g)
        results.append((out, args))
    return results, graphs[0], graphs[1]


def assert_same(results):
    (want, want_args), *rest = results
    for got, got_args in rest:
        for a, b in zip(pytree.tree_leaves(want), pytree.tree_leaves(got)):
            assert fl.equal(a, b)
        for a, b in zip(want_args, got_args):  # inputs written in place are written alike
            assert fl.equal(a, b)


def x_input():
    g = fl.Generator().manual_seed(1)
    return fl.randn(4, 6, generator=g)


def test_identities_units_and_same_dtype_casts_are_removed():
    def fn(x):
        y = (x * 1 + 0) / 1 - 0
        z = y.to(fl.float32).t().t().contiguous().conj()
        return (z.sin() + 2,)
    results, g, plain = both(fn, x_input)
    assert_same(results)
    ops = ops_of(g)
    assert set(ops) == {"sin", "add"} and ops["add"] == 1, ops
    assert len(g._plans[next(iter(g._plans))].program) < len(plain._plans[next(iter(plain._plans))].program)


def test_common_subexpressions_are_computed_once():
    def fn(x):
        return x.exp() * x.exp() + x.t().t().exp()
    results, g, _ = both(fn, x_input)
    assert_same(results)
    assert ops_of(g)["exp"] == 1


def test_constants_are_folded_and_dead_code_dropped():
    def fn(x):
        scale = fl.ones(6) * 2 + fl.arange(6)  # made from nothing: evaluated once at planning
        unused = x.cos().sum()  # noqa: F841  (read by nothing)
        return x * scale
    results, g, _ = both(fn, x_input)
    assert_same(results)
    assert set(ops_of(g)) == {"mul"}, ops_of(g)


def test_a_value_written_later_is_not_replaced():
    def fn(x):
        y = x * 1       # a copy: x is written below, y must keep the old values
        z = x.clone()
        w = x.sin()
        x.add_(1)
        v = x.sin()     # not w: x changed in between
        return y, z, w, v
    results, g, _ = both(fn, x_input)
    assert_same(results)
    assert ops_of(g)["sin"] == 2


def test_writes_through_a_view_chain_reach_the_input():
    def fn(x):
        v = x.t().t()
        v.mul_(3)
        return (v + 1,)
    results, _, _ = both(fn, x_input)
    assert_same(results)


def test_a_copy_handed_back_is_not_the_input_itself():
    def fn(x):
        return x.clone(), x * 1
    g = Fn(fn)
    x = x_input()
    g(x)
    a, b = g(x)
    assert fl.equal(a, x) and fl.equal(b, x)
    a.add_(1)
    assert not fl.equal(a, x) and fl.equal(b, x)


def test_random_draws_are_never_merged_or_dropped():
    def fn(x):
        a = nn.functional.dropout(x, 0.5)
        b = nn.functional.dropout(x, 0.5)
        nn.functional.dropout(x, 0.5)  # unused, but it advances the generator
        return a, b, fl.rand(3)
    fl.manual_seed(5)
    eager = [fn(x_input()) for _ in range(2)]
    g = Fn(fn)
    fl.manual_seed(5)
    graph = [g(x_input()) for _ in range(2)]
    for e, r in zip(eager, graph):
        for a, b in zip(e, r):
            assert fl.equal(a, b)
    assert not fl.equal(graph[1][0], graph[1][1])


def gpt_steps(n):
    """The GPT-mini of test_graph trained n steps eagerly; returns the losses, the graph step and its batches."""
    from test_graph import TrainStep, batches, build_pair, eager_step
    (eager, graphed), data = build_pair("gpt_dropout_adamw")
    steps = batches(data, n=n)
    fl.manual_seed(3)
    want = [eager_step(*eager, x, y).item() for x, y in steps]
    fl.manual_seed(3)
    return want, TrainStep(*graphed), steps


def test_training_step_loses_bookkeeping_and_matches_eager():
    want, step, steps = gpt_steps(6)
    got = [step(x, y).item() for x, y in steps]
    assert got == want
    program = list(step._plans.values())[-1].program
    # conj of real tensors and multiplications by a wrapped 1 are gone from the backward
    assert "conj" not in program.ops and "scalar_tensor" not in program.ops


def test_planned_runs_reuse_an_arena_and_reserve_no_new_memory():
    want, step, steps = gpt_steps(10)
    got = [step(x, y).item() for x, y in steps[:4]]  # two captures, the recorded run, the first planned run
    reserved, allocated = fl.memory.memory_reserved(), fl.memory.memory_allocated()
    got += [step(x, y).item() for x, y in steps[4:]]
    assert got == want
    assert fl.memory.memory_reserved() == reserved and fl.memory.memory_allocated() == allocated
    stats = list(step._plans.values())[-1].program.memory_stats
    assert stats["planned"] > 0 and stats["fallbacks"] == 0
    # liveness-based reuse: the arena is smaller than the planned buffers laid side by side
    assert stats["arena_bytes"] < stats["planned_bytes"]
    assert stats["arena_bytes"] >= max(1, stats["peak_live_bytes"] - stats["kept_bytes"]) * 0.5
    text = step.memory_report()
    assert "planned arena" in text and f"{stats['arena_bytes'] / 2**20:.2f} MiB" in text


def test_outputs_held_across_runs_are_never_overwritten():
    # outputs that are views of intermediates, and outputs kept by the caller while later runs reuse the arena
    g = Fn(lambda x: ((x * 2).exp()[1:], (x + 1).sin().t()))
    held = []
    for i in range(5):
        x = fl.full((4, 6), float(i))
        held.append((x, g(x)))
    for x, (a, b) in held:
        assert fl.equal(a, (x * 2).exp()[1:]) and fl.equal(b, (x + 1).sin().t())


def test_memory_plan_off_runs_the_same(monkeypatch):
    monkeypatch.setattr(passes.config, "plan_memory", False)
    g = Fn(lambda x: (x * 2).exp().sum(0))
    x = x_input()
    for _ in range(3):
        out = g(x)
    assert fl.equal(out, (x * 2).exp().sum(0))
    (plan,) = g._plans.values()
    assert plan.program.memory_stats is None and "memory planning is off" in g.memory_report()


@pytest.mark.parametrize("shape", [(), (0, 3), (5,)])
def test_edge_shapes(shape):
    def fn(x):
        return (x * 1).exp() + x.exp()
    results, _, _ = both(fn, lambda: fl.ones(shape))
    assert_same(results)


class Sliced(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(fl.randn(4, 9, generator=fl.Generator().manual_seed(2)))


def sliced_loss(w, x, overlapping):
    a, b, c = (w.narrow(1, 0, 5), w.narrow(1, 3, 6), w.narrow(1, 2, 2)) if overlapping else w.split(3, dim=1)
    return (a * x[:, :a.shape[1]]).sum() + (b * 2 * x[:, :b.shape[1]]).sum() + (c.sin() * x[:, :c.shape[1]]).sum()


@pytest.mark.parametrize("overlapping", [False, True])
def test_slice_gradients_are_written_into_one_buffer(overlapping):
    class Step(nn.Graph):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def build(self, x):
            loss = sliced_loss(self.m.w, x, overlapping)
            loss.backward()
            return loss
    eager, graphed = Sliced(), Sliced()
    step = Step(graphed)
    for i in range(3):
        x = fl.full((4, 9), float(i + 1)) + fl.arange(9.0)
        sliced_loss(eager.w, x, overlapping).backward()
        step(x)
        assert fl.equal(eager.w.grad, graphed.w.grad)
    program = list(step._plans.values())[-1].program
    ops = collections.Counter(program.ops)
    if overlapping:  # the slices' zero buffers are summed as eager sums them
        assert ops["_fill"] == 3 and ops["empty"] == 3
    else:  # one buffer, each slice's gradient copied into its part, no zero fill, no sum of buffers
        assert ops["empty"] == 1 and ops["_fill"] == 0 and ops["_copy_into"] == 3


def test_pointwise_calls_write_into_an_operand_that_dies(monkeypatch):
    from flowlike import codegen
    monkeypatch.setattr(codegen.config, "enabled", False)  # (fused groups would hold these calls)

    def fn(x):
        t = (x * 2).exp()
        u = (t + 1).sin()
        return u * t.cos(), x.exp()  # t is read again after `t + 1`: that call may not write into it
    g = Fn(fn)
    x = x_input()
    for _ in range(3):
        got = g(x)
    want = fn(x)
    assert all(fl.equal(a, b) for a, b in zip(got, want))
    (plan,) = g._plans.values()
    lines = [line for line in plan.program.listing() if "None)" not in line and "(%" in line]
    written_into = {line.split(" = ")[1].split("(")[0] for line in lines if line.rstrip(")").rsplit(", ", 1)[-1].startswith("%")}
    # exp writes into x * 2's buffer, sin into t + 1's, cos into t (read for the last time), the last mul into
    # sin's result; add may not write into t (read again later), and the first mul and x.exp() read an input
    assert written_into == {"exp", "sin", "cos", "mul"}, plan.program.listing()
    assert sum("add(" in line and line.endswith(", None)") for line in plan.program.listing()) == 1


def test_debug_logs_each_pass_and_the_memory_plan(caplog):
    import logging
    g = Fn(lambda x: ((x * 1).exp() + 2).sum(0))
    g.debug(0)
    x = x_input()
    with caplog.at_level(logging.DEBUG, logger="flowlike.nn.Graph"):
        for _ in range(3):
            g(x)
    assert "IR passes:" in caplog.text and "simplified 1" in caplog.text
    assert "memory plan:" in caplog.text and "arena" in caplog.text


def test_a_handed_back_view_of_a_constant_is_made_by_each_run():
    # folding `ones` would hand back a view of the plan's own constant, which the caller may write into
    g = Fn(lambda x: (x + 1, fl.ones(2, 3).view(6)))
    for _ in range(3):
        _, c = g(fl.zeros(3))
        c.add_(1)
    assert fl.equal(g(fl.zeros(3))[1], fl.ones(6))


def _bench_step(name):
    """The GPT-mini and the small CNN of benchmarks/bench_graph.py as an AdamW training graph, with its batch."""
    from test_capture_replay import _example
    from test_graph import TrainStep
    fl.manual_seed(0)
    g = fl.Generator().manual_seed(1)
    if name == "gpt":
        model = _example("train_gpt").build_model(fl, 64, d_model=128, heads=4, layers=4, context=64)
        tokens = fl.randint(0, 64, (16, 65), generator=g)
        batch = (tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous())
    else:
        model = _example("train_cnn").build_model(fl)
        batch = (fl.randn(32, 1, 12, 12, generator=g), fl.randint(0, 3, (32,), generator=g))
    return TrainStep(model, fl.optim.AdamW(model.parameters(), lr=1e-3)), model, batch


@pytest.mark.parametrize("name", ["gpt", "cnn"])
def test_memory_report_measures_graph_and_eager_steps_and_the_graph_needs_no_more(name):
    import re
    step, model, batch = _bench_step(name)
    for _ in range(3):
        step(*batch)
    def state():
        return [t.clone() for t in model.state_dict().values()] + [
            t.clone() for s in step.opt.state.values() for t in s.values() if isinstance(t, fl.Tensor)]
    before = state()
    text = step.memory_report(*batch)
    graph, eager = map(int, re.search(r"graph .* \((\d+) bytes\), eager .* \((\d+) bytes\)", text).groups())
    assert 0 < graph <= eager, text
    # measuring took no training step
    after = state()
    assert len(after) == len(before) and all(fl.equal(a, b) for a, b in zip(before, after))
    plans = list(step._plans.values())
    step(*batch)  # the next step runs the plan measured: nothing it keys on changed
    assert list(step._plans.values()) == plans
    with pytest.raises(RuntimeError, match="measures a step captured before"):
        step.memory_report(batch[0][:2], batch[1][:2])


def test_profiled_runs_time_each_call_and_each_group_at_its_last_call():
    def fn(x, w):
        return ((x @ w).exp() * 2 + 1).sum()
    g = Fn(fn)
    x, w = fl.randn(16, 32), fl.randn(32, 8)
    g(x, w)
    (plan,) = g._plans.values()
    program = plan.program
    plan.fusion.wait()
    program.profile = True
    for _ in range(3):
        g(x, w)
    times = program.call_ns
    ops = program.ops
    assert len(times) == len(ops)
    members = {c for _, calls, _, _ in program.groups for c in calls[:-1]}
    assert program.groups, "the pointwise chain should run as one group"
    for c, t in enumerate(times):  # a group's members before its last are not run on their own
        assert (t == 0) == (c in members), (c, ops[c], t)
    program.profile = False  # setting it clears the times
    assert program.call_ns == []


def test_time_report_sums_each_ops_time_and_takes_no_training_step(capsys):
    _, step, steps = gpt_steps(2)
    x, y = steps[0]
    step(x, y)
    step(x, y)
    params = [p.detach().clone() for p in step.model.parameters()]
    state = [{k: v.clone() for k, v in s.items() if isinstance(v, fl.Tensor)} for s in step.opt.state.values()]
    per_op = step.time_report(x, y, steps=3, top=5)
    text = capsys.readouterr().out
    program = list(step._plans.values())[-1].program
    assert set(per_op) <= set(program.ops) | {name for name, *_ in program.groups}
    assert "mm" in per_op and "scaled_dot_product_attention_backward" in per_op
    assert list(per_op.values()) == sorted(per_op.values(), reverse=True) and all(t > 0 for t in per_op.values())
    assert text.count("\n") == 2 + 5 and "ms per step" in text
    # the parameters and the optimizer state are as they were: the timed steps were put back
    assert all(fl.equal(a, b) for a, b in zip(params, step.model.parameters()))
    after = [{k: v for k, v in s.items() if isinstance(v, fl.Tensor)} for s in step.opt.state.values()]
    assert all(fl.equal(b[k], a[k]) for b, a in zip(state, after) for k in b)
    with pytest.raises(RuntimeError, match="captured before"):
        step.time_report(x[:1], y[:1])
    with pytest.raises(ValueError, match="steps must be a positive int"):
        step.time_report(x, y, steps=0)
