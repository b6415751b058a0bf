"""DeviceMesh and init_device_mesh (torch.distributed.device_mesh): the ranks laid out as an n-dimensional array,
with one process group per line of ranks along each dimension (e.g. a (replicate, shard) mesh of 2 x 2 ranks)."""
import numpy as np

from . import distributed_c10d as c10d

__all__ = ["DeviceMesh", "init_device_mesh"]


class DeviceMesh:
    """The ranks of `mesh` (an array or tensor of global ranks) on device_type "cpu"; every rank of the world
    constructs it with the same mesh. get_group(dim) is the group of the ranks that share this rank's position in
    every other dimension."""

    def __init__(self, device_type, mesh, *, mesh_dim_names=None, _init_backend=True, _groups=None):
        if device_type != "cpu":
            raise RuntimeError(f"DeviceMesh: flowlike's collectives run on the CPU, got device_type {device_type!r}")
        self.device_type = device_type
        array = np.asarray(mesh.tolist() if hasattr(mesh, "tolist") else mesh, dtype=np.int64)
        if mesh_dim_names is not None and len(mesh_dim_names) != array.ndim:
            raise RuntimeError(f"mesh_dim_names {tuple(mesh_dim_names)} must have one name per mesh dimension "
                               f"({array.ndim})")
        self._array = array
        self.mesh_dim_names = tuple(mesh_dim_names) if mesh_dim_names is not None else None
        world = c10d._default_group()
        coordinate = np.argwhere(array == world.rank())
        self._coordinate = [int(c) for c in coordinate[0]] if len(coordinate) else None
        self._groups = _groups if _groups is not None else [
            c10d._split(world, self._lines(dim), "init_device_mesh") for dim in range(array.ndim)]

    def _lines(self, dim):
        """The lists of global ranks along dimension dim (one per position in the other dimensions)."""
        moved = np.moveaxis(self._array, dim, -1).reshape(-1, self._array.shape[dim])
        return [list(map(int, line)) for line in moved]

    @property
    def mesh(self):
        """The global ranks as an int64 tensor of the mesh's shape."""
        from .. import from_numpy
        return from_numpy(self._array.copy())

    @property
    def ndim(self):
        """The number of mesh dimensions."""
        return self._array.ndim

    @property
    def shape(self):
        """The mesh's shape."""
        return tuple(self._array.shape)

    def _dim(self, mesh_dim):
        if mesh_dim is None:
            if self.ndim != 1:
                raise RuntimeError(f"Found the DeviceMesh have {self.ndim} dimensions: give mesh_dim")
            return 0
        if isinstance(mesh_dim, str):
            if not self.mesh_dim_names or mesh_dim not in self.mesh_dim_names:
                raise KeyError(f"Mesh dimension '{mesh_dim}' does not exist. Available mesh dimensions are: "
                               f"mesh_dim_names={self.mesh_dim_names}")
            return self.mesh_dim_names.index(mesh_dim)
        return mesh_dim

    def get_group(self, mesh_dim=None):
        """The process group along mesh_dim (a dimension index or name; may be omitted on a 1-D mesh)."""
        return self._groups[self._dim(mesh_dim)]

    def get_all_groups(self):
        """The groups along every dimension."""
        return list(self._groups)

    def size(self, mesh_dim=None):
        """The number of ranks in the mesh, or along mesh_dim."""
        return int(self._array.size) if mesh_dim is None else int(self._array.shape[self._dim(mesh_dim)])

    def get_rank(self):
        """This process's global rank."""
        return c10d.get_rank()

    def get_local_rank(self, mesh_dim=None):
        """This process's rank along mesh_dim."""
        return c10d.get_rank(self.get_group(mesh_dim))

    def get_coordinate(self):
        """This rank's position in the mesh (None when it is not in the mesh)."""
        return self._coordinate

    def __getitem__(self, mesh_dim_names):
        """The sub-mesh of the named dimension(s) that holds this rank."""
        names = (mesh_dim_names,) if isinstance(mesh_dim_names, str) else tuple(mesh_dim_names)
        dims = [self._dim(n) for n in names]
        index = tuple(slice(None) if d in dims else self._coordinate[d] for d in range(self.ndim))
        sub = np.transpose(self._array[index], [sorted(dims).index(d) for d in dims])
        return DeviceMesh(self.device_type, sub, mesh_dim_names=names,
                          _groups=[self._groups[d] for d in dims])

    def __repr__(self):
        names = f", mesh_dim_names={self.mesh_dim_names}" if self.mesh_dim_names else ""
        return f"DeviceMesh('{self.device_type}', {self._array.tolist()}{names})"


def init_device_mesh(device_type, mesh_shape, *, mesh_dim_names=None, backend_override=None):
    """A DeviceMesh of mesh_shape over ranks 0..N-1 in row-major order (N = the world size, which must equal the
    product of mesh_shape)."""
    world = c10d.get_world_size()
    n = int(np.prod(mesh_shape))
    if n != world:
        raise RuntimeError(f"init_device_mesh: mesh_shape {tuple(mesh_shape)} holds {n} ranks but the world size is "
                           f"{world}")
    if mesh_dim_names is not None and len(set(mesh_dim_names)) != len(mesh_dim_names):
        raise RuntimeError(f"Each mesh_dim_name must be unique. Found repeated mesh_dim_name in mesh_dim_names "
                           f"{tuple(mesh_dim_names)}")
    return DeviceMesh(device_type, np.arange(n).reshape(tuple(mesh_shape)), mesh_dim_names=mesh_dim_names)

