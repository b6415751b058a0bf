"""torch.distributed.fsdp on flowlike: the policy descriptions are real; sharding itself (FullyShardedDataParallel,
fully_shard) needs DTensor, which flowlike lacks, so no module is FSDP-managed and wrapping one raises
NotImplementedError. DistributedDataParallel is flowlike's data parallelism."""
from dataclasses import dataclass

__all__ = ["FullyShardedDataParallel", "fully_shard", "FSDPModule", "CPUOffloadPolicy", "MixedPrecisionPolicy",
           "OffloadPolicy"]


def _unsupported(what):
    return NotImplementedError(f"{what}: flowlike has no fully sharded data parallelism (it needs DTensor); use "
                               f"torch.nn.parallel.DistributedDataParallel")


@dataclass(frozen=True)
class MixedPrecisionPolicy:
    """fully_shard's mixed precision: the dtypes parameters are cast to for compute and gradients reduced in."""
    param_dtype: object = None
    reduce_dtype: object = None
    output_dtype: object = None
    cast_forward_inputs: bool = True


@dataclass
class OffloadPolicy:
    """fully_shard's default: parameters stay on their device."""


@dataclass
class CPUOffloadPolicy(OffloadPolicy):
    """fully_shard's offload of sharded parameters to the CPU between uses."""
    pin_memory: bool = True


class FSDPModule:
    """The class fully_shard mixes into a module, for isinstance checks (never true on flowlike)."""

    def __new__(cls, *args, **kwargs):
        raise _unsupported("FSDPModule")


class FullyShardedDataParallel:
    """torch's FSDP1 wrapper, for isinstance checks (never true on flowlike); constructing it raises."""

    def __new__(cls, *args, **kwargs):
        raise _unsupported("FullyShardedDataParallel")


def fully_shard(module, *, mesh=None, reshard_after_forward=True, shard_placement_fn=None, mp_policy=None,
                offload_policy=None, ignored_params=None):
    """Not available on flowlike (see the module docstring)."""
    raise _unsupported("fully_shard")
