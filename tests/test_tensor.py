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
    assert x[1:].untyped_storage().data_ptr() == x.data_ptr()


def test_untyped_storage_cpu_copy_and_slices():
    s = fl.arange(4.0).untyped_storage()
    assert s.cpu() is s and s.device == fl.device("cpu") and not s.is_cuda
    dst = fl.zeros(4).untyped_storage()
    assert dst.copy_(s) is dst
    assert fl.asarray(dst, dtype=fl.float32).tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(RuntimeError, match="size does not match, self was 16 bytes but src was 8 bytes"):
        dst.copy_(fl.zeros(2).untyped_storage())
    with pytest.raises(TypeError, match="must be torch.Storage, not Tensor"):
        dst.copy_(fl.zeros(4))
    part = s[4:12]  # a storage of its own over bytes 4..12
    assert part.nbytes() == 8 and part.data_ptr() == s.data_ptr() + 4
    assert fl.asarray(part, dtype=fl.float32).tolist() == [1.0, 2.0]
    assert s[4] == fl.tensor([1.0]).view(fl.uint8)[0].item()
    t = fl.arange(4.0)
    for start, length in ((17, -1), (-1, 4), (0, 17), (0, -2)):  # out of range: an error, never a crash
        with pytest.raises(IndexError):
            t._storage_bytes(start, length)


def test_set_aliases_the_source_storage():
    t = fl.arange(6.0)
    x = fl.empty(0)
    version = x._version
    assert x.set_(t.untyped_storage(), 1, (2, 2), (2, 1)) is x
    assert x.tolist() == [[1.0, 2.0], [3.0, 4.0]] and x.storage_offset() == 1 and x._version == version + 1
    assert x.untyped_storage().data_ptr() == t.untyped_storage().data_ptr() and x._is_view_of(t)
    x[0, 0] = 100  # writes through either tensor show in the other
    assert t.tolist() == [0.0, 100.0, 2.0, 3.0, 4.0, 5.0]
    t_version = t._version
    t.add_(1)
    assert x._version == version + 2 and t._version == t_version + 1  # each keeps its own version counter


def test_set_overloads_and_defaults():
    t = fl.arange(6.0)
    s = t.untyped_storage()
    assert fl.empty(3).set_(s).shape == (6,)  # the whole storage as a 1-D tensor
    y = fl.empty(0).set_(s, 2, (3,))  # stride defaults to contiguous
    assert y.tolist() == [2.0, 3.0, 4.0] and y.stride() == (1,)
    y = fl.empty(0).set_(source=s, storage_offset=0, size=(3,), stride=(2,))
    assert y.tolist() == [0.0, 2.0, 4.0]
    v = t[1:].view(5, 1)
    y = fl.empty(3).set_(v)  # a tensor's own geometry
    assert y.is_set_to(v) and not y.is_set_to(t) and y.tolist() == v.tolist()
    y = fl.empty(0).set_(t[2:], 1, (2,))  # the offset counts from where the source tensor starts
    assert y.tolist() == [3.0, 4.0] and y.storage_offset() == 3
    y = fl.empty(3).set_()  # a new empty storage
    assert y.shape == (0,) and y.untyped_storage().nbytes() == 0 and not y._is_view_of(t)
    assert fl.empty(0, dtype=fl.float64).set_(s, 0, (3,)).dtype == fl.float64  # a storage has no dtype
    # geometry that reaches past the storage's end grows it
    small = fl.empty(2).untyped_storage()
    y = fl.empty(0).set_(small, 0, (10,), (1,))
    assert small.nbytes() == 40 and y.untyped_storage().nbytes() == 40


def test_set_errors():
    t = fl.arange(6.0)
    s = t.untyped_storage()
    with pytest.raises(RuntimeError, match="Could not set tensor of type long int to a tensor of type float"):
        fl.empty(0).set_(fl.arange(3))
    with pytest.raises(RuntimeError, match=r"unequal size length \(1\) and stride length \(3\)"):
        fl.empty(0).set_(s, 0, (2,), (1, 2, 3))
    with pytest.raises(RuntimeError, match="invalid storage offset -1"):
        fl.empty(0).set_(s, -1, (2,))
    with pytest.raises(RuntimeError, match="negative size"):
        fl.empty(0).set_(s, 0, (-1,))
    with pytest.raises(RuntimeError, match="overflowed"):
        fl.empty(0).set_(s, 0, (2,), (-1,))
    with pytest.raises(TypeError):
        fl.empty(0).set_(s, 0)  # storage_offset without size
    with pytest.raises(TypeError, match="must be Tensor or Storage, not int"):
        fl.empty(0).set_(3)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        fl.zeros(3, requires_grad=True).set_(s)
    with pytest.raises(RuntimeError, match="not resizable"):  # memory flowlike does not own cannot grow
        fl.empty(0).set_(fl.from_numpy(np.zeros(2, dtype=np.float32)).untyped_storage(), 0, (10,))
    part = s[4:12]
    with pytest.raises(RuntimeError, match="not resizable"):  # nor can a storage that has been sliced
        fl.empty(0).set_(s, 0, (100,))
    assert fl.empty(0).set_(part).tolist() == [1.0, 2.0]


def test_new_empty_on_cpu():
    x = fl.ones(2, 3, dtype=fl.float64)
    e = x.new_empty(0, device="cpu")
    assert e.shape == (0,) and e.dtype == fl.float64 and e.device == fl.device("cpu")


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
