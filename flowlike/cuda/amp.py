"""torch.cuda.amp without CUDA: autocast and GradScaler disable themselves (with a warning), as on CPU-only PyTorch.

Training loops written for mixed precision on a GPU then run unchanged in full precision.
"""
import functools
import warnings

from ..amp.grad_scaler import GradScaler as _AmpGradScaler

__all__ = ["autocast", "GradScaler"]


class autocast:
    """Context manager and decorator; a no-op here because there is no CUDA device to autocast on."""

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        if enabled:
            warnings.warn("CUDA is not available. Disabling autocast.", UserWarning, stacklevel=2)
        self.enabled = False

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def run_without_autocast(*args, **kwargs):
            return func(*args, **kwargs)

        return run_without_autocast


class GradScaler(_AmpGradScaler):
    """torch.cuda.amp.GradScaler: torch.amp.GradScaler("cuda", ...), which disables itself (with a warning) because
    there is no CUDA device."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)
