"""nn.Module, containers, lazy modules, Linear/Bilinear/Flatten, nn.init, nn.utils, functional_call and save/load
(no torch needed)."""
import copy
import io
import math
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import flowlike as torch
from flowlike import nn
from flowlike.nn import init


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 3)
        self.blocks = nn.Sequential(nn.Linear(3, 3), nn.Identity())
        self.register_buffer("running", torch.zeros(3))
        self.register_buffer("tmp", torch.ones(1), persistent=False)
        self.scale = nn.Parameter(torch.ones(1))

    def forward(self, x):
        return self.blocks(self.fc1(x)) * self.scale + self.running


def test_parameter_basics():
    p = nn.Parameter(torch.ones(2, 3))
    assert isinstance(p, nn.Parameter) and isinstance(p, torch.Tensor)
    assert p.requires_grad and p.is_leaf
    assert repr(p).startswith("Parameter containing:\ntensor(")
    with torch.no_grad():
        assert nn.Parameter(torch.zeros(1)).requires_grad
    assert not nn.Parameter(torch.zeros(1), requires_grad=False).requires_grad
    q = copy.deepcopy(p)
    assert isinstance(q, nn.Parameter) and q.requires_grad
    r = pickle.loads(pickle.dumps(p))
    assert isinstance(r, nn.Parameter) and np.array_equal(r.detach().numpy(), p.detach().numpy())


def test_registration_and_iteration():
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == ["scale", "fc1.weight", "fc1.bias", "blocks.0.weight", "blocks.0.bias"]
    assert [n for n, _ in net.named_buffers()] == ["running", "tmp"]
    assert list(net.state_dict().keys()) == ["scale", "running", "fc1.weight", "fc1.bias", "blocks.0.weight",
                                             "blocks.0.bias"]
    assert [n for n, _ in net.named_modules()] == ["", "fc1", "blocks", "blocks.0", "blocks.1"]
    assert [n for n, _ in net.named_children()] == ["fc1", "blocks"]
    assert len(list(net.parameters(recurse=False))) == 1
    assert net.get_submodule("blocks.0") is net.blocks[0]
    assert net.get_parameter("blocks.0.bias") is net.blocks[0].bias
    assert net.get_buffer("running") is net.running
    with pytest.raises(AttributeError):
        net.get_submodule("nope")
    with pytest.raises(AttributeError):
        net.missing
    # Plain tensors are ordinary attributes; reassigning a registered name keeps its kind.
    net.plain = torch.ones(1)
    assert "plain" not in net._buffers
    with pytest.raises(TypeError):
        net.scale = torch.ones(1)
    net.running = torch.ones(3)
    assert "running" in net._buffers
    del net.fc1
    assert "fc1" not in net._modules
    net.buf2 = nn.Buffer(torch.zeros(2), persistent=False)
    assert "buf2" in net._buffers and "buf2" in net._non_persistent_buffers_set


def test_shared_parameters_are_deduplicated():
    lin = nn.Linear(2, 2)
    seq = nn.Sequential(lin, lin)
    assert len(list(seq.parameters())) == 2
    assert len(list(seq.named_modules(remove_duplicate=False))) == 3


def test_train_eval_apply_zero_grad_requires_grad():
    net = Net()
    net.eval()
    assert not net.training and not net.blocks[0].training
    net.train()
    assert net.blocks[1].training
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen[-1] == "Net" and seen[0] == "Linear"
    out = net(torch.ones(2, 4)).sum()
    out.backward()
    assert net.fc1.weight.grad is not None
    net.zero_grad(set_to_none=False)
    assert float(net.fc1.weight.grad.abs().sum()) == 0.0
    net.zero_grad()
    assert net.fc1.weight.grad is None
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


def test_dtype_conversion():
    net = Net().double()
    assert all(p.dtype == torch.float64 for p in net.parameters())
    assert isinstance(net.fc1.weight, nn.Parameter)
    assert net.running.dtype == torch.float64
    net.to(torch.float32)
    assert net.fc1.weight.dtype == torch.float32
    net.to("cpu", non_blocking=True)
    with pytest.raises(TypeError):
        net.to(torch.int64)


