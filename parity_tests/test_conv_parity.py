"""Convolution, pooling (fractional max pooling too) and fold/unfold side by side with PyTorch: values, dtypes, shapes, indices, gradients of
input/weight/bias, and the exception type on bad input."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402
from helpers import assert_raises_same, assert_same, check_both, convert, copy_state, leaf, run_both  # noqa: E402

RNG = np.random.default_rng(7)
# per dtype; atol is relative to the largest magnitude of torch's result
TOL = {"float32": dict(rtol=2e-4, atol=2e-4), "float64": dict(rtol=1e-10, atol=1e-10),
       "float16": dict(rtol=2e-2, atol=2e-2), "bfloat16": dict(rtol=4e-2, atol=8e-2),
       "complex64": dict(rtol=2e-4, atol=2e-4), "complex128": dict(rtol=1e-10, atol=1e-10)}


def arr(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def carr(*shape):
    return arr(*shape) + 1j * arr(*shape)


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


# ---- complex convolution (torch's CPU: Gauss's three real convolutions; conjugate-Wirtinger gradients) -------


@pytest.mark.parametrize("case", CONV_CASES)
def test_complex_conv_values_and_grads(case):
    nd, N, cin, cout, sp, k, kw = case
    g = kw.get("groups", 1)
    compare(conv_fn(nd, kw), [carr(N, cin, *sp), carr(cout, cin // g, *k), carr(cout)], dtype="complex64")


@pytest.mark.parametrize("case", [CONV_CASES[2], CONV_CASES[4], CONV_CASES[11], CONV_CASES[15]])
def test_complex128_conv_without_bias(case):
    nd, N, cin, cout, sp, k, kw = case
    compare(conv_fn(nd, kw, bias=False), [carr(N, cin, *sp), carr(cout, cin // kw.get("groups", 1), *k)],
            dtype="complex128")


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("case", TRANSPOSE_CASES)
def test_complex_conv_transpose(case, dtype):
    nd, N, cin, cout, sp, k, kw = case
    g = kw.get("groups", 1)
    compare(lambda m, F, x, w, b: getattr(F, f"conv_transpose{nd}d")(x, w, b, **kw),
            [carr(N, cin, *sp), carr(cin, cout // g, *k), carr(cout)], dtype=dtype)


def test_complex_conv_conjugate_views_and_unbatched():
    # conjugate-bit and non-contiguous inputs, unbatched input, the torch.* spelling
    compare(lambda m, F, x, w, b: F.conv2d(x.conj(), w.conj().transpose(2, 3), b.conj(), padding=1),
            [carr(2, 3, 6, 7), carr(4, 3, 3, 3), carr(4)], dtype="complex64")
    compare(lambda m, F, x, w: m.conv1d(x[:, ::2], w, stride=2), [carr(3, 21), carr(5, 3, 3)], dtype="complex128")


def test_complex_conv_double_backward():
    """The composite is made of differentiable ops: the gradient of a gradient matches torch's."""
    arrays = carr(1, 2, 5, 5), carr(3, 2, 3, 3)

    def body(m):
        x, w = (leaf(m, a, "complex128") for a in arrays)
        y = m.nn.functional.conv2d(x, w, padding=1, stride=2)
        gx, gw = m.autograd.grad((y * y.conj()).real.sum() + y.abs().sum(), (x, w), create_graph=True)
        return [g.detach().numpy() for g in m.autograd.grad((gx * gx).real.sum() + gw.imag.sum(), (x, w))]
    want, got = run_both(body)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("padding_mode", ["zeros", "reflect", "circular"])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_conv_module(dtype, padding_mode):
    """nn.Conv2d(dtype=complex): forward, and the gradients of its complex weight and bias."""
    t_mod = torch.nn.Conv2d(3, 4, 3, padding=1, stride=(1, 2), padding_mode=padding_mode, dtype=getattr(torch, dtype))
    f_mod = fl.nn.Conv2d(3, 4, 3, padding=1, stride=(1, 2), padding_mode=padding_mode, dtype=getattr(fl, dtype))
    assert f_mod.weight.dtype == getattr(fl, dtype)
    copy_state(t_mod, f_mod)
    x = carr(2, 3, 6, 6)
    outs = []
    for lib, mod in ((torch, t_mod), (fl, f_mod)):
        y = mod(convert(lib, x, dtype))
        (y * y).real.sum().backward()
        outs.append([y.detach().numpy(), mod.weight.grad.numpy(), mod.bias.grad.numpy()])
    for w, g in zip(*outs):
        np.testing.assert_allclose(g, w, **TOL[dtype])


