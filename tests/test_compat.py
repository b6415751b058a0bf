"""The one-line switch: mock_torch, `python -m flowlike.compat`, and the torch.* namespaces flowlike answers."""
import math
import pickle
import subprocess
import sys
import textwrap
import types
import warnings

import numpy as np
import pytest

import flowlike
from flowlike.compat import mock_torch as mock_module  # the module; calling it gives the context manager
from flowlike.compat import disable, enable, is_enabled, mock_torch


@pytest.fixture(autouse=True)
def isolated_torch_modules():
    """Each test starts unmocked and leaves sys.modules' torch entries (a real torch included) as it found them."""
    saved = {name: mod for name, mod in sys.modules.items() if name == "torch" or name.startswith("torch.")}
    saved_meta_path = list(sys.meta_path)
    assert not is_enabled()
    yield
    while is_enabled():
        disable()
    for name in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
        del sys.modules[name]
    sys.modules.update(saved)
    sys.meta_path[:] = saved_meta_path


def _torch_entries():
    return {name: mod for name, mod in sys.modules.items() if name == "torch" or name.startswith("torch.")}


def test_import_torch_gives_flowlike():
    with mock_torch():
        import torch
        import torch.backends.cudnn as cudnn
        import torch.cuda
        from torch import testing
        from torch.testing import assert_close
        assert torch is flowlike
        assert torch.cuda is flowlike.cuda
        assert cudnn is flowlike.backends.cudnn
        assert testing is flowlike.testing and assert_close is flowlike.testing.assert_close
        assert sys.modules["torch.backends.cudnn"] is flowlike.backends.cudnn
        assert (torch.ones(3) * 2).tolist() == [2.0, 2.0, 2.0]
    # flowlike's own module identity is untouched by being imported under the torch name
    assert flowlike.__spec__.name == "flowlike" and flowlike.backends.__spec__.name == "flowlike.backends"
    assert flowlike.__name__ == "flowlike"


def test_missing_submodule_raises_clear_import_error():
    with mock_torch():
        with pytest.raises(ImportError, match=r"torch\.definitely_missing_submodule is not provided by flowlike yet "
                                              r"\(flowlike\.definitely_missing_submodule does not exist\)"):
            import torch.definitely_missing_submodule  # noqa: F401
        with pytest.raises(ModuleNotFoundError, match=r"torch\.backends\.nope is not provided by flowlike yet"):
            import torch.backends.nope  # noqa: F401
        with pytest.raises(ImportError, match="cannot import name 'nope'"):
            from torch.cuda import nope  # noqa: F401


