"""Views and shape ops against numpy: aliasing and version counters, geometry, values, errors."""
import numpy as np
import pytest

import flowlike as fl

A = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


def T(a):
    return fl.from_numpy(np.array(a))


def eq(t, a):
    assert tuple(t.shape) == a.shape, (tuple(t.shape), a.shape)
    np.testing.assert_array_equal(np.asarray(t.tolist()).reshape(a.shape), a)


# ---- aliasing -----------------------------------------------------------------------------------

VIEWS = {
    "view": lambda x: x.view(6, 4),
    "reshape": lambda x: x.reshape(-1),
    "permute": lambda x: x.permute(2, 0, 1),
    "transpose": lambda x: x.transpose(0, 2),
    "expand": lambda x: x.unsqueeze(0).expand(3, 2, 3, 4),
    "squeeze": lambda x: x.unsqueeze(1).squeeze(),
    "flatten": lambda x: x.flatten(1),
    "unflatten": lambda x: x.unflatten(2, (2, 2)),
    "narrow": lambda x: x.narrow(1, 1, 2),
    "select": lambda x: x.select(2, 3),
    "unbind": lambda x: x.unbind(1)[2],
    "split": lambda x: x.split(2, 2)[1],
    "chunk": lambda x: x.chunk(3, 1)[1],
    "tensor_split": lambda x: x.tensor_split([1], 2)[1],
    "diagonal": lambda x: x.diagonal(0, 1, 2),
    "movedim": lambda x: x.movedim(0, -1),
    "as_strided": lambda x: x.as_strided((3, 2), (1, 4), 5),
    "unfold": lambda x: x.unfold(2, 2, 2),
    "mT": lambda x: x.mT,
    "T": lambda x: x.select(0, 1).T,
    "broadcast_to": lambda x: fl.broadcast_to(x, (2, 2, 3, 4)),
    "atleast_3d": lambda x: fl.atleast_3d(x),
    "view_dtype": lambda x: x.view(fl.int32),
}


PARTIAL = {"narrow", "select", "unbind", "split", "chunk", "tensor_split", "diagonal", "as_strided", "T"}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_view_shares_storage_and_version(name):
    x = T(A)
    v = VIEWS[name](x)
    assert v._is_view_of(x)
    before = x._version
    v.fill_(0)  # write through the view
    assert x._version == v._version == before + 1
    zeros = np.count_nonzero(x.numpy() == 0)
    assert zeros == A.size if name not in PARTIAL else 0 < zeros < A.size
    x.fill_(7)  # and through the base
    assert v._version == x._version == before + 2
    assert np.all(np.asarray(v.tolist()) == (7 if name != "view_dtype" else np.float32(7).view(np.int32)))


def test_partial_views_write_the_right_elements():
    x = T(A)
    x.narrow(1, 1, 2).select(2, 0).fill_(-1)
    x.diagonal(0, 1, 2).fill_(-2)
    ref = A.copy()
    ref[:, 1:3, 0] = -1
    np.einsum("ijj->ij", ref[:, :, :3])[:] = -2
    eq(x, ref)


def test_copy_result_does_not_alias():
    x = T(A)
    y = x.transpose(0, 2).reshape(-1)  # not viewable: a copy with its own version counter
    assert not y._is_view_of(x)
    y.fill_(0)
    assert x._version == 0
    eq(x, A)
    c = x.transpose(0, 1).contiguous()
    assert c.is_contiguous() and not c._is_view_of(x)
    eq(c, A.transpose(1, 0, 2))
    assert x.contiguous() is x


# ---- geometry and values against numpy --------------------------------------------------------------

def test_view_strides_of_non_contiguous():
    x = T(A).transpose(1, 2)  # (2, 4, 3), strides (12, 1, 4)
    v = x.view(2, 2, 2, 3)
    assert v.stride() == (12, 2, 1, 4)
    eq(v, A.transpose(0, 2, 1).reshape(2, 2, 2, 3))
    with pytest.raises(RuntimeError, match="Use .reshape"):
        x.view(8, 3)
    e = T(A).select(2, 0).unsqueeze(-1).expand(2, 3, 5)
    assert e.stride() == (12, 4, 0)
    assert e.view(6, 5).stride() == (4, 0)


