"""Lazy modules, the less common layers (Softmax2d, ChannelShuffle, LPPool3d, FractionalMaxPool, adaptive softmax,
CrossMapLRN2d, NLLLoss2d), gumbel_softmax, nn.utils fusion/skip_init/functional_call, autograd.Variable and
DistributedSampler against torch."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402
from helpers import assert_same, copy_state, run_both, to_flowlike  # noqa: E402


# ---- lazy modules ------------------------------------------------------------------------------------------------

LAZY = [
    ("LazyLinear(3)", (4, 5)), ("LazyLinear(3, bias=False)", (2, 4, 6)),
    ("LazyConv1d(4, 3, padding=1)", (2, 3, 8)), ("LazyConv2d(4, 3, stride=2, groups=2)", (2, 6, 7, 7)),
    ("LazyConv2d(3, 2, bias=False, padding_mode='reflect', padding=1)", (3, 5, 5)),
    ("LazyConv3d(2, 2)", (1, 2, 4, 4, 4)), ("LazyConvTranspose1d(2, 3, stride=2)", (2, 3, 5)),
    ("LazyConvTranspose2d(4, 3, stride=2, output_padding=1)", (2, 3, 4, 4)),
    ("LazyConvTranspose3d(2, 2, groups=2)", (1, 4, 3, 3, 3)),
    ("LazyBatchNorm1d()", (4, 3)), ("LazyBatchNorm2d(momentum=None, affine=False)", (4, 3, 5, 5)),
    ("LazyBatchNorm3d(track_running_stats=False)", (2, 2, 3, 3, 3)), ("LazyInstanceNorm1d()", (2, 3, 6)),
    ("LazyInstanceNorm2d(affine=False, track_running_stats=False)", (2, 3, 4, 4)),
    ("LazyInstanceNorm3d(bias=False)", (2, 2, 3, 3, 3)),
]


def _keys_and_kinds(sd):
    return [(k, type(v).__name__ if type(v).__name__.startswith("Uninitialized") else "Tensor") for k, v in sd.items()]


# torch's LazyInstanceNorm without parameters keeps num_features=0, so InstanceNorm warns on every call (flowlike too)
@pytest.mark.filterwarnings("ignore:input's size at dim=1 does not match num_features")
@pytest.mark.parametrize("expr,shape", LAZY, ids=[e for e, _ in LAZY])
def test_lazy_module_materializes_as_torch(expr, shape):
    """Before the first call: the same repr and state_dict (UninitializedParameter/Buffer entries). After it: the
    same class, repr, parameter shapes and state_dict keys; then, from torch's weights, the same outputs and
    gradients."""
    mt, mf = run_both(lambda lib: eval("nn." + expr, {"nn": lib.nn}))
    assert repr(mf) == repr(mt)
    assert _keys_and_kinds(mf.state_dict()) == _keys_and_kinds(mt.state_dict())
    assert mf.has_uninitialized_params() == mt.has_uninitialized_params()
    x = np.random.RandomState(0).randn(*shape).astype(np.float32)
    mt(torch.tensor(x))
    mf(fl.tensor(x))
    assert type(mf).__name__ == type(mt).__name__ == expr.split("(")[0][4:]
    assert repr(mf) == repr(mt)
    assert list(mf.state_dict().keys()) == list(mt.state_dict().keys())
    for (n, p), (m, q) in zip(mt.named_parameters(), mf.named_parameters()):
        assert n == m and tuple(q.shape) == tuple(p.shape) and type(q) is fl.nn.Parameter
    for (n, b), (m, c) in zip(mt.named_buffers(), mf.named_buffers()):
        assert n == m and type(c) is fl.Tensor
    copy_state(mt, mf)
    xt, xf = torch.tensor(x, requires_grad=True), fl.tensor(x, requires_grad=True)
    yt, yf = mt(xt), mf(xf)
    assert_same(yf.detach(), yt.detach(), rtol=1e-5, atol=1e-5)
    yt.square().sum().backward()
    yf.square().sum().backward()
    assert_same(xf.grad, xt.grad, rtol=1e-4, atol=1e-4)
    for (n, p), (_, q) in zip(mt.named_parameters(), mf.named_parameters()):
        assert_same(q.grad, p.grad, rtol=1e-4, atol=1e-4)


def test_lazy_module_load_state_dict_materializes():
    """Loading a state_dict into an uninitialized lazy module takes the loaded shapes (before any forward)."""
    t_bn = torch.nn.BatchNorm2d(5)
    t_bn.running_mean.normal_()
    for src in (torch.nn.Linear(4, 3), t_bn):
        mf = fl.nn.LazyLinear(3) if isinstance(src, torch.nn.Linear) else fl.nn.LazyBatchNorm2d()
        mf.load_state_dict({k: to_flowlike(v) for k, v in src.state_dict().items()})
        assert not mf.has_uninitialized_params()
        for k, v in src.state_dict().items():
            assert_same(mf.state_dict()[k], v)
        x = np.random.RandomState(1).randn(2, 4).astype(np.float32) if isinstance(src, torch.nn.Linear) else \
            np.random.RandomState(1).randn(2, 5, 3, 3).astype(np.float32)
        src.eval()
        mf.eval()
        assert_same(mf(fl.tensor(x)).detach(), src(torch.tensor(x)).detach(), rtol=1e-5, atol=1e-6)
        assert type(mf).__name__ == type(src).__name__


def test_lazy_state_dict_round_trips():
    """An uninitialized state_dict loads into another lazy model (it stays lazy); loading it into an initialized
    model raises torch's error."""
    for lib in (torch, fl):
        def make():
            return lib.nn.Sequential(lib.nn.LazyLinear(4), lib.nn.ReLU(), lib.nn.LazyBatchNorm1d())
        sd = make().state_dict()
        other = make()
        other.load_state_dict(sd)
        assert other[0].has_uninitialized_params() and type(other[0]).__name__ == "LazyLinear"
        with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter"):
            lib.nn.Sequential(lib.nn.Linear(5, 4), lib.nn.ReLU(), lib.nn.BatchNorm1d(4)).load_state_dict(sd)
        m = make().double()
        m(lib.zeros(3, 5, dtype=lib.float64))
        assert m[0].weight.dtype == lib.float64 and m[2].running_mean.dtype == lib.float64


