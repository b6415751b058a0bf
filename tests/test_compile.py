"""flowlike.compile (torch.compile): compiled modules in eager training loops give eager's losses, gradients and
parameters bit for bit (the forward and the backward run as captured programs, asserted through capture counters
and forward hooks that fire only while capturing); guards recapture and say why; the recompile limit warns and
falls back to eager; graph breaks run eagerly (a module's children as pieces) and explain() lists them with
their source lines; fullgraph=True raises at the break; the torch.compiler/_dynamo names work. Every test runs with
the IR passes and the memory plan on, and with both off (graph/passes.py)."""
import copy
import gc
import logging

import pytest

import flowlike as fl
import flowlike.nn as nn
from flowlike.graph import passes
from flowlike.graph.compile import OptimizedModule, _ReplayCall
from test_graph import MODELS, batches, build_pair, loss_of

F = nn.functional


@pytest.fixture(autouse=True, params=["passes", "no passes"])
def ir_passes(request, monkeypatch):
    """The compiled programs with nn.Graph's passes and memory plan, and as captured."""
    monkeypatch.setattr(passes.config, "enabled", request.param == "passes")
    monkeypatch.setattr(passes.config, "plan_memory", request.param == "passes")


def code_of(compiled):
    return compiled._compiled if isinstance(compiled, OptimizedModule) else compiled._compiled_code


def train(model, opt, data, step_fn=None):
    losses = []
    for x, y in data:
        loss = loss_of(model, x, y)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("name", sorted(MODELS))
def test_compiled_module_in_eager_training_loop_matches_eager_bit_for_bit(name):
    (eager, compiled), data_fn = build_pair(name)
    model, opt = compiled
    cmodel = fl.compile(model)
    calls = []
    model.register_forward_hook(lambda *a: calls.append(1))  # fires only when the Python forward runs
    data = batches(data_fn, n=20)
    fl.manual_seed(3)
    want = train(*eager, data)
    fl.manual_seed(3)
    got = []
    for x, y in data:
        out = cmodel(x)
        assert out.grad_fn.name() == "CompiledFunctionBackward"
        loss = _loss_from(model, out, y)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad()
        got.append(loss.item())
    assert got == want
    for (k, a), b in zip(eager[0].state_dict().items(), model.state_dict().values()):
        assert fl.equal(a, b), k
    code = code_of(cmodel)
    assert code.captures == 1 and len(calls) == 1
    plan = next(iter(code.entries.values()))
    assert plan.backward is not None and len(plan.backward) > 0


def _loss_from(model, out, y):
    from test_capture_replay import LSTMTagger, TinyGPT
    if isinstance(model, TinyGPT):
        return F.cross_entropy(out.flatten(0, 1), y.flatten())
    if isinstance(model, LSTMTagger):
        return F.mse_loss(out, y)
    return F.cross_entropy(out, y)


def test_gradients_reach_inputs_and_eager_graph_outside():
    fl.manual_seed(0)
    lin = nn.Linear(5, 4)
    emb = nn.Linear(3, 5)
    f = fl.compile(lambda h: (lin(h).tanh() * 2).sum(-1))
    grads = []
    for _ in range(3):
        x = fl.randn(6, 3, requires_grad=True)
        out = f(emb(x) * 1.5)  # the input carries eager history into the compiled call
        out.pow(2).mean().backward()
        grads.append((x.grad.clone(), lin.weight.grad.clone(), emb.weight.grad.clone()))
        for p in (*lin.parameters(), *emb.parameters()):
            p.grad = None
        x2 = x.detach().requires_grad_()
        ((lin(emb(x2) * 1.5).tanh() * 2).sum(-1)).pow(2).mean().backward()
        assert fl.equal(x2.grad, grads[-1][0])
        assert fl.allclose(lin.weight.grad, grads[-1][1]) and fl.allclose(emb.weight.grad, grads[-1][2])
        for p in (*lin.parameters(), *emb.parameters()):
            p.grad = None
    assert f._compiled_code.captures == 1


