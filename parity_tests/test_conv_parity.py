"""Convolution, pooling and fold/unfold side by side with PyTorch: values, dtypes, shapes, indices, gradients of
input/weight/bias, and the exception type on bad input."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402
from helpers import assert_raises_same, assert_same, check_both, leaf, run_both  # noqa: E402

RNG = np.random.default_rng(7)
# per dtype; atol is relative to the largest magnitude of torch's result
TOL = {"float32": dict(rtol=2e-4, atol=2e-4), "float64": dict(rtol=1e-10, atol=1e-10),
       "float16": dict(rtol=2e-2, atol=2e-2), "bfloat16": dict(rtol=4e-2, atol=8e-2)}


def arr(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def compare(fn, arrays, dtype="float32", grad=True, transform=None):
    """The dual run (helpers.check_both) in this suite's terms: fn(lib, F, *tensors) with lib's nn.functional as F;
    `transform` makes the inputs non-contiguous on both sides."""
    def body(lib, *ts):
        return fn(lib, lib.nn.functional, *(ts if transform is None else map(transform, ts)))
    check_both(body, *arrays, dtype=dtype, grad=grad, scale_atol=True, **TOL[dtype])


def same_error(fn, *arrays):
    """fn(F, *tensors) raises the same exception class with both libraries; returns flowlike's exception."""
    return assert_raises_same(lambda lib, *ts: fn(lib.nn.functional, *ts), *arrays)[1]


# ---- convolution ---------------------------------------------------------------------------------------

CONV_CASES = [
    # (nd, N, Cin, Cout, spatial, kernel, kwargs)
    (2, 2, 3, 4, (9, 8), (3, 3), {}),
    (2, 2, 3, 4, (9, 8), (3, 3), {"padding": 1}),
    (2, 2, 4, 6, (10, 9), (3, 2), {"stride": (2, 1), "padding": (1, 0)}),
    (2, 1, 4, 6, (11, 11), (3, 3), {"dilation": 2, "padding": 2}),
    (2, 3, 4, 6, (8, 8), (3, 3), {"groups": 2, "padding": 1}),
    (2, 2, 6, 6, (9, 9), (3, 3), {"groups": 6, "padding": 1}),              # depthwise
    (2, 2, 4, 8, (9, 9), (5, 5), {"groups": 4, "stride": 2, "padding": 2}),  # depthwise, multiplier 2
    (2, 2, 4, 4, (7, 7), (1, 1), {}),                                      # pointwise
    (2, 2, 3, 5, (8, 7), (4, 4), {"padding": "same"}),                     # asymmetric 'same'
    (2, 2, 3, 5, (8, 7), (3, 3), {"padding": "valid", "stride": 3}),
    (2, 2, 3, 5, (9, 9), (2, 3), {"padding": "same", "dilation": (2, 1)}),
    (1, 3, 4, 5, (20,), (3,), {"stride": 2, "padding": 1}),
    (1, 2, 4, 4, (17,), (5,), {"groups": 4, "dilation": 3, "padding": "same"}),
    (1, 2, 3, 2, (10,), (4,), {"padding": "same"}),
    (3, 2, 3, 4, (5, 6, 7), (3, 3, 3), {"padding": 1}),
    (3, 1, 4, 4, (6, 6, 6), (2, 3, 1), {"stride": (2, 1, 3), "groups": 2, "dilation": (1, 2, 1)}),
    (3, 2, 2, 2, (5, 5, 5), (3, 3, 3), {"groups": 2, "padding": "same"}),
]