def test_uninitialized_parameter_semantics():
    for lib in (torch, fl):
        p = lib.nn.UninitializedParameter()
        assert repr(p) == "<UninitializedParameter>" and p.requires_grad
        b = lib.nn.UninitializedBuffer()
        assert repr(b) == "<UninitializedBuffer>" and not b.requires_grad
        with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter"):
            p.shape
        p.materialize((2, 3))
        assert type(p) is lib.nn.Parameter and tuple(p.shape) == (2, 3)
        assert lib.nn.parameter.is_lazy(lib.nn.UninitializedParameter())
        assert not lib.nn.parameter.is_lazy(lib.nn.Parameter(lib.zeros(1)))
    lt, lf = torch.nn.LazyConv2d(4, 3, groups=2), fl.nn.LazyConv2d(4, 3, groups=2)
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        lt(torch.zeros(1, 3, 5, 5))
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        lf(fl.zeros(1, 3, 5, 5))
    with pytest.raises(RuntimeError, match="Expected 3D .unbatched. or 4D .batched. input to LazyConv2d"):
        fl.nn.LazyConv2d(4, 3)(fl.zeros(5, 5))


# ---- layers ------------------------------------------------------------------------------------------------------

LAYERS = [
    ("Softmax2d()", (2, 3, 4, 5)), ("Softmax2d()", (3, 4, 5)), ("ChannelShuffle(3)", (2, 6, 4, 4)),
    ("ChannelShuffle(2)", (2, 4, 5)), ("LPPool3d(2, 2)", (2, 3, 4, 4, 4)),
    ("LPPool3d(3.0, (2, 1, 2), stride=(1, 2, 1), ceil_mode=True)", (1, 2, 5, 4, 5)),
    ("CrossMapLRN2d(5, alpha=1e-2, beta=0.75, k=2.0)", (2, 7, 3, 3)), ("CrossMapLRN2d(3)", (1, 2, 4, 4)),
    ("CrossMapLRN2d(4, alpha=0.1)", (2, 6, 2, 3)),
]


