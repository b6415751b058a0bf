"""safetensors files move between real torch and flowlike (under mock_torch) unchanged."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")

import flowlike as fl  # noqa: E402
from flowlike.compat import mock_torch  # noqa: E402


def test_torch_written_file_loads_in_flowlike_and_back(tmp_path):
    from safetensors.torch import load_file, save_file
    want = {"w": torch.randn(3, 4), "b": torch.randn(5).to(torch.bfloat16), "i": torch.arange(6).reshape(2, 3)}
    save_file(want, str(tmp_path / "a.safetensors"))
    with mock_torch():  # safetensors.torch was imported above with real torch: the mock imports it afresh
        from safetensors.torch import load_file as fl_load, save_file as fl_save
        got = fl_load(str(tmp_path / "a.safetensors"))
        assert all(isinstance(v, fl.Tensor) for v in got.values())
        fl_save({k: v * 2 for k, v in got.items()}, str(tmp_path / "b.safetensors"))
    from safetensors.torch import load_file as again
    assert again is load_file  # and the real-torch module is back afterwards
    back = load_file(str(tmp_path / "b.safetensors"))
    for k, v in want.items():
        assert str(got[k].dtype) == str(v.dtype)
        np.testing.assert_array_equal(got[k].float().numpy(), v.float().numpy())
        np.testing.assert_array_equal(back[k].float().numpy(), (v * 2).float().numpy())
