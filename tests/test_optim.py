"""Optimizers, learning-rate schedulers and swa_utils (no torch needed)."""
import math

import numpy as np
import pytest

import flowlike as torch
from flowlike import nn, optim
from flowlike.optim import lr_scheduler


def _quadratic_run(make_opt, steps=200):
    """Minimizes ||w - target||^2 from w = 0; returns the final distance."""
    target = torch.tensor([1.0, -2.0, 3.0])
    w = nn.Parameter(torch.zeros(3))
    opt = make_opt([w])
    for _ in range(steps):
        opt.zero_grad()
        loss = ((w - target) ** 2).sum()
        loss.backward()
        opt.step()
    return float((w.detach() - target).abs().max())


@pytest.mark.parametrize("make_opt", [
    lambda p: optim.SGD(p, lr=0.1),
    lambda p: optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True),
    lambda p: optim.Adam(p, lr=0.1),
    lambda p: optim.Adam(p, lr=0.1, amsgrad=True),
    lambda p: optim.AdamW(p, lr=0.1, weight_decay=0.0),
    lambda p: optim.RMSprop(p, lr=0.05),
    lambda p: optim.Adagrad(p, lr=0.5),
    lambda p: optim.Adadelta(p, lr=50.0),
    lambda p: optim.Adamax(p, lr=0.1),
    lambda p: optim.NAdam(p, lr=0.1),
    lambda p: optim.RAdam(p, lr=0.1),
])
def test_optimizers_converge(make_opt):
    assert _quadratic_run(make_opt, 300) < 5e-2


def test_sgd_exact_update():
    w = nn.Parameter(torch.tensor([1.0, 2.0]))
    opt = optim.SGD([w], lr=0.1, momentum=0.5, weight_decay=0.1)
    for _ in range(2):
        w.grad = torch.tensor([1.0, 1.0])
        opt.step()
    # step 1: g = 1 + 0.1 w; buf = g; w -= 0.1 buf. step 2: buf = 0.5 buf + g'.
    w0 = np.array([1.0, 2.0])
    g1 = 1 + 0.1 * w0
    w1 = w0 - 0.1 * g1
    buf = 0.5 * g1 + (1 + 0.1 * w1)
    assert np.allclose(w.detach().numpy(), w1 - 0.1 * buf, atol=1e-6)
    sd = opt.state_dict()
    assert list(sd["state"].keys()) == [0] and "momentum_buffer" in sd["state"][0]


def test_lbfgs():
    target = torch.tensor([1.0, -2.0])
    for ls in (None, "strong_wolfe"):
        w = nn.Parameter(torch.zeros(2))
        opt = optim.LBFGS([w], lr=1, line_search_fn=ls)

        def closure():
            opt.zero_grad()
            loss = ((w - target) ** 2).sum() + (w ** 4).sum() * 0.01
            loss.backward()
            return loss
        for _ in range(5):
            opt.step(closure)
        g = 2 * (w.detach() - target) + 0.04 * w.detach() ** 3
        assert float(g.abs().max()) < 1e-4