def test_inference_is_replayed_and_outputs_have_no_history():
    fl.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 2)).eval()
    cm = fl.compile(model)
    calls = []
    model.register_forward_hook(lambda *a: calls.append(1))
    with fl.no_grad():
        for _ in range(4):
            x = fl.randn(3, 4)
            assert fl.equal(cm(x), model(x))
    assert len(calls) == 4 + 1  # one capture plus the four eager references
    assert cm._compiled.captures == 1


def test_calls_whose_outputs_never_reach_backward_replay_and_a_late_backward_still_works():
    """An evaluation loop with grad mode on: one capture, then forward replays (not a capture per call); a backward
    through a replayed call reruns it once to record the backward program, with the same dropout draws and without
    updating BatchNorm's statistics twice."""
    fl.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.3), nn.BatchNorm1d(8), nn.GELU(), nn.Linear(8, 2))
    ref = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.3), nn.BatchNorm1d(8), nn.GELU(), nn.Linear(8, 2))
    ref.load_state_dict(model.state_dict())
    cm = fl.compile(model)
    code = cm._compiled
    x = fl.randn(16, 4)
    for i in range(4):
        fl.manual_seed(i)
        out = cm(x)
        fl.manual_seed(i)
        assert fl.equal(out, ref(x))
    assert code.captures == 1
    for seed in (7, 8):  # the first backward records the backward program, the second replays it
        fl.manual_seed(seed)
        out = cm(x)
        fl.manual_seed(seed)
        expected = ref(x)
        assert fl.equal(out, expected)
        out.square().sum().backward()
        expected.square().sum().backward()
        for p, q in zip(model.parameters(), ref.parameters()):
            assert fl.allclose(p.grad, q.grad, rtol=1e-5, atol=1e-6)
            p.grad = q.grad = None
        assert fl.equal(model[2].running_mean, ref[2].running_mean)
    assert code.captures == 2 and code.entries[next(reversed(code.entries))].backward is not None


def test_guards_on_the_attributes_of_settings_objects():
    """A config object read by a compiled function (a global) or held by a compiled module: changing one of its
    plain attributes captures again instead of running a program that fixed the old value."""
    import types
    settings = types.SimpleNamespace(scale=2.0)

    def f(x):
        return x * settings.scale
    cf = fl.compile(f)
    x = fl.ones(3)
    assert fl.equal(cf(x), x * 2) and fl.equal(cf(x), x * 2)
    settings.scale = 3.0
    assert fl.equal(cf(x), x * 3) and cf._compiled_code.captures == 2

    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(2, 2)
            self.config = types.SimpleNamespace(mult=1.0, name="a")

        def forward(self, x):
            return self.lin(x) * self.config.mult
    model = Scaled()
    cm = fl.compile(model)
    with fl.no_grad():
        y = fl.ones(1, 2)
        first = cm(y)
        assert fl.equal(cm(y), first)
        model.config.mult = 5.0
        assert fl.allclose(cm(y), first * 5)
        model.config = types.SimpleNamespace(mult=-1.0, name="b")  # a new settings object
        assert fl.allclose(cm(y), -first)
    assert cm._compiled.captures == 3


def test_guards_recapture_and_log_the_failed_guard(caplog):
    fl.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    cm = fl.compile(model)
    code = cm._compiled
    with caplog.at_level(logging.DEBUG, logger="flowlike.compile"):
        with fl.no_grad():
            cm(fl.randn(2, 4))
            cm(fl.randn(2, 4))
            assert code.captures == 1
            cm(fl.randn(3, 4).double().float())  # a new shape
            assert code.captures == 2
            model.eval()
            out = cm(fl.randn(3, 4))
            assert code.captures == 3
            x = fl.randn(3, 4)
            assert fl.equal(cm(x), model(x))  # eval: no dropout
    assert "guard failed: tensor shapes/dtypes/requires_grad" in caplog.text
    assert "guard failed: train/eval flags or module attributes" in caplog.text
    assert out.shape == (3, 4)


