"""Communication hooks for DistributedDataParallel.register_comm_hook (default_hooks)."""
from . import default_hooks  # noqa: F401
