"""Optimizer trajectories, state_dict interchange and lr scheduler sequences against real torch."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402
from helpers import assert_same, run_both, to_flowlike  # noqa: E402

SHAPES = [(3, 4), (5,), ()]

CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.1, amsgrad=True)),
    ("Adam", dict(lr=0.01, maximize=True, decoupled_weight_decay=True, weight_decay=0.1)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, amsgrad=True, weight_decay=0.05, foreach=False)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.1)),
    ("Adadelta", dict(lr=1.0, rho=0.8, weight_decay=0.1)),
    ("Adamax", dict(lr=0.01, weight_decay=0.1)),
    ("NAdam", dict(lr=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.01)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
]


def _params(lib, rs):
    return [lib.nn.Parameter(lib.tensor(np.asarray(rs.randn(*s), np.float32))) for s in SHAPES]


def _run(opt_t, opt_f, pt, pf, rs, steps):
    for _ in range(steps):
        for p, q in zip(pt, pf):
            g = np.asarray(rs.randn(*p.shape), np.float32)
            p.grad, q.grad = torch.tensor(g), fl.tensor(g)
        opt_t.step()
        opt_f.step()
        for p, q in zip(pt, pf):
            assert_same(q.detach(), p.detach(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,kwargs", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_trajectory_and_state_dict(name, kwargs):
    pt, pf = _params(torch, np.random.RandomState(0)), _params(fl, np.random.RandomState(0))
    opt_t, opt_f = getattr(torch.optim, name)(pt, **kwargs), getattr(fl.optim, name)(pf, **kwargs)
    rs = np.random.RandomState(1)
    _run(opt_t, opt_f, pt, pf, rs, 6)
    sd_t, sd_f = opt_t.state_dict(), opt_f.state_dict()
    assert sd_f["param_groups"] == sd_t["param_groups"]
    assert sd_f["state"].keys() == sd_t["state"].keys()
    for k in sd_t["state"]:
        assert sd_f["state"][k].keys() == sd_t["state"][k].keys()
        for key, v in sd_t["state"][k].items():
            assert_same(sd_f["state"][k][key], v, rtol=1e-5, atol=1e-6)
    # A torch state_dict converted tensor by tensor continues the same trajectory in flowlike.
    pf2 = [fl.nn.Parameter(to_flowlike(p.detach())) for p in pt]
    opt_f2 = getattr(fl.optim, name)(pf2, **kwargs)
    opt_f2.load_state_dict({"state": {k: {key: to_flowlike(v) if isinstance(v, torch.Tensor) else v
                                          for key, v in s.items()} for k, s in sd_t["state"].items()},
                            "param_groups": sd_t["param_groups"]})
    _run(opt_t, opt_f2, pt, pf2, rs, 3)


FUSED_CASES = [
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1, maximize=True)),
    ("AdamW", dict(lr=0.01, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.9)),
    ("RMSprop", dict(lr=0.01, centered=True, alpha=0.9, eps=1e-6)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True, weight_decay=0.1, maximize=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05, initial_accumulator_value=0.5, eps=1e-6)),
    ("Adagrad", dict(lr=0.1, weight_decay=0.1, maximize=True)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.5, eps=1e-4, weight_decay=0.1)),
    ("Adadelta", dict(lr=2.0, maximize=True)),
    ("Adamax", dict(lr=0.01)),
    ("Adamax", dict(lr=0.01, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.1)),
    ("Adamax", dict(lr=0.01, maximize=True)),
    ("NAdam", dict(lr=0.01)),
    ("NAdam", dict(lr=0.01, momentum_decay=0.01, weight_decay=0.1)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", dict(lr=0.01)),
    ("RAdam", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
]


def _model_groups(lib, dtype, base, lr):
    """A Linear(5, 7) -> tanh -> Linear(7, 3) model in two param groups (the second at 0.3x the lr) plus a
    transposed (non-contiguous) parameter, which flowlike updates by the per-op path instead of the fused one."""
    model = lib.nn.Sequential(lib.nn.Linear(5, 7), lib.nn.Tanh(), lib.nn.Linear(7, 3)).to(getattr(lib, dtype))
    model.load_state_dict({k: lib.tensor(v) for k, v in base["model"].items()})
    extra = lib.nn.Parameter(lib.tensor(base["extra"].T.copy()).t())
    groups = [{"params": list(model[0].parameters())}, {"params": [*model[2].parameters(), extra], "lr": lr * 0.3}]
    return model, groups


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,kwargs", FUSED_CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(FUSED_CASES)])
def test_fused_step_trajectory_20_steps(name, kwargs, dtype):
    """20 steps on a small model from identical weights and gradients follow torch's parameters within rel 1e-5
    (the last layer's bias gets no gradient on odd steps, so step counts differ per parameter); the state_dicts
    agree, and torch's state_dict loaded into flowlike continues the same trajectory."""
    rs = np.random.RandomState(0)
    ref = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.Tanh(), torch.nn.Linear(7, 3)).to(getattr(torch, dtype))
    base = {"model": {k: v.numpy() for k, v in ref.state_dict().items()}, "extra": rs.randn(4, 3).astype(dtype)}
    lr = kwargs.get("lr", 1.0)
    (mt, gt), (mf, gf) = _model_groups(torch, dtype, base, lr), _model_groups(fl, dtype, base, lr)
    opt_t, opt_f = getattr(torch.optim, name)(gt, **kwargs), getattr(fl.optim, name)(gf, **kwargs)
    pt = [p for g in gt for p in g["params"]]
    rtol, atol = (1e-5, 1e-6) if dtype == "float32" else (1e-9, 1e-12)

    def run(opt_f, pf, steps):
        for step in range(steps):
            x, y = torch.tensor(rs.randn(8, 5).astype(dtype)), torch.tensor(rs.randn(8, 3).astype(dtype))
            opt_t.zero_grad()
            ((mt(x) - y) ** 2).mean().backward()
            pt[-1].grad = torch.tensor(rs.randn(3, 4).astype(dtype)).t()
            if step % 2:
                pt[-2].grad = None
            for p, q in zip(pt, pf):
                q.grad = None if p.grad is None else fl.tensor(p.grad.numpy())
            opt_t.step()
            opt_f.step()
            for p, q in zip(pt, pf):
                assert_same(q.detach(), p.detach(), rtol=rtol, atol=atol)

    pf = [p for g in gf for p in g["params"]]
    run(opt_f, pf, 20)
    sd_t, sd_f = opt_t.state_dict(), opt_f.state_dict()
    assert sd_f["param_groups"] == sd_t["param_groups"]
    assert sd_f["state"].keys() == sd_t["state"].keys()
    for k, state in sd_t["state"].items():
        assert sd_f["state"][k].keys() == state.keys()
        for key, v in state.items():
            assert_same(sd_f["state"][k][key], v, rtol=rtol, atol=atol)
    # torch's state_dict, converted tensor by tensor, continues the same trajectory in a fresh flowlike optimizer.
    pf2 = [fl.nn.Parameter(to_flowlike(p.detach())) for p in pt]
    opt_f2 = getattr(fl.optim, name)([{"params": pf2[:2]}, {"params": pf2[2:], "lr": lr * 0.3}], **kwargs)
    opt_f2.load_state_dict({"state": {k: {key: to_flowlike(v) if isinstance(v, torch.Tensor) else v
                                          for key, v in s.items()} for k, s in sd_t["state"].items()},
                            "param_groups": sd_t["param_groups"]})
    run(opt_f2, pf2, 5)


