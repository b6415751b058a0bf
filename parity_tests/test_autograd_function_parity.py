"""Custom Functions, hooks, saved-tensor hooks, autograd.functional and gradcheck, run with the same body on
torch and on flowlike (dual-run): the results and the exception types must agree; autograd.Variable and the
profiler's record_function."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402
from helpers import assert_raises_same, check_both, leaf  # noqa: E402

X = np.random.default_rng(3).standard_normal((3, 4))
W = np.random.default_rng(4).standard_normal((4, 2))


def make_function(lib):
    class MulSin(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, w, scale):
            ctx.save_for_backward(x, w)
            ctx.scale = scale
            return (x @ w).sin() * scale

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            inner = (x @ w).cos() * g * ctx.scale
            return inner @ w.t(), x.t() @ inner, None
    return MulSin


def test_custom_function_forward_backward_and_double_backward():
    def body(lib):
        x, w = leaf(lib, X), leaf(lib, W)
        y = make_function(lib).apply(x, w, 0.5)
        (gx,) = lib.autograd.grad(y.pow(2).sum(), x, create_graph=True)
        gx.sum().backward()
        return y, gx, w.grad
    check_both(body, rtol=1e-6, atol=1e-9)


def test_hooks():
    def body(lib):
        x = leaf(lib, X)
        y = x * 3
        y.register_hook(lambda g: g * 2)
        x.register_hook(lambda g: g + 1)
        seen = []
        x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.clone()))
        (y * y).sum().backward()
        return x.grad, seen[0]
    check_both(body, rtol=1e-6, atol=1e-9)


def test_saved_tensors_hooks_scale_saved_values():
    def body(lib):
        x, w = leaf(lib, X), leaf(lib, W)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t * 2, lambda t: t):
            y = make_function(lib).apply(x, w, 1.0)
        y.sum().backward()
        return x.grad, w.grad
    check_both(body, rtol=1e-6, atol=1e-9)


def test_functional():
    def body(lib):
        F = lib.autograd.functional
        a = lib.tensor(X[0], dtype=lib.float64)
        v = lib.tensor(X[1], dtype=lib.float64)

        def f(x):
            return (x.sin() * x).sum()
        return (F.jacobian(lambda x: x.sin() * x, a), F.hessian(f, a), F.vjp(lambda x: x.exp(), a, v)[1],
                F.jvp(lambda x: x.exp(), a, v)[1], F.hvp(f, a, v)[1], F.vhp(f, a, v)[1])
    check_both(body, rtol=1e-6, atol=1e-9)


def test_gradcheck_agrees():
    for lib in (torch, fl):
        x, w = leaf(lib, X), leaf(lib, W)
        assert lib.autograd.gradcheck(lambda a, b: make_function(lib).apply(a, b, 2.0), (x, w))
        assert lib.autograd.gradgradcheck(lambda a, b: (a @ b).tanh(), (x, w))


@pytest.mark.parametrize("case", ["wrong_count", "saved_modified", "hook_on_constant", "twice"])
def test_errors_match(case):
    def body(lib):
        x, w = leaf(lib, X), leaf(lib, W)
        if case == "wrong_count":
            class Bad(lib.autograd.Function):
                @staticmethod
                def forward(ctx, a, b):
                    return a @ b

                @staticmethod
                def backward(ctx, g):
                    return g
            return lambda: Bad.apply(x, w).sum().backward()
        if case == "saved_modified":
            y = make_function(lib).apply(x, w, 1.0)
            with lib.no_grad():
                x.mul_(2)
            return lambda: y.sum().backward()
        if case == "hook_on_constant":
            return lambda: lib.ones(2).register_hook(lambda g: g)
        y = make_function(lib).apply(x, w, 1.0).sum()
        y.backward()
        return lambda: y.backward()
    assert_raises_same(lambda lib: body(lib)())


# ---- autograd.Variable and the profiler -----------------------------------------------------------------------------

def test_variable():
    for lib in (torch, fl):
        t = lib.ones(3)
        v = lib.autograd.Variable(t, requires_grad=True)
        assert type(v) is lib.Tensor and v.requires_grad and v.is_leaf and v is not t
        assert v.data_ptr() == t.data_ptr() and isinstance(t, lib.autograd.Variable)
        y = lib.autograd.Variable(lib.ones(2, requires_grad=True) * 2)
        assert y.grad_fn is None and not y.requires_grad
        assert tuple(lib.autograd.Variable().shape) == (0,)
        with pytest.raises(TypeError, match="Variable data has to be a tensor, but got int"):
            lib.autograd.Variable(3)
        with pytest.warns(UserWarning, match="volatile was removed"):
            lib.autograd.Variable(t, volatile=True)


def test_record_function_and_profile():
    calls = []

    @fl.autograd.profiler.record_function("label")
    def f(a):
        calls.append(a)
        return a * 2

    with fl.autograd.profiler.record_function("block", "args") as rf:
        assert rf.name == "block" and rf.args == "args"
        assert f(fl.ones(1)).item() == 2.0
    assert len(calls) == 1
    with pytest.raises(NotImplementedError, match="torch.autograd.profiler.profile"):
        fl.autograd.profiler.profile()
