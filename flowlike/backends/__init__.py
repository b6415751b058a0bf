"""torch.backends: backend availability and the global flags code sets for reproducibility and speed.

flowlike runs on the CPU only, so the cudnn/cuda/mps flags are accepted and remembered but change nothing.
Also home of the process-wide determinism and float32-matmul-precision settings exported at top level.
"""
import warnings as _warnings

from . import cpu, cuda, cudnn, mkldnn, mps, openmp  # noqa: F401

_deterministic = {"enabled": False, "warn_only": False}
_matmul_precision = ["highest"]


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Records the request; flowlike's CPU kernels are already deterministic."""
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms(): argument 'mode' (position 1) must be bool, "
                        f"not {type(mode).__name__}")
    _deterministic["enabled"], _deterministic["warn_only"] = mode, bool(warn_only)


def are_deterministic_algorithms_enabled():
    return _deterministic["enabled"]


def is_deterministic_algorithms_warn_only_enabled():
    return _deterministic["warn_only"]


def set_float32_matmul_precision(precision):
    """Accepts 'highest', 'high' or 'medium' as torch does (flowlike always computes float32 matmul in float32)."""
    if precision not in ("highest", "high", "medium"):
        _warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                       f"setFloat32MatmulPrecision call has no effect.")
        return
    _matmul_precision[0] = precision
    cuda.matmul.allow_tf32 = precision != "highest"


def get_float32_matmul_precision():
    return _matmul_precision[0]
