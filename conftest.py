"""Session-wide test setup, loaded before any test module."""
import os

# Triton (tests/test_triton_interpreter.py) decides when triton.language is first imported whether its library
# functions (tl.max, tl.sum, ...) run in its CPU interpreter, so the switch is set before anything imports triton.
os.environ["TRITON_INTERPRET"] = "1"