def test_complex_conv_module_compiled_matches_eager():
    """A graph capture (flowlike.compile) records the composite's real convolutions: bit for bit eager's values and
    gradients."""
    m = fl.nn.Conv2d(2, 3, 3, padding=1, dtype=fl.complex64)
    x = fl.from_numpy(carr(2, 2, 5, 5).astype(np.complex64))
    compiled = fl.compile(m)
    results = []
    for run in (compiled, compiled, m):  # (the second call runs the captured program)
        y = run(x)
        assert (y.grad_fn.name() == "CompiledFunctionBackward") == (run is compiled)
        (y * y.conj()).real.sum().backward()
        results.append((y.detach(), m.weight.grad, m.bias.grad))
        m.weight.grad = m.bias.grad = None
    assert results[1][0].dtype == fl.complex64
    for got, want in zip(results[1], results[2]):
        assert fl.equal(got, want)


def test_complex_fold_unfold():
    compare(lambda m, F, x: F.unfold(x, (2, 3), dilation=(2, 1), padding=1, stride=(1, 2)), [carr(2, 3, 6, 7)],
            dtype="complex64")
    compare(lambda m, F, x: F.unfold(x.conj(), 2, stride=2), [carr(3, 6, 6)], dtype="complex128")
    compare(lambda m, F, x: F.fold(x, (6, 7), (2, 3), dilation=(2, 1), padding=1, stride=(1, 2)), [carr(2, 18, 24)],
            dtype="complex64")
    compare(lambda m, F, x: F.fold(x, 4, 2, stride=2), [carr(8, 4)], dtype="complex128")


@pytest.mark.parametrize("fn", [
    lambda F, x, w: F.conv2d(x, w.real),                # complex input, real weight
    lambda F, x, w: F.conv2d(x.real, w),                # real input, complex weight
    lambda F, x, w: F.conv2d(x, w, w[:, 0, 0, 0].real),  # real bias
    lambda F, x, w: F.conv2d(x, w.cdouble()),          # complex64 input, complex128 weight
    lambda F, x, w: F.conv2d(x, w[:, :2]),              # channel mismatch
])
def test_complex_conv_errors(fn):
    same_error(fn, carr(1, 3, 5, 5).astype(np.complex64), carr(4, 3, 3, 3).astype(np.complex64))


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


# ---- fractional max pooling --------------------------------------------------------------------------------------

FRACTIONAL = [
    (2, (2, 3, 11, 9), (2, 3), dict(output_size=(5, 4))), (2, (3, 10, 10), 2, dict(output_size=(4, 7))),
    (2, (1, 1, 20, 20), 3, dict(output_size=17)), (2, (2, 2, 9, 8), (2, 2), dict(output_ratio=(0.5, 0.7))),
    (3, (2, 2, 9, 8, 7), (2, 2, 3), dict(output_size=(4, 3, 2))), (3, (3, 6, 5, 9), 2, dict(output_ratio=0.6)),
]


@pytest.mark.parametrize("nd,shape,kernel,kwargs", FRACTIONAL, ids=[str(s) for _, s, _, _ in FRACTIONAL])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fractional_max_pool_equals_torch_given_samples(nd, shape, kernel, kwargs, dtype):
    """With the same _random_samples: bitwise the same values and indices as torch, and the same input gradient;
    the module with a _random_samples buffer too."""
    rs = np.random.RandomState(7)
    x = rs.randn(*shape).astype(dtype)
    n = 1 if len(shape) == nd + 1 else shape[0]
    samples = rs.rand(n, shape[-nd - 1], nd).astype(dtype)
    name = f"fractional_max_pool{nd}d"
    xt, xf = torch.tensor(x, requires_grad=True), fl.tensor(x, requires_grad=True)
    vt, it = getattr(torch.nn.functional, name)(xt, kernel, return_indices=True,
                                                _random_samples=torch.tensor(samples), **kwargs)
    vf, i_f = getattr(fl.nn.functional, name)(xf, kernel, return_indices=True,
                                              _random_samples=fl.tensor(samples), **kwargs)
    assert_same(vf.detach(), vt.detach(), rtol=0, atol=0)
    assert_same(i_f, it, rtol=0, atol=0)
    w = rs.randn(*vt.shape).astype(dtype)
    (vt * torch.tensor(w)).sum().backward()
    (vf * fl.tensor(w)).sum().backward()
    assert_same(xf.grad, xt.grad, rtol=1e-6, atol=1e-6)
    mt = getattr(torch.nn, f"FractionalMaxPool{nd}d")(kernel, _random_samples=torch.tensor(samples), **kwargs)
    mf = getattr(fl.nn, f"FractionalMaxPool{nd}d")(kernel, _random_samples=fl.tensor(samples), **kwargs)
    assert repr(mf) == repr(mt)
    assert list(mf.state_dict().keys()) == list(mt.state_dict().keys())
    assert_same(mf(fl.tensor(x)), mt(torch.tensor(x)), rtol=0, atol=0)