def test_state_dict_roundtrip_and_errors():
    a, b = Net(), Net()
    res = b.load_state_dict(a.state_dict())
    assert res.missing_keys == [] and res.unexpected_keys == []
    assert repr(res) == "<All keys matched successfully>"
    for (n, p), (_, q) in zip(a.named_parameters(), b.named_parameters()):
        assert np.array_equal(p.detach().numpy(), q.detach().numpy()), n
    sd = a.state_dict()
    assert not sd["fc1.weight"].requires_grad
    del sd["scale"]
    sd["extra"] = torch.ones(1)
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "scale".*\n.*Unexpected'):
        b.load_state_dict(sd)
    res = b.load_state_dict(sd, strict=False)
    assert res.missing_keys == ["scale"] and res.unexpected_keys == ["extra"]
    sd = a.state_dict()
    sd["fc1.weight"] = torch.ones(5, 5)
    with pytest.raises(RuntimeError, match="size mismatch for fc1.weight"):
        b.load_state_dict(sd)
    # assign=True takes the state dict's tensors as the module's parameters.
    sd = a.state_dict()
    b.load_state_dict(sd, assign=True)
    assert isinstance(b.fc1.weight, nn.Parameter) and b.fc1.weight.requires_grad


def test_state_dict_hooks():
    net = nn.Linear(2, 2)
    calls = []
    net.register_state_dict_pre_hook(lambda m, prefix, keep_vars: calls.append("pre"))
    net._register_state_dict_hook(lambda m, sd, prefix, meta: calls.append("post"))
    net.register_load_state_dict_post_hook(lambda m, keys: calls.append(("load", list(keys.missing_keys))))
    sd = net.state_dict()
    net.load_state_dict(sd)
    assert calls == ["pre", "post", ("load", [])]


def test_forward_hooks():
    lin = nn.Linear(3, 2)
    log = []
    h1 = lin.register_forward_pre_hook(lambda m, args: (args[0] * 0,))
    h2 = lin.register_forward_hook(lambda m, args, out: log.append(out.shape) or out + 1)
    out = lin(torch.ones(1, 3))
    assert np.allclose(out.detach().numpy(), lin.bias.detach().numpy() + 1)
    assert log == [torch.Size([1, 2])]
    h1.remove()
    h2.remove()
    out = lin(torch.ones(1, 3))
    assert len(log) == 1

    def pre_kw(m, args, kwargs):
        return args, {}
    lin.register_forward_pre_hook(pre_kw, with_kwargs=True)
    lin.register_forward_hook(lambda m, args, kwargs, out: out * 2, with_kwargs=True)
    assert lin(torch.ones(1, 3)).shape == (1, 2)

    class Bad(nn.Module):
        def forward(self, x):
            raise ValueError("boom")
    bad = Bad()
    seen = []
    bad.register_forward_hook(lambda m, a, o: seen.append(1), always_call=True)
    with pytest.raises(ValueError):
        bad(1)
    assert seen == [1]


def test_global_forward_hook():
    lin = nn.Linear(2, 2)
    seen = []
    h = nn.modules.module.register_module_forward_hook(lambda m, a, o: seen.append(type(m).__name__))
    lin(torch.ones(1, 2))
    h.remove()
    lin(torch.ones(1, 2))
    assert seen == ["Linear"]


def test_repr():
    net = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 3, bias=False)), ("flat", nn.Flatten()),
                                     ("list", nn.ModuleList([nn.Identity(), nn.Identity(), nn.Linear(1, 1)]))]))
    expected = ("Sequential(\n"
                "  (fc): Linear(in_features=2, out_features=3, bias=False)\n"
                "  (flat): Flatten(start_dim=1, end_dim=-1)\n"
                "  (list): ModuleList(\n"
                "    (0-1): 2 x Identity()\n"
                "    (2): Linear(in_features=1, out_features=1, bias=True)\n"
                "  )\n"
                ")")
    assert repr(net) == expected
    assert repr(nn.ModuleList()) == "ModuleList()"


