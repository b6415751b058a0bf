"""The meta device: tensors with shape and dtype but no data, and the device context that makes them."""
import pytest

import flowlike as fl


def test_meta_factories_give_meta_tensors_of_the_asked_shape_and_dtype():
    x = fl.zeros(2, 3, dtype=fl.float64, device="meta", requires_grad=True)
    assert (x.is_meta, str(x.device), tuple(x.shape), x.dtype, x.requires_grad) == (
        True, "meta", (2, 3), fl.float64, True)
    assert fl.arange(5, device="meta").dtype == fl.int64
    assert fl.randn(4, device="meta").is_meta and fl.full((2,), 7, device="meta").dtype == fl.int64
    assert repr(fl.empty(2, 3, device="meta")) == "tensor(..., device='meta', size=(2, 3))"


def test_device_context_and_default_device():
    with fl.device("meta"):
        assert fl.tensor([]).is_meta and str(fl.get_default_device()) == "meta"
        with fl.device("cpu"):
            assert not fl.ones(1).is_meta
        layer = fl.nn.Linear(3, 2)
    assert str(fl.get_default_device()) == "cpu" and not fl.ones(1).is_meta
    assert all(p.is_meta and isinstance(p, fl.nn.Parameter) for p in layer.parameters())
    fl.set_default_device("meta")
    try:
        assert fl.zeros(1).is_meta
    finally:
        fl.set_default_device(None)
    assert not fl.zeros(1).is_meta
    with pytest.raises(RuntimeError, match="no cuda backend"):
        fl.set_default_device("cuda")


def test_views_of_meta_tensors_stay_meta_and_cpu_tensors_do_not_become_meta():
    x = fl.empty(4, 6, device="meta")
    for view in (x[1:], x.T, x.view(24), x.expand(2, 4, 6), x.unsqueeze(0), fl.nn.Parameter(x)):
        assert view.is_meta
    assert not fl.empty(4, 6).is_meta and not fl.empty_like(x, device="cpu").is_meta
    assert fl.empty_like(x).is_meta and x.to("meta", fl.float16).dtype == fl.float16


def test_meta_tensors_have_no_values_to_read():
    x = fl.empty(2, 2, device="meta")
    for read, error in ((x.tolist, NotImplementedError), (x.numpy, TypeError), (x.cpu, NotImplementedError),
                        (lambda: x.to("cpu"), NotImplementedError), (lambda: x[0, 0].item(), RuntimeError)):
        with pytest.raises(error):
            read()


def test_fills_on_meta_tensors_do_nothing_and_draw_no_random_numbers():
    fl.manual_seed(0)
    want = fl.rand(3)
    fl.manual_seed(0)
    with fl.device("meta"):
        fl.nn.Linear(8, 8)  # kaiming_uniform_ on meta
        fl.nn.Embedding(5, 4, padding_idx=0)  # normal_ and a fill_ of a view
        fl.randn(10)
    assert fl.equal(fl.rand(3), want)


def test_module_moves_off_meta_only_through_to_empty():
    with fl.device("meta"):
        m = fl.nn.Sequential(fl.nn.Linear(3, 4), fl.nn.LayerNorm(4))
    with pytest.raises(NotImplementedError, match="to_empty"):
        m.to("cpu")
    with pytest.raises(NotImplementedError, match="to_empty"):
        m.cpu()
    params = list(m.parameters())
    m.to_empty(device="cpu")
    assert all(not p.is_meta for p in m.parameters())
    assert all(a is b for a, b in zip(params, m.parameters()))  # the same Parameter objects, new storage
    for p in m.parameters():
        fl.nn.init.ones_(p)
    assert m(fl.ones(1, 3)).shape == (1, 4)
    m.to("meta")
    assert all(p.is_meta for p in m.parameters())


def test_computing_with_meta_tensors_gives_no_numbers():
    # flowlike has no meta kernels: such ops run on the sentinel, whose NaN keeps the result from looking real
    with fl.device("meta"):
        layer = fl.nn.Linear(2, 3)
    assert bool(fl.isnan(layer(fl.ones(1, 2))).all())
