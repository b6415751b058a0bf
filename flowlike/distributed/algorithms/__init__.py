"""flowlike.distributed.algorithms (torch.distributed.algorithms): DistributedDataParallel communication hooks, and
Join for training loops with uneven inputs."""
from .join import Join, Joinable, JoinHook  # noqa: F401
