"""torch.library custom ops (flowlike.library) and the torch.ops namespace."""
import pytest

import flowlike as fl


def test_custom_op_runs_and_is_reachable_through_ops():
    @fl.library.custom_op("fltest::axpy", mutates_args=())
    def axpy(a: float, x: fl.Tensor, y: fl.Tensor) -> fl.Tensor:
        return a * x + y

    x, y = fl.tensor([1.0, 2.0]), fl.tensor([10.0, 20.0])
    assert fl.ops.fltest.axpy is axpy and fl.ops.fltest.axpy.default is axpy
    assert fl.equal(fl.ops.fltest.axpy(2.0, x, y=y), fl.tensor([12.0, 24.0]))
    with pytest.raises(RuntimeError, match="multiple times"):
        fl.library.custom_op("fltest::axpy", lambda a, x, y: x, mutates_args=())
    with pytest.raises(AttributeError, match="no attribute 'missing'"):
        fl.ops.fltest.missing


def test_registered_autograd_gives_gradients():
    op = fl.library.custom_op("fltest::cube", lambda x: x ** 3, mutates_args=(), schema="(Tensor x) -> Tensor")

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 3 * x * x * grad

    fl.library.register_autograd("fltest::cube", backward, setup_context=setup_context)
    fl.library.register_fake("fltest::cube", lambda x: fl.empty_like(x))
    x = fl.tensor([1.0, -2.0], requires_grad=True)
    op(x).sum().backward()
    assert fl.equal(x.grad, fl.tensor([3.0, 12.0]))


def test_backward_without_a_registered_formula_raises():
    op = fl.library.custom_op("fltest::twice", lambda x: x * 2, mutates_args=(), schema="(Tensor x) -> Tensor")
    y = op(fl.ones(2, requires_grad=True))
    assert y.grad_fn is not None
    with pytest.raises(RuntimeError, match="no autograd formula was registered"):
        y.sum().backward()


@pytest.mark.parametrize("name", ["noseparator", "a:b", "::x", 3])
def test_bad_op_names_raise(name):
    with pytest.raises(ValueError, match="namespace"):
        fl.library.custom_op(name, lambda x: x, mutates_args=())


def test_registering_on_an_unknown_op_raises():
    with pytest.raises(RuntimeError, match="does not exist"):
        fl.library.register_fake("fltest::never_defined", lambda x: x)