SCALE = 2.0


def test_guard_on_python_values_read_and_non_tensor_arguments():
    def f(x, k):
        return x * SCALE + k

    cf = fl.compile(f)
    x = fl.ones(2)
    assert cf(x, 1).tolist() == [3.0, 3.0]
    assert cf(x, 2).tolist() == [4.0, 4.0]  # another argument value: captured again
    global SCALE
    SCALE = 3.0
    try:
        assert cf(x, 2).tolist() == [5.0, 5.0]
    finally:
        SCALE = 2.0
    assert cf._compiled_code.captures == 3


def test_recompile_limit_warns_and_runs_eagerly():
    f = fl.compile(lambda x: x + 1)
    with fl._dynamo.config.patch(recompile_limit=2):
        f(fl.ones(1))
        f(fl.ones(2))
        with pytest.warns(UserWarning, match=r"recompile_limit \(2\)"):
            assert f(fl.ones(3)).tolist() == [2.0] * 3
    assert f._compiled_code.captures == 2
    assert fl._dynamo.config.cache_size_limit == fl._dynamo.config.recompile_limit == 8


class Breaks(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(4, 4), nn.Linear(4, 2)

    def forward(self, x):
        h = self.a(x)
        if h.sum() > 0:  # a host read: the graph breaks here
            h = h * 2
        return self.b(h)


def test_graph_break_in_module_runs_children_as_pieces_and_matches_eager():
    fl.manual_seed(0)
    model = Breaks()
    ref = copy.deepcopy(model)
    cm = fl.compile(model)
    for _ in range(3):
        x = fl.randn(3, 4)
        out, want = cm(x), ref(x)
        assert fl.equal(out, want)
        out.sum().backward()
        want.sum().backward()
    for p, q in zip(model.parameters(), ref.parameters()):
        assert fl.equal(p.grad, q.grad)
    code = cm._compiled
    assert code.captures == 0 and code.all_captures() == 2  # the two Linear children
    assert len(code.breaks) == 1 and "test_compile.py" in code.breaks[0].where


@pytest.mark.parametrize("pattern", ["item", "tolist", "bool", "numpy"])
def test_explain_lists_breaks_with_reason_and_line(pattern):
    def f(x):
        y = x * 2
        if pattern == "item":
            s = y.sum().item()
        elif pattern == "tolist":
            s = y.tolist()[0]
        elif pattern == "bool":
            s = 1.0 if y.sum() > 0 else -1.0
        else:
            s = float(y.numpy().sum())
        return y + s

    x = fl.randn(3)
    report = fl.compiler.explain(f, x)
    # the function is split at the breaking statement: one graph before it, one after (as torch's explain)
    assert report.graph_break_count == 1 and report.graph_count == 2
    brk = report.break_reasons[0]
    assert "on the host" in brk.reason
    assert brk.where.startswith(__file__) and int(brk.where.rsplit(":", 1)[1]) > 0
    assert "Graph Break Count: 1" in str(report)
    assert fl.allclose(fl.compile(f)(x), f(x))


def test_explain_of_a_module_counts_piece_graphs():
    report = fl._dynamo.explain(Breaks())(fl.randn(2, 4))
    assert report.graph_break_count == 1 and report.graph_count == 2


def test_fullgraph_raises_naming_the_line():
    def f(x):
        return x * x.sum().item()

    with pytest.raises(fl._dynamo.exc.Unsupported, match=r"test_compile.py:\d+"):
        fl.compile(f, fullgraph=True)(fl.ones(2))


def test_break_puts_back_state_changed_before_it():
    bn = nn.BatchNorm1d(3)

    def f(x):
        y = bn(x)
        return y * y.mean().item()

    ref = copy.deepcopy(bn)
    x = fl.randn(4, 3)
    out = fl.compile(f)(x)
    y = ref(x)
    assert fl.equal(out, y * y.mean().item())
    assert fl.equal(bn.running_mean, ref.running_mean) and int(bn.num_batches_tracked) == 1


def test_is_compiling_and_disable():
    seen = []

    @fl.compiler.disable
    def eager_only(x):
        seen.append(fl.compiler.is_compiling())
        return x + 1

    @fl.compile
    def f(x):
        seen.append(fl.compiler.is_compiling())
        return eager_only(x) * 2

    assert f(fl.ones(2)).tolist() == [4.0, 4.0]
    # the capture sees is_compiling() and breaks at the disabled call; the function is split there: its first
    # statement is captured on its own (is_compiling() again), the disabled call runs eagerly
    assert seen == [True, True, False] and not fl.compiler.is_compiling()
    code = f._compiled_code
    assert code.captures == 0 and "eager_only" in code.breaks[0].reason and "test_compile.py" in code.breaks[0].where


def test_decorator_forms_options_and_unknown_backend(monkeypatch):
    import flowlike.graph.compile as compile_module
    monkeypatch.setattr(compile_module, "_warned", set())  # (warned once per process)

    @fl.compile(fullgraph=False, dynamic=False, mode="max-autotune")
    def f(x):
        return x.sin()

    assert fl.equal(f(fl.ones(2)), fl.ones(2).sin())
    with pytest.warns(UserWarning, match="backend 'tvm_fancy'"):
        g = fl.compile(lambda x: x + 1, backend="tvm_fancy")
    assert g(fl.ones(1)).item() == 2.0
    with pytest.raises(RuntimeError, match="Either mode or options"):
        fl.compile(f, mode="default", options={})
    with pytest.raises(AssertionError):
        fl.compile(3)
    assert fl.compile(f, disable=True) is f


def test_optimized_module_behaves_as_the_module():
    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
    model.extra = 7
    cm = fl.compile(model)
    assert isinstance(cm, OptimizedModule) and cm._orig_mod is model and cm.extra == 7
    assert list(cm.state_dict()) == ["_orig_mod.0.weight", "_orig_mod.0.bias"]
    assert len(list(cm.parameters())) == 2 and cm.training
    cm.eval()
    assert not model.training


def test_module_compile_in_place_keeps_state_dict_keys():
    fl.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 3), nn.Tanh())
    ref = copy.deepcopy(model)
    model.compile()
    assert list(model.state_dict()) == ["0.weight", "0.bias"]
    for _ in range(3):
        x = fl.randn(4, 2)
        assert fl.equal(model(x), ref(x))
    assert model.forward.captures == 1


