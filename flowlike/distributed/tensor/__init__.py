"""torch.distributed.tensor on flowlike: the placement types and shard arithmetic are real; DTensor itself (a
tensor whose ops run as sharded programs over a mesh) is not implemented, so no flowlike tensor is a DTensor and
building one raises NotImplementedError rather than computing with unsharded semantics."""
from ..device_mesh import DeviceMesh, init_device_mesh
from .placement_types import Partial, Placement, Replicate, Shard

__all__ = ["DTensor", "DeviceMesh", "init_device_mesh", "Placement", "Shard", "Replicate", "Partial",
           "distribute_tensor", "distribute_module"]


def _unsupported(what):
    return NotImplementedError(f"{what}: flowlike has no DTensor (tensor parallelism over a DeviceMesh); use "
                               f"DistributedDataParallel, or run with one process")


class DTensor:
    """torch.distributed.tensor.DTensor's name, for `isinstance(x, DTensor)` checks (always False on flowlike).
    Creating one raises NotImplementedError."""

    def __new__(cls, *args, **kwargs):
        raise _unsupported("DTensor")

    @staticmethod
    def from_local(local_tensor, device_mesh=None, placements=None, *, run_check=False, shape=None, stride=None):
        raise _unsupported("DTensor.from_local")


def distribute_tensor(tensor, device_mesh=None, placements=None, *, src_data_rank=0):
    """Not available on flowlike (see DTensor)."""
    raise _unsupported("distribute_tensor")


def distribute_module(module, device_mesh=None, partition_fn=None, input_fn=None, output_fn=None):
    """Not available on flowlike (see DTensor)."""
    raise _unsupported("distribute_module")
