"""flowlike.compile (torch.compile) against eager flowlike and eager torch: the examples with their model compiled
(`model.compile()`, torch's in-place form, so their state_dict loading is unchanged) and the models of the
graph-mode parity tests with `model = torch.compile(model)` in an ordinary training loop (backward and optimizer
outside the compiled call), 20 steps: losses and parameters bit for bit equal to flowlike eager and within float32
tolerance of torch; each model captured once (forward and backward programs), asserted through capture counters.
The unmodified GPT example also runs under `python -m flowlike.compat` with torch.compile added."""
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402
from helpers import EXAMPLES, copy_state, load_example  # noqa: E402
from test_graph_parity import CASES  # noqa: E402


def compiled_builds(example):
    """Makes example.build_model compile each model it builds for flowlike; returns the list of those models."""
    built, build = [], example.build_model

    def build_compiled(lib, *args, **kwargs):
        model = build(lib, *args, **kwargs)
        if lib is fl:
            model.compile()
            built.append(model)
        return model
    example.build_model = build_compiled
    return built


def test_train_cnn_compiled_matches_eager_and_torch():
    example = load_example("train_cnn")
    torch.manual_seed(0)
    init = {k: v.detach().numpy().copy() for k, v in example.build_model(torch).state_dict().items()}
    e_losses, e_accuracy, e_state = example.train(fl, epochs=2, init_state=init, progress=False)
    t_losses, _, _ = example.train(torch, epochs=2, init_state=init, progress=False)
    built = compiled_builds(example)
    c_losses, c_accuracy, c_state = example.train(fl, epochs=2, init_state=init, progress=False)
    assert c_losses == e_losses and c_accuracy == e_accuracy
    for k in e_state:
        np.testing.assert_array_equal(c_state[k], e_state[k], err_msg=k)
    np.testing.assert_allclose(c_losses, t_losses, rtol=2e-4, atol=2e-5)
    trained, restored = built
    assert trained.forward.captures == 1  # one training program pair for all 32 steps
    assert restored.forward.captures == 1  # the inference of the restored copy


def test_train_gpt_compiled_matches_eager_and_torch():
    example = load_example("train_gpt")
    vocab = len(set(example.corpus()))
    torch.manual_seed(0)
    init = {k: v.detach().numpy().copy() for k, v in example.build_model(torch, vocab).state_dict().items()}
    e_losses, _, e_state = example.train(fl, steps=20, init_state=init, progress=False, checkpoint=False)
    t_losses, _, _ = example.train(torch, steps=20, init_state=init, progress=False, checkpoint=False)
    built = compiled_builds(example)
    c_losses, _, c_state = example.train(fl, steps=20, init_state=init, progress=False, checkpoint=False)
    assert c_losses == e_losses
    for k in e_state:
        np.testing.assert_array_equal(c_state[k], e_state[k], err_msg=k)
    np.testing.assert_allclose(c_losses, t_losses, rtol=2e-4, atol=2e-5)
    code = built[0].forward
    assert code.captures == 1 and next(iter(code.entries.values())).backward is not None


def test_train_gpt_with_torch_compile_runs_under_mock_torch(tmp_path):
    """The example's file with one line added (`model.compile()`, torch's in-place form, after the model is built)
    run by `python -m flowlike.compat`: it trains compiled, then checkpoints and samples with the same module
    (`model = torch.compile(model)` would make the checkpoint's keys `_orig_mod.*`, in torch as here)."""
    source = (EXAMPLES / "train_gpt.py").read_text()
    anchor = "    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]\n"
    assert anchor in source
    patched = source.replace(anchor, "    model.compile()\n" + anchor)
    script = tmp_path / "train_gpt_compiled.py"
    script.write_text(patched)
    out = subprocess.run([sys.executable, "-m", "flowlike.compat", str(script), "--steps", "30"],
                         capture_output=True, text=True, timeout=600, cwd=EXAMPLES)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    first, last = (float(v) for v in lines[0].split("loss ")[1].split(" -> "))
    assert lines[0].startswith("flowlike: ") and last < first - 0.5


@pytest.mark.parametrize("name", sorted(CASES))
def test_compiled_training_matches_torch_and_eager(name):
    make, make_opt, shape = CASES[name]
    t_model, f_model, e_model = make(torch), make(fl), make(fl)
    copy_state(t_model, f_model)
    copy_state(t_model, e_model)
    t_opt, f_opt, e_opt = (make_opt(lib, m.parameters()) for lib, m in ((torch, t_model), (fl, f_model), (fl, e_model)))
    c_model = fl.compile(f_model)
    rng = np.random.default_rng(0)
    for i in range(20):
        x = rng.standard_normal((4, *shape)).astype(np.float32)
        y = rng.integers(0, 4, (4,) + ((shape[0],) if name.startswith("gpt") else ()))
        losses = []
        for lib, model, opt in ((torch, t_model, t_opt), (fl, c_model, f_opt), (fl, e_model, e_opt)):
            loss = lib.nn.functional.cross_entropy(model(lib.from_numpy(x)).reshape(-1, 4),
                                                   lib.from_numpy(y).reshape(-1))
            loss.backward()
            losses.append(loss.item())
            if lib is fl and model is c_model:
                grads = [p.grad.clone() for p in f_model.parameters()]
            elif lib is fl:
                for g, p in zip(grads, e_model.parameters()):
                    assert fl.equal(g, p.grad), f"step {i}: compiled and eager gradients differ"
            opt.step()
            opt.zero_grad()
        assert losses[1] == losses[2], f"step {i}"
        np.testing.assert_allclose(losses[1], losses[0], rtol=2e-4, atol=1e-5, err_msg=f"step {i}")
    assert c_model._compiled.captures == 1
    for (name_, t_p), f_p in zip(t_model.state_dict().items(), f_model.state_dict().values()):
        np.testing.assert_allclose(f_p.numpy(), t_p.numpy(), rtol=1e-3, atol=1e-4, err_msg=name_)
