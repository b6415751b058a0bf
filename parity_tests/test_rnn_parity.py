"""RNN, LSTM, GRU, their cells and nn.utils.rnn against torch: reprs, state_dict keys, outputs, final states and
gradients after loading torch's weights, packed sequences, and errors."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402
from helpers import outcome_type  # noqa: E402


def copy_weights(t_module, f_module):
    f_module.load_state_dict({k: fl.from_numpy(v.detach().numpy().copy()) for k, v in t_module.state_dict().items()})


def first(state):
    return state[0] if isinstance(state, tuple) else state


def close(a, b, tol=2e-6):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


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
    copy_weights(tm, fm)
    shape = (4, 5) if unbatched else ((3, 4, 5) if kw.get("batch_first") else (4, 3, 5))
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    tx, fx = torch.tensor(x, requires_grad=True), fl.tensor(x, requires_grad=True)
    (to, th), (fo, fh) = tm(tx), fm(fx)
    close(fo, to)
    close(first(fh), first(th))
    (to.pow(2).sum() + first(th).sum()).backward()
    (fo.pow(2).sum() + first(fh).sum()).backward()
    close(fx.grad, tx.grad, 1e-5)
    for (name, tp), fp in zip(tm.named_parameters(), fm.parameters()):
        close(fp.grad, tp.grad, 1e-5)


def test_initial_state_and_packed_sequences():
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
    F_rnn = fl.nn.utils.rnn
    tm, fm = torch.nn.LSTM(4, 6, num_layers=2, bidirectional=True), fl.nn.LSTM(4, 6, num_layers=2, bidirectional=True)
    copy_weights(tm, fm)
    x = np.random.default_rng(1).standard_normal((5, 3, 4)).astype(np.float32)
    h0 = np.random.default_rng(2).standard_normal((4, 3, 6)).astype(np.float32)
    lengths = [5, 2, 3]
    to, (th, tc) = tm(pack_padded_sequence(torch.tensor(x), lengths, enforce_sorted=False),
                      (torch.tensor(h0), torch.tensor(h0)))
    fo, (fh, fc) = fm(F_rnn.pack_padded_sequence(fl.tensor(x), lengths, enforce_sorted=False),
                      (fl.tensor(h0), fl.tensor(h0)))
    (tp, tl), (fp, flen) = pad_packed_sequence(to, batch_first=True), F_rnn.pad_packed_sequence(fo, batch_first=True)
    close(fp, tp)
    close(fh, th)
    close(fc, tc)
    assert flen.tolist() == tl.tolist()
    np.testing.assert_array_equal(fo.batch_sizes.numpy(), to.batch_sizes.numpy())


def test_sequence_utilities():
    seqs = [np.arange(n * 2, dtype=np.float32).reshape(n, 2) for n in (3, 1, 2)]
    t_seqs, f_seqs = [torch.tensor(s) for s in seqs], [fl.tensor(s) for s in seqs]
    T, F_rnn = torch.nn.utils.rnn, fl.nn.utils.rnn
    close(F_rnn.pad_sequence(f_seqs, batch_first=True, padding_value=-1.0),
          T.pad_sequence(t_seqs, batch_first=True, padding_value=-1.0))
    close(F_rnn.pad_sequence(f_seqs, padding_side="left"), T.pad_sequence(t_seqs, padding_side="left"))
    tp, fp = T.pack_sequence(t_seqs, enforce_sorted=False), F_rnn.pack_sequence(f_seqs, enforce_sorted=False)
    close(fp.data, tp.data)
    for a, b in zip(F_rnn.unpack_sequence(fp), T.unpack_sequence(tp)):
        close(a, b)


@pytest.mark.parametrize("cls", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cells_match_torch(cls):
    tm, fm = getattr(torch.nn, cls)(4, 5), getattr(fl.nn, cls)(4, 5)
    assert repr(fm) == repr(tm)
    copy_weights(tm, fm)
    x = np.random.default_rng(3).standard_normal((2, 4)).astype(np.float32)
    tx, fx = torch.tensor(x, requires_grad=True), fl.tensor(x, requires_grad=True)
    tout, fout = tm(tx), fm(fx)
    close(first(fout), first(tout))
    first(tout).sum().backward()
    first(fout).sum().backward()
    close(fx.grad, tx.grad)
    close(first(fm(fx[0])), first(tm(tx[0])))  # unbatched


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