def conv_fn(nd, kw, bias=True):
    name = f"conv{nd}d"
    if bias:
        return lambda m, F, x, w, b: getattr(F, name)(x, w, b, **kw)
    return lambda m, F, x, w: getattr(F, name)(x, w, **kw)


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv_values_and_grads(case):
    nd, N, cin, cout, sp, k, kw = case
    g = kw.get("groups", 1)
    compare(conv_fn(nd, kw), [arr(N, cin, *sp), arr(cout, cin // g, *k), arr(cout)])


@pytest.mark.parametrize("case", CONV_CASES[:6])
def test_conv_without_bias(case):
    nd, N, cin, cout, sp, k, kw = case
    compare(conv_fn(nd, kw, bias=False), [arr(N, cin, *sp), arr(cout, cin // kw.get("groups", 1), *k)])


@pytest.mark.parametrize("dtype", ["float64", "float16", "bfloat16"])
@pytest.mark.parametrize("case", [CONV_CASES[2], CONV_CASES[5], CONV_CASES[11], CONV_CASES[14]])
def test_conv_dtypes(case, dtype):
    nd, N, cin, cout, sp, k, kw = case
    compare(conv_fn(nd, kw), [arr(N, cin, *sp), arr(cout, cin // kw.get("groups", 1), *k), arr(cout)], dtype=dtype)


def test_conv_noncontiguous_input():
    # the input permuted from channels-last and the weight transposed in its spatial dims
    compare(lambda m, F, x, w, b: F.conv2d(x.permute(0, 3, 1, 2), w.transpose(2, 3), b, padding=1),
            [arr(2, 9, 8, 3), arr(4, 3, 3, 3), arr(4)])
    compare(lambda m, F, x, w: F.conv1d(x[:, :, ::2], w, stride=2), [arr(2, 3, 31), arr(5, 3, 3)])


def test_conv_unbatched_and_toplevel():
    compare(lambda m, F, x, w, b: F.conv2d(x, w, b, padding=1), [arr(3, 6, 7), arr(4, 3, 3, 3), arr(4)])
    compare(lambda m, F, x, w: m.conv1d(x, w, stride=2), [arr(2, 3, 12), arr(5, 3, 3)])
    compare(lambda m, F, x, w: m.conv3d(x, w, padding=(1, 0, 1)), [arr(1, 2, 4, 5, 6), arr(3, 2, 3, 3, 3)])


def test_conv_large_batch_parallel_path():
    # more samples than threads: the batch-parallel path with per-thread weight-gradient buffers
    compare(conv_fn(2, {"padding": 1, "stride": 2}), [arr(17, 8, 12, 12), arr(16, 8, 3, 3), arr(16)])


TRANSPOSE_CASES = [
    (2, 2, 4, 3, (5, 6), (3, 3), {}),
    (2, 2, 4, 3, (5, 6), (3, 3), {"stride": 2, "padding": 1, "output_padding": 1}),
    (2, 1, 4, 6, (4, 4), (3, 2), {"stride": (2, 3), "dilation": (2, 1), "output_padding": (1, 2)}),
    (2, 2, 4, 6, (5, 5), (3, 3), {"groups": 2, "stride": 2}),
    (2, 2, 4, 4, (5, 5), (3, 3), {"groups": 4, "padding": 1}),
    (1, 2, 3, 5, (7,), (4,), {"stride": 3, "padding": 2, "output_padding": 2}),
    (3, 1, 2, 3, (3, 4, 3), (2, 3, 2), {"stride": (2, 1, 2), "padding": (0, 1, 1)}),
]


@pytest.mark.parametrize("case", TRANSPOSE_CASES)
def test_conv_transpose(case):
    nd, N, cin, cout, sp, k, kw = case
    g = kw.get("groups", 1)
    compare(lambda m, F, x, w, b: getattr(F, f"conv_transpose{nd}d")(x, w, b, **kw),
            [arr(N, cin, *sp), arr(cin, cout // g, *k), arr(cout)])


@pytest.mark.parametrize("dtype", ["float64", "float16"])
def test_conv_transpose_dtypes(dtype):
    compare(lambda m, F, x, w: F.conv_transpose2d(x, w, stride=2, padding=1), [arr(2, 3, 4, 4), arr(3, 2, 3, 3)],
            dtype=dtype)


def test_conv_transpose_unbatched():
    compare(lambda m, F, x, w: F.conv_transpose1d(x, w, stride=2), [arr(3, 5), arr(3, 2, 3)])


BAD_CONV = [
    lambda F, x, w: F.conv2d(x, w[:, :2]),                  # channel mismatch
    lambda F, x, w: F.conv2d(x[0, 0], w),                   # wrong rank
    lambda F, x, w: F.conv2d(x, w, stride=0),
    lambda F, x, w: F.conv2d(x, w, padding=-1),
    lambda F, x, w: F.conv2d(x, w, dilation=0),
    lambda F, x, w: F.conv2d(x, w, groups=0),
    lambda F, x, w: F.conv2d(x, w, groups=2),               # 3 input channels, groups 2
    lambda F, x, w: F.conv2d(x[:, :, :2, :2], w),           # kernel larger than the input
    lambda F, x, w: F.conv2d(x, w, padding="same", stride=2),
    lambda F, x, w: F.conv2d(x, w, padding="full"),
    lambda F, x, w: F.conv2d(x, w, stride=(1, 2, 3)),
    lambda F, x, w: F.conv2d(x, w, bias=x[0, 0, 0]),        # bias of the wrong size
    lambda F, x, w: F.conv2d(x.double(), w),                # dtype mismatch
    lambda F, x, w: F.conv1d(x, w),                         # 4-D input to conv1d
    lambda F, x, w: F.conv_transpose2d(x, w, padding="same"),
    lambda F, x, w: F.conv2d(x, w, stride=1.5),
    lambda F, x, w: F.conv_transpose2d(x, w),               # channels: weight dim 0 is 4
    lambda F, x, w: F.conv_transpose2d(x, w.transpose(0, 1).contiguous(), stride=2, output_padding=2),
    lambda F, x, w: F.conv_transpose2d(x[:, :, :2, :2], w.transpose(0, 1).contiguous(), padding=5),
    lambda F, x, w: F.conv2d(x[:, :, :0], w, padding=1),     # empty spatial dims
    lambda F, x, w: F.conv2d(x, w[:, :, :0]),                # empty kernel
]


@pytest.mark.parametrize("i", range(len(BAD_CONV)))
def test_conv_errors(i):
    same_error(BAD_CONV[i], arr(2, 3, 8, 8), arr(4, 3, 3, 3))


def test_conv_empty_batch():
    compare(conv_fn(2, {"padding": 1}), [arr(0, 3, 5, 5), arr(4, 3, 3, 3), arr(4)])
    compare(lambda m, F, x, w: F.conv_transpose2d(x, w, stride=2), [arr(0, 3, 4, 4), arr(3, 2, 3, 3)])
    compare(lambda m, F, x: F.max_pool2d(x, 2), [arr(0, 3, 4, 4)], grad=False)
    compare(lambda m, F, x: F.adaptive_avg_pool2d(x, 3), [arr(1, 0, 4, 4)], grad=False)


def test_conv_channel_message():
    e = same_error(lambda F, x, w: F.conv2d(x, w), arr(16, 4, 56, 56), arr(64, 3, 3, 3))
    assert str(e) == ("Given groups=1, weight of size [64, 3, 3, 3], expected input[16, 4, 56, 56] to have 3 "
                      "channels, but got 4 channels instead")
    e = same_error(lambda F, x, w: F.conv2d(x, w), arr(1, 3, 2, 2), arr(4, 3, 3, 3))
    assert "Kernel size can't be greater than actual input size" in str(e)


# ---- pooling -------------------------------------------------------------------------------------------

MAX_POOL_CASES = [
    (2, (2, 3, 9, 8), dict(kernel_size=2)),
    (2, (2, 3, 9, 8), dict(kernel_size=3, stride=2, padding=1)),
    (2, (2, 3, 9, 8), dict(kernel_size=3, stride=2, ceil_mode=True)),
    (2, (2, 3, 10, 9), dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 1), dilation=(2, 1))),
    (2, (3, 9, 8), dict(kernel_size=2, stride=1)),                     # unbatched
    (2, (1, 2, 5, 5), dict(kernel_size=2, stride=2, ceil_mode=True, padding=1)),
    (1, (2, 3, 11), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    (1, (3, 11), dict(kernel_size=2, dilation=3)),
    (3, (2, 2, 5, 6, 7), dict(kernel_size=2)),
    (3, (1, 2, 5, 6, 7), dict(kernel_size=3, stride=(1, 2, 2), padding=1, ceil_mode=True)),
]


@pytest.mark.parametrize("case", MAX_POOL_CASES)
def test_max_pool(case):
    nd, shape, kw = case
    compare(lambda m, F, x: getattr(F, f"max_pool{nd}d")(x, return_indices=True, **kw), [arr(*shape)])
    compare(lambda m, F, x: getattr(F, f"max_pool{nd}d_with_indices")(x, **kw), [arr(*shape)], grad=False)


@pytest.mark.parametrize("dtype", ["float64", "float16", "bfloat16"])
def test_max_pool_dtypes(dtype):
    compare(lambda m, F, x: F.max_pool2d(x, 3, 2, 1), [arr(2, 3, 9, 8)], dtype=dtype)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int16, np.int8, np.uint8])
def test_max_pool_integer_dtypes(dtype):
    a = RNG.integers(0, 100, size=(2, 3, 7, 8)).astype(dtype)
    for fn in (lambda m, x: m.nn.functional.max_pool2d(x, 3, 2, 1, return_indices=True),
               lambda m, x: m.nn.functional.max_pool3d(x, 2, return_indices=True, ceil_mode=True)):
        check_both(fn, a, exact=True)


def test_max_pool_nan_and_noncontiguous():
    x = arr(1, 2, 6, 6)
    x[0, 0, 1, 1] = np.nan
    compare(lambda m, F, x: F.max_pool2d(x, 2, return_indices=True), [x], grad=False)
    compare(lambda m, F, x: F.max_pool2d(x, 2), [arr(2, 8, 8, 3)], transform=lambda t: t.permute(0, 3, 1, 2))


AVG_POOL_CASES = [
    (2, (2, 3, 9, 8), dict(kernel_size=2)),
    (2, (2, 3, 9, 8), dict(kernel_size=3, stride=2, padding=1)),
    (2, (2, 3, 9, 8), dict(kernel_size=3, stride=2, padding=1, count_include_pad=False)),
    (2, (2, 3, 9, 8), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    (2, (2, 3, 9, 8), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)),
    (2, (2, 3, 9, 8), dict(kernel_size=(3, 2), stride=2, divisor_override=5)),
    (2, (3, 7, 7), dict(kernel_size=2, ceil_mode=True)),
    (1, (2, 3, 11), dict(kernel_size=4, stride=3, padding=2, ceil_mode=True)),
    (1, (3, 11), dict(kernel_size=3, count_include_pad=False, padding=1)),
    (3, (2, 2, 5, 6, 7), dict(kernel_size=2, stride=(1, 2, 3), padding=1)),
    (3, (1, 2, 5, 6, 7), dict(kernel_size=3, stride=2, ceil_mode=True, divisor_override=4)),
]


@pytest.mark.parametrize("case", AVG_POOL_CASES)
def test_avg_pool(case):
    nd, shape, kw = case
    compare(lambda m, F, x: getattr(F, f"avg_pool{nd}d")(x, **kw), [arr(*shape)])


@pytest.mark.parametrize("dtype", ["float64", "float16", "bfloat16"])
def test_avg_pool_dtypes(dtype):
    compare(lambda m, F, x: F.avg_pool2d(x, 3, 2, 1), [arr(2, 3, 9, 8)], dtype=dtype)


ADAPTIVE_CASES = [(1, (2, 3, 11), 4), (1, (3, 10), 10), (2, (2, 3, 9, 8), (4, 3)), (2, (3, 7, 7), 1),
                  (2, (2, 3, 9, 8), (None, 5)), (2, (1, 2, 5, 5), 7), (3, (2, 2, 5, 6, 7), (2, 3, 4)),
                  (3, (2, 5, 6, 7), 3)]


@pytest.mark.parametrize("case", ADAPTIVE_CASES)
def test_adaptive_pools(case):
    nd, shape, out = case
    compare(lambda m, F, x: getattr(F, f"adaptive_avg_pool{nd}d")(x, out), [arr(*shape)])
    compare(lambda m, F, x: getattr(F, f"adaptive_max_pool{nd}d")(x, out, return_indices=True), [arr(*shape)])


def test_adaptive_toplevel_and_dtypes():
    compare(lambda m, F, x: m.adaptive_avg_pool1d(x, 3), [arr(2, 3, 10)])
    compare(lambda m, F, x: m.adaptive_max_pool1d(x, 3), [arr(2, 3, 10)], grad=False)
    compare(lambda m, F, x: F.adaptive_avg_pool2d(x, 2), [arr(2, 3, 9, 8)], dtype="bfloat16")


@pytest.mark.parametrize("nd,shape,kw", [(1, (2, 3, 10), dict(kernel_size=3, stride=2)),
                                         (2, (2, 3, 9, 8), dict(kernel_size=2)),
                                         (2, (2, 3, 9, 8), dict(kernel_size=(3, 2), stride=2, ceil_mode=True)),
                                         (3, (1, 2, 4, 6, 6), dict(kernel_size=2))])
@pytest.mark.parametrize("p", [1.0, 2, 3.5])
def test_lp_pool(nd, shape, kw, p):
    x = np.abs(arr(*shape)) + 0.1  # fractional powers of negatives are NaN in both
    compare(lambda m, F, x: getattr(F, f"lp_pool{nd}d")(x, p, **kw), [x])


@pytest.mark.parametrize("nd,shape,kw", [(1, (2, 3, 10), dict(kernel_size=2)),
                                         (2, (2, 3, 8, 8), dict(kernel_size=2)),
                                         (2, (2, 3, 9, 9), dict(kernel_size=3, stride=2, padding=1)),
                                         (2, (3, 8, 8), dict(kernel_size=2)),
                                         (3, (1, 2, 4, 6, 6), dict(kernel_size=2))])
def test_max_unpool(nd, shape, kw):
    def fn(m, F, x):
        y, i = getattr(F, f"max_pool{nd}d")(x, return_indices=True, **kw)
        return getattr(F, f"max_unpool{nd}d")(y, i, **kw)
    compare(fn, [arr(*shape)])


def test_max_unpool_output_size():
    def fn(m, F, x):
        y, i = F.max_pool2d(x, 2, return_indices=True)
        return F.max_unpool2d(y, i, 2, output_size=(9, 9))
    compare(fn, [arr(1, 2, 9, 9)])


def test_fold_unfold():
    compare(lambda m, F, x: F.unfold(x, 3), [arr(2, 3, 6, 7)])
    compare(lambda m, F, x: F.unfold(x, (2, 3), dilation=(2, 1), padding=1, stride=(1, 2)), [arr(2, 3, 6, 7)])
    compare(lambda m, F, x: F.unfold(x, 2, stride=2), [arr(3, 6, 6)])
    compare(lambda m, F, x: F.fold(x, (5, 6), 2), [arr(2, 12, 20)])
    compare(lambda m, F, x: F.fold(x, (6, 7), (2, 3), dilation=(2, 1), padding=1, stride=(1, 2)), [arr(2, 18, 24)])
    compare(lambda m, F, x: F.fold(x, 4, 2, stride=2), [arr(8, 4)])
    compare(lambda m, F, x: F.unfold(x, 3, padding=1), [arr(2, 3, 5, 5)], dtype="float64")


BAD_POOL = [
    lambda F, x: F.max_pool2d(x, 3, padding=2),
    lambda F, x: F.avg_pool2d(x, 3, padding=2),
    lambda F, x: F.max_pool2d(x, 9),
    lambda F, x: F.max_pool2d(x, 2, stride=0),
    lambda F, x: F.max_pool2d(x, 2, padding=-1),
    lambda F, x: F.max_pool2d(x[:, :0], 2),
    lambda F, x: F.max_pool2d(x[0, 0, 0], 2),
    lambda F, x: F.max_pool1d(x, 2),
    lambda F, x: F.avg_pool2d(x, 2, divisor_override=0),
    lambda F, x: F.avg_pool2d(x, 2, divisor_override=2.5),
    lambda F, x: F.max_pool2d(x, 2.0),
    lambda F, x: F.avg_pool3d(x[0, 0], 2),
    lambda F, x: F.adaptive_avg_pool2d(x, (2, 2, 2)),
    lambda F, x: F.adaptive_max_pool2d(x[0, 0, 0], 2),
    lambda F, x: F.max_unpool2d(x, x.long(), 2),
    lambda F, x: F.max_unpool2d(x, x.long().abs(), 2, output_size=(3, 3)),
    lambda F, x: F.fold(x[0], (3, 3), 2),
    lambda F, x: F.fold(x[0, 0], (3, 3), 2),
    lambda F, x: F.unfold(x, 10),
]


@pytest.mark.parametrize("i", range(len(BAD_POOL)))
def test_pool_errors(i):
    same_error(BAD_POOL[i], arr(2, 3, 8, 8))


DOUBLE_CASES = [
    ("conv2d", (2, 4, 7, 6), (6, 2, 3, 2), dict(stride=(2, 1), padding=1, dilation=(1, 2), groups=2)),
    ("conv1d", (3, 2, 11), (4, 2, 3), dict(stride=2)),
    ("conv3d", (1, 2, 4, 5, 4), (3, 2, 2, 3, 2), dict(padding=(1, 0, 1))),
    ("conv2d", (2, 3, 6, 6), (3, 1, 3, 3), dict(padding="same", groups=3)),
    ("conv2d", (2, 3, 6, 7), (4, 3, 4, 2), dict(padding="same", dilation=(1, 3))),  # asymmetric padding
    ("conv_transpose2d", (2, 4, 4, 5), (4, 3, 3, 2), dict(stride=2, padding=1, output_padding=1, groups=2)),
    ("conv_transpose1d", (2, 3, 5), (3, 2, 3), dict(stride=2, dilation=3, output_padding=2)),
]


@pytest.mark.parametrize("name,xs,ws,kw", DOUBLE_CASES)
def test_conv_double_backward(name, xs, ws, kw):
    # gradients taken with create_graph=True are differentiable again (gradient penalties, MAML)
    x, w = arr(*xs), arr(*ws)

    def body(m):
        xt, wt = leaf(m, x, "float32"), leaf(m, w, "float32")
        y = getattr(m.nn.functional, name)(xt, wt, **kw)
        g = m.from_numpy(np.random.default_rng(2).standard_normal(tuple(y.shape)).astype(np.float32))
        gx, gw = m.autograd.grad(y, [xt, wt], grad_outputs=g, create_graph=True)
        ((gx * gx).sum() + (gw * gw * gw).sum()).backward()
        return gx, gw, xt.grad, wt.grad
    want, got = run_both(body)
    assert_same(got, want, scale_atol=True, **TOL["float32"])
