"""Layer modules against torch: identical reprs and state_dict keys, and equal outputs and gradients after
loading torch's weights; the less common layers (Softmax2d, ChannelShuffle, LPPool3d, CrossMapLRN2d, NLLLoss2d) and
AdaptiveLogSoftmaxWithLoss."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402
from helpers import assert_same, copy_state, run_both  # noqa: E402

LAYERS = [
    ("ReLU()", (3, 4)), ("ReLU6(inplace=False)", (3, 4)), ("LeakyReLU(0.2)", (3, 4)), ("ELU(alpha=0.5)", (3, 4)),
    ("SELU()", (3, 4)), ("CELU()", (3, 4)), ("GELU(approximate='tanh')", (3, 4)), ("SiLU()", (3, 4)), ("Mish()", (3, 4)),
    ("Hardswish()", (3, 4)), ("Hardsigmoid()", (3, 4)), ("Hardtanh(-2.0, 2.0)", (3, 4)), ("Hardshrink()", (3, 4)),
    ("Softshrink(0.3)", (3, 4)), ("Softplus(beta=2.0)", (3, 4)), ("Softsign()", (3, 4)), ("Tanhshrink()", (3, 4)),
    ("Threshold(0.1, 20.0)", (3, 4)), ("GLU()", (3, 4)), ("LogSigmoid()", (3, 4)), ("PReLU(3)", (2, 3, 4)),
    ("Sigmoid()", (3, 4)), ("Tanh()", (3, 4)), ("Softmax(dim=1)", (3, 4)), ("LogSoftmax(dim=-1)", (3, 4)),
    ("Softmin(dim=0)", (3, 4)),
    ("Conv1d(3, 4, 3, padding=1)", (2, 3, 8)), ("Conv2d(3, 4, 3, stride=2, bias=False)", (2, 3, 9, 9)),
    ("Conv2d(4, 4, 3, padding='same', groups=2, padding_mode='reflect')", (2, 4, 7, 7)),
    ("Conv3d(2, 3, 2)", (1, 2, 4, 4, 4)), ("ConvTranspose2d(3, 2, 3, stride=2, output_padding=1)", (2, 3, 5, 5)),
    ("ConvTranspose1d(3, 2, 4, stride=2, padding=1)", (2, 3, 6)),
    ("MaxPool2d(3, stride=2, padding=1)", (2, 3, 8, 8)), ("MaxPool1d(2)", (2, 3, 8)), ("AvgPool2d(2, ceil_mode=True)", (2, 3, 7, 7)),
    ("AdaptiveAvgPool2d((2, 3))", (2, 3, 8, 8)), ("AdaptiveMaxPool1d(3)", (2, 3, 8)), ("LPPool2d(2, 2)", (2, 3, 8, 8)),
    ("BatchNorm1d(3)", (4, 3)), ("BatchNorm2d(3, momentum=None)", (4, 3, 5, 5)), ("BatchNorm3d(2, affine=False)", (3, 2, 3, 3, 3)),
    ("InstanceNorm2d(3, affine=True)", (2, 3, 5, 5)), ("LayerNorm([4, 5])", (2, 4, 5)), ("LayerNorm(5, bias=False)", (2, 5)),
    ("RMSNorm(5)", (3, 5)), ("GroupNorm(2, 4)", (2, 4, 3, 3)), ("LocalResponseNorm(2)", (2, 4, 5, 5)),
    ("Dropout(p=0.3)", (3, 4)), ("Dropout2d()", (2, 3, 4, 4)),
    ("Upsample(scale_factor=2)", (1, 2, 3, 3)), ("Upsample(size=(4, 5), mode='bilinear', align_corners=True)", (1, 2, 3, 3)),
    ("UpsamplingNearest2d(scale_factor=2)", (1, 2, 3, 3)), ("UpsamplingBilinear2d(scale_factor=2)", (1, 2, 3, 3)),
    ("PixelShuffle(2)", (1, 8, 3, 3)), ("PixelUnshuffle(2)", (1, 2, 4, 4)), ("ZeroPad2d((1, 2, 0, 1))", (1, 2, 3, 3)),
    ("ConstantPad1d(2, 3.5)", (2, 3, 4)), ("ReflectionPad2d(1)", (1, 2, 3, 3)), ("ReplicationPad1d((1, 2))", (2, 3, 4)),
    ("CircularPad2d(1)", (1, 2, 3, 3)), ("Unfold(2, padding=1)", (1, 2, 4, 4)), ("Fold((4, 4), 2)", (1, 8, 9)),
    ("MultiheadAttention(8, 2)", (5, 2, 8)), ("MultiheadAttention(8, 4, batch_first=True)", (2, 5, 8)),
    ("MultiheadAttention(8, 2, add_bias_kv=True, add_zero_attn=True)", (5, 2, 8)),
    ("MultiheadAttention(8, 2, add_bias_kv=True, batch_first=True)", (2, 5, 8)),
    ("MultiheadAttention(8, 4, add_zero_attn=True, bias=False)", (5, 8)),
]


@pytest.mark.parametrize("spec,shape", LAYERS, ids=[s for s, _ in LAYERS])
def test_layer(spec, shape):
    tm, fm = eval("torch.nn." + spec), eval("fl.nn." + spec)
    assert repr(fm) == repr(tm)
    assert [(k, tuple(v.shape)) for k, v in fm.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in tm.state_dict().items()]
    copy_state(tm, fm)
    if "Dropout" in spec:  # random masks differ: compare eval mode (the identity) and the kept-scale in training
        tm.eval()
        fm.eval()
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    tx, fx = torch.tensor(x, requires_grad=True), fl.tensor(x, requires_grad=True)
    attention = spec.startswith("MultiheadAttention")
    to = tm(tx, tx, tx)[0] if attention else tm(tx)
    fo = fm(fx, fx, fx)[0] if attention else fm(fx)
    assert_same(fo, to, rtol=1e-4, atol=1e-5)
    to.pow(2).sum().backward()
    fo.pow(2).sum().backward()
    assert_same(fx.grad, tx.grad, rtol=1e-3, atol=1e-4)
    for (name, tp), fp in zip(tm.named_parameters(), fm.parameters()):
        np.testing.assert_allclose(fp.grad.numpy(), tp.grad.numpy(), rtol=1e-3, atol=1e-4, err_msg=name)
    for name, buf in tm.named_buffers():
        np.testing.assert_allclose(fm.get_buffer(name).numpy(), buf.numpy(), rtol=1e-5, atol=1e-6, err_msg=name)


def test_unpool_and_distances():
    x = np.random.default_rng(5).standard_normal((1, 2, 4, 4)).astype(np.float32)
    outs = []
    for M in (torch, fl):
        pooled, idx = M.nn.MaxPool2d(2, return_indices=True)(M.tensor(x))
        unpool, cos, dist = M.nn.MaxUnpool2d(2), M.nn.CosineSimilarity(dim=1), M.nn.PairwiseDistance(p=1.0)
        a, b = M.tensor(x[0, 0]), M.tensor(x[0, 1])
        outs.append((repr(unpool), unpool(pooled, idx).numpy(), cos(a, b).numpy(), dist(a, b).numpy()))
    assert outs[0][0] == outs[1][0]
    for want, got in zip(outs[0][1:], outs[1][1:]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kwargs", [{}, {"add_bias_kv": True}, {"add_zero_attn": True},
                                    {"add_bias_kv": True, "add_zero_attn": True, "kdim": 6, "vdim": 5}])
@pytest.mark.parametrize("float_masks", [False, True])
def test_attention_weights_and_masks(kwargs, float_masks):
    tm, fm = torch.nn.MultiheadAttention(8, 2, **kwargs), fl.nn.MultiheadAttention(8, 2, **kwargs)
    assert [(k, tuple(v.shape)) for k, v in fm.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in tm.state_dict().items()]
    copy_state(tm, fm)
    rng = np.random.default_rng(1)
    q = rng.standard_normal((4, 3, 8)).astype(np.float32)
    k = rng.standard_normal((4, 3, kwargs.get("kdim", 8))).astype(np.float32)
    v = rng.standard_normal((4, 3, kwargs.get("vdim", 8))).astype(np.float32)
    pad = np.zeros((3, 4), dtype=bool)
    pad[2, 2:] = True
    causal = np.triu(np.ones((4, 4), dtype=bool), 1)
    if float_masks:
        pad, causal = np.where(pad, -1e4, 0.0).astype(np.float32), np.where(causal, -np.inf, 0.0).astype(np.float32)
    for need_weights, average in ((True, True), (True, False), (False, True)):
        outs = []
        for M, m in ((torch, tm), (fl, fm)):
            ins = [M.tensor(a, requires_grad=True) for a in (q, k, v)]
            out, w = m(*ins, key_padding_mask=M.tensor(pad), attn_mask=M.tensor(causal), need_weights=need_weights,
                       average_attn_weights=average)
            out.pow(2).sum().backward()
            outs.append((out, w, [x.grad for x in ins], [p.grad for p in m.parameters()]))
            m.zero_grad()
        (to, tw, tig, tpg), (fo, fw, fig, fpg) = outs
        assert_same(fo, to, rtol=1e-4, atol=1e-5)
        assert (fw is None) == (tw is None)
        if tw is not None:
            assert_same(fw, tw, rtol=1e-4, atol=1e-5)
        for f, t in zip(fig + fpg, tig + tpg):
            assert_same(f, t, rtol=1e-3, atol=1e-4)


def test_multi_head_attention_forward_functional_and_errors():
    tm = torch.nn.MultiheadAttention(8, 2, add_bias_kv=True)
    x = np.random.default_rng(2).standard_normal((4, 8)).astype(np.float32)
    args = lambda M, m: (M.tensor(x), M.tensor(x), M.tensor(x), 8, 2, m.in_proj_weight, m.in_proj_bias,  # noqa: E731
                         m.bias_k, m.bias_v, True, 0.0, m.out_proj.weight, m.out_proj.bias)
    fm = fl.nn.MultiheadAttention(8, 2, add_bias_kv=True)
    copy_state(tm, fm)
    to, tw = torch.nn.functional.multi_head_attention_forward(*args(torch, tm), average_attn_weights=False)
    fo, fw = fl.nn.functional.multi_head_attention_forward(*args(fl, fm), average_attn_weights=False)
    assert_same(fo, to, rtol=1e-4, atol=1e-5)
    assert_same(fw, tw, rtol=1e-4, atol=1e-5)
    for M, m in ((torch, tm), (fl, fm)):
        t = M.tensor(x)
        with pytest.raises(RuntimeError):  # is_causal is only a hint: the mask must be given
            m(t, t, t, is_causal=True)
        with pytest.raises(RuntimeError):
            m(t, t, t, attn_mask=M.ones(3, 3, dtype=M.bool))
        with pytest.raises(AssertionError):
            m(t, t, t, key_padding_mask=M.ones(3, dtype=M.bool))


@pytest.mark.parametrize("spec,n", [
    ("L1Loss()", 2), ("MSELoss(reduction='sum')", 2), ("SmoothL1Loss(beta=0.5)", 2), ("HuberLoss(delta=0.5)", 2),
    ("SoftMarginLoss()", 2), ("KLDivLoss(reduction='batchmean', log_target=True)", 2),
    ("BCEWithLogitsLoss(pos_weight=M.ones(4) * 2)", 2), ("MarginRankingLoss(margin=0.1)", 3),
    ("CosineEmbeddingLoss()", 3), ("TripletMarginLoss()", 3), ("PoissonNLLLoss()", 2),
])
def test_losses(spec, n):
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal((3, 4)).astype(np.float32) for _ in range(3)]
    if spec.startswith(("MarginRanking", "CosineEmbedding")):
        arrays[2] = np.sign(rng.standard_normal(3 if spec.startswith("Cosine") else (3, 4))).astype(np.float32)
    if spec.startswith("BCEWithLogits"):
        arrays[1] = (arrays[1] > 0).astype(np.float32)
    results = []
    for M in (torch, fl):
        m = eval("M.nn." + spec)
        ins = [M.tensor(a, requires_grad=(i == 0)) for i, a in enumerate(arrays[:n])]
        out = m(*ins)
        out.backward()
        results.append((repr(m), out.detach().numpy(), ins[0].grad.numpy()))
    assert results[0][0] == results[1][0]
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(results[1][2], results[0][2], rtol=1e-4, atol=1e-6)


def test_cross_entropy_and_embedding_modules():
    w = np.random.default_rng(3).standard_normal((5, 3)).astype(np.float32)
    for M in (torch, fl):
        emb = M.nn.Embedding(5, 3, padding_idx=0)
        assert float(emb.weight[0].abs().sum()) == 0.0
    te, fe = torch.nn.Embedding.from_pretrained(torch.tensor(w)), fl.nn.Embedding.from_pretrained(fl.tensor(w))
    assert repr(fe) == repr(te) and not fe.weight.requires_grad
    idx = [[1, 4], [0, 2]]
    assert_same(fe(fl.tensor(idx)), te(torch.tensor(idx)), rtol=1e-7, atol=0)
    logits = np.random.default_rng(4).standard_normal((4, 5)).astype(np.float32)
    target = [1, 0, 4, 2]
    t = torch.nn.CrossEntropyLoss(weight=torch.arange(1.0, 6.0), label_smoothing=0.1)(torch.tensor(logits),
                                                                                     torch.tensor(target))
    f = fl.nn.CrossEntropyLoss(weight=fl.arange(1.0, 6.0), label_smoothing=0.1)(fl.tensor(logits), fl.tensor(target))
    np.testing.assert_allclose(f.item(), t.item(), rtol=1e-6)


# ---- the less common layers ------------------------------------------------------------------------------------------------------

RARE_LAYERS = [
    ("Softmax2d()", (2, 3, 4, 5)), ("Softmax2d()", (3, 4, 5)), ("ChannelShuffle(3)", (2, 6, 4, 4)),
    ("ChannelShuffle(2)", (2, 4, 5)), ("LPPool3d(2, 2)", (2, 3, 4, 4, 4)),
    ("LPPool3d(3.0, (2, 1, 2), stride=(1, 2, 1), ceil_mode=True)", (1, 2, 5, 4, 5)),
    ("CrossMapLRN2d(5, alpha=1e-2, beta=0.75, k=2.0)", (2, 7, 3, 3)), ("CrossMapLRN2d(3)", (1, 2, 4, 4)),
    ("CrossMapLRN2d(4, alpha=0.1)", (2, 6, 2, 3)),
]


@pytest.mark.parametrize("expr,shape", RARE_LAYERS, ids=[e for e, _ in RARE_LAYERS])
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