def test_reset_forgets_programs():
    f = fl.compile(lambda x: x * 3)
    f(fl.ones(2))
    fl._dynamo.reset()
    f(fl.ones(2))
    assert f._compiled_code.captures == 2


def test_compiled_module_inside_nn_graph_is_part_of_its_program():
    fl.manual_seed(0)
    model = nn.Linear(3, 2)
    cm = fl.compile(model)

    class G(nn.Graph):
        def __init__(self):
            super().__init__()
            self.m = cm

        def build(self, x):
            return self.m(x)

    g = G()
    x = fl.randn(2, 3)
    with fl.no_grad():
        assert fl.equal(g(x), model(x)) and fl.equal(g(x), model(x))
    assert cm._compiled.captures == 0


def _gpt_example():
    from test_capture_replay import _example
    return _example("train_gpt")


def test_gpt_sequence_length_sweep_is_served_by_one_program(caplog):
    fl.manual_seed(0)
    model = _gpt_example().build_model(fl, 20, d_model=32, heads=4, layers=2, context=128)
    ref = copy.deepcopy(model)
    cm = fl.compile(model)
    opts = [fl.optim.SGD(m.parameters(), lr=0.01) for m in (model, ref)]
    lengths = list(range(8, 129, 4)) + [128, 9]
    with caplog.at_level(logging.DEBUG, logger="flowlike.compile"):
        for t in lengths:
            idx, y = fl.randint(0, 20, (2, t)), fl.randint(0, 20, (2, t))
            losses = []
            for m, opt in zip((cm, ref), opts):
                _, loss = m(idx, y)
                loss.backward()
                opt.step()
                opt.zero_grad()
                losses.append(loss.item())
            assert losses[0] == losses[1], t
    for p, q in zip(model.parameters(), ref.parameters()):
        assert fl.equal(p, q)
    code = cm._compiled
    # two captures fit the symbolic length, a third checks the fit; every other length runs that one program
    assert code.captures == 3 and code.symbolic.verified and code.symbolic.positions == [(0, 1), (1, 1)]
    assert "made symbolic (sizes 8, 12)" in caplog.text and "holds at size 16" in caplog.text


