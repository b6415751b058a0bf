"""Zero-copy exchange with numpy: DLPack both ways, __array__, frombuffer, asarray."""
import numpy as np

import flowlike as fl


def test_dlpack_to_numpy_shares_memory():
    t = fl.arange(6).float()
    a = np.from_dlpack(t)
    a[0] = 42
    assert t.tolist()[0] == 42.0
    del t
    assert a[0] == 42  # the exported memory outlives the tensor


def test_dlpack_from_numpy_shares_memory():
    x = np.ones(3, dtype=np.float32)
    y = fl.from_dlpack(x)
    y.add_(1)
    assert x.tolist() == [2.0, 2.0, 2.0]
    assert fl.from_dlpack(np.arange(4, dtype=np.int16)).dtype == fl.int16
    assert np.from_dlpack(fl.tensor([True, False])).tolist() == [True, False]


def test_array_protocol_and_asarray():
    t = fl.tensor([[1, 2], [3, 4]], dtype=fl.int32)
    assert np.asarray(t).dtype == np.int32
    a = np.arange(3.0)
    s = fl.asarray(a)
    a[1] = 9
    assert s.tolist() == [0.0, 9.0, 2.0]
    assert fl.asarray(a, copy=True).data_ptr() != s.data_ptr()


def test_frombuffer():
    buf = bytearray(np.arange(4, dtype=np.int32).tobytes())
    t = fl.frombuffer(buf, dtype=fl.int32)
    assert t.tolist() == [0, 1, 2, 3]
    t.add_(1)
    assert np.frombuffer(buf, dtype=np.int32).tolist() == [1, 2, 3, 4]