def test_third_party_module_imported_inside_block_sees_flowlike(tmp_path, monkeypatch):
    (tmp_path / "thirdparty_uses_torch.py").write_text(textwrap.dedent("""
        import torch
        import torch.cuda as tc
        DEVICE = "cuda" if tc.is_available() else "cpu"
        RESULT = (torch.arange(4) * 3).tolist()
        TORCH = torch
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        with mock_torch():
            import thirdparty_uses_torch as mod
        assert mod.TORCH is flowlike
        assert mod.DEVICE == "cpu" and mod.RESULT == [0, 3, 6, 9]
    finally:
        sys.modules.pop("thirdparty_uses_torch", None)


def test_disable_restores_previous_torch_entries_exactly():
    fake_torch, fake_sub = types.ModuleType("torch"), types.ModuleType("torch.fake_sub")
    for name in list(_torch_entries()):
        del sys.modules[name]
    sys.modules["torch"], sys.modules["torch.fake_sub"] = fake_torch, fake_sub
    with mock_torch():
        import torch
        assert torch is flowlike
        assert "torch.fake_sub" not in sys.modules
        import torch.cuda  # noqa: F401
    assert _torch_entries() == {"torch": fake_torch, "torch.fake_sub": fake_sub}
    import torch
    assert torch is fake_torch


def test_disable_leaves_no_torch_entries_when_none_were_loaded():
    for name in list(_torch_entries()):
        del sys.modules[name]
    with mock_torch():
        import torch.backends.mps  # noqa: F401
        assert set(_torch_entries()) >= {"torch", "torch.backends", "torch.backends.mps"}
    assert _torch_entries() == {}
    assert mock_module._finder not in sys.meta_path


def test_enable_disable_are_reference_counted():
    fake_torch = types.ModuleType("torch")
    for name in list(_torch_entries()):
        del sys.modules[name]
    sys.modules["torch"] = fake_torch
    enable()
    enable()
    assert is_enabled() and sys.meta_path.count(mock_module._finder) == 1
    disable()
    assert is_enabled()
    import torch
    assert torch is flowlike
    disable()
    assert not is_enabled() and _torch_entries() == {"torch": fake_torch}
    del sys.modules["torch"]
    disable()  # one too many is a no-op
    assert not is_enabled()
    with mock_torch():
        with mock_torch():
            pass
        import torch
        assert torch is flowlike
    assert not is_enabled()


def test_disable_runs_when_the_block_raises():
    with pytest.raises(ValueError):
        with mock_torch():
            raise ValueError("boom")
    assert not is_enabled() and mock_module._finder not in sys.meta_path


def test_mock_torch_as_decorator():
    @mock_torch()
    def load():
        import torch
        return torch

    assert load() is flowlike and not is_enabled()


def _run_compat(tmp_path, *args):
    return subprocess.run([sys.executable, "-m", "flowlike.compat", *args], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)


def test_python_m_flowlike_compat_runs_a_script(tmp_path):
    (tmp_path / "helper_lib.py").write_text("import torch\nNAME = torch.__name__\n")
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent("""
        import sys
        import torch
        import helper_lib
        x = torch.tensor([1.0, 2.0, 3.0])
        print(torch.__name__, helper_lib.NAME, sys.argv[1:], (x * x).sum().item() if hasattr(x, "sum")
              else sum((x * x).tolist()), __name__)
    """))
    proc = _run_compat(tmp_path, str(script), "--lr", "0.1")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["flowlike", "flowlike", "['--lr',", "'0.1']", "14.0", "__main__"]


def test_python_m_flowlike_compat_runs_a_module_and_propagates_errors(tmp_path):
    (tmp_path / "entry_mod.py").write_text("import sys, torch\nprint(torch.__name__, sys.argv[1:])\n")
    proc = _run_compat(tmp_path, "-m", "entry_mod", "x")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "flowlike ['x']"
    (tmp_path / "bad.py").write_text("import torch.definitely_missing_submodule\n")
    proc = _run_compat(tmp_path, "bad.py")
    assert proc.returncode != 0
    assert "torch.definitely_missing_submodule is not provided by flowlike yet" in proc.stderr
    assert _run_compat(tmp_path).returncode == 2
    proc = _run_compat(tmp_path, "-c", "import sys, torch; print(torch.__name__, sys.argv)", "a")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "flowlike ['-c', 'a']"


# ---- the flowlike namespace ------------------------------------------------------------------------------------

def test_missing_attribute_message_and_hasattr():
    with pytest.raises(AttributeError, match=r"module 'flowlike' has no attribute 'definitely_not_a_torch_name': "
                                             r"torch\.definitely_not_a_torch_name is not provided by flowlike yet"):
        flowlike.definitely_not_a_torch_name
    assert not hasattr(flowlike, "definitely_not_a_torch_name")
    assert getattr(flowlike, "definitely_not_a_torch_name", 42) == 42
    assert not hasattr(flowlike, "__all__") or isinstance(flowlike.__all__, list)
    with pytest.raises(ImportError):
        from flowlike import definitely_not_a_torch_name  # noqa: F401


def test_submodules_load_on_attribute_access():
    assert flowlike.compat.mock_torch is mock_torch


def test_pickling_still_works():
    assert pickle.loads(pickle.dumps(flowlike.Size([2, 3]))) == flowlike.Size([2, 3])
    assert pickle.loads(pickle.dumps(flowlike.float32)) == flowlike.float32
    assert pickle.loads(pickle.dumps(flowlike.testing.assert_close)) is flowlike.testing.assert_close


def test_cuda_reports_no_device():
    cuda = flowlike.cuda
    assert cuda.is_available() is False and cuda.device_count() == 0 and cuda.is_bf16_supported() is False
    assert cuda.manual_seed(0) is None and cuda.manual_seed_all(0) is None and cuda.synchronize() is None
    assert cuda.memory_allocated() == 0 and cuda.max_memory_allocated() == 0 and cuda.memory_reserved() == 0
    cuda.empty_cache()
    cuda.reset_peak_memory_stats()
    with pytest.raises(AssertionError, match="not compiled with CUDA"):
        cuda.current_device()
    with pytest.raises(AssertionError, match="not compiled with CUDA"):
        cuda.get_device_name(0)
    with pytest.raises(RuntimeError, match="torch.cuda.Stream requires CUDA support"):
        cuda.Stream()
    with pytest.raises(AttributeError, match=r"torch\.cuda\.jiterator is not provided by flowlike yet"):
        cuda.jiterator
    assert not hasattr(cuda, "jiterator")


def test_cuda_amp_disables_itself():
    class Optimizer:
        steps = 0

        def step(self):
            self.steps += 1

    with pytest.warns(UserWarning, match="CUDA is not available"):
        scaler = flowlike.cuda.amp.GradScaler()
    loss, opt = flowlike.tensor(2.0), Optimizer()
    assert scaler.scale(loss) is loss and scaler.is_enabled() is False and scaler.get_scale() == 1.0
    scaler.unscale_(opt)
    scaler.step(opt)
    scaler.update()
    assert opt.steps == 1 and scaler.state_dict() == {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        flowlike.cuda.amp.GradScaler(enabled=False)
        with flowlike.cuda.amp.autocast(enabled=False):
            pass
    with pytest.warns(UserWarning, match="Disabling autocast"):
        with flowlike.cuda.amp.autocast():
            pass
    with pytest.warns(UserWarning, match="Disabling autocast"):
        double = flowlike.cuda.amp.autocast()(lambda x: 2 * x)
    assert double(3) == 6
    with mock_torch():
        from torch.cuda.amp import GradScaler, autocast  # noqa: F401
        assert GradScaler is flowlike.cuda.amp.GradScaler


def test_backends_flags(monkeypatch):
    b = flowlike.backends
    for name in ("benchmark", "deterministic", "enabled"):
        monkeypatch.setattr(b.cudnn, name, getattr(b.cudnn, name))
    assert b.cudnn.enabled is True and b.cudnn.benchmark is False and b.cudnn.is_available() is False
    b.cudnn.benchmark, b.cudnn.deterministic = True, True
    assert flowlike.backends.cudnn.benchmark and flowlike.backends.cudnn.deterministic
    with b.cudnn.flags(enabled=False, benchmark=False):
        assert b.cudnn.enabled is False and b.cudnn.benchmark is False
    assert b.cudnn.enabled is True and b.cudnn.benchmark is True
    assert b.mps.is_available() is False and b.mps.is_built() is False
    assert b.cuda.is_built() is False and b.openmp.is_available() is True
    assert isinstance(b.cpu.get_cpu_capability(), str)


def test_determinism_and_matmul_precision():
    assert flowlike.are_deterministic_algorithms_enabled() is False
    try:
        flowlike.use_deterministic_algorithms(True, warn_only=True)
        assert flowlike.are_deterministic_algorithms_enabled() is True
        assert flowlike.is_deterministic_algorithms_warn_only_enabled() is True
        with pytest.raises(TypeError):
            flowlike.use_deterministic_algorithms("yes")
    finally:
        flowlike.use_deterministic_algorithms(False)
    assert flowlike.get_float32_matmul_precision() == "highest"
    try:
        flowlike.set_float32_matmul_precision("high")
        assert flowlike.get_float32_matmul_precision() == "high" and flowlike.backends.cuda.matmul.allow_tf32
        with pytest.warns(UserWarning, match="bogus is not one of"):
            flowlike.set_float32_matmul_precision("bogus")
        assert flowlike.get_float32_matmul_precision() == "high"
    finally:
        flowlike.set_float32_matmul_precision("highest")


def test_jit_returns_input_unchanged_with_one_warning_and_compile_compiles(monkeypatch):
    monkeypatch.setattr(flowlike.jit, "_warned", set())

    def f(x):
        return x * 2

    with pytest.warns(UserWarning, match="torch.jit.script is not implemented by flowlike yet"):
        assert flowlike.jit.script(f) is f
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert flowlike.jit.script(f) is f  # warned once only
    with pytest.warns(UserWarning, match="torch.jit.trace"):
        assert flowlike.jit.trace(f, (flowlike.ones(2),)) is f
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled = flowlike.compile(f)  # flowlike's graph mode (tests/test_compile.py), without a warning
    assert compiled is not f and compiled.__wrapped__ is f
    assert flowlike.equal(compiled(flowlike.ones(2)), f(flowlike.ones(2)))
    assert flowlike.compile(mode="max-autotune")(f).__wrapped__ is f
    assert flowlike.compile(f, disable=True) is f

    @flowlike.compile
    def g(x):
        return x + 1

    assert g(1) == 2
    with pytest.raises(AssertionError, match="A callable function is expected"):
        flowlike.compile(3)
    with pytest.raises(AttributeError, match=r"torch\.jit\.load is not provided by flowlike yet"):
        flowlike.jit.load
    assert flowlike.jit.is_scripting() is False and flowlike.jit.ignore(f) is f and flowlike.jit.ignore()(f) is f


# ---- torch.testing.assert_close --------------------------------------------------------------------------------

assert_close = flowlike.testing.assert_close


def test_assert_close_passes_within_default_tolerances():
    a = flowlike.tensor([1.0, 2.0, 3.0])
    assert_close(a, a + 1e-6)
    assert_close(a.double(), a.double() + 1e-8)
    assert_close(flowlike.tensor([1, 2]), flowlike.tensor([1, 2]))
    assert_close([a, {"k": (1, 2.0)}], [a.clone(), {"k": (1, 2.0)}])
    assert_close(None, None)
    assert_close(flowlike.tensor([math.inf, -math.inf]), flowlike.tensor([math.inf, -math.inf]))
    assert_close(flowlike.tensor([math.nan, 1.0]), flowlike.tensor([math.nan, 1.0]), equal_nan=True)
    assert_close(flowlike.tensor([1.0]), flowlike.tensor([1.0], dtype=flowlike.float64), check_dtype=False)
    assert_close(flowlike.tensor([1.0]), flowlike.tensor([1.05]), rtol=0.1, atol=0.0)


def test_assert_close_failure_message_like_torch():
    with pytest.raises(AssertionError) as info:
        assert_close(flowlike.tensor([[1.0, 2.0], [3.0, 4.0]]), flowlike.tensor([[1.0, 2.0], [3.0, 5.0]]))
    assert str(info.value) == ("Tensor-likes are not close!\n\nMismatched elements: 1 / 4 (25.0%)\n"
                               "Greatest absolute difference: 1.0 at index (1, 1) (up to 1e-05 allowed)\n"
                               "Greatest relative difference: 0.20000000298023224 at index (1, 1) "
                               "(up to 1.3e-06 allowed)")
    with pytest.raises(AssertionError) as info:
        assert_close(flowlike.tensor([1, 2, 3]), flowlike.tensor([1, 5, 3]))
    assert str(info.value) == ("Tensor-likes are not equal!\n\nMismatched elements: 1 / 3 (33.3%)\n"
                               "Greatest absolute difference: 3 at index (1,)\n"
                               "Greatest relative difference: 0.6000000238418579 at index (1,)")
    with pytest.raises(AssertionError) as info:
        assert_close(1.0, 1.1)
    assert str(info.value) == ("Scalars are not close!\n\nExpected 1.1 but got 1.0.\n"
                               "Absolute difference: 0.10000000000000009 (up to 1e-07 allowed)\n"
                               "Relative difference: 0.09090909090909098 (up to 1e-07 allowed)")


def test_assert_close_tolerance_depends_on_dtype():
    a = flowlike.tensor([1.0, 2.0])
    assert_close(a.half(), (a + 5e-4).half())
    with pytest.raises(AssertionError, match="up to 1.3e-06 allowed"):
        assert_close(a, a + 5e-4)
    with pytest.raises(AssertionError, match="up to 1e-07 allowed"):
        assert_close(a.double(), a.double() + 1e-5)


def test_assert_close_attribute_and_structure_failures():
    with pytest.raises(AssertionError, match="The values for attribute 'dtype' do not match"):
        assert_close(flowlike.tensor([1.0]), flowlike.tensor([1.0], dtype=flowlike.float64))
    with pytest.raises(AssertionError, match="The values for attribute 'shape' do not match"):
        assert_close(flowlike.zeros(2), flowlike.zeros(3))
    with pytest.raises(AssertionError, match="Tensor-likes are not close"):
        assert_close(flowlike.tensor([math.nan]), flowlike.tensor([math.nan]))
    with pytest.raises(AssertionError, match=r"The length of the sequences mismatch: 2 != 3"):
        assert_close([1, 2], [1, 2, 3])
    with pytest.raises(AssertionError, match=r"Missing keys in the actual mapping: \['b'\]"):
        assert_close({"a": 1.0}, {"b": 1.0})
    with pytest.raises(AssertionError, match=r"The failure occurred for item \['a'\]\[1\]"):
        assert_close({"a": [1.0, 2.0]}, {"a": [1.0, 2.5]})
    with pytest.raises(AssertionError, match=r"Scalars are not close!\n\nExpected 3.0 but got 2.0.[\s\S]*item \[1\]"):
        assert_close([flowlike.tensor(1.0), flowlike.tensor(2.0)], [flowlike.tensor(1.0), flowlike.tensor(3.0)])
    with pytest.raises(AssertionError, match=r"The \(d\)types do not match"):
        assert_close(1.0, 1)
    with pytest.raises(AssertionError, match="None mismatch"):
        assert_close(None, 1)
    with pytest.raises(AssertionError, match="Booleans mismatch"):
        assert_close(True, False)


def test_assert_close_argument_errors_and_msg():
    t = flowlike.tensor([1.0])
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol' must be either specified or omitted"):
        assert_close(t, t, rtol=0.1)
    with pytest.raises(TypeError, match="No comparison pair was able to handle inputs"):
        assert_close(t, [1.0])
    with pytest.raises(AssertionError, match="^custom$"):
        assert_close(t, t + 1, msg="custom")
    with pytest.raises(AssertionError, match="^XTensor-likes are not close"):
        assert_close(t, t + 1, msg=lambda m: "X" + m)


def test_assert_close_on_numpy_arrays():
    assert_close(np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-9]))
    with pytest.raises(AssertionError, match="Mismatched elements: 1 / 2"):
        assert_close(np.array([1.0, 2.0]), np.array([1.0, 2.1]))


# ---- torch.special and torch.fft -------------------------------------------------------------------------------

def test_special_functions_match_reference():
    x = np.array([-2.0, -0.5, 0.0, 0.3, 1.5], dtype=np.float64)
    t = flowlike.tensor(x)
    sp = flowlike.special
    np.testing.assert_allclose(sp.expit(t).numpy(), 1 / (1 + np.exp(-x)), rtol=1e-12)
    np.testing.assert_allclose(sp.sinc(t).numpy(), np.sinc(x), rtol=1e-12)
    np.testing.assert_allclose(sp.gammaln(t[3:]).numpy(), [math.lgamma(v) for v in x[3:]], rtol=1e-12)
    np.testing.assert_allclose(sp.ndtr(t).numpy(), [0.5 * math.erfc(-v / math.sqrt(2)) for v in x], rtol=1e-12)
    np.testing.assert_allclose(sp.ndtri(sp.ndtr(t)).numpy(), x, atol=1e-9)
    np.testing.assert_allclose(sp.expm1(t).numpy(), np.expm1(x), rtol=1e-12)
    np.testing.assert_allclose(sp.logit(sp.expit(t)).numpy(), x, atol=1e-12)
    np.testing.assert_allclose(sp.entr(flowlike.tensor([0.0, 0.5, -1.0])).numpy(), [0.0, 0.5 * math.log(2), -np.inf])
    np.testing.assert_allclose(sp.xlog1py(flowlike.tensor([0.0, 2.0]), flowlike.tensor([-1.0, 1.0])).numpy(),
                               [0.0, 2 * math.log(2)])
    assert sp.psi is sp.digamma and sp.sinc(flowlike.tensor([0])).dtype == flowlike.float32
    np.testing.assert_allclose(sp.multigammaln(flowlike.tensor([2.5]), 2).numpy(),
                               [0.5 * math.log(math.pi) + math.lgamma(2.5) + math.lgamma(2.0)], rtol=1e-6)
    with pytest.raises(AttributeError, match=r"torch\.special\.not_a_function is not provided by flowlike yet"):
        sp.not_a_function


def test_fft_under_mock_torch():
    with mock_torch():
        import torch.fft
        assert torch.fft is flowlike.fft
        x = torch.arange(8.0)
        np.testing.assert_allclose(torch.fft.irfft(torch.fft.rfft(x), 8).numpy(), x.numpy(), atol=1e-6)
    with pytest.raises(AttributeError):
        flowlike.fft.not_a_transform


def test_make_tensor_ranges_layout_and_errors():
    make_tensor = flowlike.testing.make_tensor
    x = make_tensor(2, 3, dtype=flowlike.float32, device="cpu")
    assert x.shape == (2, 3) and x.dtype == flowlike.float32
    assert ((x.numpy() >= -9) & (x.numpy() < 9)).all()
    x = make_tensor((400,), dtype=flowlike.int64, device="cpu", low=-2, high=2, exclude_zero=True).numpy()
    assert set(x.tolist()) <= {-2, -1, 1} and len(set(x.tolist())) == 3
    assert make_tensor(50, dtype=flowlike.uint8, device="cpu").numpy().min() >= 0
    assert set(make_tensor(100, dtype=flowlike.bool, device="cpu").tolist()) == {False, True}
    nc = make_tensor(3, 4, dtype=flowlike.float64, device="cpu", noncontiguous=True)
    assert nc.shape == (3, 4) and not nc.is_contiguous()
    wide = make_tensor(100, dtype=flowlike.float64, device="cpu", low=-1.7e308, high=1.7e308).numpy()
    assert np.isfinite(wide).all()
    with pytest.raises(ValueError, match="`low` must be less than `high`, but got 3 >= 2"):
        make_tensor(3, dtype=flowlike.int32, device="cpu", low=3, high=2)
    with pytest.raises(ValueError, match=r"only supports \[0, 256\)"):
        make_tensor(3, dtype=flowlike.uint8, device="cpu", low=300, high=400)
    with pytest.raises(ValueError, match="`requires_grad=True` is not supported"):
        make_tensor(3, dtype=flowlike.int64, device="cpu", requires_grad=True)
