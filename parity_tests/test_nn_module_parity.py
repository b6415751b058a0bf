"""nn.Module, containers, layers, init and serialization against real torch."""
import math
from collections import OrderedDict

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402
from helpers import to_flowlike, assert_same  # noqa: E402


def _build(lib):
    nn = lib.nn
    return nn.Sequential(OrderedDict([
        ("fc", nn.Linear(4, 3)),
        ("blocks", nn.ModuleList([nn.Linear(3, 3), nn.Linear(3, 3), nn.Identity(), nn.Bilinear(3, 3, 2)])),
        ("heads", nn.ModuleDict({"a": nn.Linear(3, 1, bias=False), "b": nn.Flatten(0, -1)})),
        ("un", nn.Unflatten(1, (2, 2))),
        ("plist", nn.ParameterList([nn.Parameter(lib.zeros(2, 3))])),
        ("pdict", nn.ParameterDict({"w": nn.Parameter(lib.zeros(4))})),
    ]))


def test_repr_and_state_dict_keys_match():
    t, f = _build(torch), _build(fl)
    assert repr(f) == repr(t)
    assert list(f.state_dict().keys()) == list(t.state_dict().keys())
    assert [n for n, _ in f.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [n for n, _ in f.named_modules()] == [n for n, _ in t.named_modules()]
    assert repr(fl.nn.Parameter(fl.ones(2))) == repr(torch.nn.Parameter(torch.ones(2)))


def test_load_torch_state_dict_and_forward():
    t, f = torch.nn.Linear(5, 3), fl.nn.Linear(5, 3)
    res = f.load_state_dict({k: to_flowlike(v) for k, v in t.state_dict().items()})
    assert tuple(res) == tuple(t.load_state_dict(t.state_dict()))
    x = np.random.RandomState(0).randn(4, 5).astype(np.float32)
    assert_same(f(fl.from_numpy(x)), t(torch.from_numpy(x)))
    x3 = np.random.RandomState(1).randn(2, 4, 5).astype(np.float32)
    assert_same(f(fl.from_numpy(x3)), t(torch.from_numpy(x3)))
    tb, fb = torch.nn.Bilinear(3, 4, 2), fl.nn.Bilinear(3, 4, 2)
    fb.load_state_dict({k: to_flowlike(v) for k, v in tb.state_dict().items()})
    a, b = np.random.RandomState(2).randn(5, 3).astype(np.float32), np.random.RandomState(3).randn(5, 4).astype(
        np.float32)
    assert_same(fb(fl.from_numpy(a), fl.from_numpy(b)), tb(torch.from_numpy(a), torch.from_numpy(b)), atol=1e-5)


def test_load_state_dict_errors_match():
    t, f = torch.nn.Linear(2, 2), fl.nn.Linear(2, 2)
    sd_t = {"weight": torch.ones(2, 2), "extra": torch.ones(1)}
    sd_f = {"weight": fl.ones(2, 2), "extra": fl.ones(1)}
    with pytest.raises(RuntimeError) as et:
        t.load_state_dict(sd_t)
    with pytest.raises(RuntimeError) as ef:
        f.load_state_dict(sd_f)
    assert str(ef.value) == str(et.value)
    rt, rf = t.load_state_dict(sd_t, strict=False), f.load_state_dict(sd_f, strict=False)
    assert rf.missing_keys == rt.missing_keys and rf.unexpected_keys == rt.unexpected_keys
    assert repr(rf) == repr(rt)


@pytest.mark.parametrize("name,args,kwargs", [
    ("uniform_", (-1.0, 2.0), {}), ("normal_", (0.5, 2.0), {}), ("xavier_uniform_", (), {"gain": 2.0}),
    ("xavier_normal_", (), {}), ("kaiming_uniform_", (), {"a": math.sqrt(5)}),
    ("kaiming_normal_", (), {"mode": "fan_out", "nonlinearity": "relu"}), ("trunc_normal_", (0.0, 1.0, -1.0, 1.0), {}),
    ("orthogonal_", (), {"gain": 1.5}),
])
def test_init_statistics(name, args, kwargs):
    shape = (256, 64, 3)
    torch.manual_seed(0)
    fl.manual_seed(0)
    t = getattr(torch.nn.init, name)(torch.empty(*shape), *args, **kwargs).numpy()
    f = getattr(fl.nn.init, name)(fl.empty(*shape), *args, **kwargs).numpy()
    # Different generators: compare distributions (mean within 5 standard errors, spread within 2%).
    assert abs(f.mean() - t.mean()) < 5 * t.std() / np.sqrt(t.size) + 1e-4
    assert abs(f.std() - t.std()) < 0.02 * t.std()
    if name in ("uniform_", "xavier_uniform_", "kaiming_uniform_", "trunc_normal_"):
        spread = t.max() - t.min()
        assert abs(f.min() - t.min()) < 0.01 * spread and abs(f.max() - t.max()) < 0.01 * spread


def test_linear_default_init_bounds():
    f = fl.nn.Linear(100, 50)
    w, b = f.weight.detach().numpy(), f.bias.detach().numpy()
    assert np.abs(w).max() <= 1 / math.sqrt(100) and np.abs(w).max() > 0.09
    assert np.abs(b).max() <= 1 / math.sqrt(100)


@pytest.mark.parametrize("name", ["calculate_gain"])
def test_calculate_gain(name):
    for nl, p in [("linear", None), ("tanh", None), ("relu", None), ("leaky_relu", 0.2), ("selu", None),
                  ("conv2d", None)]:
        assert fl.nn.init.calculate_gain(nl, p) == torch.nn.init.calculate_gain(nl, p)


def test_clip_grad_norm_matches():
    rs = np.random.RandomState(0)
    grads = [rs.randn(3, 4).astype(np.float32), rs.randn(5).astype(np.float32)]
    for norm_type in (2.0, 1.0, float("inf")):
        tp = [torch.nn.Parameter(torch.zeros(g.shape)) for g in grads]
        fp = [fl.nn.Parameter(fl.zeros(*g.shape)) for g in grads]
        for p, q, g in zip(tp, fp, grads):
            p.grad, q.grad = torch.from_numpy(g.copy()), fl.from_numpy(g.copy())
        nt = torch.nn.utils.clip_grad_norm_(tp, 0.5, norm_type=norm_type)
        nf = fl.nn.utils.clip_grad_norm_(fp, 0.5, norm_type=norm_type)
        assert_same(nf, nt)
        for p, q in zip(tp, fp):
            assert_same(q.grad, p.grad)


def test_torch_checkpoint_loads_into_flowlike(tmp_path):
    t = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Linear(2, 1))
    path = tmp_path / "torch.pt"
    extra = {"step": 5, "ints": torch.arange(6).view(2, 3).t(), "half": torch.ones(3, dtype=torch.bfloat16) / 3,
             "param": torch.nn.Parameter(torch.ones(2))}
    torch.save({"model": t.state_dict(), **extra}, path)
    ck = fl.load(path, map_location="cpu")
    f = fl.nn.Sequential(fl.nn.Linear(3, 2), fl.nn.Linear(2, 1))
    f.load_state_dict(ck["model"])
    for (n, p), (m, q) in zip(f.named_parameters(), t.named_parameters()):
        assert n == m
        assert_same(p, q)
    assert ck["step"] == 5
    assert_same(ck["ints"], extra["ints"])
    assert_same(ck["half"], extra["half"])
    assert isinstance(ck["param"], fl.nn.Parameter) and ck["param"].requires_grad


