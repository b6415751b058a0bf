"""The divergence finder (flowlike.compat.diff): a deliberately perturbed op is found at the right op and line."""
import inspect
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402
from flowlike.compat import diff  # noqa: E402


def step(lib):
    w = lib.randn(8, 5)
    x = lib.randn(4, 8)
    h = (x @ w).tanh()
    y = lib.exp(h) * 0.5
    return (y - h).sum()


def line_of(text):
    lines, start = inspect.getsourcelines(step)
    return start + next(i for i, src in enumerate(lines) if text in src)


def test_identical_runs_do_not_diverge():
    report = diff.find_divergence(step)
    assert not report.diverged, str(report)
    assert report.compared >= 6  # randn, randn, matmul, tanh, exp, mul, sub, sum


def test_perturbed_method_is_found_at_its_line(monkeypatch):
    tanh = fl.Tensor.tanh
    monkeypatch.setattr(fl.Tensor, "tanh", lambda self: tanh(self) + 1e-3)
    report = diff.find_divergence(step)
    d = report.divergence
    assert d is not None and d.name == "tanh"
    assert d.lineno == line_of(".tanh()") and d.filename == os.path.abspath(__file__)
    assert 0.9e-3 < d.max_abs_diff < 1.1e-3
    assert "tanh" in str(report) and "(x @ w).tanh()" in str(report)


def test_perturbed_function_is_found_after_the_ops_that_match(monkeypatch):
    exp = fl.exp
    monkeypatch.setattr(fl, "exp", lambda t: exp(t) * 1.01)
    d = diff.find_divergence(step).divergence
    assert d.name == "exp" and d.lineno == line_of("lib.exp(h)")


def test_missing_op_is_reported_where_flowlike_fails(monkeypatch):
    def broken(t):
        raise AttributeError("torch.exp is not provided by flowlike yet")
    monkeypatch.setattr(fl, "exp", broken)
    report = diff.find_divergence(step)
    assert report.diverged and "AttributeError" in report.divergence.reason
    assert report.divergence.lineno == line_of("lib.exp(h)")


def test_command_line_reports_and_sets_the_exit_code(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("import torch\nw = torch.randn(3, 2)\nprint(float((torch.randn(4, 3) @ w).abs().sum()))\n")
    run = subprocess.run([sys.executable, "-m", "flowlike.compat.diff", str(script)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "no divergence" in run.stdout
    script.write_text("import torch\nx = torch.randn(8)\ny = torch.fft.rfft(x)\n")  # an API flowlike lacks
    run = subprocess.run([sys.executable, "-m", "flowlike.compat.diff", str(script)], capture_output=True, text=True)
    assert run.returncode == 1
    assert "train.py:3" in run.stdout and "rfft" in run.stdout