def test_sequential_ops():
    a, b, c = nn.Linear(1, 1), nn.Identity(), nn.Flatten()
    s = nn.Sequential(a, b)
    assert len(s) == 2 and s[0] is a and s[-1] is b
    assert isinstance(s[0:1], nn.Sequential) and len(s[0:1]) == 1
    s.append(c)
    assert s[2] is c
    s.insert(0, nn.Identity())
    assert s[1] is a and len(s) == 4
    assert s.pop(0) is not a and s[0] is a
    s2 = s + nn.Sequential(nn.Identity())
    assert len(s2) == 4
    s.extend([nn.Identity()])
    assert len(s) == 4
    del s[0]
    assert list(s._modules.keys()) == ["0", "1", "2"]
    with pytest.raises(IndexError):
        s[10]
    assert len(nn.Sequential(nn.Identity()) * 3) == 3


def test_module_list_dict():
    ml = nn.ModuleList([nn.Linear(1, 1)])
    ml.append(nn.Identity())
    ml.extend([nn.Identity()])
    ml.insert(1, nn.Flatten())
    assert [type(m).__name__ for m in ml] == ["Linear", "Flatten", "Identity", "Identity"]
    assert len(list(ml.parameters())) == 2
    md = nn.ModuleDict({"b": nn.Identity(), "a": nn.Linear(1, 1)})
    assert list(md.keys()) == ["b", "a"]
    assert "a" in md and isinstance(md["a"], nn.Linear)
    md.pop("b")
    assert len(md) == 1
    with pytest.raises(TypeError):
        nn.ModuleList([1])


def test_parameter_list_dict():
    pl = nn.ParameterList([torch.ones(2), nn.Parameter(torch.zeros(3))])
    assert isinstance(pl[0], nn.Parameter) and len(pl) == 2
    pl.append(torch.ones(1))
    assert [n for n, _ in pl.named_parameters()] == ["0", "1", "2"]
    assert repr(pl) == ("ParameterList(\n    (0): Parameter containing: [torch.float32 of size 2]\n"
                        "    (1): Parameter containing: [torch.float32 of size 3]\n"
                        "    (2): Parameter containing: [torch.float32 of size 1]\n)")
    pd = nn.ParameterDict({"w": torch.ones(2, 2)})
    pd["b"] = nn.Parameter(torch.zeros(2))
    assert list(pd.keys()) == ["w", "b"] and isinstance(pd["w"], nn.Parameter)
    assert repr(pd) == ("ParameterDict(\n    (w): Parameter containing: [torch.FloatTensor of size 2x2]\n"
                        "    (b): Parameter containing: [torch.FloatTensor of size 2]\n)")


def test_linear_bilinear_flatten():
    lin = nn.Linear(4, 3)
    x = torch.randn(5, 4)
    w, b = lin.weight.detach().numpy(), lin.bias.detach().numpy()
    assert np.allclose(lin(x).detach().numpy(), x.numpy() @ w.T + b, atol=1e-6)
    x3 = torch.randn(2, 5, 4)
    assert np.allclose(lin(x3).detach().numpy(), x3.numpy() @ w.T + b, atol=1e-6)
    bound = 1 / math.sqrt(4)
    assert float(lin.weight.abs().max()) <= bound and float(lin.bias.abs().max()) <= bound
    bil = nn.Bilinear(3, 4, 2)
    x1, x2 = torch.randn(6, 3), torch.randn(6, 4)
    ref = np.einsum("ni,oij,nj->no", x1.numpy(), bil.weight.detach().numpy(), x2.numpy()) + bil.bias.detach().numpy()
    assert np.allclose(bil(x1, x2).detach().numpy(), ref, atol=1e-5)
    bil(x1, x2).sum().backward()
    assert bil.weight.grad.shape == (2, 3, 4)
    assert nn.Flatten()(torch.ones(2, 3, 4)).shape == (2, 12)
    assert nn.Unflatten(1, (3, 4))(torch.ones(2, 12)).shape == (2, 3, 4)
    assert repr(nn.Bilinear(1, 2, 3)) == "Bilinear(in1_features=1, in2_features=2, out_features=3, bias=True)"


