"""flowlike.utils (`torch.utils`): data loading."""
from . import data  # noqa: F401
