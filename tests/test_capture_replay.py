"""The dispatcher is the only door into the kernels: whole training steps recorded at the Tracer key replay through
the boxed calls to eager's losses, gradients, parameters and optimizer state, bit for bit, with no hole in the
program (flowlike.graph.capture; Note [Tracer] in csrc/core/dispatch.h)."""
import importlib.util
import pathlib

import pytest

import flowlike as fl
from flowlike.graph.capture import record, replay_mismatches

nn, F = fl.nn, fl.nn.functional
EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def _example(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class TinyGPT(nn.Module):
    """A GPT block stack with dropout everywhere dropout goes (embeddings, attention, MLP)."""

    def __init__(self, vocab=17, d=32, heads=4, context=12):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Parameter(fl.randn(1, context, d) * 0.02)
        self.drop = nn.Dropout(0.1)
        self.block = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.1, batch_first=True, norm_first=True)
        self.head = nn.Linear(d, vocab)
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(context))

    def forward(self, idx):
        x = self.drop(self.tok(idx) + self.pos[:, :idx.shape[1]])
        return self.head(self.block(x, src_mask=self.mask))


class LSTMTagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(6, 10, num_layers=2, batch_first=True)
        self.out = nn.Linear(10, 3)

    def forward(self, x):
        return self.out(self.lstm(x)[0])


def _setups():
    fl.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 5))
    cnn = _example("train_cnn").build_model(fl)
    gpt, lstm = TinyGPT(), LSTMTagger()
    idx = fl.randint(0, 17, (3, 12))
    return {
        "mlp-sgd": (mlp, fl.optim.SGD(mlp.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4),
                    lambda m: F.cross_entropy(m(fl.randn(8, 20)), fl.randint(0, 5, (8,)))),
        "cnn-batchnorm-adam": (cnn, fl.optim.Adam(cnn.parameters(), lr=1e-3),
                               lambda m: F.cross_entropy(m(fl.randn(6, 1, 12, 12)), fl.randint(0, 3, (6,)))),
        "gpt-dropout-adamw": (gpt, fl.optim.AdamW(gpt.parameters(), lr=1e-3),
                              lambda m: F.cross_entropy(m(idx).flatten(0, 1), idx.roll(-1, 1).flatten())),
        "lstm-sgd": (lstm, fl.optim.SGD(lstm.parameters(), lr=0.05),
                     lambda m: F.mse_loss(m(fl.randn(4, 7, 6)), fl.randn(4, 7, 3))),
    }


def _state(model, opt, loss):
    named = [("loss", loss)]
    for name, p in model.named_parameters():
        named += [(name, p), (name + ".grad", p.grad)]
        named += [(f"{name}.{k}", v) for k, v in opt.state.get(p, {}).items() if isinstance(v, fl.Tensor)]
    return named + [(name, b) for name, b in model.named_buffers()]


@pytest.mark.parametrize("name", ["mlp-sgd", "cnn-batchnorm-adam", "gpt-dropout-adamw", "lstm-sgd"])
def test_training_steps_replay_bit_for_bit(name):
    model, opt, loss_of = _setups()[name]

    def step():
        opt.zero_grad()
        loss = loss_of(model)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss

    for i in range(2):  # the first step creates the optimizer state inside the capture, the second reads it
        problems = replay_mismatches(step, lambda loss: _state(model, opt, loss))
        assert not problems, f"step {i}:\n" + "\n".join(problems)


def test_program_records_forward_backward_and_update():
    w = fl.randn(4, 3, requires_grad=True)
    opt = fl.optim.SGD([w], lr=0.5)

    def step():
        opt.zero_grad()
        (fl.randn(2, 4) @ w).tanh().sum().backward()
        opt.step()

    _, program, _ = record(step)
    ops = program.ops
    assert not program.holes
    assert "mm" in ops and "tanh" in ops and "normal_" in ops  # forward, with the random input drawn in it
    assert any(name.startswith("_fused_sgd") for name in ops)  # the update
    assert ops.index("tanh") < ops.index("mm", ops.index("tanh"))  # backward's product comes after the forward
    assert [t is w for t in program.inputs].count(True) == 1


