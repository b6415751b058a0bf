"""flowlike.utils (`torch.utils`): data loading, activation checkpointing."""
from . import data, checkpoint  # noqa: F401