def test_cnn_batch_sweep_is_served_by_one_program():
    from test_capture_replay import _example
    fl.manual_seed(0)
    model = _example("train_cnn").build_model(fl)
    ref = copy.deepcopy(model)
    cm = fl.compile(model)
    for batch in [4, 7, 2, 16, 9, 32, 5, 3]:
        x = fl.randn(batch, 1, 12, 12)
        out, want = cm(x), ref(x)
        assert fl.equal(out, want), batch
        out.square().mean().backward()
        want.square().mean().backward()
        for p, q in zip(model.parameters(), ref.parameters()):
            assert fl.equal(p.grad, q.grad), batch
            p.grad = q.grad = None
    assert fl.equal(model.features[1].running_mean, ref.features[1].running_mean)
    assert cm._compiled.captures == 3 and cm._compiled.symbolic.verified


def test_a_size_that_comes_back_gets_fused_kernels_in_the_symbolic_program():
    def gelu_tanh(x):  # tanh-GELU written out: one fused kernel per size it is built for
        return 0.5 * x * (1.0 + fl.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))
    f = fl.compile(gelu_tanh)
    for n in (8, 12, 16, 20, 24, 24):
        x = fl.randn(n, 4, requires_grad=True)
        x_ref = x.detach().requires_grad_()
        out, want = f(x), gelu_tanh(x_ref)
        assert fl.equal(out, want), n  # pointwise groups give eager's bits
        out.sum().backward()
        want.sum().backward()
        assert fl.equal(x.grad, x_ref.grad), n
    code = f._compiled_code
    assert code.captures == 3 and code.symbolic.verified
    sizes = code.symbolic.sizes
    assert sizes[24].fusion is not None and sizes[24].fusion.groups and sizes[24].backward_fusion.groups
    assert sizes[20].fusion is None  # met once: no compiler run


def test_dynamic_false_specializes_each_size():
    f = fl.compile(lambda x: x.view(x.shape[0] * 2, -1).sum(1), dynamic=False)
    for n in (2, 3, 4, 5):
        assert f(fl.ones(n, 4)).tolist() == [2.0] * (2 * n)
    assert f._compiled_code.captures == 4 and f._compiled_code.symbolic is None


def test_size_dependent_float_is_not_made_symbolic():
    f = fl.compile(lambda x: x * (1.0 / x.shape[0]))  # a float argument that follows the size: no fit
    for n in (2, 3, 4, 5):
        assert fl.allclose(f(fl.ones(n)), fl.ones(n) / n)
    assert f._compiled_code.captures == 4 and f._compiled_code.symbolic is None


def test_wrong_fit_is_caught_at_the_third_size():
    f = fl.compile(lambda x: x.reshape(x.shape[0] * x.shape[0]).sum())  # n*n is not affine in n
    for n in (2, 3, 4, 5, 6):
        assert f(fl.ones(n, n)).item() == n * n
    code = f._compiled_code
    assert code.captures == 5 and code.symbolic is None


