"""torch.amp.GradScaler against PyTorch's on the CPU: the same scales, skipped steps and weights."""
import warnings

import numpy as np
import pytest

import flowlike as fl

torch = pytest.importorskip("torch")


def train(lib, init):
    model = lib.nn.Linear(3, 2)
    model.load_state_dict({k: lib.from_numpy(v.copy()) for k, v in init.items()})
    opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scaler = lib.amp.GradScaler("cpu", init_scale=2.0 ** 10, growth_interval=2)
    x = lib.from_numpy(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))
    scales, results = [], []  # scale after each step; whether the step was skipped
    for step in range(6):
        loss = model(x).square().mean()
        if step == 3:
            loss = loss * float("inf")  # inf gradients: the step is skipped and the scale backs off
        opt.zero_grad()
        scaler.scale(loss).backward()
        if step == 1:
            scaler.unscale_(opt)  # as before clipping; step() must not unscale again
            lib.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        before = model.weight.detach().numpy().copy()
        scaler.step(opt)
        results.append(bool(np.array_equal(before, model.weight.detach().numpy())))  # skipped
        scaler.update()
        scales.append(scaler.get_scale())
    return scales, results, {k: v.detach().numpy() for k, v in model.state_dict().items()}, scaler.state_dict()


def test_grad_scaler_matches_torch():
    init = {"weight": np.array([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]], np.float32), "bias": np.array([0.1, -0.1],
                                                                                                    np.float32)}
    t_scales, t_results, t_state, t_sd = train(torch, init)
    f_scales, f_results, f_state, f_sd = train(fl, init)
    assert f_scales == t_scales and f_results == t_results and f_sd == t_sd
    for k in t_state:
        np.testing.assert_allclose(f_state[k], t_state[k], rtol=1e-6, atol=1e-7)


def test_grad_scaler_errors_and_cuda_disabling_match_torch():
    for lib in (torch, fl):
        model = lib.nn.Linear(2, 1)
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        scaler = lib.amp.GradScaler("cpu")
        scaler.scale(model(lib.ones(1, 2)).sum()).backward()
        scaler.unscale_(opt)
        with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
            scaler.unscale_(opt)
        with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
            scaler.step(opt, closure=lambda: None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        disabled = fl.amp.GradScaler("cuda")
    assert not disabled.is_enabled() and "CUDA is not available" in str(caught[0].message)
    assert disabled.scale(fl.ones(1)).item() == 1.0 and disabled.get_scale() == 1.0