@pytest.mark.parametrize("expr,shape", LAYERS, ids=[e for e, _ in LAYERS])
def test_layer_forward_backward(expr, shape):
    mt, mf = run_both(lambda lib: eval("nn." + expr, {"nn": lib.nn}))
    assert repr(mf) == repr(mt)
    x = np.random.RandomState(2).randn(*shape).astype(np.float32)
    xt, xf = torch.tensor(x, requires_grad=True), fl.tensor(x, requires_grad=True)
    yt, yf = mt(xt), mf(xf)
    assert_same(yf.detach(), yt.detach(), rtol=1e-5, atol=1e-6)
    w = np.random.RandomState(3).randn(*yt.shape).astype(np.float32)
    (yt * torch.tensor(w)).sum().backward()
    (yf * fl.tensor(w)).sum().backward()
    if "CrossMapLRN2d" not in expr:  # torch's hand-written backward of the legacy LRN is not its forward's gradient
        assert_same(xf.grad, xt.grad, rtol=1e-4, atol=1e-5)


def test_crossmaplrn2d_gradient_is_the_forward_gradient():
    """flowlike differentiates CrossMapLRN2d's (torch-equal) forward exactly: gradcheck in float64."""
    m = fl.nn.CrossMapLRN2d(3, alpha=0.1, k=1.5)
    x = fl.tensor(np.random.RandomState(4).randn(1, 5, 2, 2), requires_grad=True)
    assert fl.autograd.gradcheck(m, (x,))


def test_layer_input_errors():
    for expr, shape, exc in [("Softmax2d()", (3, 4), ValueError), ("CrossMapLRN2d(3)", (2, 3, 4), ValueError),
                             ("ChannelShuffle(4)", (2, 6, 3), RuntimeError),
                             ("ChannelShuffle(2)", (2, 6), RuntimeError),
                             ("ChannelShuffle(0)", (2, 6, 3), RuntimeError)]:
        mt, mf = run_both(lambda lib: eval("nn." + expr, {"nn": lib.nn}))
        with pytest.raises(exc) as et:
            mt(torch.zeros(*shape))
        with pytest.raises(exc) as ef:
            mf(fl.zeros(*shape))
        assert str(ef.value) == str(et.value)


def test_instance_norm_num_features_check():
    for lib in (torch, fl):
        with pytest.raises(ValueError, match=r"expected input's size at dim=1 to match num_features \(4\), but got: 3"):
            lib.nn.InstanceNorm2d(4, affine=True)(lib.zeros(2, 3, 5, 5))
        with pytest.warns(UserWarning, match="input's size at dim=0 does not match num_features"):
            lib.nn.InstanceNorm1d(4)(lib.zeros(3, 5))


def test_channel_shuffle_functions():
    x = np.random.RandomState(5).randn(2, 6, 3, 2).astype(np.float32)
    for name in ("channel_shuffle", "native_channel_shuffle"):
        assert_same(getattr(fl.nn.functional, name)(fl.tensor(x), 3),
                    getattr(torch.nn.functional, name)(torch.tensor(x), 3))


def test_nllloss2d_is_nllloss():
    with pytest.warns(FutureWarning, match="NLLLoss2d"):
        mf = fl.nn.NLLLoss2d(weight=fl.tensor([1.0, 2.0, 0.5]), ignore_index=1, reduction="sum")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        mt = torch.nn.NLLLoss2d(weight=torch.tensor([1.0, 2.0, 0.5]), ignore_index=1, reduction="sum")
    assert isinstance(mf, fl.nn.NLLLoss) and repr(mf) == repr(mt)
    assert list(mf.state_dict().keys()) == list(mt.state_dict().keys())
    rs = np.random.RandomState(6)
    x, t = rs.randn(2, 3, 4, 4).astype(np.float32), rs.randint(0, 3, (2, 4, 4))
    assert_same(mf(fl.tensor(x).log_softmax(1), fl.tensor(t)), mt(torch.tensor(x).log_softmax(1), torch.tensor(t)))


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