def test_backward_recomputes_cheap_pointwise_values_instead_of_saving_them():
    fl.manual_seed(0)
    model = nn.Sequential(nn.Linear(12, 32), nn.GELU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 4))
    ref = copy.deepcopy(model)
    cm = fl.compile(model)
    for _ in range(3):
        x = fl.randn(4, 12)
        cm(x).square().sum().backward()
        ref(x).square().sum().backward()
        for p, q in zip(model.parameters(), ref.parameters()):
            assert fl.equal(p.grad, q.grad)
            p.grad = q.grad = None
    plan = next(iter(cm._compiled.entries.values()))
    ops = plan.program.ops
    made_by = {}
    for name, (_, _, _, results) in zip(ops, plan.program.export()[0]):
        for ids in results:
            made_by.update({vid: name for vid in ids})
    kept = [made_by[vid] for vid in plan.wanted]
    # the activations' inputs are kept, their outputs are recomputed by the backward program's first calls
    assert "gelu" not in kept and "relu" not in kept and kept.count("addmm") == 3
    assert sorted(plan.backward.ops[:2]) == ["gelu", "relu"]


def test_function_that_breaks_in_its_own_code_is_split_around_the_break():
    fl.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    ref = copy.deepcopy(model)

    def step(x):
        out = model(x)
        scale = out.abs().max().item()  # breaks the function's graph
        return out / scale

    cstep = fl.compile(step)
    for _ in range(3):
        x = fl.randn(5, 4)
        got = cstep(x)
        want = ref(x)
        want = want / want.abs().max().item()
        assert fl.equal(got, want)
        got.sum().backward()
        want.sum().backward()
    for p, q in zip(model.parameters(), ref.parameters()):
        assert fl.equal(p.grad, q.grad)
    code = cstep._compiled_code
    # one program before the breaking statement, one after: the host-read value enters the second as an input, so
    # new values do not capture it again
    assert code.captures == 0 and code.all_captures() == 2 and len(code.breaks) == 1
    report = fl.compiler.explain(step, fl.randn(5, 4))
    assert report.graph_count == 2 and report.graph_break_count == 1


def test_torch_names_under_mock_torch():
    from flowlike.compat import mock_torch
    with mock_torch():
        import torch
        import torch._dynamo
        from torch._dynamo.eval_frame import OptimizedModule as Optimized
        compiled = torch.compile(torch.nn.ReLU())
        assert isinstance(compiled, Optimized) and torch.compile is fl.compile
        old = torch._dynamo.config.recompile_limit
        torch._dynamo.config.cache_size_limit = 3  # torch's older name of the same option
        try:
            assert torch._dynamo.config.recompile_limit == 3
        finally:
            torch._dynamo.config.recompile_limit = old
        assert torch.compiler.is_compiling() is False and torch._dynamo.is_compiling() is False
        with pytest.raises(AttributeError, match="no option"):
            torch._dynamo.config.patch(not_an_option=1)


def test_explicit_generator_draws_keep_their_own_programs():
    g = fl.Generator()

    def f(x):
        return (x * fl.rand(x.shape, generator=g)).relu()

    cf = fl.compile(f)
    for n in (3, 4, 5):
        x = fl.randn(n, requires_grad=True)
        g.manual_seed(n)
        got = cf(x)
        got.sum().backward()
        g.manual_seed(n)
        x2 = x.detach().requires_grad_()
        want = f(x2)
        want.sum().backward()
        assert fl.equal(got, want) and fl.equal(x.grad, x2.grad)
    assert cf._compiled_code.captures == 3 and cf._compiled_code.symbolic is None  # no symbolic program


