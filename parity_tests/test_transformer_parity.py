"""Transformer layers against torch: reprs, state_dict keys, outputs and gradients from identical weights
(dropout 0), masks, pre- and post-norm."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402
from helpers import assert_same, copy_state  # noqa: E402


def data(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("kw", [dict(), dict(norm_first=True, activation="gelu"), dict(batch_first=True)])
def test_encoder_layer_and_stack(kw):
    build = lambda m: m.nn.TransformerEncoder(m.nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, **kw), 2,
                                              m.nn.LayerNorm(16))
    tm, fm = build(torch), build(fl)
    assert repr(fm) == repr(tm)
    assert list(fm.state_dict()) == list(tm.state_dict())
    copy_state(tm, fm)
    x = data(3, 5, 16) if kw.get("batch_first") else data(5, 3, 16)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(5)
    pad = np.zeros((3, 5), dtype=bool)
    pad[1, 3:] = True
    tx, fx = torch.tensor(x, requires_grad=True), fl.tensor(x, requires_grad=True)
    to = tm(tx, mask=mask, src_key_padding_mask=torch.tensor(pad))
    fo = fm(fx, mask=fl.nn.Transformer.generate_square_subsequent_mask(5), src_key_padding_mask=fl.tensor(pad))
    assert_same(fo, to, 2e-5, 2e-5)
    to.pow(2).sum().backward()
    fo.pow(2).sum().backward()
    assert_same(fx.grad, tx.grad, 1e-4, 1e-4)
    for tp, fp in zip(tm.parameters(), fm.parameters()):
        assert_same(fp.grad, tp.grad, 1e-4, 1e-4)


def test_full_transformer():
    build = lambda m: m.nn.Transformer(16, 4, 2, 2, 32, dropout=0.0)
    tm, fm = build(torch), build(fl)
    assert repr(fm) == repr(tm)
    copy_state(tm, fm)
    src, tgt = data(6, 2, 16), data(4, 2, 16, seed=1)
    tmask = torch.nn.Transformer.generate_square_subsequent_mask(4)
    fmask = fl.nn.Transformer.generate_square_subsequent_mask(4)
    assert_same(fmask, tmask, 2e-5, 2e-5)
    to = tm(torch.tensor(src), torch.tensor(tgt), tgt_mask=tmask)
    fo = fm(fl.tensor(src), fl.tensor(tgt), tgt_mask=fmask)
    assert_same(fo, to, 2e-5, 2e-5)