# ---- AdaptiveLogSoftmaxWithLoss ----------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [dict(cutoffs=[5, 12], div_value=2.0, head_bias=True), dict(cutoffs=[3])])
def test_adaptive_log_softmax_matches(kwargs):
    torch.manual_seed(0)
    mt = torch.nn.AdaptiveLogSoftmaxWithLoss(16, 20, **kwargs)
    mf = fl.nn.AdaptiveLogSoftmaxWithLoss(16, 20, **kwargs)
    assert repr(mf) == repr(mt)
    assert list(mf.state_dict().keys()) == list(mt.state_dict().keys())
    copy_state(mt, mf)
    rs = np.random.RandomState(8)
    x, t = rs.randn(9, 16).astype(np.float32), np.array([0, 4, 5, 11, 12, 19, 3, 7, 15])
    xt, xf = torch.tensor(x, requires_grad=True), fl.tensor(x, requires_grad=True)
    ot, of = mt(xt, torch.tensor(t)), mf(xf, fl.tensor(t))
    assert type(of).__name__ == "_ASMoutput" and of._fields == ("output", "loss")
    assert_same(of.output.detach(), ot.output.detach(), rtol=1e-5, atol=1e-6)
    assert_same(of.loss.detach(), ot.loss.detach(), rtol=1e-5, atol=1e-6)
    ot.loss.backward()
    of.loss.backward()
    assert_same(xf.grad, xt.grad, rtol=1e-5, atol=1e-7)
    for (n, p), (_, q) in zip(mt.named_parameters(), mf.named_parameters()):
        assert_same(q.grad, p.grad, rtol=1e-5, atol=1e-7)
    assert_same(mf.log_prob(xf).detach(), mt.log_prob(xt).detach(), rtol=1e-5, atol=1e-6)
    assert np.array_equal(mf.predict(xf).numpy(), mt.predict(xt).numpy())
    o1, o2 = mt(xt[0], torch.tensor(t[0])), mf(xf[0], fl.tensor(t[0]))
    assert_same(o2.output.detach(), o1.output.detach(), rtol=1e-5, atol=1e-6)
    for bad_x, bad_t in [(x, np.full(9, 25)), (x[:4], t), (x, t.reshape(3, 3))]:
        with pytest.raises(RuntimeError) as et:
            mt(torch.tensor(bad_x), torch.tensor(bad_t))
        with pytest.raises(RuntimeError) as ef:
            mf(fl.tensor(bad_x), fl.tensor(bad_t))
        assert str(ef.value) == str(et.value)
    with pytest.raises(ValueError) as et:
        torch.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [5, 3])
    with pytest.raises(ValueError) as ef:
        fl.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [5, 3])
    assert str(ef.value) == str(et.value)


# ---- gumbel_softmax ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("hard", [False, True])
def test_gumbel_softmax_invariants(hard):
    """Soft samples are distributions along dim; hard ones are one-hot at the soft sample's argmax; the gradient is
    the soft sample's (straight-through), checked against torch's formula on the same noise-free path; frequent
    logits win more often."""
    fl.manual_seed(0)
    logits = fl.tensor(np.log(np.array([[0.05, 0.15, 0.8]] * 4000, np.float32)), requires_grad=True)
    y = fl.nn.functional.gumbel_softmax(logits, tau=0.5, hard=hard, dim=-1)
    assert tuple(y.shape) == (4000, 3)
    np.testing.assert_allclose(y.detach().sum(-1).numpy(), 1.0, rtol=1e-5)
    if hard:
        assert set(np.unique(y.detach().numpy())) <= {0.0, 1.0}
    freq = y.detach().numpy().argmax(-1)
    counts = np.bincount(freq, minlength=3) / 4000
    np.testing.assert_allclose(counts, [0.05, 0.15, 0.8], atol=0.03)  # Gumbel-max: argmax ~ softmax(logits)
    w = fl.tensor(np.random.RandomState(9).randn(4000, 3).astype(np.float32))
    (y * w).sum().backward()
    # the gradient of sum(w * y_soft) with y_soft = softmax((logits + g) / tau): recover y_soft from the output of
    # an identical seeded soft draw and compare with the analytic softmax Jacobian
    fl.manual_seed(0)
    y_soft = fl.nn.functional.gumbel_softmax(logits.detach(), tau=0.5, hard=False).numpy()
    wn = w.numpy()
    expected = y_soft * (wn - (wn * y_soft).sum(-1, keepdims=True)) / 0.5
    np.testing.assert_allclose(logits.grad.numpy(), expected, rtol=1e-4, atol=1e-5)
    if hard:
        assert np.array_equal(y.detach().numpy().argmax(-1), y_soft.argmax(-1))
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated"):
        fl.nn.functional.gumbel_softmax(logits.detach(), eps=1e-5)


