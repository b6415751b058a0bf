"""nn.Module, containers, lazy modules, layers, init, serialization and nn.utils (fusion, skip_init, memory
formats, functional_call) against real torch."""
import math
from collections import OrderedDict

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402
from helpers import assert_same, copy_state, run_both, to_flowlike  # noqa: E402


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


# ---- lazy modules ------------------------------------------------------------------------------------------------

LAZY = [
    ("LazyLinear(3)", (4, 5)), ("LazyLinear(3, bias=False)", (2, 4, 6)),
    ("LazyConv1d(4, 3, padding=1)", (2, 3, 8)), ("LazyConv2d(4, 3, stride=2, groups=2)", (2, 6, 7, 7)),
    ("LazyConv2d(3, 2, bias=False, padding_mode='reflect', padding=1)", (3, 5, 5)),
    ("LazyConv3d(2, 2)", (1, 2, 4, 4, 4)), ("LazyConvTranspose1d(2, 3, stride=2)", (2, 3, 5)),
    ("LazyConvTranspose2d(4, 3, stride=2, output_padding=1)", (2, 3, 4, 4)),
    ("LazyConvTranspose3d(2, 2, groups=2)", (1, 4, 3, 3, 3)),
    ("LazyBatchNorm1d()", (4, 3)), ("LazyBatchNorm2d(momentum=None, affine=False)", (4, 3, 5, 5)),
    ("LazyBatchNorm3d(track_running_stats=False)", (2, 2, 3, 3, 3)), ("LazyInstanceNorm1d()", (2, 3, 6)),
    ("LazyInstanceNorm2d(affine=False, track_running_stats=False)", (2, 3, 4, 4)),
    ("LazyInstanceNorm3d(bias=False)", (2, 2, 3, 3, 3)),
]


def _keys_and_kinds(sd):
    return [(k, type(v).__name__ if type(v).__name__.startswith("Uninitialized") else "Tensor") for k, v in sd.items()]


# torch's LazyInstanceNorm without parameters keeps num_features=0, so InstanceNorm warns on every call (flowlike too)
@pytest.mark.filterwarnings("ignore:input's size at dim=1 does not match num_features")
@pytest.mark.parametrize("expr,shape", LAZY, ids=[e for e, _ in LAZY])
def test_lazy_module_materializes_as_torch(expr, shape):
    """Before the first call: the same repr and state_dict (UninitializedParameter/Buffer entries). After it: the
    same class, repr, parameter shapes and state_dict keys; then, from torch's weights, the same outputs and
    gradients."""
    mt, mf = run_both(lambda lib: eval("nn." + expr, {"nn": lib.nn}))
    assert repr(mf) == repr(mt)
    assert _keys_and_kinds(mf.state_dict()) == _keys_and_kinds(mt.state_dict())
    assert mf.has_uninitialized_params() == mt.has_uninitialized_params()
    x = np.random.RandomState(0).randn(*shape).astype(np.float32)
    mt(torch.tensor(x))
    mf(fl.tensor(x))
    assert type(mf).__name__ == type(mt).__name__ == expr.split("(")[0][4:]
    assert repr(mf) == repr(mt)
    assert list(mf.state_dict().keys()) == list(mt.state_dict().keys())
    for (n, p), (m, q) in zip(mt.named_parameters(), mf.named_parameters()):
        assert n == m and tuple(q.shape) == tuple(p.shape) and type(q) is fl.nn.Parameter
    for (n, b), (m, c) in zip(mt.named_buffers(), mf.named_buffers()):
        assert n == m and type(c) is fl.Tensor
    copy_state(mt, mf)
    xt, xf = torch.tensor(x, requires_grad=True), fl.tensor(x, requires_grad=True)
    yt, yf = mt(xt), mf(xf)
    assert_same(yf.detach(), yt.detach(), rtol=1e-5, atol=1e-5)
    yt.square().sum().backward()
    yf.square().sum().backward()
    assert_same(xf.grad, xt.grad, rtol=1e-4, atol=1e-4)
    for (n, p), (_, q) in zip(mt.named_parameters(), mf.named_parameters()):
        assert_same(q.grad, p.grad, rtol=1e-4, atol=1e-4)


