"""The fused ops _conv2d_bias_act and _addmm_activation against the unfused eager sequence they replace
(convolution / addmm, then the activation op): bit-equal values for every activation, the same gradients,
the same results for the dtypes that do not fuse, and clear errors. The float32 fused path applies the
activation inside the GEMM, tile by tile; the narrower kernels (FLOWLIKE_SGEMM_ISA) are checked in a
subprocess."""
import os
import subprocess
import sys

import numpy as np
import pytest

import flowlike as fl
import flowlike.nn.functional as F

RNG = np.random.default_rng(11)

ACTIVATIONS = {
    "none": lambda x: x,
    "relu": F.relu,
    "gelu": F.gelu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "silu": F.silu,
}


def rand(*shape, dtype=fl.float32, grad=False):
    x = fl.from_numpy(RNG.standard_normal(shape).astype(np.float32)).to(dtype)
    return x.requires_grad_(True) if grad else x


def conv_act(x, w, b, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1, act="relu"):
    return fl._C._call_op("_conv2d_bias_act", x, w, b, list(stride), list(padding), list(dilation), groups, act)


def unfused_conv_act(x, w, b, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1, act="relu"):
    return ACTIVATIONS[act](F.conv2d(x, w, b, stride=stride, padding=padding, dilation=dilation, groups=groups))


def assert_bit_equal(got, want):
    assert got.dtype == want.dtype and tuple(got.shape) == tuple(want.shape)
    assert fl.equal(got, want), f"max |diff| {(got.double() - want.double()).abs().max().item()}"


# ---- _conv2d_bias_act -------------------------------------------------------------------------------------

CONV_CASES = [  # (x shape, w shape, kwargs)
    ((2, 3, 9, 8), (5, 3, 3, 3), dict(padding=(1, 1))),
    ((4, 64, 20, 60), (64, 64, 3, 3), dict(padding=(1, 1))),  # stride 1, wide: GEMMs on the input rows in place
    ((16, 64, 14, 14), (64, 64, 3, 3), dict(padding=(1, 1))),  # narrow: im2col, several tiles and depth blocks
    ((1, 8, 13, 11), (6, 4, 3, 3), dict(stride=(1, 2), padding=(1, 0), groups=2)),  # one sample: row chunks
    ((2, 4, 12, 10), (4, 4, 3, 2), dict(stride=(2, 3), dilation=(2, 1), padding=(2, 1))),
    ((3, 6, 7, 7), (6, 1, 3, 3), dict(padding=(1, 1), groups=6)),  # depthwise: the direct kernel
    ((2, 5, 6, 9), (7, 5, 1, 1), dict()),  # pointwise: the input is the GEMM's B
    ((2, 3, 5, 40), (3, 3, 5, 5), dict(padding=(4, 4), dilation=(2, 2))),  # rows mostly padding
]


@pytest.mark.parametrize("act", list(ACTIVATIONS))
@pytest.mark.parametrize("xs,ws,kw", CONV_CASES)
def test_conv_bias_act_equals_unfused(xs, ws, kw, act):
    x, w, b = rand(*xs), rand(*ws), rand(ws[0])
    assert_bit_equal(conv_act(x, w, b, act=act, **kw), unfused_conv_act(x, w, b, act=act, **kw))
    assert_bit_equal(conv_act(x, w, None, act=act, **kw), unfused_conv_act(x, w, None, act=act, **kw))


@pytest.mark.parametrize("threads", [1, 2])
def test_conv_bias_act_thread_counts(threads):
    prev = fl.get_num_threads()
    fl.set_num_threads(threads)
    try:
        for n in (1, 3):  # a batch smaller and larger than the thread count
            x, w, b = rand(n, 4, 11, 10), rand(8, 4, 3, 3), rand(8)
            assert_bit_equal(conv_act(x, w, b, padding=(1, 1), act="silu"),
                             unfused_conv_act(x, w, b, padding=(1, 1), act="silu"))
    finally:
        fl.set_num_threads(prev)