# ---- nn.utils ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("conv,bn,shape,transpose", [
    ("Conv2d(3, 4, 3, padding=1)", "BatchNorm2d(4)", (2, 3, 5, 5), False),
    ("Conv1d(3, 4, 3, bias=False)", "BatchNorm1d(4, affine=False)", (2, 3, 6), False),
    ("ConvTranspose2d(3, 4, 3, stride=2)", "BatchNorm2d(4)", (2, 3, 4, 4), True),
    ("Conv3d(2, 3, 2)", "BatchNorm3d(3)", (1, 2, 4, 4, 4), False),
])
def test_fuse_conv_bn_eval(conv, bn, shape, transpose):
    (ct, cf), (bt, bf) = (run_both(lambda lib, e=e: eval("nn." + e, {"nn": lib.nn})) for e in (conv, bn))
    with torch.no_grad():
        bt.running_mean.normal_()
        bt.running_var.uniform_(0.5, 2.0)
        if bt.weight is not None:
            bt.weight.normal_()
            bt.bias.normal_()
    copy_state(ct, cf)
    copy_state(bt, bf)
    ct.eval(), bt.eval(), cf.eval(), bf.eval()
    ft = torch.nn.utils.fuse_conv_bn_eval(ct, bt, transpose=transpose)
    ff = fl.nn.utils.fuse_conv_bn_eval(cf, bf, transpose=transpose)
    assert type(ff).__name__ == type(ft).__name__ and repr(ff) == repr(ft)
    assert ff is not cf and type(ff.weight) is fl.nn.Parameter and type(ff.bias) is fl.nn.Parameter
    for k, v in ft.state_dict().items():
        assert_same(ff.state_dict()[k], v, rtol=1e-6, atol=1e-6)
    x = np.random.RandomState(10).randn(*shape).astype(np.float32)
    assert_same(ff(fl.tensor(x)).detach(), bt(ct(torch.tensor(x))).detach(), rtol=1e-4, atol=1e-5)
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        fl.nn.utils.fuse_conv_bn_eval(cf.train(), bf)


def test_fuse_linear_bn():
    (lt, lf), (bt, bf) = run_both(lambda lib: lib.nn.Linear(5, 4)), run_both(lambda lib: lib.nn.BatchNorm1d(4))
    with torch.no_grad():
        bt.running_mean.normal_()
        bt.running_var.uniform_(0.5, 2.0)
        bt.weight.normal_()
    copy_state(lt, lf)
    copy_state(bt, bf)
    for m in (lt, lf, bt, bf):
        m.eval()
    ft, ff = torch.nn.utils.fuse_linear_bn_eval(lt, bt), fl.nn.utils.fuse_linear_bn_eval(lf, bf)
    for k, v in ft.state_dict().items():
        assert_same(ff.state_dict()[k], v, rtol=1e-6, atol=1e-6)
    wt, bt_ = torch.nn.utils.fuse_linear_bn_weights(lt.weight, None, bt.running_mean, bt.running_var, bt.eps,
                                                    bt.weight, bt.bias)
    wf, bf_ = fl.nn.utils.fuse_linear_bn_weights(lf.weight, None, bf.running_mean, bf.running_var, bf.eps,
                                                 bf.weight, bf.bias)
    assert_same(wf.detach(), wt.detach(), rtol=1e-6)
    assert_same(bf_.detach(), bt_.detach(), rtol=1e-6)
    assert bf_.requires_grad == bt_.requires_grad
    with pytest.raises(AssertionError, match="To fuse, linear.out_features == bn.num_features"):
        fl.nn.utils.fuse_linear_bn_eval(fl.nn.Linear(5, 3).eval(), bf)


def test_skip_init():
    """skip_init builds the module with torch's shapes without drawing random numbers (so the next draws are the
    ones the generator would give without it), and refuses modules without a device argument as torch does."""
    fl.manual_seed(5)
    m = fl.nn.utils.skip_init(fl.nn.Linear, 5, 3, bias=False)
    after = fl.rand(3)
    fl.manual_seed(5)
    assert np.array_equal(after.numpy(), fl.rand(3).numpy())
    t = torch.nn.utils.skip_init(torch.nn.Linear, 5, 3, bias=False)
    assert repr(m) == repr(t) and list(m.state_dict()) == list(t.state_dict())
    assert type(fl.nn.utils.skip_init(fl.nn.Conv2d, 2, 3, kernel_size=3)) is fl.nn.Conv2d

    class NoDevice(fl.nn.Module):
        def __init__(self):
            super().__init__()

    with pytest.raises(RuntimeError, match="Module must support a 'device' arg to skip initialization"):
        fl.nn.utils.skip_init(NoDevice)
    with pytest.raises(RuntimeError, match="Expected a Module"):
        fl.nn.utils.skip_init(int)


