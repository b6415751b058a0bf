"""Autograd without torch: analytic gradients, graph structure, grad modes, hooks into .grad, Variable and the
profiler names."""
import math

import pytest

import flowlike as fl


def test_chain_rule_against_analytic_gradient():
    x = fl.tensor([0.5, 1.0, 2.0], requires_grad=True)
    y = (x * x).exp()
    y.backward(fl.ones(3))
    expected = [2 * v * math.exp(v * v) for v in (0.5, 1.0, 2.0)]
    assert x.grad.tolist() == pytest.approx(expected, rel=1e-6)


def test_gradients_accumulate_and_broadcast_sums():
    w = fl.tensor([1.0, 2.0], requires_grad=True)
    x = fl.ones(3, 2)
    (x * w).backward(fl.ones(3, 2))
    (x * w).backward(fl.ones(3, 2))
    assert w.grad.tolist() == [6.0, 6.0]


def test_graph_structure_and_leaves():
    x = fl.ones(2, requires_grad=True)
    y = x * 2
    assert x.is_leaf and not y.is_leaf and y.requires_grad
    assert y.grad_fn.name() == "MulBackward0"
    assert y.grad_fn.next_functions[0][0].name() == "torch::autograd::AccumulateGrad"
    assert "grad_fn=<MulBackward0>" in repr(y)
    with pytest.raises(RuntimeError, match="leaf variables"):
        y.requires_grad = False


def test_no_grad_and_set_grad_enabled():
    x = fl.ones(2, requires_grad=True)
    with fl.no_grad():
        assert not (x * 2).requires_grad
        assert not fl.is_grad_enabled()
    assert fl.is_grad_enabled()

    @fl.no_grad()
    def f(t):
        return t * 3
    assert not f(x).requires_grad
    with fl.set_grad_enabled(False):
        assert not (x + 1).requires_grad
    assert (x + 1).requires_grad


def test_autograd_grad_does_not_touch_dot_grad_and_allow_unused():
    x = fl.ones(2, requires_grad=True)
    z = fl.ones(2, requires_grad=True)
    (g,) = fl.autograd.grad(x * 3, x, fl.ones(2))
    assert g.tolist() == [3.0, 3.0] and x.grad is None
    with pytest.raises(RuntimeError, match="not have been used"):
        fl.autograd.grad(x * 3, [x, z], fl.ones(2))
    gx, gz = fl.autograd.grad(x * 3, [x, z], fl.ones(2), allow_unused=True)
    assert gz is None


def test_retain_grad_and_retain_graph():
    x = fl.ones(2, requires_grad=True)
    y = x * 2
    y.retain_grad()
    z = (y * y).exp()
    z.backward(fl.ones(2), retain_graph=True)
    first = x.grad.tolist()
    z.backward(fl.ones(2))
    assert x.grad.tolist() == [2 * v for v in first]
    assert y.grad is not None and y.retains_grad


def test_saved_tensor_modified_in_place_raises():
    x = fl.ones(3, requires_grad=True)
    y = x.exp()
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward(fl.ones(3))


def test_backward_frees_saved_tensors():
    x = fl.ones(3, requires_grad=True)
    y = x.exp()
    y.backward(fl.ones(3))
    with pytest.raises(RuntimeError, match="second time"):
        y.backward(fl.ones(3))


def test_integer_outputs_are_not_differentiable():
    x = fl.tensor([1.5, -2.0], requires_grad=True)
    assert not (x > 0).requires_grad
    assert (x.floor() * 1).requires_grad


def test_inplace_writes_into_leaves_refuse_and_intermediates_are_recorded():
    x = fl.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        x.fill_(2)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        x[0] = 5.0
    y = x * 2
    y.masked_fill_(y > 2.5, 0.0)  # nothing masked: the gradient passes
    assert y.grad_fn.name() == "MaskedFillBackward0"
    y.copy_(x * 3)
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0, 3.0]
    z = (x * 2).scatter_reduce_(0, fl.tensor([1]), x[:1] * 5, "amax")
    assert z.grad_fn.name() == "ScatterReduceBackward0"
    x.grad = None
    z.sum().backward()
    assert x.grad.tolist() == [7.0, 0.0, 2.0]  # position 1 took 5 * x[0]
    with fl.no_grad():
        x.fill_(2)
        x[1] = 7.0
    assert x.tolist() == [2.0, 7.0, 2.0]


def test_inplace_on_a_view_rebases_the_base():
    leaf = fl.ones(4, requires_grad=True)
    y = leaf * 2
    y[:2].mul_(3)
    assert y.grad_fn.name() == "torch::autograd::CopySlices"
    y.sum().backward()
    assert leaf.grad.tolist() == [6.0, 6.0, 2.0, 2.0]
    z = fl.ones(4, requires_grad=True) * 2
    z.mul_(3)  # in-place on a non-view intermediate is recorded
    assert z.grad_fn.name() == "MulBackward0"


def test_view_of_a_base_written_in_place_gets_a_fresh_grad_fn_keeping_retain_grad_and_hooks():
    # (torch 2.13 crashes on register_hook here, so this is checked against hand-computed values)
    a = fl.ones(2, 3, requires_grad=True)
    b = a * 1
    v = b[1]
    v.retain_grad()
    b.mul_(4)  # v now reads 4 * a[1]: its grad_fn is regenerated over b's new history
    seen = []
    v.register_hook(lambda g: seen.append(g.sum().item()))
    (v * 3).sum().backward()
    assert v.grad_fn.name() == "AsStridedBackward0"
    assert v.grad.tolist() == [3.0, 3.0, 3.0]
    assert seen == [9.0]
    assert a.grad.tolist() == [[0.0, 0.0, 0.0], [12.0, 12.0, 12.0]]


def test_variable_and_profiler_names():
    t = fl.ones(2)
    v = fl.autograd.Variable(t, requires_grad=True)
    assert v.requires_grad and v.is_leaf and isinstance(t, fl.autograd.Variable)
    with fl.autograd.profiler.record_function("block"):
        pass
    with pytest.raises(NotImplementedError, match="profiler.profile"):
        fl.autograd.profiler.profile()