@pytest.mark.skipif(torch.backends.cpu.get_cpu_capability() not in ("AVX2", "AVX512"),
                    reason="torch's kernels use fused multiply-adds only in their AVX2/AVX-512 builds")
@pytest.mark.parametrize("name,kwargs", FUSED_CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(FUSED_CASES)])
def test_fused_step_bitwise_with_exact_sqrt(name, kwargs, monkeypatch):
    """The fused steps round exactly as torch's single-tensor code does: with torch's float32 sqrt (within 1 ulp on
    the CPU, not correctly rounded) replaced by a correctly rounded one, 20 float32 steps are bit-identical."""
    plain_sqrt = torch.Tensor.sqrt
    monkeypatch.setattr(torch.Tensor, "sqrt", lambda t: plain_sqrt(t.double()).float())
    monkeypatch.setattr(torch.Tensor, "sqrt_", lambda t: t.copy_(plain_sqrt(t.double())))
    rs = np.random.RandomState(0)
    init = [rs.randn(64, 33).astype(np.float32), rs.randn(33).astype(np.float32)]
    pt, pf = [torch.nn.Parameter(torch.tensor(a)) for a in init], [fl.nn.Parameter(fl.tensor(a)) for a in init]
    opt_t, opt_f = getattr(torch.optim, name)(pt, **kwargs), getattr(fl.optim, name)(pf, **kwargs)
    for _ in range(20):
        for p, q in zip(pt, pf):
            g = rs.randn(*p.shape).astype(np.float32)
            p.grad, q.grad = torch.tensor(g), fl.tensor(g)
        opt_t.step()
        opt_f.step()
    for p, q in zip(pt, pf):
        np.testing.assert_array_equal(q.detach().numpy(), p.detach().numpy())


