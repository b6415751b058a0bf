"""Internals of the DataLoader, at torch's paths (torch.utils.data._utils.collate is imported by user code)."""
from . import collate  # noqa: F401