def test_compiled_forward_method_takes_self_as_a_guarded_argument():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin, self.drop = nn.Linear(3, 3), nn.Dropout(0.5)

        @fl.compile
        def forward(self, x):
            return self.drop(self.lin(x)).tanh()

    fl.manual_seed(0)
    net = Net()
    ref = copy.deepcopy(net)
    code = Net.forward._compiled_code
    x = fl.randn(4, 3)
    for mode in (True, True, False, False):
        net.train(mode)
        ref.train(mode)
        fl.manual_seed(1)
        got = net(x)
        fl.manual_seed(1)
        want = type(ref).forward.__wrapped__(ref, x)
        assert fl.equal(got, want)
        got.sum().backward()
        want.sum().backward()
    for p, q in zip(net.parameters(), ref.parameters()):
        assert fl.equal(p.grad, q.grad)
    assert code.captures == 2 and not code.breaks  # train and eval


def test_double_backward_through_compiled_code_is_an_error():
    f = fl.compile(lambda x: (x * x).sum())
    x = fl.ones(3, requires_grad=True)
    f(x).backward()  # the capture
    with pytest.raises(RuntimeError, match="does not currently support double backward"):
        fl.autograd.grad(f(x), x, create_graph=True)


def test_compiled_programs_run_fused_kernels_with_eager_bits():
    fl.manual_seed(0)

    def gelu(x):
        return 0.5 * x * (1.0 + fl.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))

    cf = fl.compile(gelu)
    x = fl.randn(1000)
    cf(x)
    assert fl.equal(cf(x), gelu(x))
    plan = next(iter(cf._compiled_code.entries.values()))
    assert plan.fusion.installed and len(plan.fusion.groups) == 1

    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 2))
    ref = copy.deepcopy(model)
    cm = fl.compile(model)
    for _ in range(3):
        x = fl.randn(5, 8)
        (cm(x) * 3).exp().sum().backward()
        (ref(x) * 3).exp().sum().backward()
        for p, q in zip(model.parameters(), ref.parameters()):
            assert fl.equal(p.grad, q.grad)
            p.grad = q.grad = None
    plan = next(iter(cm._compiled.entries.values()))
    assert plan.backward_fusion.installed and plan.backward_fusion.groups  # tanh's backward chain


def test_whole_training_step_compiled_breaks_and_matches_eager():
    (eager, compiled), data_fn = build_pair("mlp_adam")
    model, opt = compiled

    @fl.compile
    def step(x, y):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss

    data = batches(data_fn, n=6)
    fl.manual_seed(3)
    want = [_eager_step(*eager, x, y) for x, y in data]
    fl.manual_seed(3)
    got = [step(x, y).item() for x, y in data]
    assert got == want
    for (k, a), b in zip(eager[0].state_dict().items(), model.state_dict().values()):
        assert fl.equal(a, b), k
    code = step._compiled_code
    # the first step creates the optimizer's state: a break (the model runs as a piece); from the second step on
    # the whole step (forward, backward, update in place) is one program
    assert "rebinds parameters' .grad or optimizer state" in code.breaks[0].reason
    assert code.captures == 1 and code.all_captures() == 2 and len(code.breaks) == 1

    (_, (model2, opt2)), _ = build_pair("mlp_adam")

    def fresh_step(x, y):
        F.cross_entropy(model2(x), y).backward()
        opt2.step()

    with pytest.raises(fl._dynamo.exc.Unsupported, match="optimizer state"):
        fl.compile(fresh_step, fullgraph=True)(*data[0])


def test_compiled_step_that_runs_its_optimizer_replays():
    fl.manual_seed(0)
    model = nn.Linear(3, 2)
    ref = copy.deepcopy(model)
    opt, ref_opt = fl.optim.SGD(model.parameters(), lr=0.1), fl.optim.SGD(ref.parameters(), lr=0.1)
    ran = []

    @fl.compile
    def step(x):
        ran.append(1)
        loss = model(x).square().sum()
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss

    xs = [fl.randn(4, 3) for _ in range(4)]
    got = [step(x) for x in xs]  # the results are kept: none of them waits for a backward
    want = []
    for x in xs:
        loss = ref(x).square().sum()
        loss.backward()
        ref_opt.step()
        ref_opt.zero_grad()
        want.append(loss)
    assert len(ran) == 1 and step._compiled_code.captures == 1  # the later calls replay the program
    assert [g.item() for g in got] == [w.item() for w in want]
    assert all(g.grad_fn is None for g in got)  # the step's backward ran inside it
    assert fl.equal(model.weight, ref.weight) and fl.equal(model.bias, ref.bias)