def test_flowlike_checkpoint_loads_into_torch(tmp_path):
    f = fl.nn.Sequential(fl.nn.Linear(3, 2), fl.nn.Linear(2, 1))
    opt = fl.optim.Adam(f.parameters(), lr=0.1)
    f(fl.ones(4, 3)).sum().backward()
    opt.step()
    path = tmp_path / "flowlike.pt"
    fl.save({"model": f.state_dict(), "optim": opt.state_dict(), "epoch": 7, "bf16": fl.ones(2, dtype=fl.bfloat16) / 3,
             "view": fl.arange(6).view(2, 3).t(), "param": fl.nn.Parameter(fl.zeros(2))}, path)
    ck = torch.load(path)  # torch's default weights_only=True unpickler accepts the file
    t = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Linear(2, 1))
    t.load_state_dict(ck["model"])
    for (n, p), (m, q) in zip(f.named_parameters(), t.named_parameters()):
        assert n == m
        assert_same(p, q)
    topt = torch.optim.Adam(t.parameters(), lr=0.1)
    topt.load_state_dict(ck["optim"])
    assert_same(fl.tensor(topt.state_dict()["state"][0]["exp_avg"].numpy()), opt.state_dict()["state"][0]["exp_avg"])
    assert ck["epoch"] == 7 and isinstance(ck["param"], torch.nn.Parameter)
    assert_same(fl.tensor(ck["bf16"].float().numpy()).to(fl.bfloat16), fl.ones(2, dtype=fl.bfloat16) / 3)
    assert ck["view"].tolist() == [[0, 3], [1, 4], [2, 5]]


