"""safetensors.torch running on flowlike under mock_torch: save_file/load_file, safe_open (keys, metadata,
slices), save/load of bytes, every dtype flowlike has, and a module's state_dict."""
import numpy as np
import pytest

pytest.importorskip("safetensors")

import flowlike as fl  # noqa: E402
from flowlike.compat import mock_torch  # noqa: E402


def tensors():
    return {"w": fl.arange(12, dtype=fl.float32).reshape(3, 4), "i": fl.tensor([1, -2, 3]), "h": fl.ones(2, dtype=fl.float16),
            "b": fl.tensor([1.5, -2.25], dtype=fl.bfloat16), "m": fl.tensor([True, False]), "e": fl.zeros(0, 3),
            "u": fl.tensor([255, 0], dtype=fl.uint8)}


def same(a, b):
    assert a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape)
    np.testing.assert_array_equal(a.float().numpy(), b.float().numpy())


def test_save_file_load_file_round_trip(tmp_path):
    path = str(tmp_path / "t.safetensors")
    with mock_torch():
        from safetensors.torch import load_file, save_file
        save_file(tensors(), path, metadata={"format": "pt"})
        loaded = load_file(path)
    assert sorted(loaded) == sorted(tensors())
    for k, v in tensors().items():
        same(loaded[k], v)
        assert isinstance(loaded[k], fl.Tensor)


def test_safe_open_keys_metadata_and_slices(tmp_path):
    path = str(tmp_path / "t.safetensors")
    with mock_torch():
        from safetensors import safe_open
        from safetensors.torch import save_file
        save_file(tensors(), path, metadata={"step": "7"})
        with safe_open(path, framework="pt") as f:
            assert sorted(f.keys()) == sorted(tensors()) and f.metadata() == {"step": "7"}
            same(f.get_tensor("w"), tensors()["w"])
            same(f.get_slice("w")[1:3], tensors()["w"][1:3])


def test_save_and_load_bytes_and_a_state_dict():
    with mock_torch():
        import torch
        from safetensors.torch import load, save
        model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Linear(3, 2))
        restored = load(save(model.state_dict()))
        fresh = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Linear(3, 2))
        fresh.load_state_dict(restored)
    for (k, a), (_, b) in zip(model.state_dict().items(), fresh.state_dict().items()):
        same(a, b)


def test_non_contiguous_tensors_are_refused_as_safetensors_does():
    with mock_torch():
        from safetensors.torch import save
        with pytest.raises(ValueError, match="non contiguous"):
            save({"t": fl.ones(3, 4).t()})
