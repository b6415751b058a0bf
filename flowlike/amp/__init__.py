"""flowlike.amp (torch.amp): autocast (mixed precision regions) and GradScaler for loss scaling."""
from .._missing import module_getattr
from .autocast_mode import autocast, get_autocast_dtype, is_autocast_enabled
from .grad_scaler import GradScaler

__all__ = ["autocast", "GradScaler", "is_autocast_enabled", "get_autocast_dtype"]

__getattr__ = module_getattr(__name__, "torch.amp")