def test_lazy_module_load_state_dict_materializes():
    """Loading a state_dict into an uninitialized lazy module takes the loaded shapes (before any forward)."""
    t_bn = torch.nn.BatchNorm2d(5)
    t_bn.running_mean.normal_()
    for src in (torch.nn.Linear(4, 3), t_bn):
        mf = fl.nn.LazyLinear(3) if isinstance(src, torch.nn.Linear) else fl.nn.LazyBatchNorm2d()
        mf.load_state_dict({k: to_flowlike(v) for k, v in src.state_dict().items()})
        assert not mf.has_uninitialized_params()
        for k, v in src.state_dict().items():
            assert_same(mf.state_dict()[k], v)
        x = np.random.RandomState(1).randn(2, 4).astype(np.float32) if isinstance(src, torch.nn.Linear) else \
            np.random.RandomState(1).randn(2, 5, 3, 3).astype(np.float32)
        src.eval()
        mf.eval()
        assert_same(mf(fl.tensor(x)).detach(), src(torch.tensor(x)).detach(), rtol=1e-5, atol=1e-6)
        assert type(mf).__name__ == type(src).__name__


def test_lazy_state_dict_round_trips():
    """An uninitialized state_dict loads into another lazy model (it stays lazy); loading it into an initialized
    model raises torch's error."""
    for lib in (torch, fl):
        def make():
            return lib.nn.Sequential(lib.nn.LazyLinear(4), lib.nn.ReLU(), lib.nn.LazyBatchNorm1d())
        sd = make().state_dict()
        other = make()
        other.load_state_dict(sd)
        assert other[0].has_uninitialized_params() and type(other[0]).__name__ == "LazyLinear"
        with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter"):
            lib.nn.Sequential(lib.nn.Linear(5, 4), lib.nn.ReLU(), lib.nn.BatchNorm1d(4)).load_state_dict(sd)
        m = make().double()
        m(lib.zeros(3, 5, dtype=lib.float64))
        assert m[0].weight.dtype == lib.float64 and m[2].running_mean.dtype == lib.float64


def test_uninitialized_parameter_semantics():
    for lib in (torch, fl):
        p = lib.nn.UninitializedParameter()
        assert repr(p) == "<UninitializedParameter>" and p.requires_grad
        b = lib.nn.UninitializedBuffer()
        assert repr(b) == "<UninitializedBuffer>" and not b.requires_grad
        with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter"):
            p.shape
        p.materialize((2, 3))
        assert type(p) is lib.nn.Parameter and tuple(p.shape) == (2, 3)
        assert lib.nn.parameter.is_lazy(lib.nn.UninitializedParameter())
        assert not lib.nn.parameter.is_lazy(lib.nn.Parameter(lib.zeros(1)))
    lt, lf = torch.nn.LazyConv2d(4, 3, groups=2), fl.nn.LazyConv2d(4, 3, groups=2)
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        lt(torch.zeros(1, 3, 5, 5))
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        lf(fl.zeros(1, 3, 5, 5))
    with pytest.raises(RuntimeError, match="Expected 3D .unbatched. or 4D .batched. input to LazyConv2d"):
        fl.nn.LazyConv2d(4, 3)(fl.zeros(5, 5))


# ---- nn.utils ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("conv,bn,shape,transpose", [
    ("Conv2d(3, 4, 3, padding=1)", "BatchNorm2d(4)", (2, 3, 5, 5), False),
    ("Conv1d(3, 4, 3, bias=False)", "BatchNorm1d(4, affine=False)", (2, 3, 6), False),
    ("ConvTranspose2d(3, 4, 3, stride=2)", "BatchNorm2d(4)", (2, 3, 4, 4), True),
    ("Conv3d(2, 3, 2)", "BatchNorm3d(3)", (1, 2, 4, 4, 4), False),
])
def test_fuse_conv_bn_eval(conv, bn, shape, transpose):
    (ct, cf), (bt, bf) = (run_both(lambda lib, e=e: eval("nn." + e, {"nn": lib.nn})) for e in (conv, bn))
    with torch.no_grad():
        bt.running_mean.normal_()
        bt.running_var.uniform_(0.5, 2.0)
        if bt.weight is not None:
            bt.weight.normal_()
            bt.bias.normal_()
    copy_state(ct, cf)
    copy_state(bt, bf)
    ct.eval(), bt.eval(), cf.eval(), bf.eval()
    ft = torch.nn.utils.fuse_conv_bn_eval(ct, bt, transpose=transpose)
    ff = fl.nn.utils.fuse_conv_bn_eval(cf, bf, transpose=transpose)
    assert type(ff).__name__ == type(ft).__name__ and repr(ff) == repr(ft)
    assert ff is not cf and type(ff.weight) is fl.nn.Parameter and type(ff.bias) is fl.nn.Parameter
    for k, v in ft.state_dict().items():
        assert_same(ff.state_dict()[k], v, rtol=1e-6, atol=1e-6)
    x = np.random.RandomState(10).randn(*shape).astype(np.float32)
    assert_same(ff(fl.tensor(x)).detach(), bt(ct(torch.tensor(x))).detach(), rtol=1e-4, atol=1e-5)
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        fl.nn.utils.fuse_conv_bn_eval(cf.train(), bf)