def test_fractional_max_pool_nan_and_ties_as_torch():
    """Tied maxima give the first index, NaNs the last NaN of the window (torch's kernel); the gradient follows."""
    for seed in range(3):
        rs = np.random.RandomState(seed)
        x = rs.randn(2, 3, 9, 9).astype(np.float32)
        x[rs.rand(*x.shape) < 0.15] = np.nan
        x[0, 0, :4, :4] = 1.0
        samples = rs.rand(2, 3, 2).astype(np.float32)
        xt, xf = torch.tensor(x, requires_grad=True), fl.tensor(x, requires_grad=True)
        vt, it = torch.nn.functional.fractional_max_pool2d(xt, 3, output_size=4, return_indices=True,
                                                           _random_samples=torch.tensor(samples))
        vf, i_f = fl.nn.functional.fractional_max_pool2d(xf, 3, output_size=4, return_indices=True,
                                                         _random_samples=fl.tensor(samples))
        assert_same(vf.detach(), vt.detach(), rtol=0, atol=0)
        assert_same(i_f, it, rtol=0, atol=0)
        vt.sum().backward()
        vf.sum().backward()
        assert_same(xf.grad, xt.grad, rtol=0, atol=0)


@pytest.mark.parametrize("nd", [2, 3])
def test_fractional_max_pool_random_invariants(nd):
    """Without samples (flowlike's generator): torch's output shape; each value is the max of a kernel-sized window
    whose element the index points at; windows start at 0 or later, end at the input's end; seeded runs repeat."""
    shape, kernel = ((2, 3, 13, 11), (3, 2)) if nd == 2 else ((2, 2, 9, 8, 10), (2, 3, 2))
    x = fl.randn(*shape)
    fn = getattr(fl.nn.functional, f"fractional_max_pool{nd}d")
    fl.manual_seed(3)
    v, idx = fn(x, kernel, output_ratio=0.5, return_indices=True)
    fl.manual_seed(3)
    v2 = fn(x, kernel, output_ratio=0.5)
    tv = getattr(torch.nn.functional, f"fractional_max_pool{nd}d")(torch.randn(*shape), kernel,
                                                                  output_ratio=(0.5,) * nd)
    assert tuple(v.shape) == tuple(tv.shape)
    assert np.array_equal(v.numpy(), v2.numpy())
    planes = x.reshape(shape[0] * shape[1], -1).numpy()
    flat_v, flat_i = v.reshape(planes.shape[0], -1).numpy(), idx.reshape(planes.shape[0], -1).numpy()
    # values are the input at the indices
    assert np.array_equal(np.take_along_axis(planes, flat_i, 1), flat_v)
    # and the max of a kernel-sized window holding that index: check every output against a brute-force search
    spatial = shape[-nd:]
    full = x.reshape(shape[0] * shape[1], *spatial).numpy()
    for p in range(planes.shape[0]):
        for o, i in zip(flat_v[p], flat_i[p]):
            pos = np.unravel_index(i, spatial)
            ok = False
            for starts in np.ndindex(*kernel):
                lo = [q - s for q, s in zip(pos, starts)]
                if any(lv < 0 or lv + k > size for lv, k, size in zip(lo, kernel, spatial)):
                    continue
                window = full[(p,) + tuple(slice(lv, lv + k) for lv, k in zip(lo, kernel))]
                ok = ok or window.max() == o
            assert ok


def test_fractional_max_pool_errors():
    for make in [lambda nn: nn.FractionalMaxPool2d(2), lambda nn: nn.FractionalMaxPool2d(2, 3, 0.5),
                 lambda nn: nn.FractionalMaxPool2d(2, output_ratio=1.5),
                 lambda nn: nn.FractionalMaxPool3d(2, output_ratio=(0.5, 0.5, 0.0))]:
        with pytest.raises(ValueError) as et:
            make(torch.nn)
        with pytest.raises(ValueError) as ef:
            make(fl.nn)
        assert str(ef.value) == str(et.value)
    with pytest.raises(RuntimeError, match="too large relative to input"):
        fl.nn.functional.fractional_max_pool2d(fl.zeros(1, 1, 5, 5), 3, output_size=4)
    with pytest.raises(ValueError, match="requires specifying either an output_size or an output_ratio"):
        fl.nn.functional.fractional_max_pool2d(fl.zeros(1, 1, 5, 5), 3)