def test_param_groups_state_dict_roundtrip():
    a, b = nn.Parameter(torch.ones(2)), nn.Parameter(torch.ones(3))
    opt = optim.Adam([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)
    assert opt.param_groups[1]["lr"] == 0.5 and opt.param_groups[0]["betas"] == (0.9, 0.999)
    a.grad, b.grad = torch.ones(2), torch.ones(3)
    opt.step()
    sd = opt.state_dict()
    assert sd["param_groups"][1]["params"] == [1]
    assert set(sd["state"][1]) == {"step", "exp_avg", "exp_avg_sq"}
    assert sd["state"][0]["step"].dtype == torch.float32 and float(sd["state"][0]["step"]) == 1.0
    a2, b2 = nn.Parameter(torch.ones(2)), nn.Parameter(torch.ones(3))
    opt2 = optim.Adam([{"params": [a2]}, {"params": [b2]}], lr=0.1)
    opt2.load_state_dict(sd)
    assert opt2.param_groups[1]["lr"] == 0.5
    assert np.array_equal(opt2.state[b2]["exp_avg"].numpy(), opt.state[b]["exp_avg"].numpy())
    with pytest.raises(ValueError, match="different number of parameter groups"):
        optim.Adam([a2]).load_state_dict(sd)
    with pytest.raises(ValueError, match="more than one parameter group"):
        optim.SGD([{"params": [a]}, {"params": [a]}], lr=0.1)
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(ValueError, match="Invalid learning rate"):
        optim.Adam([a], lr=-1)
    with pytest.raises(TypeError):
        optim.SGD(a, lr=0.1)
    opt.add_param_group({"params": [nn.Parameter(torch.ones(1))]})
    assert opt.param_groups[2]["lr"] == 0.1
    assert repr(optim.SGD([a], lr=0.1)).startswith("SGD (\nParameter Group 0\n    dampening: 0\n")


def test_zero_grad_and_hooks():
    w = nn.Parameter(torch.ones(2))
    opt = optim.SGD([w], lr=1.0)
    calls = []
    opt.register_step_pre_hook(lambda o, a, k: calls.append("pre"))
    h = opt.register_step_post_hook(lambda o, a, k: calls.append("post"))
    w.grad = torch.ones(2)
    opt.step()
    h.remove()
    opt.step()
    assert calls == ["pre", "post", "pre"]
    opt.zero_grad(set_to_none=False)
    assert w.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert w.grad is None
    assert opt.step(lambda: 7) == 7


def test_maximize():
    w = nn.Parameter(torch.zeros(1))
    opt = optim.SGD([w], lr=0.5, maximize=True)
    w.grad = torch.ones(1)
    opt.step()
    assert w.tolist() == [0.5]


def _lrs(make_sched, n=8, lr=1.0):
    w = nn.Parameter(torch.zeros(1))
    opt = optim.SGD([w], lr=lr)
    s = make_sched(opt)
    out = []
    for _ in range(n):
        out.append(s.get_last_lr()[0])
        opt.step()
        s.step()
    return out


def test_schedulers():
    assert _lrs(lambda o: lr_scheduler.StepLR(o, 2, gamma=0.5), 6) == [1, 1, 0.5, 0.5, 0.25, 0.25]
    assert _lrs(lambda o: lr_scheduler.MultiStepLR(o, [1, 3], 0.1), 4) == pytest.approx([1, 0.1, 0.1, 0.01])
    assert _lrs(lambda o: lr_scheduler.LambdaLR(o, lambda e: 1 / (e + 1)), 3) == pytest.approx([1, 0.5, 1 / 3])
    assert _lrs(lambda o: lr_scheduler.ExponentialLR(o, 0.5), 3) == pytest.approx([1, 0.5, 0.25])
    assert _lrs(lambda o: lr_scheduler.ConstantLR(o, 0.5, total_iters=2), 3) == pytest.approx([0.5, 0.5, 1])
    cos = _lrs(lambda o: lr_scheduler.CosineAnnealingLR(o, T_max=4), 5)
    assert cos == pytest.approx([0.5 * (1 + math.cos(math.pi * i / 4)) for i in range(5)])
    one = _lrs(lambda o: lr_scheduler.OneCycleLR(o, max_lr=1.0, total_steps=10), 10)
    assert max(one) == pytest.approx(1.0) and one[0] < 0.1
    w = nn.Parameter(torch.zeros(1))
    opt = optim.SGD([w], lr=1.0)
    plateau = lr_scheduler.ReduceLROnPlateau(opt, patience=1, factor=0.5)
    for metric in [1.0, 1.0, 1.0, 1.0]:
        plateau.step(metric)
    assert opt.param_groups[0]["lr"] == 0.5
    s = lr_scheduler.StepLR(opt, 3)
    sd = s.state_dict()
    assert "optimizer" not in sd and sd["step_size"] == 3


@pytest.mark.parametrize("name,kwargs", [
    ("SGD", dict(lr=0.1)), ("SGD", dict(lr=0.1, momentum=0.9, weight_decay=0.1, nesterov=True, maximize=True)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3)),
    ("Adam", dict(lr=0.1, weight_decay=0.1)), ("Adam", dict(lr=0.1, amsgrad=True, maximize=True)),
    ("AdamW", dict(lr=0.1, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01)), ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, centered=True, maximize=True)), ("RMSprop", dict(lr=0.01, momentum=0.5)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.1, weight_decay=0.1, initial_accumulator_value=0.1, maximize=True)),
    ("Adadelta", dict(rho=0.8, weight_decay=0.1)), ("Adadelta", dict(maximize=True)),
    ("Adamax", dict(lr=0.1, weight_decay=0.1)), ("Adamax", dict(lr=0.1, betas=(0.3, 0.9), maximize=True)),
    ("NAdam", dict(lr=0.1, weight_decay=0.1)),
    ("NAdam", dict(lr=0.1, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", dict(lr=0.1, betas=(0.9, 0.9), weight_decay=0.1)),
    ("RAdam", dict(lr=0.1, betas=(0.9, 0.9), weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_fused_step_matches_per_op_path(name, kwargs, dtype):
    """Contiguous float params take the fused C++ step; a transposed (non-contiguous) copy takes the per-op path."""
    rs = np.random.RandomState(0)
    init = rs.randn(3, 4)
    fused = nn.Parameter(torch.tensor(init, dtype=dtype))
    per_op = nn.Parameter(torch.tensor(init.T.copy(), dtype=dtype).t())
    assert fused.is_contiguous() and not per_op.is_contiguous()
    opt_a = getattr(optim, name)([fused], **kwargs)
    opt_b = getattr(optim, name)([per_op], **kwargs)
    for _ in range(8):
        g = rs.randn(3, 4)
        fused.grad = torch.tensor(g, dtype=dtype)
        per_op.grad = torch.tensor(g.T.copy(), dtype=dtype).t()
        opt_a.step()
        opt_b.step()
        tol = 1e-6 if dtype == torch.float32 else 1e-12
        np.testing.assert_allclose(fused.detach().numpy(), per_op.detach().numpy(), rtol=tol, atol=tol)
    assert set(opt_a.state[fused]) == set(opt_b.state[per_op])


def test_fused_kernel_rejects_bad_lists():
    p = nn.Parameter(torch.ones(3))
    with pytest.raises(ValueError):
        torch._C._fused_sgd_([p], [], [], lr=0.1, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False,
                             maximize=False, is_first_step=False)
    with pytest.raises(TypeError):
        torch._C._fused_sgd_([p], [torch.ones(3, dtype=torch.float64)], [], lr=0.1, momentum=0.0, dampening=0.0,
                             weight_decay=0.0, nesterov=False, maximize=False, is_first_step=False)
    with pytest.raises(ValueError):
        torch._C._fused_adam_([p], [torch.ones(4)], [torch.ones(3)], [torch.ones(3)], [], [torch.zeros(())], lr=0.1,
                              beta1=0.9, beta2=0.99, weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False,
                              decoupled_weight_decay=False)


def test_fused_kernels_reject_bad_lists_naming_the_op():
    p, g = nn.Parameter(torch.ones(3)), torch.ones(3)
    step = torch.zeros(())
    calls = {
        "_fused_rmsprop_": lambda **o: torch._C._fused_rmsprop_(
            o.get("params", [p]), [g], o.get("state", [torch.zeros(3)]), [], [], o.get("steps", [step]), lr=0.1,
            alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False, maximize=False),
        "_fused_adagrad_": lambda **o: torch._C._fused_adagrad_(
            o.get("params", [p]), [g], o.get("state", [torch.zeros(3)]), o.get("steps", [step]), lr=0.1, lr_decay=0.0,
            weight_decay=0.0, eps=1e-10, maximize=False),
        "_fused_adadelta_": lambda **o: torch._C._fused_adadelta_(
            o.get("params", [p]), [g], o.get("state", [torch.zeros(3)]), [torch.zeros(3)], o.get("steps", [step]),
            lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0, maximize=False),
        "_fused_adamax_": lambda **o: torch._C._fused_adamax_(
            o.get("params", [p]), [g], o.get("state", [torch.zeros(3)]), [torch.zeros(3)], o.get("steps", [step]),
            lr=0.1, beta1=0.9, beta2=0.99, eps=1e-8, weight_decay=0.0, maximize=False),
        "_fused_nadam_": lambda **o: torch._C._fused_nadam_(
            o.get("params", [p]), [g], o.get("state", [torch.zeros(3)]), [torch.zeros(3)], [torch.ones(())],
            o.get("steps", [step]), lr=0.1, beta1=0.9, beta2=0.99, eps=1e-8, weight_decay=0.0, momentum_decay=4e-3,
            decoupled_weight_decay=False, maximize=False),
        "_fused_radam_": lambda **o: torch._C._fused_radam_(
            o.get("params", [p]), [g], o.get("state", [torch.zeros(3)]), [torch.zeros(3)], o.get("steps", [step]),
            lr=0.1, beta1=0.9, beta2=0.99, eps=1e-8, weight_decay=0.0, decoupled_weight_decay=False, maximize=False),
    }
    for op, call in calls.items():
        with pytest.raises(ValueError, match=op):  # list lengths
            call(state=[])
        with pytest.raises(ValueError, match=op):  # shapes
            call(state=[torch.zeros(4)])
        with pytest.raises(ValueError, match=op):  # contiguity
            call(state=[torch.zeros(3, 2).t()[0]])
        with pytest.raises(TypeError, match=op):  # dtypes
            call(state=[torch.zeros(3, dtype=torch.float64)])
        with pytest.raises(TypeError, match=op):
            call(params=[nn.Parameter(torch.ones(3, dtype=torch.float16))], state=[torch.zeros(3, dtype=torch.float16)])
        with pytest.raises(TypeError, match=op):  # step counts
            call(steps=[torch.zeros(2)])
        with pytest.raises(ValueError, match=op):
            call(steps=[])
        assert float(step) == 0.0 and p.tolist() == [1.0, 1.0, 1.0]  # nothing was updated
        call()
        assert float(step) == 1.0 and p.tolist() != [1.0, 1.0, 1.0]
        step.zero_()
        p.data.fill_(1.0)


@pytest.mark.parametrize("name,kwargs", [("Rprop", dict(lr=0.1)), ("ASGD", dict(lr=0.1, t0=10))])
def test_rprop_asgd_minimize_quadratic(name, kwargs):
    p = nn.Parameter(torch.tensor([3.0, -2.0]))
    opt = getattr(torch.optim, name)([p], **kwargs)
    for _ in range(100):
        opt.zero_grad()
        (p ** 2).sum().backward()
        opt.step()
    assert float((p.detach() ** 2).sum()) < 1e-2
    assert set(opt.state[p]) == ({"step", "prev", "step_size"} if name == "Rprop" else {"step", "eta", "mu", "ax"})


def test_averaged_model_ema_and_update_bn():
    model = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    ema = torch.optim.swa_utils.AveragedModel(model, multi_avg_fn=torch.optim.swa_utils.get_ema_multi_avg_fn(0.5))
    w0 = model[0].weight.detach().clone()
    ema.update_parameters(model)  # the first update copies
    with torch.no_grad():
        model[0].weight.add_(1.0)
    ema.update_parameters(model)
    np.testing.assert_allclose(ema.module[0].weight.detach().numpy(), (w0 + 0.5).numpy(), rtol=1e-6)
    assert int(ema.n_averaged) == 2
    data = [torch.randn(8, 2) * 3 + 1 for _ in range(4)]
    torch.optim.swa_utils.update_bn(data, ema)
    hidden = torch.cat([ema.module[0](d) for d in data]).detach()
    np.testing.assert_allclose(ema.module[1].running_mean.numpy(), hidden.mean(0).numpy(), rtol=1e-4, atol=1e-5)
    assert ema.module[1].momentum == 0.1 and ema.training
