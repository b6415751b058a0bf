"""torch.cuda.amp without CUDA: autocast and GradScaler disable themselves (with a warning), as on CPU-only PyTorch.

Training loops written for mixed precision on a GPU then run unchanged in full precision.
"""
import functools
import warnings

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


class GradScaler:
    """A disabled gradient scaler: scale() returns its input, step() calls optimizer.step(), update() does nothing."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        if enabled:
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                          UserWarning, stacklevel=2)

    def is_enabled(self):
        return False

    def scale(self, outputs):
        return outputs

    def unscale_(self, optimizer):
        pass

    def step(self, optimizer, *args, **kwargs):
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None):
        pass

    def get_scale(self):
        return 1.0

    def state_dict(self):
        return {}

    def load_state_dict(self, state_dict):
        pass
