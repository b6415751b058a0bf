"""flowlike.amp (torch.amp): GradScaler for loss scaling. (autocast is not provided yet.)"""
from .._missing import module_getattr
from .grad_scaler import GradScaler

__all__ = ["GradScaler"]

__getattr__ = module_getattr(__name__, "torch.amp")