def test_init_functions():
    g = torch.Generator().manual_seed(0)
    w = torch.empty(200, 300)
    init.uniform_(w, -2, 3, generator=g)
    assert -2 <= float(w.min()) and float(w.max()) < 3
    init.normal_(w, 1.0, 2.0)
    assert abs(float(w.mean()) - 1.0) < 0.05 and abs(float(w.std()) - 2.0) < 0.05
    init.trunc_normal_(w, 0, 1, -0.5, 0.5)
    assert float(w.abs().max()) <= 0.5
    init.trunc_normal_(w)
    assert float(w.abs().max()) <= 2.0
    init.constant_(w, 0.25)
    assert float(w.min()) == float(w.max()) == 0.25
    init.zeros_(w), init.ones_(w)
    assert float(w.sum()) == w.numel()
    e = init.eye_(torch.empty(3, 4))
    assert np.array_equal(e.numpy(), np.eye(3, 4, dtype=np.float32))
    d = init.dirac_(torch.empty(2, 2, 3))
    assert float(d[0, 0, 1]) == 1 and float(d.sum()) == 2
    init.xavier_uniform_(w)
    assert float(w.abs().max()) <= math.sqrt(6 / 500)
    init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    assert abs(float(w.std()) - math.sqrt(2 / 200)) < 0.01
    q = init.orthogonal_(torch.empty(4, 6))
    assert np.allclose(q.numpy() @ q.numpy().T, np.eye(4), atol=1e-5)
    q = init.orthogonal_(torch.empty(6, 3), gain=2)
    assert np.allclose(q.numpy().T @ q.numpy(), 4 * np.eye(3), atol=1e-4)
    s = init.sparse_(torch.empty(10, 4), sparsity=0.3)
    assert all(int((s[:, j] == 0).sum()) >= 3 for j in range(4))
    assert init.calculate_gain("tanh") == 5.0 / 3
    with pytest.raises(ValueError):
        init.calculate_gain("foo")
    with pytest.raises(ValueError):
        init.xavier_uniform_(torch.empty(3))
    with pytest.raises(ValueError):
        init.kaiming_uniform_(torch.empty(2, 2), mode="fan")
    p = nn.Parameter(torch.empty(3, 3))
    init.normal_(p)
    assert p.grad_fn is None and p.is_leaf


def test_clip_grad_and_vectors():
    p1, p2 = nn.Parameter(torch.ones(3)), nn.Parameter(torch.ones(4))
    p1.grad, p2.grad = torch.full((3,), 3.0), torch.full((4,), 4.0)
    total = nn.utils.clip_grad_norm_([p1, p2], max_norm=1.0)
    assert abs(float(total) - math.sqrt(27 + 64)) < 1e-4
    new_total = math.sqrt(float((p1.grad ** 2).sum()) + float((p2.grad ** 2).sum()))
    assert abs(new_total - 1.0) < 1e-4
    p1.grad = torch.tensor([float("inf"), 1.0, 1.0])
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_([p1], 1.0, error_if_nonfinite=True)
    p1.grad = torch.tensor([-5.0, 0.5, 5.0])
    nn.utils.clip_grad_value_(p1, 1.0)
    assert p1.grad.tolist() == [-1.0, 0.5, 1.0]
    p1.grad = torch.tensor([3.0, 0.0, 4.0])
    assert abs(float(nn.utils.clip_grad_norm_(p1, 10.0, norm_type=float("inf"))) - 4.0) < 1e-6
    lin = nn.Linear(2, 3)
    v = nn.utils.parameters_to_vector(lin.parameters())
    assert v.shape == (9,)
    nn.utils.vector_to_parameters(torch.arange(9.0), lin.parameters())
    assert lin.bias.tolist() == [6.0, 7.0, 8.0]


