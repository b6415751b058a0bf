"""Custom autograd.Function, tensor hooks, saved-tensor hooks, anomaly mode, autograd.functional, gradcheck
and memory over a long training loop."""
import math

import numpy as np
import pytest

import flowlike as fl
from flowlike.autograd import Function, gradcheck, gradgradcheck, GradcheckError
from flowlike.autograd import functional as AF


def f64(*shape, seed=0):
    return fl.from_numpy(np.random.default_rng(seed).standard_normal(shape)).requires_grad_()


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        r = x.exp()
        ctx.save_for_backward(r)
        return r

    @staticmethod
    def backward(ctx, g):
        (r,) = ctx.saved_tensors
        return g * r


class ScaleBy(Function):
    """Non-tensor argument and the setup_context style."""

    @staticmethod
    def forward(x, k):
        return x * k

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.k = inputs[1]

    @staticmethod
    def backward(ctx, g):
        return g * ctx.k, None


def test_custom_function_values_grads_and_node_name():
    x = f64(3, 4)
    y = Exp.apply(x)
    assert y.grad_fn.name() == "ExpBackward"
    assert y.requires_grad and not y.is_leaf
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(x.detach().numpy()))


def test_setup_context_style_and_non_tensor_args():
    x = f64(5)
    ScaleBy.apply(x, 3.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(5, 3.0))


def test_needs_input_grad_and_no_recording_without_grad():
    seen = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, a, b):
            seen["needs"] = ctx.needs_input_grad
            seen["grad_mode"] = fl.is_grad_enabled()
            return a + b

        @staticmethod
        def backward(ctx, g):
            return g, g

    a, b = f64(2), fl.ones(2, dtype=fl.float64)
    out = Probe.apply(a, b)
    assert seen == {"needs": (True, False), "grad_mode": False}
    assert out.requires_grad
    with fl.no_grad():
        assert not Probe.apply(a, b).requires_grad


def test_double_backward_through_custom_function():
    x = f64(4)
    (g,) = fl.autograd.grad(Exp.apply(x).sum(), x, create_graph=True)
    (gg,) = fl.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), np.exp(x.detach().numpy()))


def test_saved_tensor_modified_in_place_raises():
    x = f64(3)
    y = Exp.apply(x)
    y.add_(1)  # y was saved as an output
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_saved_tensors_freed_after_backward():
    x = f64(3)
    y = Exp.apply(x)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.sum().backward()


def test_wrong_number_of_gradients_is_an_error():
    class Bad(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError, match="incorrect number of gradients"):
        Bad.apply(f64(2), f64(2)).sum().backward()


def test_gradient_shape_mismatch_is_an_error_and_broadcast_is_summed():
    class Broad(Function):
        @staticmethod
        def forward(ctx, a):
            return a.clone()

        @staticmethod
        def backward(ctx, g):
            return g.unsqueeze(0).expand(3, *g.shape)

    x = f64(2)
    Broad.apply(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])

    class Wrong(Function):
        @staticmethod
        def forward(ctx, a):
            return a.clone()

        @staticmethod
        def backward(ctx, g):
            return fl.ones(5, dtype=g.dtype)

    with pytest.raises(RuntimeError, match="invalid gradient"):
        Wrong.apply(f64(2)).sum().backward()


def test_mark_non_differentiable_and_materialize_grads():
    class SortWithIndex(Function):
        @staticmethod
        def forward(ctx, x):
            values, idx = x.sort()
            ctx.mark_non_differentiable(idx)
            ctx.save_for_backward(idx)
            ctx.set_materialize_grads(False)
            return values, idx

        @staticmethod
        def backward(ctx, g_values, g_idx):
            assert g_idx is None  # not materialized
            (idx,) = ctx.saved_tensors
            return fl.zeros_like(g_values).scatter(0, idx, g_values)

    x = f64(5)
    values, idx = SortWithIndex.apply(x)
    assert values.requires_grad and not idx.requires_grad
    (values * fl.arange(5, dtype=fl.float64)).sum().backward()
    order = np.argsort(x.detach().numpy())
    want = np.zeros(5)
    want[order] = np.arange(5)
    np.testing.assert_allclose(x.grad.numpy(), want)


def test_mark_dirty_rebases_history():
    class AddOneInPlace(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2  # deliberately not the identity, to see it used

    leaf = f64(3)
    y = leaf * 1.0
    z = AddOneInPlace.apply(y)
    assert z is y and z.grad_fn.name() == "AddOneInPlaceBackward"
    z.sum().backward()
    np.testing.assert_allclose(leaf.grad.numpy(), [2.0, 2.0, 2.0])
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        AddOneInPlace.apply(f64(3))


def test_once_differentiable_backward_is_not_recorded():
    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @fl.autograd.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = f64(3)
    (g,) = fl.autograd.grad(Square.apply(x).sum(), x, create_graph=True)
    assert not g.requires_grad


def test_tensor_hooks_replace_observe_and_remove():
    x = f64(3)
    y = x * 2
    calls = []
    h = y.register_hook(lambda g: g * 10)
    x.register_hook(lambda g: calls.append(g.clone()))
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 20.0))
    np.testing.assert_allclose(calls[0].numpy(), np.full(3, 20.0))
    h.remove()
    x.grad = None
    y = x * 2
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 2.0))
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        fl.ones(2).register_hook(lambda g: g)
    y = x * 2
    y.register_hook(lambda g: fl.ones(7, dtype=g.dtype))
    with pytest.raises(RuntimeError, match="changed the size"):
        y.sum().backward()


