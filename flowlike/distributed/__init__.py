"""flowlike.distributed (torch.distributed): process groups and collectives on MPI, through mpi4py.

    import flowlike.distributed as dist
    dist.init_process_group("gloo")          # env:// (the launcher's RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT)
    dist.all_reduce(t, op=dist.ReduceOp.SUM)

Ranks are started by the launcher (`python -m flowlike.distributed.run --nproc-per-node N script.py`, as torchrun),
by `mpirun -n N python script.py`, or as any independent processes that share MASTER_ADDR/MASTER_PORT (env://),
tcp://host:port or file:///path. The MPI library comes from the `mpich` wheel.
"""
from .distributed_c10d import *  # noqa: F401,F403
from .distributed_c10d import __all__ as _c10d_all
from . import distributed_c10d  # noqa: F401
from .device_mesh import DeviceMesh, init_device_mesh  # noqa: F401
from ._store import FileStore, HashStore, PrefixStore, Store, TCPStore  # noqa: F401

__all__ = list(_c10d_all) + ["DeviceMesh", "init_device_mesh", "Store", "TCPStore", "FileStore", "HashStore",
                             "PrefixStore"]
