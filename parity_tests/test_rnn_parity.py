"""RNN, LSTM, GRU, their cells and nn.utils.rnn against torch: reprs, state_dict keys, outputs, final states and
gradients after loading torch's weights, packed sequences, and errors."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402
from helpers import assert_same, copy_state, outcome_type  # noqa: E402


def first(state):
    return state[0] if isinstance(state, tuple) else state


@pytest.mark.parametrize("cls,kw", [
    ("RNN", {}), ("RNN", dict(nonlinearity="relu", num_layers=2, bias=False)),
    ("LSTM", dict(num_layers=2, bidirectional=True)), ("LSTM", dict(proj_size=3, batch_first=True)),
    ("GRU", dict(batch_first=True, bidirectional=True)), ("GRU", dict(num_layers=3)),
])
@pytest.mark.parametrize("unbatched", [False, True])
def test_layers_match_torch(cls, kw, unbatched):
    tm, fm = getattr(torch.nn, cls)(5, 7, **kw), getattr(fl.nn, cls)(5, 7, **kw)
    assert repr(fm) == repr(tm)
    assert [(k, tuple(v.shape)) for k, v in fm.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in tm.state_dict().items()]
    bound = 1 / np.sqrt(7)
    assert all(float(p.abs().max()) <= bound for p in fm.parameters())
    copy_state(tm, fm)
    shape = (4, 5) if unbatched else ((3, 4, 5) if kw.get("batch_first") else (4, 3, 5))
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    tx, fx = torch.tensor(x, requires_grad=True), fl.tensor(x, requires_grad=True)
    (to, th), (fo, fh) = tm(tx), fm(fx)
    assert_same(fo, to, 2e-6, 2e-6)
    assert_same(first(fh), first(th), 2e-6, 2e-6)
    (to.pow(2).sum() + first(th).sum()).backward()
    (fo.pow(2).sum() + first(fh).sum()).backward()
    assert_same(fx.grad, tx.grad, 1e-5, 1e-5)
    for (name, tp), fp in zip(tm.named_parameters(), fm.parameters()):
        assert_same(fp.grad, tp.grad, 1e-5, 1e-5)


def test_initial_state_and_packed_sequences():
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
    F_rnn = fl.nn.utils.rnn
    tm, fm = torch.nn.LSTM(4, 6, num_layers=2, bidirectional=True), fl.nn.LSTM(4, 6, num_layers=2, bidirectional=True)
    copy_state(tm, fm)
    x = np.random.default_rng(1).standard_normal((5, 3, 4)).astype(np.float32)
    h0 = np.random.default_rng(2).standard_normal((4, 3, 6)).astype(np.float32)
    lengths = [5, 2, 3]
    to, (th, tc) = tm(pack_padded_sequence(torch.tensor(x), lengths, enforce_sorted=False),
                      (torch.tensor(h0), torch.tensor(h0)))
    fo, (fh, fc) = fm(F_rnn.pack_padded_sequence(fl.tensor(x), lengths, enforce_sorted=False),
                      (fl.tensor(h0), fl.tensor(h0)))
    (tp, tl), (fp, flen) = pad_packed_sequence(to, batch_first=True), F_rnn.pad_packed_sequence(fo, batch_first=True)
    assert_same(fp, tp, 2e-6, 2e-6)
    assert_same(fh, th, 2e-6, 2e-6)
    assert_same(fc, tc, 2e-6, 2e-6)
    assert flen.tolist() == tl.tolist()
    np.testing.assert_array_equal(fo.batch_sizes.numpy(), to.batch_sizes.numpy())


def test_sequence_utilities():
    seqs = [np.arange(n * 2, dtype=np.float32).reshape(n, 2) for n in (3, 1, 2)]
    t_seqs, f_seqs = [torch.tensor(s) for s in seqs], [fl.tensor(s) for s in seqs]
    T, F_rnn = torch.nn.utils.rnn, fl.nn.utils.rnn
    assert_same(F_rnn.pad_sequence(f_seqs, batch_first=True, padding_value=-1.0), T.pad_sequence(t_seqs, batch_first=True, padding_value=-1.0), 2e-6, 2e-6)
    assert_same(F_rnn.pad_sequence(f_seqs, padding_side="left"), T.pad_sequence(t_seqs, padding_side="left"), 2e-6, 2e-6)
    tp, fp = T.pack_sequence(t_seqs, enforce_sorted=False), F_rnn.pack_sequence(f_seqs, enforce_sorted=False)
    assert_same(fp.data, tp.data, 2e-6, 2e-6)
    for a, b in zip(F_rnn.unpack_sequence(fp), T.unpack_sequence(tp)):
        assert_same(a, b, 2e-6, 2e-6)


@pytest.mark.parametrize("cls", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cells_match_torch(cls):
    tm, fm = getattr(torch.nn, cls)(4, 5), getattr(fl.nn, cls)(4, 5)
    assert repr(fm) == repr(tm)
    copy_state(tm, fm)
    x = np.random.default_rng(3).standard_normal((2, 4)).astype(np.float32)
    tx, fx = torch.tensor(x, requires_grad=True), fl.tensor(x, requires_grad=True)
    tout, fout = tm(tx), fm(fx)
    assert_same(first(fout), first(tout), 2e-6, 2e-6)
    first(tout).sum().backward()
    first(fout).sum().backward()
    assert_same(fx.grad, tx.grad, 2e-6, 2e-6)
    assert_same(first(fm(fx[0])), first(tm(tx[0])), 2e-6, 2e-6)  # unbatched


@pytest.mark.parametrize("case", ["input_size", "hidden_shape", "proj_too_big", "bad_nonlinearity", "rank"])
def test_errors_match(case):
    def run(m):
        if case == "input_size":
            return lambda: m.nn.GRU(5, 7)(m.zeros(4, 3, 6))
        if case == "hidden_shape":
            return lambda: m.nn.RNN(5, 7)(m.zeros(4, 3, 5), m.zeros(2, 3, 7))
        if case == "proj_too_big":
            return lambda: m.nn.LSTM(5, 7, proj_size=7)
        if case == "bad_nonlinearity":
            return lambda: m.nn.RNN(5, 7, nonlinearity="gelu")
        return lambda: m.nn.LSTM(5, 7)(m.zeros(2, 3, 4, 5))
    want = outcome_type(run(torch))
    assert want is not None
    assert outcome_type(run(fl)) is want