def test_shape_views_match_numpy():
    x = T(A)
    eq(x.view(4, -1), A.reshape(4, -1))
    eq(x.permute(2, 0, 1), A.transpose(2, 0, 1))
    eq(fl.swapaxes(x, 0, 2), np.swapaxes(A, 0, 2))
    eq(x.mT, np.swapaxes(A, -1, -2))
    with pytest.warns(UserWarning, match="deprecated"):
        eq(x.T, A.T)
    eq(x.squeeze(), A)
    eq(x.unsqueeze(1), A[:, None])
    eq(x.flatten(0, 1), A.reshape(6, 4))
    eq(x.narrow(2, 1, 3), A[:, :, 1:4])
    eq(x.select(1, -1), A[:, -1])
    eq(x.diagonal(1, 1, 2), np.diagonal(A, 1, 1, 2))
    eq(x.diagonal(-1, 2, 1), np.diagonal(A, -1, 2, 1))
    eq(fl.movedim(x, (0, 1), (2, 0)), np.moveaxis(A, (0, 1), (2, 0)))
    eq(x.as_strided((3, 3), (4, 1), 2), np.lib.stride_tricks.as_strided(A.ravel()[2:], (3, 3), (16, 4)))
    eq(x.unfold(2, 2, 1), np.lib.stride_tricks.sliding_window_view(A, 2, axis=2))
    eq(fl.broadcast_to(T(A[:, :1]), (2, 3, 4)), np.broadcast_to(A[:, :1], (2, 3, 4)))
    assert fl.broadcast_shapes((3, 1), (2, 1, 4)) == np.broadcast_shapes((3, 1), (2, 1, 4))
    g = fl.meshgrid(T(np.arange(3)), T(np.arange(2)), indexing="xy")
    for got, want in zip(g, np.meshgrid(np.arange(3), np.arange(2), indexing="xy")):
        eq(got, want)


def test_splits_match_numpy():
    x = T(A)
    for got, want in zip(x.split(3, 2), np.array_split(A, [3], 2)):
        eq(got, want)
    for got, want in zip(fl.tensor_split(x, 3, 2), np.array_split(A, 3, 2)):
        eq(got, want)
    for got, want in zip(x.tensor_split([1, 5], 2), np.split(A, [1, 5], 2)):
        eq(got, want)
    assert len(x.chunk(3, 2)) == 2  # chunk size ceil(4/3)=2 gives only 2 chunks, as torch
    assert [tuple(u.shape) for u in fl.unbind(x, 2)] == [(2, 3)] * 4
    assert list(iter(x))[1].tolist() == A[1].tolist()


def test_new_memory_ops_match_numpy():
    x, m = T(A), T(A[0])
    eq(fl.cat([x, x * 2], 1), np.concatenate([A, A * 2], 1))
    eq(fl.stack([m, m], 2), np.stack([A[0], A[0]], 2))
    eq(fl.hstack([m, m]), np.hstack([A[0], A[0]]))
    eq(fl.vstack([m.select(0, 0), m]), np.vstack([A[0, 0], A[0]]))
    eq(fl.dstack([m, m]), np.dstack([A[0], A[0]]))
    eq(fl.column_stack([m.select(1, 0), m]), np.column_stack([A[0, :, 0], A[0]]))
    eq(fl.flip(x, [0, 2]), np.flip(A, (0, 2)))
    eq(x.transpose(0, 2).flip(1), np.flip(A.transpose(2, 1, 0), 1))
    eq(fl.fliplr(m), np.fliplr(A[0]))
    eq(fl.flipud(m), np.flipud(A[0]))
    eq(fl.roll(x, (1, -1), (0, 2)), np.roll(A, (1, -1), (0, 2)))
    eq(fl.roll(x, 7), np.roll(A, 7))
    for k in range(-1, 5):
        eq(fl.rot90(m, k), np.rot90(A[0], k))
    eq(x.repeat(2, 1, 1, 3), np.tile(A, (2, 1, 1, 3)))
    eq(fl.tile(m, (2,)), np.tile(A[0], 2))
    eq(fl.repeat_interleave(m, 2, dim=1), np.repeat(A[0], 2, axis=1))
    eq(fl.repeat_interleave(m, fl.tensor([2, 0, 1]), dim=0), np.repeat(A[0], [2, 0, 1], axis=0))
    eq(fl.repeat_interleave(m, 2), np.repeat(A[0], 2))
    for k in (-2, 0, 1, 5):
        eq(fl.tril(x, k), np.tril(A, k))
        eq(x.triu(k), np.triu(A, k))
    ti = fl.tril_indices(4, 3, 1)
    assert ti.dtype == fl.int64 and ti.tolist() == [list(r) for r in np.tril_indices(4, 1, 3)]
    eq(fl.triu_indices(3, 3), np.stack(np.triu_indices(3)))
    eq(fl.diag(T(np.arange(3.0)), -1), np.diag(np.arange(3.0), -1))
    eq(fl.diag(m, 1), np.diag(A[0], 1))
    eq(fl.diagflat(m), np.diagflat(A[0]))
    assert fl.trace(m).item() == np.trace(A[0])
    assert fl.trace(T(np.arange(9).reshape(3, 3))).dtype == fl.int64
    eq(fl.cartesian_prod(T(np.arange(2)), T(np.arange(3))),
       np.stack(np.meshgrid(np.arange(2), np.arange(3), indexing="ij"), -1).reshape(-1, 2))
    bd = fl.block_diag(m, T(np.ones((1, 2), np.float64)))
    assert bd.dtype == fl.float64 and tuple(bd.shape) == (4, 6)
    eq(fl.diag_embed(m), np.stack([np.diag(r) for r in A[0]]))


