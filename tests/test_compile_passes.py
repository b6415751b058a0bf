"""flowlike.compile's programs go through nn.Graph's IR passes, fusion and memory plan (graph/passes.py, Note [Memory
plan] in csrc/graph/memory_plan.h): the passes shrink a compiled GPT's forward and backward programs, their runs
take their intermediates from a planned arena and ask for no new memory, and nothing a compiled call hands to eager
code (outputs, the values saved for its backward, outputs that are its inputs) is ever overwritten by a later run.
(The other compile tests, tests/test_compile.py, run with the passes and the plan on and off, each bit for bit equal
to eager.)"""
import copy

import pytest

import flowlike as fl
import flowlike.nn as nn
from flowlike.graph import passes


def _gpt(context=16):
    from test_capture_replay import _example
    fl.manual_seed(0)
    return _example("train_gpt").build_model(fl, 20, d_model=32, heads=4, layers=2, context=context)


def _train(model, compiled, steps, seq=12, on_step=None):
    """Trains a compiled model (and an eager copy) with SGD; asserts equal losses; returns the compiled code."""
    ref = copy.deepcopy(model)
    cm = fl.compile(model, dynamic=False) if compiled is None else compiled
    opts = [fl.optim.SGD(m.parameters(), lr=0.05, momentum=0.9) for m in (model, ref)]
    g = fl.Generator().manual_seed(1)
    for i in range(steps):
        idx = fl.randint(0, 20, (3, seq), generator=g)
        losses = []
        for m, opt in zip((cm, ref), opts):
            _, loss = m(idx, idx.roll(-1, 1))
            loss.backward()
            opt.step()
            opt.zero_grad()
            losses.append(loss.item())
        assert losses[0] == losses[1], i
        if on_step is not None:
            on_step(i)
    for p, q in zip(model.parameters(), ref.parameters()):
        assert fl.equal(p, q)
    return cm._compiled


def test_passes_shrink_a_compiled_gpt_and_its_runs_use_an_arena(monkeypatch):
    sizes = {}
    for enabled in (False, True):
        monkeypatch.setattr(passes.config, "enabled", enabled)
        code = _train(_gpt(), None, 3)
        (plan,) = code.entries.values()
        sizes[enabled] = (len(plan.program), len(plan.backward))
    # fewer calls in the forward (the kept activations' producers stay) and many fewer in the backward
    assert sizes[True][0] < sizes[False][0] and sizes[True][1] < sizes[False][1] * 0.85, sizes

    model = _gpt()
    cm = fl.compile(model, dynamic=False)
    seen = {}

    def counters(i):
        if i == 0:  # kernels installed later would make that run a recorded one again
            (plan,) = cm._compiled.entries.values()
            plan.fusion.wait()
            plan.backward_fusion.wait()
        if i >= 3:  # after the capture, the recorded runs and the first planned runs
            seen[i] = (fl.memory.memory_reserved(), fl.memory.memory_allocated())
    code = _train(model, cm, 7, on_step=counters)
    assert len(set(seen.values())) == 1, seen  # no new memory: the same blocks serve every step
    (plan,) = code.entries.values()
    for program in (plan.program, plan.backward):
        stats = program.memory_stats
        assert stats["planned"] > 0 and stats["fallbacks"] == 0, stats
        assert stats["arena_bytes"] < stats["planned_bytes"]  # buffers share arena bytes by liveness


