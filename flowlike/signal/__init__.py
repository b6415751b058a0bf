"""torch.signal: window functions (`flowlike.signal.windows`)."""
from . import windows

__all__ = ["windows"]