def test_cat_rules():
    x = T(np.arange(6, dtype=np.int32).reshape(2, 3))
    r = fl.cat([x, T(np.ones((1, 3), np.float64))])
    assert r.dtype == fl.float64 and tuple(r.shape) == (3, 3)
    assert tuple(fl.cat([fl.tensor([]), x, fl.tensor([])], 1).shape) == (2, 3)
    with pytest.raises(RuntimeError, match="tensor number 1"):
        fl.cat([x, x.t()])
    with pytest.raises(RuntimeError, match="zero-dimensional"):
        fl.cat([x.select(0, 0).select(0, 0)])
    with pytest.raises(ValueError, match="non-empty"):
        fl.cat([])


def test_error_types():
    x = T(A)
    with pytest.raises(IndexError):
        x.transpose(0, 3)
    with pytest.raises(IndexError):
        x.select(1, 3)
    with pytest.raises(IndexError):
        x.unsqueeze(4)
    with pytest.raises(RuntimeError, match=r"\[5, 5\]"):
        x.view(5, 5)
    with pytest.raises(RuntimeError, match="must match the existing size"):
        x.expand(2, 3, 5)
    with pytest.raises(RuntimeError):
        x.narrow(0, 1, 2)
    with pytest.raises(RuntimeError, match="out of bounds"):
        x.as_strided((100,), (1,))
    with pytest.raises(RuntimeError):
        x.t()
    with pytest.raises(RuntimeError):
        x.repeat(2)
    with pytest.raises(RuntimeError):
        fl.stack([x, x.view(4, 3, 2)])
    with pytest.raises(TypeError):
        iter(fl.tensor(1.0))


def test_huge_sizes_raise_instead_of_overflowing():
    x = T(A)
    with pytest.raises(RuntimeError):
        x.view(2 ** 62, 4, 0, -1)
    with pytest.raises(RuntimeError):
        x.view(2 ** 62, 2 ** 2, 0)
    with pytest.raises(RuntimeError):
        x.as_strided((2 ** 40, 2 ** 40), (2 ** 40, 1))
    with pytest.raises(RuntimeError):
        x.repeat(2 ** 62, 1, 1, 4)
    eq(fl.tril(x, 2 ** 63 - 1), A)
    eq(fl.triu(x, -2 ** 63), A)
    eq(fl.tril(x, -2 ** 63), np.zeros_like(A))


def test_ravel_and_scatter_ops_match_numpy():
    x = T(A)
    r = fl.ravel(x)
    assert r._is_view_of(x)
    eq(r, A.ravel())
    eq(x.transpose(0, 2).ravel(), A.transpose(2, 1, 0).ravel())
    ref = A.copy()
    ref[:, 1] = 0
    eq(fl.select_scatter(x, fl.zeros(2, 4), 1, 1), ref)
    ref = A.copy()
    ref[..., 1::2] = -1
    eq(fl.slice_scatter(x, fl.full((2, 3, 2), -1.0), 2, 1, None, 2), ref)
    ref = A[0].copy()
    np.fill_diagonal(ref[:, 1:], 5)
    eq(fl.diagonal_scatter(x.select(0, 0), fl.full((3,), 5.0), 1), ref)
    eq(x, A)  # the scatter ops never write into their input
    with pytest.raises(RuntimeError, match="slice size"):
        fl.select_scatter(x, fl.zeros(3), 1, 0)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int16", "uint8", "bool", "complex128"])
def test_transposed_copies_match_numpy(dtype):
    # the copy of a view whose memory runs across the output's rows walks square tiles (csrc/kernels/copy.cpp):
    # ragged edges, a batch dim, a stepped view and every element size, against numpy's copies
    rng = np.random.default_rng(2)
    a = (rng.standard_normal((3, 45, 70)) * 50).astype(dtype)
    t = fl.from_numpy(a)
    for view, ref in ((t.transpose(1, 2), a.transpose(0, 2, 1)), (t.permute(2, 0, 1), a.transpose(2, 0, 1)),
                      (t[:, ::2].transpose(1, 2), a[:, ::2].transpose(0, 2, 1)), (t[1].t(), a[1].T)):
        got = view.contiguous()
        assert got.is_contiguous()
        np.testing.assert_array_equal(got.numpy(), np.ascontiguousarray(ref))
    out = fl.zeros(70, 45, dtype=t.dtype)
    out.copy_(t[0].t())
    np.testing.assert_array_equal(out.numpy(), a[0].T)
