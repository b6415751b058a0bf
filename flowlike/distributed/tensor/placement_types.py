"""torch.distributed.tensor.placement_types: how a tensor dimension lies over one dimension of a DeviceMesh
(Shard(dim): split in chunks as torch.chunk splits it; Replicate(): whole on every rank; Partial(op): a pending
reduction). These are plain descriptions, used by libraries (transformers) to compute which slice of a checkpoint
tensor a rank reads."""
from dataclasses import dataclass

__all__ = ["Placement", "Shard", "Replicate", "Partial"]


class Placement:
    """The base of the placement types."""

    def is_shard(self, dim=None):
        return False

    def is_replicate(self):
        return False

    def is_partial(self, reduce_op=None):
        return False


@dataclass(frozen=True)
class Shard(Placement):
    """Tensor dimension `dim` is split over the mesh dimension, in torch.chunk's chunks (the last ones may be
    smaller or empty)."""
    dim: int

    def is_shard(self, dim=None):
        return dim is None or dim == self.dim

    @staticmethod
    def local_shard_size_and_offset(curr_local_size, num_chunks, rank):
        """(size, offset) of chunk `rank` when a dimension of curr_local_size is split into num_chunks, as
        torch.chunk splits it: chunks of ceil(size / num_chunks), the trailing ones cut short or empty."""
        if num_chunks <= 0:
            raise ValueError(f"Shard: num_chunks must be positive, got {num_chunks}")
        if not 0 <= rank < num_chunks:
            raise ValueError(f"Shard: rank {rank} is outside 0..{num_chunks - 1}")
        full = -(-curr_local_size // num_chunks)
        offset = min(full * rank, curr_local_size)
        return min(full, curr_local_size - offset), offset

    def __repr__(self):
        return f"Shard(dim={self.dim})"


@dataclass(frozen=True)
class Replicate(Placement):
    """The whole tensor on every rank of the mesh dimension."""

    def is_replicate(self):
        return True

    def __repr__(self):
        return "Replicate()"


@dataclass(frozen=True)
class Partial(Placement):
    """Each rank holds a partial value; the tensor is their reduction with reduce_op ("sum", "avg", ...)."""
    reduce_op: str = "sum"

    def is_partial(self, reduce_op=None):
        return reduce_op is None or reduce_op == self.reduce_op

    def __repr__(self):
        return f"Partial({self.reduce_op})"


@dataclass(frozen=True)
class _StridedShard(Shard):
    """Shard(dim) applied after split_factor earlier splits of the same dimension (torch's private placement for
    fused or nested sharding): each rank holds split_factor strided pieces."""
    split_factor: int = 1

    def __repr__(self):
        return f"_StridedShard(dim={self.dim}, sf={self.split_factor})"
