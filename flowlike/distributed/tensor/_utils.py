"""torch.distributed.tensor._utils: the local shard shape and global offset a rank holds."""
from .placement_types import Shard, _StridedShard

__all__ = ["compute_local_shape_and_global_offset"]


def compute_local_shape_and_global_offset(global_shape, mesh, placements):
    """(local_shape, global_offset) of this rank's piece of a tensor of global_shape laid out by `placements` (one
    per mesh dimension) over `mesh`; a rank outside the mesh holds an empty piece ((0,)*n, ()), as torch's."""
    coordinate = mesh.get_coordinate()
    if coordinate is None:
        return (0,) * len(global_shape), ()
    if len(placements) != mesh.ndim:
        raise ValueError(f"compute_local_shape_and_global_offset: {len(placements)} placements for a mesh of "
                         f"{mesh.ndim} dimensions")
    shape, offset = list(global_shape), [0] * len(global_shape)
    for mesh_dim, placement in enumerate(placements):
        if isinstance(placement, _StridedShard):
            # Its pieces are not one contiguous block, so no single offset describes them.
            raise NotImplementedError("compute_local_shape_and_global_offset: _StridedShard placements are not "
                                      "supported by flowlike")
        if isinstance(placement, Shard):
            dim = placement.dim % len(shape) if shape else placement.dim
            size, start = Shard.local_shard_size_and_offset(shape[dim], mesh.size(mesh_dim), coordinate[mesh_dim])
            shape[dim] = size
            offset[dim] += start
    return tuple(shape), tuple(offset)
