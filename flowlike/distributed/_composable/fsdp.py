"""torch.distributed._composable.fsdp: fully_shard's old import path."""
from ..fsdp import CPUOffloadPolicy, FSDPModule, MixedPrecisionPolicy, OffloadPolicy, fully_shard

__all__ = ["fully_shard", "FSDPModule", "CPUOffloadPolicy", "MixedPrecisionPolicy", "OffloadPolicy"]
