"""CPU autocast: which ops run in the lower precision dtype, which in float32, and the per-thread state."""
import threading

import pytest

import flowlike as fl
import flowlike.nn.functional as F


def test_marked_ops_cast_and_others_keep_their_dtypes():
    a, w = fl.randn(3, 4), fl.randn(5, 4)
    with fl.autocast("cpu", dtype=fl.bfloat16):
        assert F.linear(a, w).dtype == fl.bfloat16 and (a @ w.T).dtype == fl.bfloat16
        assert F.conv2d(a.reshape(1, 1, 3, 4), w[:2].reshape(2, 1, 2, 2)).dtype == fl.bfloat16
        assert F.cross_entropy((a @ w.T), fl.tensor([0, 1, 2])).dtype == fl.float32
        assert a.bfloat16().prod().dtype == fl.float32
        assert (a + a).dtype == fl.float32 and (a.double() @ w.double().T).dtype == fl.float64
    assert (a @ w.T).dtype == fl.float32


def test_lower_precision_values_are_those_of_the_cast_inputs():
    a, w = fl.randn(3, 4), fl.randn(5, 4)
    with fl.autocast("cpu", dtype=fl.float16):
        got = F.linear(a, w)
    assert fl.equal(got, F.linear(a.half(), w.half()))


def test_gradients_reach_float32_parameters_in_float32():
    layer = fl.nn.Linear(4, 2)
    with fl.autocast("cpu"):
        loss = F.mse_loss(layer(fl.randn(3, 4)), fl.zeros(3, 2))
    loss.backward()
    assert loss.dtype == fl.float32 and layer.weight.grad.dtype == fl.float32
    assert bool(layer.weight.grad.abs().sum() > 0)


def test_state_nests_and_is_per_thread():
    seen = []
    with fl.autocast("cpu"):
        worker = threading.Thread(target=lambda: seen.append(fl.is_autocast_enabled("cpu")))
        worker.start()
        worker.join()
        with fl.autocast("cpu", enabled=False):
            assert not fl.is_autocast_enabled("cpu")
        assert fl.is_autocast_enabled("cpu") and fl.get_autocast_dtype("cpu") == fl.bfloat16
    assert seen == [False] and not fl.is_autocast_enabled("cpu")


def test_an_op_inside_a_marked_op_is_not_cast_again():
    a = fl.randn(4, 3)
    with fl.autocast("cpu"):
        d = fl.cdist(a, a)  # float32 op built on matmul, which autocast would otherwise run in bfloat16
    assert d.dtype == fl.float32
    assert fl.allclose(d, fl.cdist(a, a), atol=1e-6)


def test_bad_arguments():
    with pytest.raises(ValueError, match="device_type"):
        fl.autocast(0)
    with pytest.raises(RuntimeError, match="Expected one of cpu"):
        fl.autocast("gpu")
    with pytest.warns(UserWarning, match="not supported"):
        assert not fl.autocast("cpu", dtype=fl.float64)._enabled