def test_convert_weight_memory_format():
    model = fl.nn.Sequential(fl.nn.Conv2d(2, 3, 3), fl.nn.ReLU(), fl.nn.Sequential(fl.nn.ConvTranspose2d(3, 2, 2)))
    w = [p.detach().numpy().copy() for p in model.parameters()]

    class ContiguousFormat:  # stands for torch.contiguous_format, which flowlike's namespace does not define yet
        def __str__(self):
            return "torch.contiguous_format"

    assert fl.nn.utils.convert_conv2d_weight_memory_format(model, ContiguousFormat()) is model
    assert all(np.array_equal(a, p.detach().numpy()) for a, p in zip(w, model.parameters()))
    assert fl.nn.utils.convert_conv3d_weight_memory_format(model, ContiguousFormat()) is model
    with pytest.raises(RuntimeError, match="supports only memory_format=torch.contiguous_format"):
        fl.nn.utils.convert_conv2d_weight_memory_format(model, torch.channels_last)


def test_functional_call():
    mt = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3))
    mf = fl.nn.Sequential(fl.nn.Linear(4, 3), fl.nn.BatchNorm1d(3))
    copy_state(mt, mf)
    rs = np.random.RandomState(11)
    x = rs.randn(5, 4).astype(np.float32)
    new = {"0.weight": rs.randn(3, 4).astype(np.float32), "1.bias": rs.randn(3).astype(np.float32)}
    wt = {k: torch.tensor(v, requires_grad=True) for k, v in new.items()}
    wf = {k: fl.tensor(v, requires_grad=True) for k, v in new.items()}
    yt = torch.func.functional_call(mt, wt, (torch.tensor(x),))
    yf = fl.func.functional_call(mf, wf, (fl.tensor(x),))
    assert_same(yf.detach(), yt.detach(), rtol=1e-5, atol=1e-6)
    yt.square().sum().backward()
    yf.square().sum().backward()
    for k in new:
        assert_same(wf[k].grad, wt[k].grad, rtol=1e-4, atol=1e-5)
    # the module is restored, its own parameters got no gradient; the call ran in training mode (stats updated)
    assert type(mf[0].weight) is fl.nn.Parameter and mf[0].weight.grad is None
    for k, v in mt.state_dict().items():
        assert_same(mf.state_dict()[k], v, rtol=1e-5, atol=1e-6)
    with pytest.warns(FutureWarning, match="stateless.functional_call` is deprecated"):
        yt2 = torch.nn.utils.stateless.functional_call(mt, {"0.bias": torch.zeros(3)}, torch.tensor(x))
    with pytest.warns(FutureWarning, match="stateless.functional_call` is deprecated"):
        yf2 = fl.nn.utils.stateless.functional_call(mf, {"0.bias": fl.zeros(3)}, fl.tensor(x))
    assert_same(yf2.detach(), yt2.detach(), rtol=1e-5, atol=1e-6)
    yt3 = torch.func.functional_call(mt, ({"0.weight": wt["0.weight"]}, {"1.bias": wt["1.bias"]}), torch.tensor(x))
    yf3 = fl.func.functional_call(mf, ({"0.weight": wf["0.weight"]}, {"1.bias": wf["1.bias"]}), fl.tensor(x))
    assert_same(yf3.detach(), yt3.detach(), rtol=1e-5, atol=1e-6)
    for lib, m, t in ((torch, mt, torch.zeros(3)), (fl, mf, fl.zeros(3))):
        with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
            lib.func.functional_call(m, ({"0.bias": t}, {"0.bias": t}), lib.zeros(5, 4))
        with pytest.raises(RuntimeError, match="Missing key"):
            lib.func.functional_call(m, {"0.bias": t}, lib.zeros(5, 4), strict=True)


