"""Session-wide test setup, loaded before any test module."""
import os

# Triton (tests/test_triton_interpreter.py) decides when triton.language is first imported whether its library
# functions (tl.max, tl.sum, ...) run in its CPU interpreter, so the switch is set before anything imports triton.
os.environ["TRITON_INTERPRET"] = "1"


def pytest_addoption(parser):
    parser.addoption("--fuzz-long", action="store_true", default=False,
                     help="run the long fuzz (tests/fuzz): many more cases per target, fresh random seeds")


def pytest_configure(config):
    # graph-mode tests run their fused kernels from the second call on, deterministically: the kernels are built
    # before the capturing call returns (users' graphs build them in the background; tests/test_fusion.py checks that)
    from flowlike import codegen
    codegen.config.async_compile = False
    if config.getoption("--fuzz-long", default=False):
        os.environ["FLOWLIKE_FUZZ_LONG"] = "1"
