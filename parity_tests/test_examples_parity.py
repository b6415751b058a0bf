"""The examples give the same losses on flowlike and on torch."""
import importlib.util
import pathlib

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def load(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_quickstart_losses_match_torch():
    quickstart = load("quickstart")
    fl_losses, fl_w = quickstart.train(fl, log_every=0)
    t_losses, t_w = quickstart.train(torch, log_every=0)
    np.testing.assert_allclose(fl_losses, t_losses, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(fl_w.numpy(), t_w.numpy(), rtol=1e-5)
    assert fl_losses[-1] < fl_losses[0] / 100
