"""The tensor object: numpy interop sharing memory, attributes, creation and the allocator."""
import numpy as np
import pytest

import flowlike as fl


def test_from_numpy_shares_memory_both_ways():
    a = np.zeros(4, dtype=np.float32)
    t = fl.from_numpy(a)
    t.add_(1)
    assert a.tolist() == [1, 1, 1, 1]
    a[0] = 7
    assert t.tolist()[0] == 7
    n = t.numpy()
    n[1] = 5
    assert t.tolist()[1] == 5


def test_from_numpy_rejects_negative_strides():
    with pytest.raises(ValueError, match="negative"):
        fl.from_numpy(np.arange(4)[::-1])


def test_attributes():
    t = fl.zeros(2, 3, dtype=fl.float64)
    assert t.shape == (2, 3) and isinstance(t.shape, fl.Size)
    assert repr(t.shape) == "torch.Size([2, 3])"
    assert t.stride() == (3, 1) and t.dim() == 2 and t.numel() == 6
    assert t.element_size() == 8 and t.nbytes == 48 and t.itemsize == 8
    assert t.dtype is fl.float64 and str(t.device) == "cpu"
    assert t.is_contiguous() and t.storage_offset() == 0


def test_creation_functions():
    assert fl.arange(5).tolist() == [0, 1, 2, 3, 4] and fl.arange(5).dtype == fl.int64
    assert fl.arange(0, 1, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert fl.full((2,), 7).dtype == fl.int64
    assert fl.full((2,), 7.0).dtype == fl.float32
    assert fl.eye(2).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert fl.linspace(0, 1, 3).tolist() == [0.0, 0.5, 1.0]
    assert fl.tensor([True, False]).dtype == fl.bool
    assert fl.tensor([[1, 2], [3, 4]]).dtype == fl.int64
    with pytest.raises(RuntimeError, match="negative dimension"):
        fl.empty(-1)


def test_default_dtype():
    assert fl.get_default_dtype() is fl.float32
    fl.set_default_dtype(fl.float64)
    try:
        assert fl.tensor([1.5]).dtype == fl.float64
        assert (fl.ones(2, dtype=fl.int32) * 1.5).dtype == fl.float64
    finally:
        fl.set_default_dtype(fl.float32)


def test_caching_allocator_reuses_blocks():
    fl.memory.empty_cache()
    x = fl.empty(1 << 20)
    before = fl.memory.memory_stats()["num_cache_hits"]
    del x
    y = fl.empty(1 << 20)
    assert fl.memory.memory_stats()["num_cache_hits"] == before + 1
    assert fl.memory.memory_allocated() >= 4 << 20
    del y
    fl.memory.empty_cache()


def test_finfo_iinfo():
    assert fl.finfo(fl.float32).eps == np.finfo(np.float32).eps
    assert fl.iinfo(fl.int8).min == -128
    with pytest.raises(TypeError):
        fl.iinfo(fl.float32)


def test_legacy_tensor_constructor_and_subclass():
    assert fl.Tensor().shape == (0,)
    assert fl.Tensor(2, 3).shape == (2, 3) and fl.Tensor(2, 3).dtype == fl.float32
    assert fl.Tensor([1, 2]).tolist() == [1.0, 2.0]
    base = fl.ones(2)
    alias = fl.Tensor(base)
    alias.add_(1)
    assert base.tolist() == [2.0, 2.0]

    class Sub(fl.Tensor):
        pass

    s = Sub(fl.zeros(2))
    assert isinstance(s, fl.Tensor) and type(s) is Sub
    assert (s + 1).tolist() == [1.0, 1.0]


def test_untyped_storage_shared_by_views():
    x = fl.ones(4)
    assert x.untyped_storage().nbytes() == 16
    assert x.untyped_storage().data_ptr() == x.data_ptr()


def test_python_conversions():
    assert float(fl.tensor([2.5])) == 2.5 and int(fl.tensor(7)) == 7
    assert [1, 2, 3][fl.tensor(1)] == 2
    assert bool(fl.tensor([True]))
    import pytest
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(fl.ones(2))
    with pytest.raises(TypeError):
        [1, 2][fl.tensor(1.0)]
    assert len(fl.zeros(5, 2)) == 5
    with pytest.raises(TypeError, match="0-d"):
        len(fl.tensor(1.0))


def test_impossible_sizes_raise_instead_of_overflowing():
    import pytest
    with pytest.raises(RuntimeError):
        fl.empty(2 ** 62)
    with pytest.raises(RuntimeError, match="out of memory"):
        fl.empty(2 ** 40)
    with pytest.raises(RuntimeError, match="too large"):
        fl._C._empty_strided([2 ** 40, 2 ** 40], [2 ** 40, 1], fl.float32)