def test_fuse_linear_bn():
    (lt, lf), (bt, bf) = run_both(lambda lib: lib.nn.Linear(5, 4)), run_both(lambda lib: lib.nn.BatchNorm1d(4))
    with torch.no_grad():
        bt.running_mean.normal_()
        bt.running_var.uniform_(0.5, 2.0)
        bt.weight.normal_()
    copy_state(lt, lf)
    copy_state(bt, bf)
    for m in (lt, lf, bt, bf):
        m.eval()
    ft, ff = torch.nn.utils.fuse_linear_bn_eval(lt, bt), fl.nn.utils.fuse_linear_bn_eval(lf, bf)
    for k, v in ft.state_dict().items():
        assert_same(ff.state_dict()[k], v, rtol=1e-6, atol=1e-6)
    wt, bt_ = torch.nn.utils.fuse_linear_bn_weights(lt.weight, None, bt.running_mean, bt.running_var, bt.eps,
                                                    bt.weight, bt.bias)
    wf, bf_ = fl.nn.utils.fuse_linear_bn_weights(lf.weight, None, bf.running_mean, bf.running_var, bf.eps,
                                                 bf.weight, bf.bias)
    assert_same(wf.detach(), wt.detach(), rtol=1e-6)
    assert_same(bf_.detach(), bt_.detach(), rtol=1e-6)
    assert bf_.requires_grad == bt_.requires_grad
    with pytest.raises(AssertionError, match="To fuse, linear.out_features == bn.num_features"):
        fl.nn.utils.fuse_linear_bn_eval(fl.nn.Linear(5, 3).eval(), bf)


def test_skip_init():
    """skip_init builds the module with torch's shapes without drawing random numbers (so the next draws are the
    ones the generator would give without it), and refuses modules without a device argument as torch does."""
    fl.manual_seed(5)
    m = fl.nn.utils.skip_init(fl.nn.Linear, 5, 3, bias=False)
    after = fl.rand(3)
    fl.manual_seed(5)
    assert np.array_equal(after.numpy(), fl.rand(3).numpy())
    t = torch.nn.utils.skip_init(torch.nn.Linear, 5, 3, bias=False)
    assert repr(m) == repr(t) and list(m.state_dict()) == list(t.state_dict())
    assert type(fl.nn.utils.skip_init(fl.nn.Conv2d, 2, 3, kernel_size=3)) is fl.nn.Conv2d

    class NoDevice(fl.nn.Module):
        def __init__(self):
            super().__init__()

    with pytest.raises(RuntimeError, match="Module must support a 'device' arg to skip initialization"):
        fl.nn.utils.skip_init(NoDevice)
    with pytest.raises(RuntimeError, match="Expected a Module"):
        fl.nn.utils.skip_init(int)


