"""Indexing against numpy, whose fancy indexing follows the same rules (ints are basic indices in
PyTorch, so cases with an int between advanced indices are left to the parity tests)."""
import numpy as np
import pytest

import flowlike as fl

A = np.arange(120, dtype=np.float32).reshape(4, 5, 6)

INDICES = [
    2, -1, (1, 3), (slice(None), 2), (Ellipsis, 0), (None, 1), (slice(1, None, 2), slice(None, 4, 3)),
    (slice(-3, -1), Ellipsis, None), (Ellipsis, slice(None), None, 5), slice(7, 9),
    [3, 0], [[1, 2], [0, 0]], ([0, 3], [1, 4]), ([0, 3], slice(None), [1, 4]), (slice(None), [4, 0], [5, 1]),
    (slice(None), [[0], [4]], [5, 1, 2]), (Ellipsis, [2, 2]), (None, [1, 2], slice(None), [0, 3]),
    (slice(1, 3), [0, 1], [2, 3]), ([1, 2], [[0], [1]], slice(None, None, 2)),
    A[:, 0, 0] > 30, (slice(None), A[0, :, 0] % 12 == 0), A > 100, (A[:, :, 0] > 40, [1]),
]


def fl_index(idx):
    """numpy index -> flowlike index (arrays become tensors)."""
    if isinstance(idx, tuple):
        return tuple(fl_index(i) for i in idx)
    if isinstance(idx, np.ndarray):
        return fl.from_numpy(idx.copy())
    return idx


@pytest.mark.parametrize("case", range(len(INDICES)))
def test_getitem_matches_numpy(case):
    idx = INDICES[case]
    expected = A[idx]
    got = fl.from_numpy(A.copy())[fl_index(idx)]
    assert tuple(got.shape) == expected.shape
    np.testing.assert_array_equal(got.numpy(), expected)


@pytest.mark.parametrize("case", range(len(INDICES)))
def test_setitem_matches_numpy(case):
    idx = INDICES[case]
    a = A.copy()
    t = fl.from_numpy(A.copy())
    value = -np.arange(np.asarray(a[idx]).size, dtype=np.float32).reshape(np.shape(a[idx]))
    a[idx] = value
    t[fl_index(idx)] = fl.from_numpy(value)
    np.testing.assert_array_equal(t.numpy(), a)
    a[idx] = 7
    t[fl_index(idx)] = 7
    np.testing.assert_array_equal(t.numpy(), a)


def test_views_share_memory_and_copies_do_not():
    t = fl.from_numpy(A.copy())
    v = t[1:3, ::2, 4]
    assert v._is_view_of(t) and v.storage_offset() == 34 and v.stride() == (30, 12)
    c = t[[1, 2]]
    c.zero_()
    assert t[1].numpy().sum() > 0
    v.fill_(-1)
    assert (t.numpy()[1:3, ::2, 4] == -1).all()


def test_noncontiguous_source_and_large_tensor():
    big = np.random.default_rng(1).standard_normal((300, 400)).astype(np.float32)
    t = fl.from_numpy(big.copy())
    tt = t[::2, 1::3]  # strided view
    rows = np.random.default_rng(2).integers(-150, 150, size=257)
    np.testing.assert_array_equal(tt[fl.from_numpy(rows)].numpy(), big[::2, 1::3][rows])
    mask = big > 0.5
    np.testing.assert_array_equal(t[fl.from_numpy(mask)].numpy(), big[mask])
    t[fl.from_numpy(mask)] = 0.0
    expected = big.copy()
    expected[mask] = 0
    np.testing.assert_array_equal(t.numpy(), expected)


def test_index_errors():
    t = fl.from_numpy(A.copy())
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 4"):
        t[5]
    with pytest.raises(IndexError, match="index 6 is out of bounds for dimension 0 with size 4"):
        t[[0, 6]]
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 3"):
        t[0, 0, 0, 0]
    with pytest.raises(ValueError, match="step must be greater than zero"):
        t[::-2]
    with pytest.raises(IndexError, match="tensors used as indices"):
        t[fl.from_numpy(np.array([1.0]))]
    with pytest.raises(IndexError, match="could not be broadcast"):
        t[[0, 1], [0, 1, 2]]
    with pytest.raises(IndexError, match="shape of the mask"):
        t[fl.from_numpy(np.ones(3, dtype=bool))]
    with pytest.raises(RuntimeError, match="shape mismatch"):
        t[[0, 1]] = fl.from_numpy(np.ones((3, 5, 6), np.float32))
    before = t.numpy().copy()
    with pytest.raises(IndexError):
        t[[0, 9]] = 1.0  # nothing is written before the check
    np.testing.assert_array_equal(t.numpy(), before)


# ---- functions --------------------------------------------------------------------------------
def T(a):
    return fl.from_numpy(np.ascontiguousarray(a))


RNG = np.random.default_rng(0)
IDX = RNG.integers(0, 4, size=(4, 5, 6))


def test_index_select_take_gather():
    np.testing.assert_array_equal(fl.index_select(T(A), 1, T([4, 0, 4])).numpy(), np.take(A, [4, 0, 4], axis=1))
    np.testing.assert_array_equal(fl.take(T(A), T([[0, -1], [7, 8]])).numpy(), np.take(A, [[0, -1], [7, 8]]))
    np.testing.assert_array_equal(fl.gather(T(A), 2, T(IDX)).numpy(), np.take_along_axis(A, IDX, axis=2))
    np.testing.assert_array_equal(fl.gather(T(A), 0, T(IDX[:2])).numpy(), np.take_along_axis(A, IDX[:2], axis=0))
    ind = np.argsort(A, axis=1)[:, :2]
    np.testing.assert_array_equal(fl.take_along_dim(T(A), T(ind), dim=1).numpy(), np.take_along_axis(A, ind, axis=1))


