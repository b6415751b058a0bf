"""Lazy modules, fractional max pooling, gumbel_softmax, functional_call, Rprop/ASGD, swa_utils, autograd.Variable,
the profiler names and DistributedSampler (no torch needed)."""
import numpy as np
import pytest

import flowlike as torch
from flowlike import nn
from flowlike.nn import functional as F


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


def test_fractional_max_pool_output_is_window_max():
    torch.manual_seed(0)
    x = torch.randn(2, 3, 12, 10, requires_grad=True)
    out, idx = F.fractional_max_pool2d(x, 3, output_size=(5, 4), return_indices=True)
    assert tuple(out.shape) == (2, 3, 5, 4) and idx.dtype == torch.int64
    flat = x.detach().reshape(6, -1).numpy()
    np.testing.assert_array_equal(np.take_along_axis(flat, idx.reshape(6, -1).numpy(), 1),
                                  out.detach().reshape(6, -1).numpy())
    out.sum().backward()
    grad = x.grad.reshape(6, -1).numpy()
    counts = np.zeros_like(grad)
    for p, row in enumerate(idx.reshape(6, -1).numpy()):
        np.add.at(counts[p], row, 1)
    np.testing.assert_array_equal(grad, counts)
    samples = torch.rand(2, 3, 2)
    a = nn.FractionalMaxPool2d(3, output_ratio=0.5, _random_samples=samples)(x)
    b = F.fractional_max_pool2d(x, 3, output_ratio=(0.5, 0.5), _random_samples=samples)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    assert tuple(a.shape) == (2, 3, 6, 5)


def test_gumbel_softmax_hard_is_one_hot_with_soft_gradient():
    torch.manual_seed(1)
    logits = torch.randn(5, 4, requires_grad=True)
    y = F.gumbel_softmax(logits, tau=0.7, hard=True)
    np.testing.assert_array_equal(y.detach().numpy().sum(-1), np.ones(5))
    assert set(np.unique(y.detach().numpy())) == {0.0, 1.0}
    y.sum().backward()  # the one-hot sums to 1 per row: the soft sample's gradient of a constant is 0
    np.testing.assert_allclose(logits.grad.numpy(), 0, atol=1e-6)


def test_functional_call_restores_module():
    lin = nn.Linear(3, 2)
    w = lin.weight
    out = torch.func.functional_call(lin, {"weight": torch.zeros(2, 3), "bias": torch.ones(2)}, torch.randn(4, 3))
    np.testing.assert_array_equal(out.numpy(), np.ones((4, 2), np.float32))
    assert lin.weight is w and type(lin.bias) is nn.Parameter


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


def test_variable_and_profiler_names():
    t = torch.ones(2)
    v = torch.autograd.Variable(t, requires_grad=True)
    assert v.requires_grad and v.is_leaf and isinstance(t, torch.autograd.Variable)
    with torch.autograd.profiler.record_function("block"):
        pass
    with pytest.raises(NotImplementedError, match="profiler.profile"):
        torch.autograd.profiler.profile()


def test_distributed_sampler_partition():
    data = list(range(11))
    shares = [list(torch.utils.data.DistributedSampler(data, num_replicas=4, rank=r, seed=7)) for r in range(4)]
    assert all(len(s) == 3 for s in shares)
    merged = [i for s in shares for i in s]
    assert set(merged) == set(data) and len(merged) == 12  # one index repeated as padding
    loader = torch.utils.data.DataLoader(data, batch_size=2,
                                         sampler=torch.utils.data.DistributedSampler(data, 4, 1, seed=7))
    assert [int(i) for b in loader for i in b] == shares[1]
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        torch.utils.data.DistributedSampler(data)
