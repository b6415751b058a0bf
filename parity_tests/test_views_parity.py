"""Views and shape ops against real PyTorch: values, dtype, shape, stride() of views, and the
exception type on bad input. Each case runs the same body on both libraries."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import flowlike as fl  # noqa: E402
from helpers import assert_raises_same, assert_same, assert_same_error, check_both, convert, outcome, run_both  # noqa: E402


def check(fn, *arrays, strides=True):
    """The dual run (helpers.check_both) of fn(lib, *tensors): equal values, dtypes, shapes and, with `strides`,
    strides and storage offsets."""
    check_both(fn, *arrays, exact=True, strides=strides)


A = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
M = np.arange(12, dtype=np.int64).reshape(3, 4)
V = np.arange(6, dtype=np.int32)

VIEW_CASES = {
    "view": (lambda m, x: x.view(4, -1), A),
    "view_tuple": (lambda m, x: x.view((6, 4)), A),
    "view_of_transpose": (lambda m, x: x.transpose(0, 1).view(3, 2, 2, 2), A),
    "view_of_narrow": (lambda m, x: x.narrow(2, 1, 2).view(2, 3, 2, 1), A),
    "view_of_expand": (lambda m, x: x.unsqueeze(1).expand(2, 5, 3, 4).view(2, 5, 12), A),
    "view_scalar": (lambda m, x: x.view(-1), np.float32(3)),
    "view_empty": (lambda m, x: x.view(-1, 5), np.zeros((2, 0, 5), np.float32)),
    "view_empty_explicit": (lambda m, x: x.view(0, 10), np.zeros((2, 0, 5), np.float32)),
    "reshape_view": (lambda m, x: m.reshape(x, (3, 8)), A),
    "reshape_copy": (lambda m, x: x.transpose(0, 2).reshape(-1), A),
    "permute": (lambda m, x: x.permute(2, 0, 1), A),
    "permute_fn": (lambda m, x: m.permute(x, (-1, 0, 1)), A),
    "transpose": (lambda m, x: m.transpose(x, 0, -1), A),
    "swapaxes": (lambda m, x: m.swapaxes(x, 0, 1), A),
    "swapdims": (lambda m, x: x.swapdims(1, 2), A),
    "t": (lambda m, x: x.t(), M),
    "t_1d": (lambda m, x: m.t(x), V),
    "T": (lambda m, x: x.T, M),
    "mT": (lambda m, x: x.mT, A),
    "mH": (lambda m, x: x.mH, A),
    "H": (lambda m, x: x.H, M),
    "expand": (lambda m, x: x.expand(2, 3, 4), M),
    "expand_keep": (lambda m, x: x.unsqueeze(0).expand(5, -1, -1), M),
    "expand_as": (lambda m, x: x.narrow(0, 0, 1).expand_as(x), M),
    "broadcast_to": (lambda m, x: m.broadcast_to(x, (2, 3, 4)), M),
    "broadcast_tensors": (lambda m, x: m.broadcast_tensors(x, x.narrow(1, 0, 1)), M),
    "squeeze": (lambda m, x: x.view(1, 3, 1, 4).squeeze(), M),
    "squeeze_dim": (lambda m, x: x.view(1, 3, 1, 4).squeeze(2), M),
    "squeeze_tuple": (lambda m, x: m.squeeze(x.view(1, 3, 1, 4), (0, 1, 2)), M),
    "unsqueeze": (lambda m, x: x.unsqueeze(-1), M),
    "unsqueeze_mid": (lambda m, x: m.unsqueeze(x.t(), 1), M),
    "flatten": (lambda m, x: x.flatten(), A),
    "flatten_range": (lambda m, x: m.flatten(x, 1, 2), A),
    "flatten_scalar": (lambda m, x: x.flatten(), np.float32(2)),
    "flatten_copy": (lambda m, x: x.transpose(0, 1).flatten(1), A),
    "unflatten": (lambda m, x: x.unflatten(2, (2, -1)), A),
    "narrow": (lambda m, x: m.narrow(x, 1, 1, 2), A),
    "narrow_neg": (lambda m, x: x.narrow(-1, -3, 2), A),
    "select": (lambda m, x: m.select(x, 1, -1), A),
    "unbind": (lambda m, x: m.unbind(x, 1), A),
    "split_int": (lambda m, x: m.split(x, 2, dim=2), A),
    "split_uneven": (lambda m, x: x.split(3, -1), A),
    "split_sizes": (lambda m, x: m.split(x, [1, 3], 2), A),
    "chunk": (lambda m, x: x.chunk(3, 2), A),
    "chunk_more": (lambda m, x: m.chunk(x, 5, 1), A),
    "tensor_split_int": (lambda m, x: m.tensor_split(x, 3, dim=2), A),
    "tensor_split_idx": (lambda m, x: x.tensor_split([1, 3, 10], 2), A),
    "hsplit": (lambda m, x: m.hsplit(x, 3), A),
    "vsplit": (lambda m, x: m.vsplit(x, [1]), A),
    "diagonal": (lambda m, x: x.diagonal(), M),
    "diagonal_off": (lambda m, x: m.diagonal(x, 1, 2, 1), A),
    "diagonal_neg": (lambda m, x: x.diagonal(-1), M),
    "diagonal_empty": (lambda m, x: x.diagonal(7), M),
    "movedim": (lambda m, x: m.movedim(x, 0, -1), A),
    "moveaxis": (lambda m, x: x.moveaxis((0, 1), (2, 0)), A),
    "as_strided": (lambda m, x: m.as_strided(x, (3, 3), (1, 2), 1), A),
    "unfold": (lambda m, x: x.unfold(0, 2, 1), V),
    "unfold_2d": (lambda m, x: x.unfold(1, 2, 2), M),
    "squeeze_0d": (lambda m, x: x.squeeze(0), np.float32(1)),
    "unsqueeze_0d": (lambda m, x: x.unsqueeze(-1), np.float32(1)),
    "chunk_empty": (lambda m, x: x.chunk(3), np.zeros(0)),
    "tensor_split_tensor": (lambda m, x: m.tensor_split(x, m.tensor([1, 4])), V),
    "tensor_split_0d_tensor": (lambda m, x: m.tensor_split(x, m.tensor(4)), V),
    "hsplit_1d": (lambda m, x: m.hsplit(x, 3), V),
    "atleast_list": (lambda m, x: m.atleast_2d([x, x]), V),
    "broadcast_shapes_size": (lambda m, x: m.broadcast_shapes(m.Size([2, 1]), 3), V),
    "unfold_0d": (lambda m, x: x.unfold(0, 1, 1), np.float32(1)),
    "unfold_0size": (lambda m, x: x.unfold(0, 0, 1), V),
    "narrow_tensor_start": (lambda m, x: x.narrow(0, m.tensor(1), 2), V),
    "movedim_0d": (lambda m, x: m.movedim(x, 0, 0), np.float32(1)),
    "expand_0d": (lambda m, x: x.expand(3, 2), np.float32(1)),
    "flatten_0size": (lambda m, x: x.flatten(0, 1), np.zeros((2, 0, 3))),
    "unflatten_neg": (lambda m, x: x.unflatten(-1, (-1, 2)), V),
    "view_dtype_bool": (lambda m, x: x.view(m.bool), V.astype(np.uint8)),
    "as_strided_default_offset": (lambda m, x: x.narrow(0, 2, 2).as_strided((2,), (1,)), V),
    "squeeze_list": (lambda m, x: x.squeeze([0, 2]), np.zeros((1, 3, 1))),
    "permute_0d": (lambda m, x: x.permute(()), np.float32(1)),
    "t_0d": (lambda m, x: x.t(), np.float32(1)),
    "atleast_1d": (lambda m, x: m.atleast_1d(x), np.float32(1)),
    "atleast_2d": (lambda m, x: m.atleast_2d(x), V),
    "atleast_3d": (lambda m, x: m.atleast_3d(x, x.view(2, 3)), V),
    "meshgrid_ij": (lambda m, x: m.meshgrid(x, x.narrow(0, 0, 2), indexing="ij"), V),
    "meshgrid_xy": (lambda m, x: m.meshgrid(x, x.narrow(0, 0, 2), indexing="xy"), V),
    "view_dtype_same": (lambda m, x: x.view(m.int32), A),
    "view_dtype_kw": (lambda m, x: x.view(dtype=m.int32), A),
    "view_dtype_smaller": (lambda m, x: x.narrow(1, 1, 2).view(m.uint8), A),
    "view_dtype_larger": (lambda m, x: x.view(m.uint8).narrow(2, 4, 8).view(m.int16), A),
    "view_as": (lambda m, x: x.view_as(x.view(4, 6)), A),
    "reshape_as": (lambda m, x: x.t().reshape_as(x.t()), M),
}


@pytest.mark.parametrize("name", sorted(VIEW_CASES))
def test_view_matches_torch(name):
    fn, a = VIEW_CASES[name]
    check(fn, a)


NEW_CASES = {
    "cat": (lambda m, x: m.cat([x, x * 2], 1), M),
    "cat_neg_dim": (lambda m, x: m.cat((x, x), -1), A),
    "cat_promote": (lambda m, x: m.cat([x, x.float(), x.int()]), M),
    "cat_legacy_empty": (lambda m, x: m.cat([m.tensor([]), x, m.tensor([])], 1), M),
    "concat": (lambda m, x: m.concat([x, x], dim=0), M),
    "concatenate": (lambda m, x: m.concatenate([x, x], 1), M),
    "cat_transposed": (lambda m, x: m.cat([x.t(), x.t()], 1), M),
    "stack": (lambda m, x: m.stack([x, x + 1], 1), M),
    "stack_last": (lambda m, x: m.stack([x, x], -1), M),
    "hstack": (lambda m, x: m.hstack([x, x]), M),
    "hstack_1d": (lambda m, x: m.hstack([x, x]), V),
    "vstack": (lambda m, x: m.vstack([x, x]), V),
    "row_stack": (lambda m, x: m.row_stack([x, x]), M),
    "dstack": (lambda m, x: m.dstack([x, x]), M),
    "column_stack": (lambda m, x: m.column_stack([x, x.view(6, 1)]), V),
    "flip": (lambda m, x: m.flip(x, [0, 2]), A),
    "flip_method": (lambda m, x: x.flip(-1), A),
    "flip_view": (lambda m, x: x.transpose(0, 2).flip(0), A),
    "fliplr": (lambda m, x: m.fliplr(x), M),
    "flipud": (lambda m, x: m.flipud(x), M),
    "roll": (lambda m, x: m.roll(x, 1, 0), A),
    "roll_multi": (lambda m, x: x.roll((1, -2), (1, 2)), A),
    "roll_flat": (lambda m, x: m.roll(x, 5), A),
    "roll_view": (lambda m, x: m.roll(x.t(), -1, 1), M),
    "rot90": (lambda m, x: m.rot90(x), M),
    "rot90_k2": (lambda m, x: m.rot90(x, 2, (1, 2)), A),
    "rot90_k3": (lambda m, x: x.rot90(-1), M),
    "repeat": (lambda m, x: x.repeat(2, 1, 3), M),
    "repeat_view": (lambda m, x: x.t().repeat(2, 2), M),
    "tile": (lambda m, x: m.tile(x, (2,)), M),
    "tile_more": (lambda m, x: x.tile((2, 1, 2)), V),
    "tile_spread": (lambda m, x: x.tile(2, 1, 2), V),
    "repeat_interleave_int": (lambda m, x: m.repeat_interleave(x, 2), M),
    "repeat_interleave_dim": (lambda m, x: x.repeat_interleave(3, dim=1), M),
    "repeat_interleave_tensor": (lambda m, x: m.repeat_interleave(x, m.tensor([1, 0, 2]), dim=0), M),
    "repeat_interleave_counts": (lambda m, x: m.repeat_interleave(m.tensor([2, 0, 3])), V),
    "tril": (lambda m, x: m.tril(x), M),
    "tril_k": (lambda m, x: x.tril(1), A),
    "triu": (lambda m, x: m.triu(x, -1), M),
    "triu_batched": (lambda m, x: x.triu(2), A),
    "tril_inplace": (lambda m, x: x.tril_(-1), M),
    "tril_indices": (lambda m, x: m.tril_indices(3, 4, 1), V),
    "triu_indices": (lambda m, x: m.triu_indices(4, 3, -1), V),
    "cartesian_prod": (lambda m, x: m.cartesian_prod(x.narrow(0, 0, 3), x.narrow(0, 3, 2)), V),
    "diag_1d": (lambda m, x: m.diag(x, 1), V),
    "diag_2d": (lambda m, x: m.diag(x, -1), M),
    "diag_embed": (lambda m, x: m.diag_embed(x), M),
    "diag_embed_dims": (lambda m, x: m.diag_embed(x, 1, 0, 2), M),
    "diagflat": (lambda m, x: m.diagflat(x), M),
    "block_diag": (lambda m, x: m.block_diag(x, x.float().narrow(0, 0, 2), m.tensor(7)), M),
    "trace": (lambda m, x: m.trace(x), M),
    "trace_float": (lambda m, x: x.float().trace(), M),
    "stack_0d": (lambda m, x: m.stack([x, x]), np.float32(1)),
    "cat_all_empty": (lambda m, x: m.cat([x, x]), np.zeros(0, np.float32)),
    "cat_empty_2d": (lambda m, x: m.cat([x, m.zeros(0, 3)]), np.ones((2, 3), np.float32)),
    "cat_bool_int": (lambda m, x: m.cat([x, x.int()]), np.ones(3, bool)),
    "repeat_0d": (lambda m, x: x.repeat(2, 3), np.float32(1)),
    "tile_0d": (lambda m, x: x.tile((2,)), np.float32(1)),
    "roll_0d": (lambda m, x: x.roll(1), np.float32(1)),
    "flip_nodims": (lambda m, x: x.flip([]), V),
    "block_diag_empty": (lambda m, x: m.block_diag(), V),
    "cartesian_prod_single": (lambda m, x: m.cartesian_prod(x), V),
    "meshgrid_0d": (lambda m, x: m.meshgrid(x, x, indexing="ij"), np.float32(1)),
    "diag_empty": (lambda m, x: m.diag(x), np.zeros(0)),
    "trace_empty": (lambda m, x: m.trace(x), np.zeros((0, 3))),
    "trace_half": (lambda m, x: m.trace(x), np.ones((3, 3), np.float16)),
    "tril_empty": (lambda m, x: m.tril(x), np.zeros((0, 3))),
    "vstack_0d": (lambda m, x: m.vstack([x, x]), np.float32(1)),
    "column_stack_0d": (lambda m, x: m.column_stack([x, x]), np.float32(1)),
    "dstack_1d": (lambda m, x: m.dstack([x, x]), V),
    "hstack_0d": (lambda m, x: m.hstack([x, x]), np.float32(1)),
    "rot90_3d": (lambda m, x: m.rot90(x, 1, (2, 0)), A),
    "repeat_interleave_0d": (lambda m, x: m.repeat_interleave(x, 3), np.float32(2)),
    "repeat_interleave_one_count": (lambda m, x: m.repeat_interleave(x, m.tensor([2])), V),
    "tril_indices_dtype": (lambda m, x: m.tril_indices(3, 3, dtype=m.int32), V),
    "diagflat_offset": (lambda m, x: m.diagflat(x, -2), V),
    "ravel": (lambda m, x: m.ravel(x), A),
    "ravel_copy": (lambda m, x: x.transpose(0, 1).ravel(), A),
    "adjoint": (lambda m, x: m.adjoint(x), A),
    "select_scatter": (lambda m, x: m.select_scatter(x, m.zeros(2, 4), 1, -1), A),
    "slice_scatter": (lambda m, x: m.slice_scatter(x, m.zeros(2, 3, 2), 2, 1, None, 2), A),
    "slice_scatter_default": (lambda m, x: x.slice_scatter(x * 2), A),
    "diagonal_scatter": (lambda m, x: m.diagonal_scatter(x, m.ones(3), 1), M.astype(np.float32)),
    "contiguous": (lambda m, x: x.transpose(0, 2).contiguous(), A),
    "broadcast_shapes": (lambda m, x: m.broadcast_shapes((2, 1), (3, 1, 4), 4), V),
    "iter": (lambda m, x: list(x), M),
}


@pytest.mark.parametrize("name", sorted(NEW_CASES))
def test_new_memory_op_matches_torch(name):
    fn, a = NEW_CASES[name]
    check(fn, a)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int16", "float16", "float64"])
def test_dtypes(dtype):
    a = (np.arange(12) % 3).astype(dtype).reshape(3, 4)
    for fn in [lambda m, x: m.cat([x, x], 0), lambda m, x: x.flip(1), lambda m, x: x.roll(1, 1),
               lambda m, x: x.repeat(2, 1), lambda m, x: x.tril(), lambda m, x: x.t().reshape(-1)]:
        check(fn, a)


ERROR_CASES = {
    "view_incompatible": (lambda m, x: x.transpose(0, 1).view(-1), A),
    "view_bad_size": (lambda m, x: x.view(5, 5), A),
    "view_empty_ambiguous": (lambda m, x: x.view(0, 5, -1), np.zeros((2, 0, 5), np.float32)),
    "view_two_inferred": (lambda m, x: x.view(-1, -1), A),
    "reshape_bad": (lambda m, x: x.reshape(7, -1), A),
    "view_dtype_0d": (lambda m, x: x.view(m.int16), np.float32(1)),
    "view_dtype_stride": (lambda m, x: x.t().view(m.int16), M),
    "view_dtype_divisible": (lambda m, x: x.view(m.int64), V.astype(np.int16)),
    "view_dtype_offset": (lambda m, x: x.narrow(0, 1, 4).view(m.int32), V.astype(np.int16)),
    "permute_len": (lambda m, x: x.permute(0, 1), A),
    "permute_dup": (lambda m, x: x.permute(0, 0, 1), A),
    "permute_range": (lambda m, x: x.permute(0, 1, 3), A),
    "transpose_range": (lambda m, x: x.transpose(0, 3), A),
    "t_3d": (lambda m, x: x.t(), A),
    "mT_1d": (lambda m, x: x.mT, V),
    "expand_bad": (lambda m, x: x.expand(3, 5), M),
    "expand_fewer": (lambda m, x: x.expand(4), M),
    "expand_leading_neg": (lambda m, x: x.expand(-1, 3, 4), M),
    "squeeze_range": (lambda m, x: x.squeeze(3), M),
    "unsqueeze_range": (lambda m, x: x.unsqueeze(4), M),
    "flatten_order": (lambda m, x: x.flatten(2, 0), A),
    "unflatten_bad": (lambda m, x: x.unflatten(1, (2, 2)), A),
    "narrow_past": (lambda m, x: x.narrow(0, 2, 2), M),
    "narrow_start": (lambda m, x: x.narrow(0, 5, 0), M),
    "select_range": (lambda m, x: x.select(0, 3), M),
    "select_dim": (lambda m, x: x.select(2, 0), M),
    "select_0d": (lambda m, x: x.select(0, 0), np.float32(1)),
    "split_neg": (lambda m, x: x.split(-1), M),
    "split_sizes_sum": (lambda m, x: x.split([1, 1]), M),
    "chunk_zero": (lambda m, x: x.chunk(0), M),
    "tensor_split_zero": (lambda m, x: x.tensor_split(0), M),
    "diagonal_same": (lambda m, x: x.diagonal(0, 1, 1), M),
    "diagonal_range": (lambda m, x: x.diagonal(0, 0, 2), M),
    "movedim_len": (lambda m, x: m.movedim(x, (0, 1), (0,)), A),
    "movedim_mixed": (lambda m, x: m.movedim(x, (0, 1), 0), A),
    "movedim_dup": (lambda m, x: m.movedim(x, (0, 0), (1, 2)), A),
    "as_strided_oob": (lambda m, x: x.as_strided((10, 10), (10, 1)), M),
    "unfold_big": (lambda m, x: x.unfold(0, 7, 1), V),
    "unfold_step": (lambda m, x: x.unfold(0, 2, 0), V),
    "cat_empty_list": (lambda m, x: m.cat([]), M),
    "cat_shapes": (lambda m, x: m.cat([x, x.t()], 0), M),
    "cat_dims": (lambda m, x: m.cat([x, x.view(3, 4, 1)], 0), M),
    "cat_0d": (lambda m, x: m.cat([x.select(0, 0).select(0, 0), x]), M),
    "cat_dim_range": (lambda m, x: m.cat([x, x], 2), M),
    "cat_not_list": (lambda m, x: m.cat(x), M),
    "stack_shapes": (lambda m, x: m.stack([x, x.t()]), M),
    "stack_empty": (lambda m, x: m.stack([]), M),
    "flip_dup": (lambda m, x: x.flip(0, 0), M),
    "flip_range": (lambda m, x: x.flip(2), M),
    "roll_align": (lambda m, x: x.roll((1, 2), 0), M),
    "roll_flat_two": (lambda m, x: x.roll((1, 2)), M),
    "repeat_fewer": (lambda m, x: x.repeat(2), M),
    "repeat_neg": (lambda m, x: x.repeat(-1, 2), M),
    "tril_1d": (lambda m, x: x.tril(), V),
    "rot90_dims": (lambda m, x: m.rot90(x, 1, (0, 0)), M),
    "rot90_1d": (lambda m, x: m.rot90(x), V),
    "fliplr_1d": (lambda m, x: m.fliplr(x), V),
    "trace_1d": (lambda m, x: m.trace(x), V),
    "broadcast_shapes_bad": (lambda m, x: m.broadcast_shapes((2, 3), (4, 3)), V),
    "broadcast_tensors_bad": (lambda m, x: m.broadcast_tensors(x, x.t()), M),
    "meshgrid_2d": (lambda m, x: m.meshgrid(x, indexing="ij"), M),
    "repeat_interleave_len": (lambda m, x: m.repeat_interleave(x, m.tensor([1, 2]), dim=0), M),
    "diag_3d": (lambda m, x: m.diag(x), A),
    "block_diag_3d": (lambda m, x: m.block_diag(x), A),
    "split_tensor_sizes": (lambda m, x: x.split(m.tensor([2, 4])), V),
    "trace_bool": (lambda m, x: m.trace(x), np.ones((3, 3), bool)),
    "unbind_0d": (lambda m, x: m.unbind(x), np.float32(1)),
    "narrow_0d": (lambda m, x: x.narrow(0, 0, 1), np.float32(1)),
    "repeat_interleave_neg": (lambda m, x: m.repeat_interleave(x, -1), V),
    "tril_indices_neg": (lambda m, x: m.tril_indices(-1, 3), V),
    "stack_dim_range": (lambda m, x: m.stack([x, x], 3), M),
    "diag_embed_0d": (lambda m, x: m.diag_embed(x), np.float32(1)),
    "select_scatter_shape": (lambda m, x: m.select_scatter(x, m.zeros(3), 1, 0), A),
    "slice_step_zero": (lambda m, x: m.slice_scatter(x, x, 0, None, None, 0), A),
    "iter_0d": (lambda m, x: list(x), np.float32(1)),
}


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_error_type_matches_torch(name):
    fn, a = ERROR_CASES[name]
    assert_raises_same(fn, a)


def test_view_error_message():
    x = fl.from_numpy(A.copy()).transpose(0, 1)
    with pytest.raises(RuntimeError, match=r"view size is not compatible .* Use \.reshape\(\.\.\.\) instead\."):
        x.view(-1)


def test_cat_out_matches_torch():
    for m in (torch, fl):
        x = convert(m, M)
        out = m.empty(0, dtype=m.int64)
        r = m.cat([x, x], 0, out=out)
        assert r is out and tuple(out.shape) == (6, 4)
        assert out.tolist() == np.concatenate([M, M]).tolist()


def test_cat_gradients_take_each_inputs_dtype_as_torch():
    # cat promotes: each input's gradient comes back in its own dtype (a real input takes the real part of a complex
    # gradient), and a skipped legacy 1-D empty input gets an empty gradient
    def grads(m):
        a = m.tensor([1.5, -2.0], dtype=m.float32, requires_grad=True)
        b = m.tensor([0.5, 1.0, 3.0], dtype=m.float64, requires_grad=True)
        c = m.tensor([1 + 2j, -1j], dtype=m.complex64, requires_grad=True)
        e = m.ones(0, requires_grad=True)
        w = m.ones(2, 3, requires_grad=True)
        (m.cat([a, b]) * m.arange(5.0, dtype=m.float64)).sum().backward()
        m.cat([a, c]).abs().sum().backward()
        (m.cat([e, w]) * 3).sum().backward()
        return [a.grad, b.grad, c.grad, e.grad, w.grad]

    want, got = run_both(grads)
    for g, w in zip(got, want):
        assert_same(g, w)


def test_aliasing_matches_torch():
    for m in (torch, fl):
        x = convert(m, A)
        v = x.transpose(0, 2).narrow(0, 1, 2).select(1, 0)
        v.fill_(-1)
        assert np.all(np.asarray(x.tolist())[:, 0, 1:3] == -1)
        assert x._version == v._version and x._version > 0


def _random_view_op(rng, t):
    """A random valid-or-not view op for t, as (method, args), or None."""
    nd, kind = t.dim(), rng.choice(["permute", "transpose", "narrow", "select", "unsqueeze", "squeeze", "reshape",
                                    "view", "expand", "diagonal", "unfold", "flatten"])
    if kind == "permute" and nd:
        p = list(range(nd))
        rng.shuffle(p)
        return kind, (p,)
    if kind == "transpose" and nd:
        return kind, (rng.randrange(nd), rng.randrange(nd))
    if kind == "narrow" and nd:
        d = rng.randrange(nd)
        s = rng.randint(0, t.shape[d])
        return kind, (d, s, rng.randint(0, t.shape[d] - s))
    if kind == "select" and nd and t.shape[0]:
        return kind, (0, rng.randrange(-t.shape[0], t.shape[0]))
    if kind == "unsqueeze" and nd < 6:
        return kind, (rng.randrange(-nd - 1, nd + 1),)
    if kind == "squeeze":
        return kind, ()
    if kind in ("reshape", "view"):
        n, shape = t.numel(), []
        for f in (2, 3, 2, 5):
            if n % f == 0 and rng.random() < 0.5:
                shape.append(f)
                n //= f
        shape.append(-1)
        rng.shuffle(shape)
        return kind, (shape,)
    if kind == "expand" and 1 in tuple(t.shape):
        sz = list(t.shape)
        sz[sz.index(1)] = 3
        return kind, (sz,)
    if kind == "diagonal" and nd >= 2:
        return kind, (rng.randint(-2, 2), 0, nd - 1)
    if kind == "unfold" and nd and t.shape[-1]:
        return kind, (-1, rng.randint(1, t.shape[-1]), rng.randint(1, 2))
    if kind == "flatten" and nd:
        return kind, (rng.randrange(nd), nd - 1)
    return None


@pytest.mark.parametrize("seed", range(8))
def test_random_view_chains_match_torch(seed):
    """Chains of views of views: same shapes, strides, offsets and values, or the same error."""
    import random
    rng = random.Random(seed)
    for _ in range(60):
        a = np.arange(120, dtype=np.float32).reshape(rng.choice([(120,), (2, 3, 4, 5), (4, 30), (6, 20)]))
        t, f = convert(torch, a), convert(fl, a)
        for _ in range(6):
            op = _random_view_op(rng, t)
            if op is None:
                continue
            name, args = op
            try:
                want = getattr(t, name)(*args)
            except Exception as e:  # noqa: BLE001
                with pytest.raises(type(e)):
                    getattr(f, name)(*args)
                break
            got = getattr(f, name)(*args)
            assert_same(got, want, exact=True, strides=True)
            t, f = want, got


INPLACE_CASES = {
    "transpose_": lambda x: x.transpose_(0, 2),
    "swapaxes_": lambda x: x.swapaxes_(0, 1),
    "unsqueeze_": lambda x: x.unsqueeze_(1),
    "squeeze_": lambda x: x.unsqueeze(0).squeeze_(),
    "t_": lambda x: x.select(0, 0).t_(),
    "as_strided_": lambda x: x.as_strided_((2, 2), (1, 3), 1),
}


@pytest.mark.parametrize("name", sorted(INPLACE_CASES))
def test_inplace_view_ops_restride_self(name):
    def body(m):
        x = convert(m, A)
        r = INPLACE_CASES[name](x)
        return r
    results = run_both(body)
    assert_same(results[1], results[0], exact=True, strides=True)


KEYWORD_CASES = {
    "view_size": lambda m, x: x.view(size=(6, 4)),
    "reshape_shape": lambda m, x: x.reshape(shape=(4, 6)),
    "permute_dims": lambda m, x: x.permute(dims=(2, 1, 0)),
    "expand_size": lambda m, x: x.narrow(0, 0, 1).expand(size=(3, 3, 4)),
    "flip_dims": lambda m, x: x.flip(dims=(0,)),
    "repeat_repeats": lambda m, x: x.repeat(repeats=(1, 2, 1)),
    "split_size": lambda m, x: x.split(split_size=2, dim=2),
    "view_size_tensor": lambda m, x: x.view(m.Size([24])),
}


@pytest.mark.parametrize("name", sorted(KEYWORD_CASES))
def test_keyword_arguments_match_torch(name):
    check(KEYWORD_CASES[name], A)


def test_meshgrid_warns_without_indexing():
    for m in (torch, fl):
        with pytest.warns(UserWarning, match="indexing"):
            m.meshgrid(convert(m, V), convert(m, V))


@pytest.mark.parametrize("case", ["n1", "n2", "dim0", "prepend_append", "bool"])
def test_diff_parity(case):
    x = torch.arange(24.0).reshape(4, 6) ** 1.5
    calls = {
        "n1": lambda m, t: m.diff(t),
        "n2": lambda m, t: m.diff(t, n=2),
        "dim0": lambda m, t: m.diff(t, dim=0),
        "prepend_append": lambda m, t: m.diff(t, dim=1, prepend=t[:, :1], append=t[:, -2:]),
        "bool": lambda m, t: m.diff(t > 10),
    }
    got = calls[case](fl, fl.from_numpy(x.numpy().copy()))
    expected = calls[case](torch, x)
    assert str(got.dtype) == str(expected.dtype) and tuple(got.shape) == tuple(expected.shape)
    assert_same(got, expected, rtol=1e-6, atol=0)


def test_cross_parity():
    a, b = torch.randn(4, 3, generator=torch.Generator().manual_seed(0)), torch.randn(1, 3)
    got = fl.cross(fl.from_numpy(a.numpy().copy()), fl.from_numpy(b.numpy().copy()), dim=1)
    np.testing.assert_allclose(got.numpy(), torch.cross(a, b.expand(4, 3), dim=1).numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError):
        torch.cross(torch.ones(2, 4), torch.ones(2, 4), dim=1)
    with pytest.raises(RuntimeError):
        fl.cross(fl.ones(2, 4), fl.ones(2, 4), dim=1)


# Tensor.set_, every overload: the result's geometry, values and storage size, its version bump, and that writes
# through it land in the source's memory.
SET_CASES = {
    "storage": lambda m, x: m.empty(0).set_(x.untyped_storage()),
    "storage_offset_size": lambda m, x: m.empty(3).set_(x.untyped_storage(), 5, (2, 3)),
    "storage_offset_size_stride": lambda m, x: m.empty(0).set_(x.untyped_storage(), 1, (3, 2), (4, 1)),
    "storage_keywords": lambda m, x: m.empty(0).set_(source=x.untyped_storage(), storage_offset=2, size=(2, 2),
                                                     stride=(1, 6)),
    "storage_overlapping_stride": lambda m, x: m.empty(0).set_(x.untyped_storage(), 0, (3, 4), (1, 1)),
    "storage_zero_size": lambda m, x: m.empty(0).set_(x.untyped_storage(), 3, (0, 2)),
    "storage_scalar": lambda m, x: m.empty(0).set_(x.untyped_storage(), 7, ()),
    "storage_slice": lambda m, x: m.empty(0).set_(x.untyped_storage()[8:40]),
    "storage_as_other_dtype": lambda m, x: m.empty(0, dtype=m.int32).set_(x.untyped_storage(), 1, (2,)),
    "tensor": lambda m, x: m.empty(0).set_(x[1:, ::2]),
    "tensor_geometry": lambda m, x: m.empty(0).set_(x[1:], 2, (5,), (3,)),
    "none": lambda m, x: m.empty(4).set_(),
}


@pytest.mark.parametrize("name", sorted(SET_CASES))
def test_set_matches_torch(name):
    results = {}
    for m in (torch, fl):
        x = m.arange(24.0).reshape(4, 6)
        r = SET_CASES[name](m, x)
        version = r._version
        if r.numel():
            r.fill_(-1)
        results[m] = (r, x, version, r.untyped_storage().nbytes())
    (got, got_x, got_version, got_nbytes), (want, want_x, want_version, want_nbytes) = results[fl], results[torch]
    assert_same(got, want, exact=True, strides=True)
    assert_same(got_x, want_x, exact=True, strides=True)  # the writes through the result, seen in the source
    assert (got_version, got_nbytes) == (want_version, want_nbytes)


def test_set_grows_a_storage_too_small_for_the_geometry():
    for m in (torch, fl):
        small = m.empty(2).untyped_storage()
        r = m.empty(0).set_(small, 1, (3, 3))
        assert small.nbytes() == 40 and r.untyped_storage().nbytes() == 40 and r.storage_offset() == 1


SET_ERROR_CASES = {
    "dtype_mismatch": lambda m: m.empty(0).set_(m.arange(3)),
    "dtype_mismatch_half": lambda m: m.empty(0, dtype=m.float64).set_(m.zeros(2, dtype=m.float16)),
    # (complex names were missing from the message's table: KeyError, found by the long fuzz)
    "dtype_mismatch_complex": lambda m: m.empty(0, dtype=m.float8_e8m0fnu).set_(m.zeros((), dtype=m.complex64)),
    "dtype_mismatch_complex128": lambda m: m.empty(0, dtype=m.complex128).set_(m.zeros(2, dtype=m.complex64)),
    "size_stride_lengths": lambda m: m.empty(0).set_(m.zeros(4).untyped_storage(), 0, (2,), (1, 2, 3)),
    "negative_offset": lambda m: m.empty(0).set_(m.zeros(4).untyped_storage(), -1, (2,)),
    "negative_stride": lambda m: m.empty(0).set_(m.zeros(4).untyped_storage(), 0, (2,), (-1,)),
    "leaf_requiring_grad": lambda m: m.zeros(3, requires_grad=True).set_(m.zeros(3)),
    "offset_without_size": lambda m: m.empty(0).set_(m.zeros(4).untyped_storage(), 0),
    "bad_source": lambda m: m.empty(0).set_(3),
    "grow_foreign_memory": lambda m: m.empty(0).set_(m.from_numpy(np.zeros(2, np.float32)).untyped_storage(), 0, (9,)),
}


@pytest.mark.parametrize("name", sorted(SET_ERROR_CASES))
def test_set_error_matches_torch(name):
    with pytest.raises(Exception) as want:
        SET_ERROR_CASES[name](torch)
    with pytest.raises(type(want.value)) as got:
        SET_ERROR_CASES[name](fl)
    if type(want.value) is RuntimeError and name != "negative_stride":
        assert str(got.value) == str(want.value)


def test_untyped_storage_cpu_and_copy_match_torch():
    for m in (torch, fl):
        s = m.arange(4.0).untyped_storage()
        assert s.cpu() is s
        dst = m.zeros(4).untyped_storage()
        assert dst.copy_(s) is dst
        assert m.empty(0).set_(dst).tolist() == [0.0, 1.0, 2.0, 3.0]
        with pytest.raises(RuntimeError, match="size does not match, self was 16 bytes but src was 8 bytes"):
            dst.copy_(m.zeros(2).untyped_storage())
        with pytest.raises(TypeError):
            dst.copy_(m.zeros(4))


def test_set_under_autograd_is_recorded_as_torch():
    # torch records set_ with a node whose backward raises (self's old history and a tensor source are its edges);
    # a view's base takes the write's history, as for any in-place write
    def run(m, view):
        x = m.tensor(M, dtype=m.float64, requires_grad=True)
        z = m.ones(3, dtype=m.float64, requires_grad=True)
        b = x * 2
        y = b[1] if view else b
        y.set_(z)
        names = [y.grad_fn.name(), b.grad_fn.name(), [f.name() for f, _ in y.grad_fn.next_functions]]
        return names if view else (names, outcome(lambda: y.sum().backward()))

    want, got = run_both(run, False)
    assert got[0] == want[0]
    assert_same_error(want[1], got[1], match_message=True)
    want, got = run_both(run, True)
    assert got[:2] == want[:2]
