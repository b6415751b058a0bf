"""Layer modules against torch: identical reprs and state_dict keys, and equal outputs and gradients after
loading torch's weights."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402
from helpers import assert_same, copy_state  # noqa: E402

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
    np.testing.assert_allclose(fo.detach().numpy(), to.detach().numpy(), rtol=1e-4, atol=1e-5)
    to.pow(2).sum().backward()
    fo.pow(2).sum().backward()
    np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-3, atol=1e-4)
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
        np.testing.assert_allclose(fo.detach().numpy(), to.detach().numpy(), rtol=1e-4, atol=1e-5)
        assert (fw is None) == (tw is None)
        if tw is not None:
            np.testing.assert_allclose(fw.detach().numpy(), tw.detach().numpy(), rtol=1e-4, atol=1e-5)
        for f, t in zip(fig + fpg, tig + tpg):
            np.testing.assert_allclose(f.numpy(), t.numpy(), rtol=1e-3, atol=1e-4)


def test_multi_head_attention_forward_functional_and_errors():
    tm = torch.nn.MultiheadAttention(8, 2, add_bias_kv=True)
    x = np.random.default_rng(2).standard_normal((4, 8)).astype(np.float32)
    args = lambda M, m: (M.tensor(x), M.tensor(x), M.tensor(x), 8, 2, m.in_proj_weight, m.in_proj_bias,  # noqa: E731
                         m.bias_k, m.bias_v, True, 0.0, m.out_proj.weight, m.out_proj.bias)
    fm = fl.nn.MultiheadAttention(8, 2, add_bias_kv=True)
    copy_state(tm, fm)
    to, tw = torch.nn.functional.multi_head_attention_forward(*args(torch, tm), average_attn_weights=False)
    fo, fw = fl.nn.functional.multi_head_attention_forward(*args(fl, fm), average_attn_weights=False)
    np.testing.assert_allclose(fo.detach().numpy(), to.detach().numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(fw.detach().numpy(), tw.detach().numpy(), rtol=1e-4, atol=1e-5)
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
    np.testing.assert_allclose(fe(fl.tensor(idx)).numpy(), te(torch.tensor(idx)).numpy())
    logits = np.random.default_rng(4).standard_normal((4, 5)).astype(np.float32)
    target = [1, 0, 4, 2]
    t = torch.nn.CrossEntropyLoss(weight=torch.arange(1.0, 6.0), label_smoothing=0.1)(torch.tensor(logits),
                                                                                     torch.tensor(target))
    f = fl.nn.CrossEntropyLoss(weight=fl.arange(1.0, 6.0), label_smoothing=0.1)(fl.tensor(logits), fl.tensor(target))
    np.testing.assert_allclose(f.item(), t.item(), rtol=1e-6)