def test_hook_runs_before_autograd_grad_capture():
    x = f64(2)
    y = x * 3
    y.register_hook(lambda g: g + 1)
    (gy,) = fl.autograd.grad(y.sum(), y)
    np.testing.assert_allclose(gy.numpy(), [2.0, 2.0])


def test_post_accumulate_grad_hook_sees_the_accumulated_grad():
    x = f64(3)
    seen = []
    x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.clone()))
    (x * 4).sum().backward()
    (x * 4).sum().backward()
    assert len(seen) == 2
    np.testing.assert_allclose(seen[1].numpy(), np.full(3, 8.0))
    with pytest.raises(RuntimeError):
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)


def test_saved_tensors_hooks_pack_and_unpack():
    packed, unpacked = [], []

    def pack(t):
        packed.append(t.shape)
        return t.detach().numpy().copy()

    def unpack(a):
        unpacked.append(a.shape)
        return fl.from_numpy(a)

    x = f64(4)
    with fl.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = Exp.apply(x)
        z = x @ x  # mm saves its operands
    y.sum().backward()
    z.backward()
    assert len(packed) >= 3 and len(unpacked) >= 3
    np.testing.assert_allclose(x.grad.numpy(), np.exp(x.detach().numpy()) + 2 * x.detach().numpy())


def test_anomaly_mode_names_the_op_that_produced_nan():
    x = fl.tensor([0.0, 1.0], requires_grad=True)
    with fl.autograd.detect_anomaly():
        y = x.sqrt() * 0.0  # grad of sqrt at 0 is inf, times 0 -> nan
        with pytest.raises(RuntimeError, match=r"Function 'SqrtBackward0' returned nan values") as info:
            y.sum().backward()
    assert "test_autograd_function.py" in str(info.value)  # the forward call's traceback
    assert not fl.autograd.is_anomaly_enabled()
    y = x.sqrt() * 0.0
    y.sum().backward()  # off again: no error
    assert math.isnan(x.grad[0].item())


def test_functional_jacobian_hessian_and_products():
    a = fl.tensor([1.0, 2.0, 3.0], dtype=fl.float64)
    jac = AF.jacobian(lambda x: x ** 2, a)
    np.testing.assert_allclose(jac.numpy(), np.diag([2.0, 4.0, 6.0]))
    jac2 = AF.jacobian(lambda x, y: (x * y, x.sum()), (a, a))
    assert isinstance(jac2, tuple) and len(jac2) == 2 and tuple(jac2[1][0].shape) == (3,)
    hess = AF.hessian(lambda x: (x ** 3).sum(), a)
    np.testing.assert_allclose(hess.numpy(), np.diag([6.0, 12.0, 18.0]))
    v = fl.tensor([1.0, 0.0, 1.0], dtype=fl.float64)
    out, jv = AF.jvp(lambda x: x ** 2, a, v)
    np.testing.assert_allclose(jv.numpy(), [2.0, 0.0, 6.0])
    out, vj = AF.vjp(lambda x: x ** 2, a, v)
    np.testing.assert_allclose(vj.numpy(), [2.0, 0.0, 6.0])
    for prod in (AF.hvp, AF.vhp):
        _, hv = prod(lambda x: (x ** 3).sum(), a, v)
        np.testing.assert_allclose(hv.numpy(), [6.0, 0.0, 18.0])
    with pytest.raises(RuntimeError, match="independent of input"):
        AF.vjp(lambda x, y: x * 2, (a, a), v, strict=True)


def test_gradcheck_passes_and_catches_a_wrong_derivative():
    x, w = f64(3, 4), f64(4, 2, seed=1)
    assert gradcheck(lambda a, b: (a @ b).tanh(), (x, w))
    assert gradgradcheck(lambda a, b: (a @ b).sigmoid(), (x, w))
    assert gradcheck(Exp.apply, (x,))

    class WrongExp(Exp):
        @staticmethod
        def backward(ctx, g):
            (r,) = ctx.saved_tensors
            return g * r * 1.01

    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        gradcheck(WrongExp.apply, (x,))
    assert gradcheck(WrongExp.apply, (x,), raise_exception=False) is False


def test_training_loop_memory_stays_flat():
    rng = np.random.default_rng(0)
    w1 = fl.from_numpy(rng.standard_normal((32, 64)).astype(np.float32) * 0.1).requires_grad_()
    w2 = fl.from_numpy(rng.standard_normal((64, 1)).astype(np.float32) * 0.1).requires_grad_()
    x = fl.from_numpy(rng.standard_normal((16, 32)).astype(np.float32))
    y = fl.from_numpy(rng.standard_normal((16, 1)).astype(np.float32))
    marks = []
    for step in range(1000):
        h = (x @ w1).tanh()
        loss = ((h @ w2 - y) ** 2).mean()
        loss.backward()
        with fl.no_grad():
            for w in (w1, w2):
                w -= 0.01 * w.grad
                w.grad = None
        if step in (10, 999):
            marks.append(fl.memory.memory_allocated())
    assert marks[1] == marks[0]