def test_lbfgs_trajectory():
    target = np.array([1.0, -2.0, 0.5], np.float32)
    for ls in (None, "strong_wolfe"):
        def body(lib):
            w = lib.nn.Parameter(lib.zeros(3))
            opt = lib.optim.LBFGS([w], lr=0.8, max_iter=7, history_size=3, line_search_fn=ls)
            tgt = lib.tensor(target)

            def closure():
                opt.zero_grad()
                loss = ((w - tgt) ** 2).sum() + (w ** 4).sum() * 0.1
                loss.backward()
                return loss
            for _ in range(3):
                opt.step(closure)
            return w.detach().numpy().copy()
        results = run_both(body)
        np.testing.assert_allclose(results[1], results[0], rtol=1e-4, atol=1e-5)


def test_constructor_errors_match():
    for name, kw in [("SGD", dict(lr=-1)), ("SGD", dict(lr=0.1, nesterov=True)), ("Adam", dict(betas=(1.0, 0.9))),
                     ("Adam", dict(eps=-1)), ("RMSprop", dict(alpha=-1)), ("RMSprop", dict(lr=-0.1)),
                     ("RMSprop", dict(momentum=-1)), ("RMSprop", dict(weight_decay=-1)), ("RMSprop", dict(eps=-1)),
                     ("Adagrad", dict(lr=-1)), ("Adagrad", dict(lr_decay=-1)), ("Adagrad", dict(weight_decay=-1)),
                     ("Adagrad", dict(initial_accumulator_value=-1)), ("Adagrad", dict(eps=-1)),
                     ("Adadelta", dict(rho=2.0)), ("Adadelta", dict(lr=-1)), ("Adadelta", dict(eps=-1)),
                     ("Adadelta", dict(weight_decay=-1)), ("Adamax", dict(lr=-1)), ("Adamax", dict(betas=(0.9, 1.0))),
                     ("Adamax", dict(eps=-1)), ("Adamax", dict(weight_decay=-1)), ("NAdam", dict(lr=-1)),
                     ("NAdam", dict(betas=(-0.1, 0.9))), ("NAdam", dict(momentum_decay=-1)),
                     ("NAdam", dict(weight_decay=-1)), ("RAdam", dict(lr=-1)), ("RAdam", dict(betas=(0.9, 1.5))),
                     ("RAdam", dict(eps=-1)), ("RAdam", dict(weight_decay=-1))]:
        with pytest.raises(ValueError) as et:
            getattr(torch.optim, name)([torch.nn.Parameter(torch.ones(1))], **kw)
        with pytest.raises(ValueError) as ef:
            getattr(fl.optim, name)([fl.nn.Parameter(fl.ones(1))], **kw)
        assert str(ef.value) == str(et.value)


SCHEDULERS = [
    ("LambdaLR", lambda m, o: m.LambdaLR(o, lambda e: 0.9 ** e)),
    ("MultiplicativeLR", lambda m, o: m.MultiplicativeLR(o, lambda e: 0.95)),
    ("StepLR", lambda m, o: m.StepLR(o, step_size=3, gamma=0.3)),
    ("MultiStepLR", lambda m, o: m.MultiStepLR(o, milestones=[2, 5, 5], gamma=0.5)),
    ("ConstantLR", lambda m, o: m.ConstantLR(o, factor=0.25, total_iters=4)),
    ("LinearLR", lambda m, o: m.LinearLR(o, start_factor=0.1, end_factor=1.0, total_iters=5)),
    ("ExponentialLR", lambda m, o: m.ExponentialLR(o, gamma=0.8)),
    ("PolynomialLR", lambda m, o: m.PolynomialLR(o, total_iters=6, power=2.0)),
    ("CosineAnnealingLR", lambda m, o: m.CosineAnnealingLR(o, T_max=5, eta_min=0.01)),
    ("CosineAnnealingWarmRestarts", lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.001)),
    ("CyclicLR", lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=3, mode="triangular2")),
    ("CyclicLR-exp", lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=2, mode="exp_range",
                                             gamma=0.9)),
    ("OneCycleLR", lambda m, o: m.OneCycleLR(o, max_lr=0.5, total_steps=16)),
    ("OneCycleLR-linear", lambda m, o: m.OneCycleLR(o, max_lr=0.5, epochs=2, steps_per_epoch=8,
                                                    anneal_strategy="linear", three_phase=True)),
    ("SequentialLR", lambda m, o: m.SequentialLR(o, [m.LinearLR(o, 0.1, total_iters=3), m.ExponentialLR(o, 0.9)],
                                                 milestones=[3])),
    ("ChainedScheduler", lambda m, o: m.ChainedScheduler([m.ConstantLR(o, 0.5, total_iters=3),
                                                          m.ExponentialLR(o, 0.9)])),
]