def test_scatter_family():
    src = RNG.standard_normal((4, 5, 6)).astype(np.float32)
    idx = np.stack([RNG.permutation(6) for _ in range(20)]).reshape(4, 5, 6)
    expected = np.zeros_like(A)
    np.put_along_axis(expected, idx, src, axis=2)
    np.testing.assert_array_equal(fl.scatter(T(np.zeros_like(A)), 2, T(idx), T(src)).numpy(), expected)
    # scatter_add = np.add.at along dim 0
    index = RNG.integers(0, 4, size=(4, 5, 6))
    expected = A.copy()
    ii, jj, kk = np.indices(index.shape)
    np.add.at(expected, (index, jj, kk), src)
    np.testing.assert_allclose(fl.scatter_add(T(A), 0, T(index), T(src)).numpy(), expected, rtol=1e-6)
    expected = A.copy()
    np.maximum.at(expected, (index, jj, kk), src * 100)
    got = fl.scatter_reduce(T(A), 0, T(index), T(src * 100), "amax")
    np.testing.assert_array_equal(got.numpy(), expected)
    # mean without self: the average of what was scattered, untouched elsewhere
    got = fl.scatter_reduce(T(np.full(3, 9.0)), 0, T([0, 0, 2]), T(np.array([1.0, 2.0, 5.0])), "mean", include_self=False)
    np.testing.assert_array_equal(got.numpy(), [1.5, 9.0, 5.0])


def test_index_add_copy_fill_put():
    idx = np.array([3, 0, 3])
    src = RNG.standard_normal((4, 3, 6)).astype(np.float32)
    expected = A.copy()
    np.add.at(expected, (slice(None), idx), 2 * src)
    np.testing.assert_allclose(fl.index_add(T(A), 1, T(idx), T(src), alpha=2).numpy(), expected, rtol=1e-6)
    expected = A.copy()
    expected[:, [4, 1]] = src[:, :2]
    np.testing.assert_array_equal(fl.index_copy(T(A), 1, T([4, 1]), T(src[:, :2])).numpy(), expected)
    expected = A.copy()
    expected[:, :, [0, -1]] = -5
    np.testing.assert_array_equal(fl.index_fill(T(A), 2, T([0, -1]), -5).numpy(), expected)
    expected = A.copy()
    np.add.at(expected, ([0, 0, 3], [1, 1, 2]), 1.0)
    got = fl.index_put(T(A), (T([0, 0, 3]), T([1, 1, 2])), T(np.array(1.0, np.float32)), accumulate=True)
    np.testing.assert_array_equal(got.numpy(), expected)


def test_masked_ops_nonzero_where():
    mask = (A % 7) < 2
    np.testing.assert_array_equal(fl.masked_select(T(A), T(mask)).numpy(), A[mask])
    np.testing.assert_array_equal(fl.masked_fill(T(A), T(mask), 0.5).numpy(), np.where(mask, 0.5, A))
    src = -np.arange(120, dtype=np.float32)
    expected = A.copy()
    expected[mask] = src[:mask.sum()]
    np.testing.assert_array_equal(fl.masked_scatter(T(A), T(mask), T(src)).numpy(), expected)
    np.testing.assert_array_equal(fl.nonzero(T(mask)).numpy(), np.argwhere(mask))
    np.testing.assert_array_equal(fl.argwhere(T(mask)).numpy(), np.argwhere(mask))
    for got, exp in zip(fl.nonzero(T(mask), as_tuple=True), np.nonzero(mask)):
        np.testing.assert_array_equal(got.numpy(), exp)
    for got, exp in zip(fl.where(T(mask)), np.nonzero(mask)):
        np.testing.assert_array_equal(got.numpy(), exp)
    b = np.arange(6, dtype=np.int32)
    out = fl.where(T(mask), T(A), T(b))
    assert out.dtype == fl.float32
    np.testing.assert_array_equal(out.numpy(), np.where(mask, A, b))
    assert fl.where(T(mask), T(b), 2).dtype == fl.int32
    assert fl.where(T(mask), T(b), 2.5).dtype == fl.float32


def test_op_errors_leave_input_untouched():
    t = T(A)
    with pytest.raises(RuntimeError, match="index 10 is out of bounds for dimension 0 with size 4"):
        t.scatter_(0, T(np.array([[[0, 10]]])), 1.0)
    with pytest.raises(RuntimeError, match="Index tensor must have the same number of dimensions as input tensor"):
        t.gather(0, T([0]))
    with pytest.raises(IndexError, match="index out of range in self"):
        t.index_select(0, T([4]))
    with pytest.raises(RuntimeError, match="index_add_"):
        t.index_add_(0, T([0]), T(np.ones((2, 5, 6), np.float32)))
    with pytest.raises(RuntimeError, match="boolean masks"):
        t.masked_fill_(T(A), 1.0)
    with pytest.raises(IndexError, match="out of range"):
        t.take(T([120]))
    np.testing.assert_array_equal(t.numpy(), A)
