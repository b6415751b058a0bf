"""Users' Triton kernels on flowlike tensors, run on the CPU by Triton's interpreter (TRITON_INTERPRET=1).

The interpreter moves each tensor argument "to the host" with untyped_storage().cpu(), new_empty(0) and set_, runs
the kernel on raw pointers, and copies the storages back with UntypedStorage.copy_: the results land in the caller's
tensors only if those calls keep flowlike's storage semantics. Each kernel runs on plain flowlike tensors and, as
third-party code that imports torch would run it, under mock_torch.
"""
import os

# Read when triton.language is first imported (its own jit functions: tl.max, tl.sum, ...) and when a kernel is
# decorated; the repository's conftest.py sets it too, before anything in the session can import triton.
os.environ["TRITON_INTERPRET"] = "1"

import pytest  # noqa: E402

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")
from triton.runtime.interpreter import InterpretedFunction  # noqa: E402

assert isinstance(tl.max, InterpretedFunction), "triton was imported before TRITON_INTERPRET=1 was set"

import flowlike as fl  # noqa: E402
from flowlike.compat import mock_torch  # noqa: E402
from flowlike.testing import assert_close  # noqa: E402


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, in_col_stride, out_row_stride, out_col_stride, n_cols,
                   BLOCK_SIZE: tl.constexpr):
    # one program per row, the whole row in one block (Triton's fused-softmax tutorial)
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols * in_col_stride, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * out_row_stride + cols * out_col_stride, num / tl.sum(num, axis=0), mask=mask)


@triton.jit
def blocked_softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    # rows longer than one block: a pass for the max, one for the sum, one to write
    row_in = in_ptr + tl.program_id(0) * in_row_stride
    row_out = out_ptr + tl.program_id(0) * out_row_stride
    m = -float("inf")
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        m = tl.maximum(m, tl.max(tl.load(row_in + cols, mask=cols < n_cols, other=-float("inf")), axis=0))
    total = 0.0
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        total += tl.sum(tl.exp(tl.load(row_in + cols, mask=cols < n_cols, other=-float("inf")) - m), axis=0)
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(row_in + cols, mask=cols < n_cols)
        tl.store(row_out + cols, tl.exp(x - m) / total, mask=cols < n_cols)


# The user's host code, written against torch (the module it gets: flowlike, or `import torch` under mock_torch).
def triton_add(torch, x, y, out=None):
    assert x.is_cuda is False and isinstance(x, torch.Tensor)
    out = torch.empty_like(x) if out is None else out
    n = out.numel()
    add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)](x, y, out, n, BLOCK_SIZE=256)
    return out


def triton_softmax(torch, x):
    n_rows, n_cols = x.shape
    out = torch.empty_like(x)  # keeps a dense input's layout (a transposed one stays transposed)
    softmax_kernel[(n_rows,)](out, x, x.stride(0), x.stride(1), out.stride(0), out.stride(1), n_cols,
                              BLOCK_SIZE=triton.next_power_of_2(n_cols))
    return out


@pytest.fixture(params=["flowlike", "mock_torch"])
def torch(request):
    """The module the host code calls torch: flowlike itself, then (the body run again) what `import torch` gives
    under mock_torch, the kernels then launched with the mock on."""
    if request.param == "flowlike":
        yield fl
        return
    with mock_torch():
        import torch
        assert torch is fl
        yield torch


@pytest.mark.parametrize("dtype", [fl.float32, fl.float16, fl.int32])
def test_vector_add(torch, dtype):
    n = 1000  # not a multiple of the block: the last program's tail is masked
    x = (fl.randn(n) * 100).to(dtype)
    y = (fl.randn(n) * 100).to(dtype)
    out = triton_add(torch, x, y)
    assert out.dtype == dtype and out.shape == (n,)
    assert_close(out, x + y, rtol=0, atol=0)


def test_vector_add_writes_only_its_slice_of_the_callers_storage(torch):
    # inputs that share one storage at offsets, output a view into a larger tensor
    buf = fl.randn(2000)
    x, y = buf[:1000], buf[1000:]
    big = fl.full((1200,), -7.0)
    triton_add(torch, x, y, out=big[100:1100])
    assert_close(big[100:1100], x + y, rtol=0, atol=0)
    assert big[:100].eq(-7).all() and big[1100:].eq(-7).all()


def test_vector_add_in_place_into_an_input(torch):
    x, y = fl.randn(777), fl.randn(777)
    expected = x + y
    assert triton_add(torch, x, y, out=x) is x
    assert_close(x, expected, rtol=0, atol=0)


@pytest.mark.parametrize("n_cols", [1, 5, 64, 781])
def test_row_softmax(torch, n_cols):
    x = fl.randn(37, n_cols) * 3
    assert_close(triton_softmax(torch, x), fl.softmax(x, dim=1))


@pytest.mark.parametrize("layout", ["transposed", "offset_and_strided"])
def test_row_softmax_non_contiguous_input(torch, layout):
    base = fl.randn(120, 90)
    x = base.t() if layout == "transposed" else base[3:40, 1::3]  # strides (1, 90) / (90, 3), offset 271
    assert not x.is_contiguous()
    before = base.clone()
    assert_close(triton_softmax(torch, x), fl.softmax(x, dim=1))
    assert fl.equal(base, before)  # the input's storage is read, not written


def test_row_softmax_rows_longer_than_a_block(torch):
    x = fl.randn(9, 300) * 4
    out = fl.empty_like(x)
    blocked_softmax_kernel[(x.shape[0],)](out, x, x.stride(0), out.stride(0), x.shape[1], BLOCK_SIZE=64)
    assert_close(out, fl.softmax(x, dim=1))