def test_full_backward_hooks_see_the_same_gradients():
    seen = {}
    for m in (torch, fl):
        lin = m.nn.Linear(3, 2)
        with m.no_grad():
            lin.weight.copy_(m.tensor(np.arange(6.0).reshape(2, 3) * 0.1, dtype=m.float32))
            lin.bias.fill_(0.5)
        calls = []
        lin.register_full_backward_pre_hook(lambda mod, go, calls=calls: calls.append(("pre", tuple(go[0].shape))))
        lin.register_full_backward_hook(
            lambda mod, gi, go, calls=calls: calls.append((gi[0].detach().numpy().copy(), go[0].detach().numpy().copy())))
        x = m.tensor(np.linspace(-1, 1, 12).reshape(4, 3), dtype=m.float32, requires_grad=True)
        (lin(x) ** 2).sum().backward()
        seen[m] = calls
    assert seen[fl][0] == seen[torch][0]
    for got, want in zip(seen[fl][1], seen[torch][1]):
        np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("convert", ["double", "half", "to64"])
def test_dtype_conversion_keeps_parameter_objects(convert):
    """model.double()/.half()/.to(dtype) convert parameters and their grads in place (same objects), so an
    optimizer built before the conversion still trains the model."""
    start = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2)).state_dict()
    results = []
    for M in (torch, fl):
        m = M.nn.Sequential(M.nn.Linear(3, 2), M.nn.BatchNorm1d(2))
        m.load_state_dict({k: to_flowlike(v) for k, v in start.items()} if M is fl else start)
        params = list(m.parameters())
        opt = M.optim.SGD(m.parameters(), lr=0.1)
        m(M.ones(4, 3)).sum().backward()
        grads = [p.grad for p in params]
        dtype = {"double": M.float64, "half": M.float16, "to64": M.float64}[convert]
        m.double() if convert == "double" else m.half() if convert == "half" else m.to(dtype)
        assert all(a is b for a, b in zip(m.parameters(), params))
        assert all(p.grad is g and p.dtype == dtype and g.dtype == dtype for p, g in zip(params, grads))
        assert m[1].running_mean.dtype == dtype and m[1].num_batches_tracked.dtype == M.int64
        if convert != "half":
            opt.zero_grad()
            m(M.ones(4, 3, dtype=dtype) * M.arange(3.0, dtype=dtype)).pow(2).sum().backward()
            opt.step()
        results.append(m.state_dict())
    for k, v in results[0].items():
        assert_same(results[1][k], v, rtol=1e-3 if convert == "half" else 1e-6, atol=1e-6)