def test_functional_call_tied_weights():
    def make(lib):
        m = lib.nn.Sequential(lib.nn.Linear(3, 3, bias=False), lib.nn.Linear(3, 3, bias=False))
        m[1].weight = m[0].weight
        return m
    mt, mf = make(torch), make(fl)
    copy_state(mt, mf)
    w = np.eye(3, dtype=np.float32) * 2
    x = np.random.RandomState(12).randn(2, 3).astype(np.float32)
    for tie in (True, False):
        yt = torch.func.functional_call(mt, {"0.weight": torch.tensor(w)}, torch.tensor(x), tie_weights=tie)
        yf = fl.func.functional_call(mf, {"0.weight": fl.tensor(w)}, fl.tensor(x), tie_weights=tie)
        assert_same(yf.detach(), yt.detach(), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="which are tied"):
        fl.func.functional_call(mf, {"0.weight": fl.tensor(w), "1.weight": fl.zeros(3, 3)}, fl.tensor(x))


# ---- autograd.Variable, profiler, DistributedSampler -------------------------------------------------------------

def test_variable():
    for lib in (torch, fl):
        t = lib.ones(3)
        v = lib.autograd.Variable(t, requires_grad=True)
        assert type(v) is lib.Tensor and v.requires_grad and v.is_leaf and v is not t
        assert v.data_ptr() == t.data_ptr() and isinstance(t, lib.autograd.Variable)
        y = lib.autograd.Variable(lib.ones(2, requires_grad=True) * 2)
        assert y.grad_fn is None and not y.requires_grad
        assert tuple(lib.autograd.Variable().shape) == (0,)
        with pytest.raises(TypeError, match="Variable data has to be a tensor, but got int"):
            lib.autograd.Variable(3)
        with pytest.warns(UserWarning, match="volatile was removed"):
            lib.autograd.Variable(t, volatile=True)


def test_record_function_and_profile():
    calls = []

    @fl.autograd.profiler.record_function("label")
    def f(a):
        calls.append(a)
        return a * 2

    with fl.autograd.profiler.record_function("block", "args") as rf:
        assert rf.name == "block" and rf.args == "args"
        assert f(fl.ones(1)).item() == 2.0
    assert len(calls) == 1
    with pytest.raises(NotImplementedError, match="torch.autograd.profiler.profile"):
        fl.autograd.profiler.profile()


@pytest.mark.parametrize("n,replicas,drop_last", [(10, 3, False), (10, 3, True), (12, 4, False), (2, 5, False)])
def test_distributed_sampler(n, replicas, drop_last):
    """Unshuffled: exactly torch's indices per rank; shuffled: the same sizes, the ranks together cover a
    permutation (plus torch's padding), the order is fixed per (seed, epoch) and changes with set_epoch."""
    data = list(range(n))
    for r in range(replicas):
        st = torch.utils.data.DistributedSampler(data, replicas, r, shuffle=False, drop_last=drop_last)
        sf = fl.utils.data.DistributedSampler(data, replicas, r, shuffle=False, drop_last=drop_last)
        assert list(sf) == list(st) and len(sf) == len(st)
    samplers = [fl.utils.data.DistributedSampler(data, replicas, r, seed=3, drop_last=drop_last)
                for r in range(replicas)]
    first = [list(s) for s in samplers]
    assert [len(x) for x in first] == [len(torch.utils.data.DistributedSampler(data, replicas, r, drop_last=drop_last))
                                       for r in range(replicas)]
    merged = [first[r][i] for i in range(len(first[0])) for r in range(replicas)]
    if drop_last:
        assert len(set(merged)) == len(merged)
    else:
        assert set(merged) == set(data)
    assert [list(s) for s in samplers] == first
    for s in samplers:
        s.set_epoch(1)
    if n > 5:
        assert [list(s) for s in samplers] != first
    for kwargs in (dict(), dict(num_replicas=2), dict(rank=0)):
        with pytest.raises(ValueError) as et:
            torch.utils.data.DistributedSampler(data, **kwargs)
        with pytest.raises(ValueError) as ef:
            fl.utils.data.DistributedSampler(data, **kwargs)
        assert str(ef.value) == str(et.value)
    with pytest.raises(ValueError, match=r"Invalid rank 3, rank should be in the interval \[0, 2\]"):
        fl.utils.data.DistributedSampler(data, 3, 3)