def _lr_sequence(lib, make, steps=16):
    w = lib.nn.Parameter(lib.zeros(1))
    opt = lib.optim.SGD([w, ], lr=0.1, momentum=0.9)
    sched = make(lib.optim.lr_scheduler, opt)
    out = []
    for _ in range(steps):
        out.append((list(sched.get_last_lr()), opt.param_groups[0]["lr"], opt.param_groups[0]["momentum"]))
        opt.step()
        sched.step()
    return out, sched


@pytest.mark.parametrize("name,make", SCHEDULERS, ids=[n for n, _ in SCHEDULERS])
def test_scheduler_sequences(name, make):
    seq_t, st = _lr_sequence(torch, make)
    seq_f, sf = _lr_sequence(fl, make)
    assert seq_f == seq_t
    keys_t = {k for k in st.state_dict() if not callable(st.state_dict()[k])}
    assert keys_t <= set(sf.state_dict())


def test_reduce_lr_on_plateau():
    metrics = [1.0, 0.9, 0.95, 0.96, 0.97, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    for kw in (dict(), dict(mode="max", factor=0.5, patience=1, threshold_mode="abs", cooldown=1),
               dict(patience=0, min_lr=0.02, eps=0)):
        def body(lib):
            w = lib.nn.Parameter(lib.zeros(1))
            opt = lib.optim.SGD([w], lr=0.1)
            s = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **kw)
            seq = []
            for m in metrics:
                opt.step()
                s.step(m)
                seq.append(s.get_last_lr()[0])
            return seq
        out = run_both(body)
        assert out[1] == out[0]