def test_conv_bias_act_random_geometries():
    for _ in range(40):
        groups = int(RNG.integers(1, 3))
        cin, cout = groups * int(RNG.integers(1, 4)), groups * int(RNG.integers(1, 4))
        k = [int(v) for v in RNG.integers(1, 4, 2)]
        kw = dict(stride=[int(v) for v in RNG.integers(1, 3, 2)], padding=[int(v) for v in RNG.integers(0, 3, 2)],
                  dilation=[int(v) for v in RNG.integers(1, 3, 2)], groups=groups)
        hw = [int(RNG.integers((k[i] - 1) * kw["dilation"][i] + 1, 15)) for i in range(2)]
        x, w, b = rand(int(RNG.integers(1, 4)), cin, *hw), rand(cout, cin // groups, *k), rand(cout)
        act = list(ACTIVATIONS)[int(RNG.integers(len(ACTIVATIONS)))]
        assert_bit_equal(conv_act(x, w, b, act=act, **kw), unfused_conv_act(x, w, b, act=act, **kw))


def test_conv_bias_act_noncontiguous_and_empty():
    x = rand(2, 9, 8, 4).permute(0, 3, 1, 2)  # channels last in memory
    w, b = rand(6, 4, 8, 4)[:, :, ::2, ::2].contiguous()[:, :, :3, :3], rand(12)[::2]
    assert not x.is_contiguous() and not b.is_contiguous()
    assert_bit_equal(conv_act(x, w, b, padding=(1, 1), act="gelu"), unfused_conv_act(x, w, b, padding=(1, 1), act="gelu"))
    empty = rand(0, 4, 9, 8)
    got = conv_act(empty, w, b, padding=(1, 1))
    assert tuple(got.shape) == (0, 6, 9, 9) and got.dtype == fl.float32  # w is 3 x 2


@pytest.mark.parametrize("dtype", [fl.float64, fl.float16, fl.bfloat16])
@pytest.mark.parametrize("act", ["relu", "gelu", "silu"])
def test_conv_bias_act_other_dtypes(dtype, act):
    x, w, b = rand(2, 3, 7, 6, dtype=dtype), rand(4, 3, 3, 3, dtype=dtype), rand(4, dtype=dtype)
    assert_bit_equal(conv_act(x, w, b, padding=(1, 1), act=act), unfused_conv_act(x, w, b, padding=(1, 1), act=act))


@pytest.mark.parametrize("act", list(ACTIVATIONS))
def test_conv_bias_act_gradients_equal_unfused(act):
    args = [(2, 3, 7, 6), (4, 3, 3, 3), (4,)]
    fused = [rand(*s, dtype=fl.float64, grad=True) for s in args]
    unfused = [t.detach().clone().requires_grad_(True) for t in fused]
    g = rand(2, 4, 4, 6, dtype=fl.float64)
    conv_act(*fused, stride=(2, 1), padding=(1, 1), act=act).backward(g)
    unfused_conv_act(*unfused, stride=(2, 1), padding=(1, 1), act=act).backward(g)
    for a, e in zip(fused, unfused):
        assert_bit_equal(a.grad, e.grad)
    # and differentiable again: the double backward of the unfused pair
    x, w = rand(1, 2, 5, 5, dtype=fl.float64, grad=True), rand(3, 2, 3, 3, dtype=fl.float64, grad=True)
    (gx,) = fl.autograd.grad(conv_act(x, w, None, padding=(1, 1), act=act).sum(), [x], create_graph=True)
    (gw,) = fl.autograd.grad((gx * gx).sum(), [w])
    x2, w2 = x.detach().requires_grad_(True), w.detach().requires_grad_(True)
    (gx2,) = fl.autograd.grad(unfused_conv_act(x2, w2, None, padding=(1, 1), act=act).sum(), [x2], create_graph=True)
    (gw2,) = fl.autograd.grad((gx2 * gx2).sum(), [w2])
    assert_bit_equal(gw, gw2)


def test_conv_bias_act_errors():
    x, w, b = rand(1, 3, 6, 6), rand(4, 3, 3, 3), rand(4)
    with pytest.raises(ValueError, match="activation must be one of"):
        conv_act(x, w, b, act="tanh")
    with pytest.raises(RuntimeError, match="4-D input"):
        conv_act(rand(3, 6, 6), w, b)
    with pytest.raises(RuntimeError, match="channels"):
        conv_act(rand(1, 2, 6, 6), w, b)
    with pytest.raises(RuntimeError, match="bias"):
        conv_act(x, w, rand(5))
    with pytest.raises(RuntimeError, match="stride"):
        conv_act(x, w, b, stride=(1,))
    with pytest.raises(RuntimeError, match="Kernel size can't be greater"):
        conv_act(rand(1, 3, 2, 2), w, b)
    with pytest.raises(NotImplementedError):
        conv_act(x.long(), w.long(), b.long())


# ---- _addmm_activation -----------------------------------------------------------------------------------

def unfused_addmm_act(bias, a, b, beta=1, alpha=1, use_gelu=False):
    return (F.gelu if use_gelu else F.relu)(fl.addmm(bias, a, b, beta=beta, alpha=alpha))


@pytest.mark.parametrize("use_gelu", [False, True])
def test_addmm_activation_equals_unfused(use_gelu):
    for _ in range(40):
        m, k, n = (int(v) for v in RNG.integers(1, 80, 3))
        bias = rand(*[(n,), (m, n), (m, 1), ()][int(RNG.integers(4))])
        beta, alpha = [(1, 1), (0.5, 2.0), (0, -1)][int(RNG.integers(3))]
        a, b = rand(m, k), rand(k, n)
        assert_bit_equal(fl._addmm_activation(bias, a, b, beta=beta, alpha=alpha, use_gelu=use_gelu),
                         unfused_addmm_act(bias, a, b, beta, alpha, use_gelu))


@pytest.mark.parametrize("use_gelu", [False, True])
def test_linear_activation_and_layouts(use_gelu):
    x, w, bias = rand(300, 200), rand(130, 200), rand(130)  # threaded GEMM, several depth blocks
    assert_bit_equal(fl._addmm_activation(bias, x, w.t(), use_gelu=use_gelu),
                     (F.gelu if use_gelu else F.relu)(F.linear(x, w, bias)))
    a, b = rand(40, 24)[:, ::2], rand(30, 12).t()  # strided and transposed operands
    assert_bit_equal(fl._addmm_activation(bias[:30], a, b, use_gelu=use_gelu), unfused_addmm_act(bias[:30], a, b,
                                                                                                  use_gelu=use_gelu))


@pytest.mark.parametrize("shapes", [((5,), (0, 4), (4, 5)), ((5,), (3, 0), (0, 5)), ((0,), (3, 4), (4, 0))])
def test_addmm_activation_empty(shapes):
    bias, a, b = (rand(*s) for s in shapes)
    assert_bit_equal(fl._addmm_activation(bias, a, b), unfused_addmm_act(bias, a, b))


@pytest.mark.parametrize("dtype", [fl.float64, fl.float16, fl.bfloat16, fl.int64])
def test_addmm_activation_other_dtypes(dtype):
    bias, a, b = rand(5, dtype=dtype), rand(4, 6, dtype=dtype), rand(6, 5, dtype=dtype)
    assert_bit_equal(fl._addmm_activation(bias, a, b), unfused_addmm_act(bias, a, b))
    if dtype.is_floating_point:
        assert_bit_equal(fl._addmm_activation(bias, a, b, use_gelu=True), unfused_addmm_act(bias, a, b, use_gelu=True))
    else:
        with pytest.raises(NotImplementedError):
            fl._addmm_activation(bias, a, b, use_gelu=True)


@pytest.mark.parametrize("use_gelu", [False, True])
def test_addmm_activation_gradients_equal_unfused(use_gelu):
    fused = [rand(*s, dtype=fl.float64, grad=True) for s in [(5,), (4, 6), (6, 5)]]
    unfused = [t.detach().clone().requires_grad_(True) for t in fused]
    g = rand(4, 5, dtype=fl.float64)
    fl._addmm_activation(*fused, beta=0.5, alpha=2, use_gelu=use_gelu).backward(g)
    unfused_addmm_act(*unfused, beta=0.5, alpha=2, use_gelu=use_gelu).backward(g)
    for a, e in zip(fused, unfused):
        assert_bit_equal(a.grad, e.grad)


def test_addmm_activation_errors():
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        fl._addmm_activation(rand(3), rand(2, 3), rand(2, 3))
    with pytest.raises(RuntimeError, match="must be a matrix"):
        fl._addmm_activation(rand(3), rand(2, 3, 1), rand(3, 3))
    with pytest.raises(RuntimeError, match="must match the size"):
        fl._addmm_activation(rand(4), rand(2, 3), rand(3, 3))
    with pytest.raises(RuntimeError, match="same dtype"):
        fl._addmm_activation(rand(3), rand(2, 3), rand(3, 3, dtype=fl.float64))
    with pytest.raises(TypeError):
        fl._addmm_activation(rand(3), rand(2, 3), rand(3, 3), beta="x")


# ---- the narrower GEMM kernels -----------------------------------------------------------------------------

@pytest.mark.parametrize("isa", ["avx2", "none"])
def test_fused_ops_with_narrower_kernels(isa):
    """With the AVX2 micro-kernel (16-column panels) or no packed kernel (OpenBLAS, the activation applied after
    the GEMM), the fused ops still equal the unfused ones, and the float32 convolution its float64 one."""
    code = """
import numpy as np, flowlike as fl, flowlike.nn.functional as F
rng = np.random.default_rng(3)
r = lambda *s: fl.from_numpy(rng.standard_normal(s).astype(np.float32))
for n, (h, w) in [(1, (9, 37)), (4, (17, 20)), (1, (9, 100)), (3, (6, 70))]:  # im2col, then input rows in place
    x, wt, b = r(n, 6, h, w), r(10, 6, 3, 3), r(10)
    for act, f in [("relu", F.relu), ("gelu", F.gelu), ("silu", F.silu)]:
        got = fl._C._call_op("_conv2d_bias_act", x, wt, b, [1, 1], [1, 1], [1, 1], 1, act)
        assert fl.equal(got, f(F.conv2d(x, wt, b, padding=1))), act
    for kw in [dict(stride=(2, 1), padding=1), dict(padding=(2, 0), dilation=(2, 3)), dict(padding="same")]:
        want = F.conv2d(x.double(), wt.double(), b.double(), **kw).numpy()
        np.testing.assert_allclose(F.conv2d(x, wt, b, **kw).numpy(), want, rtol=1e-4, atol=1e-4)
for m, k, n in [(5, 7, 3), (70, 300, 45)]:
    a, bm, bias = r(m, k), r(k, n), r(n)
    for g in (False, True):
        assert fl.equal(fl._addmm_activation(bias, a, bm, use_gelu=g), (F.gelu if g else F.relu)(fl.addmm(bias, a, bm)))
print("ok")
"""
    env = dict(os.environ, FLOWLIKE_SGEMM_ISA=isa)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