@pytest.mark.parametrize("fn, name", [(lambda x: fl.nn.functional.gelu(x), "gelu"),
                                      (lambda x: fl.nn.functional.gelu(x, approximate="tanh"), "gelu_tanh"),
                                      (lambda x: fl.nn.functional.leaky_relu(x, 0.2), "leaky_relu"),
                                      (lambda x: fl.nn.functional.silu(x), "silu")])
def test_activations_are_named_ops_in_programs(fn, name):
    x = fl.randn(5, requires_grad=True)
    _, program, _ = record(lambda: fn(x).sum().backward())
    assert name in program.ops and name + "_backward" in program.ops
    assert not any(op.startswith("activation") for op in program.ops)


def _quantile_step():
    x, q = fl.randn(4, 7, requires_grad=True), fl.tensor([0.25, 0.5, 0.9], requires_grad=True)
    r = fl.quantile(x, q, dim=1)
    r.sum().backward()
    return [("result", r), ("grad x", x.grad), ("grad q", q.grad)]


def _overlapping_view_double_backward():
    y = fl.randn(6, requires_grad=True)
    v = y.as_strided((3, 3), (1, 1))  # windows that share elements
    (g,) = fl.autograd.grad((v * v).sum(), y, create_graph=True)
    (g * g).sum().backward()
    return [("grad", g), ("grad of grad", y.grad)]


def _inplace_keeps_old_value():
    x = fl.randn(3, 4, requires_grad=True)
    y = (x * 0.5).sigmoid_()  # sigmoid_'s backward reads the result; acos_ below reads the value before the write
    z = (y * 1).acos_()
    z.sum().backward()
    return [("z", z), ("grad", x.grad)]


@pytest.mark.parametrize("step", [_quantile_step, _overlapping_view_double_backward, _inplace_keeps_old_value],
                         ids=["quantile", "overlapping_view_double_backward", "inplace_old_value"])
def test_tensors_made_inside_kernels_for_backward_are_recorded(step):
    # autograd kernels that keep a tensor for the backward (a copy before an in-place write, quantile's weights)
    # and backward formulas that build index tensors make them through recorded ops: no hole, exact replay
    assert replay_mismatches(step, lambda named: named) == []


def test_hole_is_reported():
    # a tensor built during the capture outside the dispatcher (here: wrapping numpy memory without lift_fresh)
    import numpy as np
    a = fl.ones(3)

    def step():
        return a + fl._C._from_numpy_unlifted(np.arange(3, dtype=np.float32))

    _, program, _ = record(step)
    assert len(program.holes) == 1 and "add" in program.holes[0]
    with pytest.raises(RuntimeError, match="holes"):
        program.replay()


def test_host_data_enters_as_a_constant():
    a = fl.ones(3)
    out, program, _ = record(lambda: a * fl.tensor([1.0, 2.0, 3.0]))
    assert not program.holes and program.num_constants == 1
    assert program.replay()[program.value_of(out)].tolist() == [1.0, 2.0, 3.0]


def test_missing_kernel_is_an_error_naming_op_and_key():
    ops = {name: keys for name, _, keys in fl._C._op_registry()}
    assert "Autograd(fallthrough)" in ops["eq"] and "Autograd" in ops["add"]
    # Every op that takes tensors either records its gradient or declares it has none. The exceptions are the
    # backward kernels: their own derivatives are composite formulas, so reaching one with grad mode on and an
    # input that requires grad is a bug, and it raises instead of silently dropping the gradient.
    undeclared = [name for name, keys in ops.items() if "CPU" in keys and not any(k.startswith("Autograd") for k in keys)
                  and name not in _NO_TENSOR_INPUTS and not name.endswith("_backward")]
    assert not undeclared, f"ops taking tensors with neither an Autograd kernel nor a fallthrough: {undeclared}"
    g = fl.randn(3, 4, requires_grad=True)
    with pytest.raises(NotImplementedError, match="softmax_backward"):
        fl._C._call_op("softmax_backward", g, fl.randn(3, 4), 1)


# factories take no tensor, so the Autograd key never applies to them
_NO_TENSOR_INPUTS = {"empty", "empty_strided", "scalar_tensor", "randperm"}