@pytest.mark.parametrize("opt_name,kwargs,sched", [
    ("SGD", dict(lr=0.05, momentum=0.9, weight_decay=1e-3), lambda m, o: m.StepLR(o, 5, 0.5)),
    ("AdamW", dict(lr=0.01), lambda m, o: m.OneCycleLR(o, max_lr=0.02, total_steps=30)),
])
def test_training_loop_matches(opt_name, kwargs, sched):
    """An MLP trained from identical weights on identical batches: the losses follow torch's step by step."""
    rs = np.random.RandomState(0)
    x = rs.randn(60, 5).astype(np.float32)
    y = rs.randn(60, 1).astype(np.float32)
    losses = []
    weights = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Linear(8, 1)).state_dict()
    for lib in (torch, fl):
        model = lib.nn.Sequential(lib.nn.Linear(5, 8), lib.nn.Linear(8, 1))
        model.load_state_dict({k: lib.tensor(v.numpy()) for k, v in weights.items()})
        opt = getattr(lib.optim, opt_name)(model.parameters(), **kwargs)
        scheduler = sched(lib.optim.lr_scheduler, opt)
        loader = lib.utils.data.DataLoader(lib.utils.data.TensorDataset(lib.tensor(x), lib.tensor(y)), batch_size=20)
        seq = []
        for _ in range(10):
            for xb, yb in loader:
                opt.zero_grad()
                loss = ((model[1](model[0](xb).tanh()) - yb) ** 2).mean()
                loss.backward()
                opt.step()
                scheduler.step()
                seq.append(loss.item())
        losses.append(seq)
    np.testing.assert_allclose(losses[1], losses[0], rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("name,make", [s for s in SCHEDULERS if s[0] not in ("LambdaLR", "MultiplicativeLR")],
                         ids=[n for n, _ in SCHEDULERS if n not in ("LambdaLR", "MultiplicativeLR")])
def test_scheduler_state_dict_from_torch(name, make):
    """A torch scheduler's state_dict, loaded into flowlike mid-schedule, continues the same lr sequence."""
    seq_t, st = _lr_sequence(torch, make, steps=7)
    w = fl.nn.Parameter(fl.zeros(1))
    opt = fl.optim.SGD([w], lr=0.1, momentum=0.9)
    sf = make(fl.optim.lr_scheduler, opt)
    sf.load_state_dict(st.state_dict())
    for g, gt in zip(opt.param_groups, st.optimizer.param_groups):
        g["lr"], g["momentum"] = gt["lr"], gt["momentum"]
    for _ in range(6):
        st.optimizer.step()
        st.step()
        opt.step()
        sf.step()
        assert sf.get_last_lr() == st.get_last_lr()


PYTHON_STEP_CASES = [
    ("Rprop", dict()),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2), maximize=True)),
    ("ASGD", dict()),
    ("ASGD", dict(lr=0.05, lambd=1e-2, alpha=0.5, t0=4, weight_decay=0.1)),
    ("ASGD", dict(lr=0.02, t0=0, maximize=True)),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,kwargs", PYTHON_STEP_CASES,
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(PYTHON_STEP_CASES)])
def test_python_step_trajectory_20_steps(name, kwargs, dtype):
    """Rprop and ASGD (per-parameter Python steps) on the two-group model: 20 steps follow torch's parameters, the
    state_dicts agree, and torch's state_dict loaded into fresh torch and flowlike optimizers continues alike (both
    sides reload: load_state_dict casts ASGD's float32 eta/mu to the parameters' dtype, which changes the path)."""
    rs = np.random.RandomState(0)
    ref = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.Tanh(), torch.nn.Linear(7, 3)).to(getattr(torch, dtype))
    base = {"model": {k: v.numpy() for k, v in ref.state_dict().items()}, "extra": rs.randn(4, 3).astype(dtype)}
    lr = kwargs.get("lr", 1e-2)
    (mt, gt), (_, gf) = _model_groups(torch, dtype, base, lr), _model_groups(fl, dtype, base, lr)
    opt_t, opt_f = getattr(torch.optim, name)(gt, **kwargs), getattr(fl.optim, name)(gf, **kwargs)
    pt, pf = [p for g in gt for p in g["params"]], [p for g in gf for p in g["params"]]
    rtol, atol = (1e-5, 1e-6) if dtype == "float32" else (1e-9, 1e-12)

    def run(opt_t, opt_f, pt, pf, model, steps):
        for step in range(steps):
            x, y = torch.tensor(rs.randn(8, 5).astype(dtype)), torch.tensor(rs.randn(8, 3).astype(dtype))
            opt_t.zero_grad()
            if model is not None:
                ((model(x) - y) ** 2).mean().backward()
            for p in pt[:-1]:
                if p.grad is None:
                    p.grad = torch.tensor(rs.randn(*p.shape).astype(dtype))
            pt[-1].grad = torch.tensor(rs.randn(3, 4).astype(dtype)).t()
            if step % 2:
                pt[-2].grad = None
            for p, q in zip(pt, pf):
                q.grad = None if p.grad is None else fl.tensor(p.grad.numpy())
            opt_t.step()
            opt_f.step()
            for p, q in zip(pt, pf):
                assert_same(q.detach(), p.detach(), rtol=rtol, atol=atol)

    run(opt_t, opt_f, pt, pf, mt, 20)
    sd_t, sd_f = opt_t.state_dict(), opt_f.state_dict()
    assert sd_f["param_groups"] == sd_t["param_groups"]
    assert sd_f["state"].keys() == sd_t["state"].keys()
    for k, state in sd_t["state"].items():
        assert sd_f["state"][k].keys() == state.keys()
        for key, v in state.items():
            assert_same(sd_f["state"][k][key], v, rtol=rtol, atol=atol)
    pt2 = [torch.nn.Parameter(p.detach().clone()) for p in pt]
    pf2 = [fl.nn.Parameter(to_flowlike(p.detach())) for p in pt]
    opt_t2 = getattr(torch.optim, name)([{"params": pt2[:2]}, {"params": pt2[2:], "lr": lr * 0.3}], **kwargs)
    opt_f2 = getattr(fl.optim, name)([{"params": pf2[:2]}, {"params": pf2[2:], "lr": lr * 0.3}], **kwargs)
    opt_t2.load_state_dict(sd_t)
    opt_f2.load_state_dict({"state": {k: {key: to_flowlike(v) if isinstance(v, torch.Tensor) else v
                                          for key, v in s.items()} for k, s in sd_t["state"].items()},
                            "param_groups": sd_t["param_groups"]})
    run(opt_t2, opt_f2, pt2, pf2, None, 5)