def test_convert_weight_memory_format():
    model = fl.nn.Sequential(fl.nn.Conv2d(2, 3, 3), fl.nn.ReLU(), fl.nn.Sequential(fl.nn.ConvTranspose2d(3, 2, 2)))
    w = [p.detach().numpy().copy() for p in model.parameters()]

    class ContiguousFormat:  # stands for torch.contiguous_format, which flowlike's namespace does not define yet
        def __str__(self):
            return "torch.contiguous_format"

    assert fl.nn.utils.convert_conv2d_weight_memory_format(model, ContiguousFormat()) is model
    assert all(np.array_equal(a, p.detach().numpy()) for a, p in zip(w, model.parameters()))
    assert fl.nn.utils.convert_conv3d_weight_memory_format(model, ContiguousFormat()) is model
    with pytest.raises(RuntimeError, match="supports only memory_format=torch.contiguous_format"):
        fl.nn.utils.convert_conv2d_weight_memory_format(model, torch.channels_last)


def test_functional_call():
    mt = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3))
    mf = fl.nn.Sequential(fl.nn.Linear(4, 3), fl.nn.BatchNorm1d(3))
    copy_state(mt, mf)
    rs = np.random.RandomState(11)
    x = rs.randn(5, 4).astype(np.float32)
    new = {"0.weight": rs.randn(3, 4).astype(np.float32), "1.bias": rs.randn(3).astype(np.float32)}
    wt = {k: torch.tensor(v, requires_grad=True) for k, v in new.items()}
    wf = {k: fl.tensor(v, requires_grad=True) for k, v in new.items()}
    yt = torch.func.functional_call(mt, wt, (torch.tensor(x),))
    yf = fl.func.functional_call(mf, wf, (fl.tensor(x),))
    assert_same(yf.detach(), yt.detach(), rtol=1e-5, atol=1e-6)
    yt.square().sum().backward()
    yf.square().sum().backward()
    for k in new:
        assert_same(wf[k].grad, wt[k].grad, rtol=1e-4, atol=1e-5)
    # the module is restored, its own parameters got no gradient; the call ran in training mode (stats updated)
    assert type(mf[0].weight) is fl.nn.Parameter and mf[0].weight.grad is None
    for k, v in mt.state_dict().items():
        assert_same(mf.state_dict()[k], v, rtol=1e-5, atol=1e-6)
    with pytest.warns(FutureWarning, match="stateless.functional_call` is deprecated"):
        yt2 = torch.nn.utils.stateless.functional_call(mt, {"0.bias": torch.zeros(3)}, torch.tensor(x))
    with pytest.warns(FutureWarning, match="stateless.functional_call` is deprecated"):
        yf2 = fl.nn.utils.stateless.functional_call(mf, {"0.bias": fl.zeros(3)}, fl.tensor(x))
    assert_same(yf2.detach(), yt2.detach(), rtol=1e-5, atol=1e-6)
    yt3 = torch.func.functional_call(mt, ({"0.weight": wt["0.weight"]}, {"1.bias": wt["1.bias"]}), torch.tensor(x))
    yf3 = fl.func.functional_call(mf, ({"0.weight": wf["0.weight"]}, {"1.bias": wf["1.bias"]}), fl.tensor(x))
    assert_same(yf3.detach(), yt3.detach(), rtol=1e-5, atol=1e-6)
    for lib, m, t in ((torch, mt, torch.zeros(3)), (fl, mf, fl.zeros(3))):
        with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
            lib.func.functional_call(m, ({"0.bias": t}, {"0.bias": t}), lib.zeros(5, 4))
        with pytest.raises(RuntimeError, match="Missing key"):
            lib.func.functional_call(m, {"0.bias": t}, lib.zeros(5, 4), strict=True)


def test_functional_call_tied_weights():
    def make(lib):
        m = lib.nn.Sequential(lib.nn.Linear(3, 3, bias=False), lib.nn.Linear(3, 3, bias=False))
        m[1].weight = m[0].weight
        return m
    mt, mf = make(torch), make(fl)
    copy_state(mt, mf)
    w = np.eye(3, dtype=np.float32) * 2
    x = np.random.RandomState(12).randn(2, 3).astype(np.float32)
    for tie in (True, False):
        yt = torch.func.functional_call(mt, {"0.weight": torch.tensor(w)}, torch.tensor(x), tie_weights=tie)
        yf = fl.func.functional_call(mf, {"0.weight": fl.tensor(w)}, fl.tensor(x), tie_weights=tie)
        assert_same(yf.detach(), yt.detach(), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="which are tied"):
        fl.func.functional_call(mf, {"0.weight": fl.tensor(w), "1.weight": fl.zeros(3, 3)}, fl.tensor(x))