def test_save_load(tmp_path):
    net = Net()
    obj = {"model": net.state_dict(), "step": 3, "t": [torch.arange(4), torch.ones(2, dtype=torch.bfloat16)]}
    path = tmp_path / "ck.pt"
    torch.save(obj, path)
    back = torch.load(path, map_location="cpu", weights_only=True)
    assert back["step"] == 3 and back["t"][1].dtype == torch.bfloat16
    assert list(back["model"].keys()) == list(obj["model"].keys())
    assert np.array_equal(back["model"]["fc1.weight"].numpy(), obj["model"]["fc1.weight"].numpy())
    buf = io.BytesIO()
    torch.save(torch.ones(2, requires_grad=True), buf)
    buf.seek(0)
    t = torch.load(buf)
    assert t.requires_grad and t.tolist() == [1.0, 1.0]
    clone = copy.deepcopy(net)
    assert clone.fc1.weight is not net.fc1.weight
    assert np.array_equal(clone.fc1.weight.detach().numpy(), net.fc1.weight.detach().numpy())


def test_deepcopy_non_leaf_raises():
    x = torch.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(x)


def test_full_backward_hook_registration():
    lin = nn.Linear(2, 2)
    h = lin.register_full_backward_hook(lambda m, gi, go: None)
    assert len(lin._backward_hooks) == 1
    if not hasattr(torch.Tensor, "register_hook"):
        with pytest.raises(NotImplementedError, match="register_hook"):
            lin(torch.ones(1, 2, requires_grad=True))
    h.remove()
    assert len(lin._backward_hooks) == 0
    assert lin(torch.ones(1, 2)).shape == (1, 2)


def test_parameter_data():
    p = nn.Parameter(torch.zeros(3))
    p.data.fill_(2.0)
    assert p.tolist() == [2.0, 2.0, 2.0] and not p.data.requires_grad
    p.data = torch.ones(3)
    assert p.tolist() == [1.0, 1.0, 1.0] and p.requires_grad
    p.data = torch.ones(4, dtype=torch.float64)  # the same Parameter takes another shape and dtype
    assert p.shape == (4,) and p.dtype == torch.float64 and p.requires_grad
    with pytest.raises(TypeError):
        p.data = [1.0]
    with pytest.raises(RuntimeError, match="must be floating point"):
        p.data = torch.arange(4)  # integer data for a tensor that requires grad, refused as torch


def test_lazy_linear_becomes_linear_and_trains():
    model = nn.Sequential(nn.LazyLinear(8), nn.ReLU(), nn.LazyLinear(1))
    assert isinstance(model[0].weight, nn.UninitializedParameter)
    assert repr(model[0].state_dict()["weight"]) == "<UninitializedParameter>"
    x, y = torch.randn(16, 3), torch.randn(16, 1)
    model(x)
    assert type(model[0]) is nn.Linear and tuple(model[0].weight.shape) == (8, 3)
    assert type(model[0].weight) is nn.Parameter and not model[0]._forward_pre_hooks
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    first = None
    for _ in range(30):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        first = first if first is not None else loss.item()
    assert loss.item() < first


def test_lazy_batchnorm_buffers_become_plain_tensors():
    bn = nn.LazyBatchNorm2d()
    assert isinstance(bn.running_mean, nn.UninitializedBuffer)
    bn(torch.randn(4, 3, 2, 2))
    assert type(bn) is nn.BatchNorm2d and bn.num_features == 3
    assert type(bn.running_mean) is torch.Tensor and tuple(bn.running_var.shape) == (3,)
    assert int(bn.num_batches_tracked) == 1


def test_functional_call_restores_module():
    lin = nn.Linear(3, 2)
    w = lin.weight
    out = torch.func.functional_call(lin, {"weight": torch.zeros(2, 3), "bias": torch.ones(2)}, torch.randn(4, 3))
    np.testing.assert_array_equal(out.numpy(), np.ones((4, 2), np.float32))
    assert lin.weight is w and type(lin.bias) is nn.Parameter