def test_rprop_asgd_constructor_errors():
    for name, kwargs in [("Rprop", dict(lr=-1.0)), ("Rprop", dict(etas=(1.5, 1.2))), ("Rprop", dict(etas=(0.5, 0.9))),
                         ("ASGD", dict(lr=-0.1)), ("ASGD", dict(weight_decay=-1.0))]:
        with pytest.raises(ValueError) as et:
            getattr(torch.optim, name)([torch.nn.Parameter(torch.zeros(2))], **kwargs)
        with pytest.raises(ValueError) as ef:
            getattr(fl.optim, name)([fl.nn.Parameter(fl.zeros(2))], **kwargs)
        assert str(ef.value) == str(et.value)


def _swa_model(lib, base):
    model = lib.nn.Sequential(lib.nn.Linear(4, 6), lib.nn.BatchNorm1d(6), lib.nn.ReLU(), lib.nn.Linear(6, 2))
    model.load_state_dict({k: lib.tensor(v) for k, v in base.items()})
    return model


@pytest.mark.parametrize("kind", ["swa", "ema_multi", "swa_multi", "ema_avg_fn", "swa_buffers"])
def test_averaged_model_matches(kind):
    """AveragedModel over 6 training steps (SWA, the EMA/SWA multi-tensor functions, avg_fn, use_buffers) keeps the
    same averaged parameters, buffers and n_averaged as torch's; update_bn then recomputes the same statistics."""
    ref = _swa_model(torch, {k: v.numpy() for k, v in torch.nn.Sequential(
        torch.nn.Linear(4, 6), torch.nn.BatchNorm1d(6), torch.nn.ReLU(), torch.nn.Linear(6, 2)).state_dict().items()})
    base = {k: v.numpy() for k, v in ref.state_dict().items()}
    rs = np.random.RandomState(0)
    data = [(rs.randn(8, 4).astype(np.float32), rs.randn(8, 2).astype(np.float32)) for _ in range(6)]

    def body(lib):
        su = lib.optim.swa_utils
        model = _swa_model(lib, base)
        kwargs = {"swa": {}, "ema_multi": dict(multi_avg_fn=su.get_ema_multi_avg_fn(0.9)),
                  "swa_multi": dict(multi_avg_fn=su.get_swa_multi_avg_fn()),
                  "ema_avg_fn": dict(avg_fn=su.get_ema_avg_fn(0.8)),
                  "swa_buffers": dict(use_buffers=True)}[kind]
        avg = su.AveragedModel(model, **kwargs)
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        sched = su.SWALR(opt, swa_lr=0.05, anneal_epochs=3)
        lrs = []
        for x, y in data:
            opt.zero_grad()
            ((model(lib.tensor(x)) - lib.tensor(y)) ** 2).mean().backward()
            opt.step()
            avg.update_parameters(model)
            sched.step()
            lrs.append(sched.get_last_lr())
        loader = [(lib.tensor(x), lib.tensor(y)) for x, y in data]
        su.update_bn(loader, avg)
        out = avg(lib.tensor(data[0][0]))
        return (avg.state_dict(), lrs, out)
    results = run_both(body)
    (sd_t, lrs_t, out_t), (sd_f, lrs_f, out_f) = results
    assert list(sd_f.keys()) == list(sd_t.keys())
    for k, v in sd_t.items():
        assert_same(sd_f[k], v, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(lrs_f, lrs_t, rtol=1e-12)
    assert_same(out_f.detach(), out_t.detach(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("strategy,epochs", [("cos", 4), ("linear", 3), ("cos", 0)])
def test_swalr_sequence_and_state_dict(strategy, epochs):
    def body(lib):
        w = lib.nn.Parameter(lib.zeros(1))
        opt = lib.optim.SGD([{"params": [w]}, {"params": [lib.nn.Parameter(lib.zeros(1))], "lr": 0.5}], lr=0.1)
        sched = lib.optim.swa_utils.SWALR(opt, swa_lr=[0.01, 0.02], anneal_epochs=epochs, anneal_strategy=strategy)
        seq = []
        for _ in range(7):
            opt.step()
            sched.step()
            seq.append(sched.get_last_lr())
        return (seq, sched.state_dict())
    seqs = run_both(body)
    np.testing.assert_allclose(seqs[1][0], seqs[0][0], rtol=1e-12)
    st, sf = seqs[0][1], seqs[1][1]
    assert sf.keys() == st.keys()
    with pytest.raises(ValueError):
        fl.optim.swa_utils.SWALR(fl.optim.SGD([fl.nn.Parameter(fl.zeros(1))], lr=0.1), 0.01, anneal_strategy="exp")
