"""The examples give the same losses on flowlike and on torch."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402
from helpers import EXAMPLES, assert_same, load_example  # noqa: E402


def test_quickstart_losses_match_torch():
    quickstart = load_example("quickstart")
    fl_losses, fl_w = quickstart.train(fl, log_every=0)
    t_losses, t_w = quickstart.train(torch, log_every=0)
    np.testing.assert_allclose(fl_losses, t_losses, rtol=1e-5, atol=1e-7)
    assert_same(fl_w, t_w, rtol=1e-5, atol=0)
    assert fl_losses[-1] < fl_losses[0] / 100


def test_train_cnn_losses_match_torch_from_identical_weights():
    example = load_example("train_cnn")
    torch.manual_seed(0)
    init = {k: v.detach().numpy().copy() for k, v in example.build_model(torch).state_dict().items()}
    t_losses, t_accuracy, t_state = example.train(torch, epochs=2, init_state=init, progress=False)
    f_losses, f_accuracy, f_state = example.train(fl, epochs=2, init_state=init, progress=False)
    np.testing.assert_allclose(f_losses, t_losses, rtol=2e-4, atol=2e-5)
    assert abs(f_accuracy - t_accuracy) <= 1 / 128
    for k in t_state:
        np.testing.assert_allclose(f_state[k], t_state[k], rtol=1e-2, atol=1e-3)  # Adam amplifies rounding
    assert f_losses[-1] < f_losses[0]


def test_train_gpt_losses_match_torch_from_identical_weights():
    example = load_example("train_gpt")
    vocab = len(set(example.corpus()))
    torch.manual_seed(0)
    init = {k: v.detach().numpy().copy() for k, v in example.build_model(torch, vocab).state_dict().items()}
    # (no safetensors round trip here: safetensors' native code keeps the first torch module it saw per process,
    # so flowlike's side of it is checked in a process of its own below)
    t_losses, _, t_state = example.train(torch, steps=25, init_state=init, progress=False, checkpoint=False)
    f_losses, _, f_state = example.train(fl, steps=25, init_state=init, progress=False, checkpoint=False)
    np.testing.assert_allclose(f_losses, t_losses, rtol=2e-4, atol=2e-5)
    assert f_losses[-1] < f_losses[0] - 0.5
    for k in t_state:
        np.testing.assert_allclose(f_state[k], t_state[k], rtol=1e-2, atol=1e-3)  # AdamW amplifies rounding


def test_train_gpt_runs_unchanged_under_mock_torch():
    """The unmodified script through `python -m flowlike.compat`: training, the safetensors checkpoint of a model
    with tied weights, and sampling from the restored copy."""
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-m", "flowlike.compat", str(EXAMPLES / "train_gpt.py"), "--steps", "30"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    first, last = (float(v) for v in lines[0].split("loss ")[1].split(" -> "))
    assert lines[0].startswith("flowlike: ") and last < first - 0.5
    assert lines[1].startswith("sample: Beautiful is ")
