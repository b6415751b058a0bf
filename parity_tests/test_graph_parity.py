"""nn.Graph training steps against torch eager from identical weights: an MLP with AdamW, a CNN with BatchNorm
and SGD momentum, and the GPT-mini of tests/test_capture_replay.py without dropout (dropout draws differ between
the libraries' generators), 20 steps each; losses and final parameters within float32 tolerance."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402
from helpers import copy_state  # noqa: E402


def mlp(lib):
    return lib.nn.Sequential(lib.nn.Linear(12, 32), lib.nn.GELU(), lib.nn.Linear(32, 4))


def cnn(lib):
    n = lib.nn
    return n.Sequential(n.Conv2d(2, 4, 3, padding=1), n.BatchNorm2d(4), n.ReLU(), n.Flatten(), n.Linear(4 * 6 * 6, 4))


def gpt(lib):
    n = lib.nn
    layer = n.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True, norm_first=True)
    return n.Sequential(n.Linear(8, 16), layer, n.Linear(16, 4))


CASES = {
    "mlp_adamw": (mlp, lambda lib, p: lib.optim.AdamW(p, lr=1e-2), (12,)),
    "cnn_batchnorm_sgd": (cnn, lambda lib, p: lib.optim.SGD(p, lr=0.05, momentum=0.9), (2, 6, 6)),
    # (SGD: the key bias's gradient is zero up to rounding, which Adam's normalization would blow up to lr-sized
    # steps that differ between any two implementations)
    "gpt_block_sgd": (gpt, lambda lib, p: lib.optim.SGD(p, lr=0.05, momentum=0.9), (5, 8)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_graph_training_matches_torch(name):
    make, make_opt, shape = CASES[name]
    t_model, f_model = make(torch), make(fl)
    copy_state(t_model, f_model)
    t_opt, f_opt = make_opt(torch, t_model.parameters()), make_opt(fl, f_model.parameters())

    class Step(fl.nn.Graph):
        def __init__(self):
            super().__init__()
            self.model = f_model
            self.add_optimizer(f_opt)

        def build(self, x, y):
            out = self.model(x)
            loss = fl.nn.functional.cross_entropy(out.reshape(-1, 4), y.reshape(-1))
            loss.backward()
            f_opt.step()
            f_opt.zero_grad()
            return loss

    step = Step()
    rng = np.random.default_rng(0)
    for i in range(20):
        x = rng.standard_normal((4, *shape)).astype(np.float32)
        y = rng.integers(0, 4, (4,) + ((shape[0],) if name.startswith("gpt") else ()))
        t_loss = torch.nn.functional.cross_entropy(t_model(torch.from_numpy(x)).reshape(-1, 4),
                                                   torch.from_numpy(y).reshape(-1))
        t_loss.backward()
        t_opt.step()
        t_opt.zero_grad()
        f_loss = step(fl.from_numpy(x), fl.from_numpy(y))
        np.testing.assert_allclose(f_loss.item(), t_loss.item(), rtol=2e-4, atol=1e-5, err_msg=f"step {i}")
    assert len(step._plans) == 2  # captured at steps 0 and 1, replayed after
    for (name_, t_p), f_p in zip(t_model.state_dict().items(), f_model.state_dict().values()):
        np.testing.assert_allclose(f_p.numpy(), t_p.numpy(), rtol=1e-3, atol=1e-4, err_msg=name_)