def test_values_handed_to_eager_code_are_never_overwritten_by_later_runs():
    # the outputs (a view of an intermediate, an input handed back) and the values saved for the backward of calls
    # kept alive together: each backward, run late and in reverse order, gives eager's gradients
    def fn(x, w):
        h = (x @ w).tanh()
        return (h * 2).exp()[1:], x, h.sum(0)
    f = fl.compile(fn)
    w = fl.randn(5, 5, requires_grad=True)
    w_ref = w.detach().clone().requires_grad_()
    xs = [fl.full((4, 5), 0.1 * i) + fl.arange(5.0) / 10 for i in range(5)]
    a, _, s = f(xs[0], w)  # the capture, and its backward: the calls below run the programs
    (a.sum() + s.sum()).backward()
    w.grad = None
    got = [f(x, w) for x in xs]
    want = [fn(x, w_ref) for x in xs]
    for (a, x_out, s), (b, _, t), x in zip(got, want, xs):
        assert fl.equal(a, b) and fl.equal(s, t) and x_out is x
    for (a, _, s), (b, _, t) in zip(reversed(got), reversed(want)):
        (a.sum() + s.sum()).backward()
        (b.sum() + t.sum()).backward()
        assert fl.equal(w.grad, w_ref.grad)
    plan = next(iter(f._compiled_code.entries.values()))
    assert f._compiled_code.captures == 1
    assert plan.program.memory_stats["planned"] > 0 and plan.backward.memory_stats["planned"] > 0


def test_inference_outputs_held_across_calls_keep_their_values():
    f = fl.compile(lambda x: ((x * 2).exp()[1:], (x + 1).sin().t(), x * 1))
    held = []
    with fl.no_grad():
        for i in range(5):
            x = fl.full((4, 6), float(i))
            held.append((x, f(x)))
    for x, (a, b, c) in held:
        assert fl.equal(a, (x * 2).exp()[1:]) and fl.equal(b, (x + 1).sin().t()) and fl.equal(c, x)
        assert c is not x  # x * 1 is a new tensor in eager too: the pass never hands back the input instead


def test_symbolic_programs_are_optimized_per_size():
    model = _gpt(context=64)
    cm = fl.compile(model)
    lengths = [8, 12, 16, 20, 24, 24]
    ref = copy.deepcopy(model)
    for t in lengths:
        idx = fl.randint(0, 20, (2, t))
        (_, loss), (_, want) = cm(idx, idx.roll(-1, 1)), ref(idx, idx.roll(-1, 1))
        assert loss.item() == want.item(), t
        loss.backward()
        want.backward()
        for p, q in zip(model.parameters(), ref.parameters()):
            assert fl.equal(p.grad, q.grad), t
    sym = cm._compiled.symbolic
    assert sym.verified
    plan = sym.sizes[24]
    # the size's programs are the fitted ones after the passes; fused once the size came back
    assert len(plan.program) < len(sym.forward.calls) and len(plan.backward) < len(sym.backward.calls)
    assert plan.fusion is not None and sym.sizes[20].fusion is None


@pytest.mark.parametrize("switch", ["enabled", "plan_memory"])
def test_switches_turn_passes_and_plan_off_for_compiled_programs(monkeypatch, switch):
    monkeypatch.setattr(passes.config, switch, False)
    code = _train(_gpt(), None, 3)
    (plan,) = code.entries.values()
    for program in (plan.program, plan.backward):
        assert program.plan_memory == (switch != "plan_memory")
        assert (program.memory_stats is None) == (switch == "plan_memory")


def test_a_recurrent_state_fed_back_through_compiled_calls_backpropagates_as_eager():
    # each call's output is the next call's input and its saved values wait for one backward through all calls
    cell = nn.RNNCell(4, 6)
    ref = copy.deepcopy(cell)
    step = fl.compile(lambda x, h: cell(x, h).tanh() * 0.5 + h * 0.5)
    xs = [fl.randn(3, 4, generator=fl.Generator().manual_seed(i)) for i in range(6)]
    for _ in range(3):  # the capture with its backward, then runs of both programs
        h, h_ref = fl.zeros(3, 6), fl.zeros(3, 6)
        for x in xs:
            h = step(x, h)
            h_ref = ref(x, h_ref).tanh() * 0.5 + h_ref * 0.5
        assert fl.equal(h, h_ref)
        h.square().sum().backward()
        h_ref.square().sum().backward()
        for p, q in zip(cell.parameters(), ref.parameters()):
            assert fl.equal(p.grad, q.grad)
    assert step._compiled_code.captures == 2  # the first input state needs no gradient, the later ones do