def test_replayed_training_calls_free_their_saved_values():
    fl.manual_seed(0)
    model = fl.compile(nn.Sequential(nn.Linear(3, 4), nn.Tanh()))
    x = fl.randn(2, 3)
    for _ in range(3):
        model(x).sum().backward()
    out = model(x)  # a replay without a backward: its node holds the values the backward would read
    assert model._compiled.captures == 1
    del out
    gc.collect()
    assert not [o for o in gc.get_objects() if type(o) is _ReplayCall]


def test_learning_rate_change_recaptures_a_compiled_step():
    fl.manual_seed(0)
    w = nn.Parameter(fl.randn(3))
    opt = fl.optim.SGD([w], lr=0.1)
    w.grad = fl.ones(3)

    @fl.compile
    def update():
        opt.step()

    before = w.detach().clone()
    update()
    update()
    opt.param_groups[0]["lr"] = 0.5
    update()
    assert fl.allclose(w, before - 0.7) and update._compiled_code.captures == 2


def _eager_step(model, opt, x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    return loss.item()


def test_split_training_step_with_two_breaks_equals_eager():
    """A training step (a closure over its model and optimizer) with two host reads of its own: it is split at the
    first, its later part again at the second; the backward runs eagerly through the compiled forward's node."""
    fl.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 1))
    ref = copy.deepcopy(model)

    def make(m):
        opt = fl.optim.SGD(m.parameters(), lr=0.1)
        seen = []

        def step(x, y):
            out = m(x)
            loss = ((out - y) ** 2).mean()
            seen.append(loss.item())
            loss.backward()
            if out.sum().item() > 1e6:
                return None
            opt.step()
            opt.zero_grad()
            return loss.detach() * 2
        return step, seen
    (step, seen), (ref_step, ref_seen) = make(model), make(ref)
    cstep = fl.compile(step)
    counts = []
    for _ in range(5):
        x, y = fl.randn(5, 4), fl.randn(5, 1)
        assert fl.equal(cstep(x, y), ref_step(x, y))
        counts.append(cstep._compiled_code.all_captures())
    assert seen == ref_seen
    for p, q in zip(model.parameters(), ref.parameters()):
        assert fl.equal(p, q)
    breaks = cstep._compiled_code.all_breaks()
    lines = {int(b.where.rsplit(":", 1)[1]) for b in breaks if b.where.startswith(__file__)}
    assert len(lines) == 2  # the two host reads, each named by its line
    assert counts[1] >= 1 and counts[-1] == counts[1]  # the forward segment is a program, replayed from then on


def test_split_keeps_returns_methods_and_host_numbers():
    class Scaler:
        def __init__(self):
            self.lin = nn.Linear(3, 3)

        def run(self, x, early=False):
            h = self.lin(x).tanh()
            if early:
                return h
            top = h.abs().max().item()  # a host read
            return h / top + 1

    fl.manual_seed(0)
    obj = Scaler()
    compiled = fl.compile(obj.run)
    with fl.no_grad():
        for k in range(12):  # twelve host values: the last segment takes each as an input, no capture per value
            x = fl.randn(2, 3) * (k + 1)
            want = obj.run(x)
            assert fl.allclose(compiled(x), want, rtol=1e-6, atol=1e-7)
            assert fl.equal(compiled(x, early=True), obj.lin(x).tanh())
    code = compiled._compiled_code
    assert len(code.breaks) == 1 and code.all_captures() <= 4
