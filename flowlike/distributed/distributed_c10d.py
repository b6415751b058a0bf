"""Process groups and collectives (torch.distributed.distributed_c10d), run by MPI through mpi4py.

Every collective is issued as MPI's non-blocking form and waited on by `_wait`, which polls it with a deadline
(the group's timeout) and, for ranks joined by flowlike's rendezvous, the server's news of a dead rank: a rank that
dies or never arrives gives the others a DistBackendError, never a hang. A group that failed that way refuses
further collectives, and the process ends without MPI_Finalize (which would wait on the dead rank); so does a process
ending on an uncaught exception, which the others then see as dead at once.

Before the data moves, the ranks compare the shapes and dtypes they pass (one small allgather): mismatched tensors
give every rank a RuntimeError naming each rank's tensor, where MPI would truncate, corrupt or hang.
"""
import atexit
import datetime
import enum
import hashlib
import os
import pickle
import socket
import sys
import time

import numpy as np

from .. import _C
from . import _rendezvous

__all__ = ["Backend", "ReduceOp", "ProcessGroup", "Work", "GradBucket", "GroupMember", "group", "P2POp", "DistError",
           "DistBackendError", "DistNetworkError", "DistStoreError", "default_pg_timeout", "is_available",
           "is_initialized", "is_mpi_available", "is_gloo_available", "is_nccl_available", "is_ucc_available",
           "is_xccl_available", "is_torchelastic_launched", "init_process_group", "destroy_process_group",
           "get_rank", "get_world_size", "get_backend", "new_group", "get_process_group_ranks", "get_global_rank",
           "get_group_rank", "all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor",
           "reduce_scatter", "reduce_scatter_tensor", "gather", "scatter", "all_to_all", "all_to_all_single",
           "barrier", "monitored_barrier", "send", "recv", "isend", "irecv", "batch_isend_irecv",
           "broadcast_object_list", "all_gather_object", "gather_object", "scatter_object_list"]

default_pg_timeout = datetime.timedelta(minutes=30)


class DistError(RuntimeError):
    """Raised by the distributed package (torch.distributed.DistError)."""


class DistBackendError(DistError):
    """A collective failed in the communication backend: a peer died, a timeout, an MPI error."""


class DistNetworkError(DistError):
    """The rendezvous network failed (a port in use, an unreachable master)."""


class DistStoreError(DistError):
    """The rendezvous timed out or was refused."""


class Backend(str):
    """A backend name: "mpi", or "gloo" (accepted on the CPU, run on MPI as well). Backend("GLOO") == "gloo"."""
    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"
    XCCL = "xccl"
    backend_list = [UNDEFINED, GLOO, NCCL, UCC, MPI, XCCL]

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got: {type(name)}")
        value = name.lower()
        if value not in cls.backend_list and ":" not in value:
            raise ValueError(f"Invalid backend: '{name}'")
        return super().__new__(cls, value)


class ReduceOp:
    """The reductions of all_reduce, reduce and reduce_scatter: ReduceOp.SUM, AVG, PRODUCT, MIN, MAX, BAND, BOR,
    BXOR."""

    class RedOpType(enum.IntEnum):
        SUM = 0
        AVG = 1
        PRODUCT = 2
        MIN = 3
        MAX = 4
        BAND = 5
        BOR = 6
        BXOR = 7
        PREMUL_SUM = 8
        UNUSED = 9

    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM
    UNUSED = RedOpType.UNUSED


class ProcessGroup:
    """A set of ranks that run collectives together (an MPI communicator); group ranks count from 0 in the order
    of the sorted global ranks."""

    def __init__(self, comm, ranks, backend, timeout):
        self._comm = comm
        self._ranks = list(ranks)
        self._backend = backend
        self._timeout = timeout
        # torch's names: "0" for the default group, then one number per group this process creates; the collective
        # ops of a graph program name their group this way
        self.group_name = str(_world.group_count)
        _world.group_count += 1

    def rank(self):
        """This process's rank in the group."""
        return self._comm.Get_rank()

    def size(self):
        """The number of ranks in the group."""
        return self._comm.Get_size()

    def name(self):
        """The backend's name."""
        return str(self._backend)

    def __repr__(self):
        return f"<ProcessGroup backend={self._backend} ranks={self._ranks} timeout={self._timeout}>"


class GroupMember:
    """GroupMember.WORLD: the default group once initialized; NON_GROUP_MEMBER: what new_group returns on ranks
    outside the new group."""
    WORLD = None
    NON_GROUP_MEMBER = -100


class _GroupNamespace:
    """`group.WORLD`, the default process group (None before init_process_group)."""

    @property
    def WORLD(self):
        return GroupMember.WORLD


group = _GroupNamespace()


class _World:
    """The process's distributed state."""
    MPI = None              # the mpi4py.MPI module, once MPI is initialized
    default_pg = None
    groups = []
    group_count = 0         # groups created since the default group (their group_name)
    watch = None            # the watch line to the rendezvous server (None under mpiexec)
    failure = None          # why the groups are unusable (a dead rank, a timeout)
    exited = {}             # rank -> when the server said it ended its program
    at_exit_registered = False
    previous_excepthook = None


_world = _World()


def is_available():
    """True when the MPI engine (mpi4py) can be imported."""
    import importlib.util
    return importlib.util.find_spec("mpi4py") is not None


def is_mpi_available():
    """True when MPI (mpi4py) can be imported."""
    return is_available()


def is_gloo_available():
    """True when the "gloo" backend can be used: flowlike runs it on MPI."""
    return is_available()


def is_nccl_available():
    """False: flowlike has no CUDA collectives yet."""
    return False


def is_ucc_available():
    """False."""
    return False


def is_xccl_available():
    """False."""
    return False


def is_torchelastic_launched():
    """True inside a process started by the launcher (flowlike.distributed.run, like torchrun)."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def is_initialized():
    """Whether init_process_group has been called (and not destroyed)."""
    return _world.default_pg is not None


def _default_group():
    if _world.default_pg is None:
        raise ValueError("Default process group has not been initialized, please make sure to call "
                         "init_process_group.")
    return _world.default_pg


def _group(group):
    return _default_group() if group is None else group


def _not_member(group):
    return group is GroupMember.NON_GROUP_MEMBER


# ---- starting the MPI world -----------------------------------------------------------------------------------

_MPIEXEC_VARS = ("PMI_RANK", "PMI_FD", "PMIX_RANK", "OMPI_COMM_WORLD_RANK", "MV2_COMM_WORLD_RANK")


def _launched_by_mpiexec():
    return any(v in os.environ for v in _MPIEXEC_VARS)


def _env_int(name, given, method):
    if given is not None and given >= 0:
        return given
    value = os.environ.get(name)
    if value is None:
        raise ValueError(f"Error initializing torch.distributed using {method} rendezvous: environment variable "
                         f"{name} expected, but not set")
    return int(value)


def _import_mpi():
    import mpi4py
    if "mpi4py.MPI" not in sys.modules:
        mpi4py.rc.thread_level = "serialized"
    from mpi4py import MPI
    return MPI


def _join_world(init_method, rank, world_size, timeout, store=None):
    """Initializes MPI with this process as `rank` of `world_size` (see Note [MPI world from independent
    processes] in _rendezvous.py); returns the world communicator. With a store (or file://), rank 0 publishes
    where its rendezvous server listens there, and the others read it."""
    if _world.MPI is not None or _launched_by_mpiexec():
        MPI = _import_mpi()
        comm = MPI.COMM_WORLD
        if world_size >= 0 and world_size != comm.Get_size():
            raise ValueError(f"world_size={world_size} differs from the size of the MPI world, {comm.Get_size()}")
        if rank >= 0 and rank != comm.Get_rank():
            raise ValueError(f"rank={rank} differs from this process's rank in the MPI world, {comm.Get_rank()}")
        _world.MPI = MPI
        return comm
    method = init_method or "env://"
    seconds = timeout.total_seconds()
    file_path = None
    if store is not None:
        addr, port = None, 0
    elif method.startswith("env://"):
        rank = _env_int("RANK", rank, "env://")
        world_size = _env_int("WORLD_SIZE", world_size, "env://")
        if world_size > 1:
            addr = os.environ.get("MASTER_ADDR")
            port = os.environ.get("MASTER_PORT")
            for name, value in (("MASTER_ADDR", addr), ("MASTER_PORT", port)):
                if value is None:
                    raise ValueError(f"Error initializing torch.distributed using env:// rendezvous: environment "
                                     f"variable {name} expected, but not set")
            port = int(port)
    elif method.startswith("tcp://"):
        rank = _env_int("RANK", rank, "tcp://")
        world_size = _env_int("WORLD_SIZE", world_size, "tcp://")
        addr, _, port = method[len("tcp://"):].rstrip("/").rpartition(":")
        if not addr or not port.isdigit():
            raise ValueError(f"tcp:// init_method needs host:port, got {method!r}")
        addr, port = addr.strip("[]"), int(port)
    elif method.startswith("file://"):
        rank = _env_int("RANK", rank, "file://")
        world_size = _env_int("WORLD_SIZE", world_size, "file://")
        file_path = method[len("file://"):]
        addr, port = None, 0
    else:
        raise ValueError(f"No rendezvous handler for {method}")
    if not 0 <= rank < world_size:
        raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {world_size - 1}]")
    if world_size > 1:
        if rank == 0:
            try:
                port = _rendezvous.start_server(port, world_size, seconds)
            except OSError as e:
                raise DistNetworkError(str(e)) from None
            where = f"{socket.gethostbyname(socket.gethostname())}:{port}"
            if file_path is not None:
                with open(file_path + ".tmp", "w") as f:
                    f.write(where)
                os.replace(file_path + ".tmp", file_path)
            if store is not None:
                store.set(_STORE_ADDRESS_KEY, where)
            if addr is None:
                addr = "127.0.0.1"
        elif file_path is not None:
            addr, port = _read_address(file_path, seconds)
        elif store is not None:
            host, port = store.get(_STORE_ADDRESS_KEY).decode().rsplit(":", 1)
            addr, port = host, int(port)
        try:
            pmi, watch = _rendezvous.join(addr, port, rank, world_size, seconds)
        except TimeoutError as e:
            raise DistStoreError(str(e)) from None
        except (ConnectionError, OSError) as e:
            raise DistNetworkError(str(e)) from None
        except ValueError as e:
            raise DistStoreError(str(e)) from None
        _world.watch = watch
        # MPICH's PMI client takes this descriptor over; the Python socket object lets go of it
        os.environ.update(PMI_FD=str(pmi.detach()), PMI_RANK=str(rank), PMI_SIZE=str(world_size))
    try:
        MPI = _import_mpi()
    finally:
        for name in ("PMI_FD", "PMI_RANK", "PMI_SIZE"):  # processes this one starts are not part of this world
            os.environ.pop(name, None)
    _world.MPI = MPI
    if _world.watch is not None:
        _rendezvous.report_shm_files(_world.watch)
    comm = MPI.COMM_WORLD
    if comm.Get_size() != world_size or comm.Get_rank() != rank:
        raise DistBackendError(f"MPI started rank {comm.Get_rank()} of {comm.Get_size()}, expected rank {rank} of "
                               f"{world_size}")
    if file_path is not None and rank == 0:
        os.remove(file_path)
    return comm


_STORE_ADDRESS_KEY = "flowlike/rendezvous"  # where rank 0's rendezvous server listens, with init_process_group(store=)


def _read_address(path, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with open(path) as f:
                text = f.read().strip()
            if text:
                host, port = text.rsplit(":", 1)
                return host, int(port)
        except (OSError, ValueError):
            pass
        time.sleep(0.02)
    raise DistStoreError(f"Timed out after {seconds:.0f} seconds waiting for rank 0 to write its address to {path}")


def _crashed(reason):
    """This process is ending on an error: it leaves without MPI_Finalize (which would wait for the other ranks)
    and without saying bye, so that the others learn at once that it is gone."""
    if _world.failure is None:
        _world.failure = reason


def _excepthook(kind, value, tb):
    _crashed(f"uncaught {kind.__name__}")
    _world.previous_excepthook(kind, value, tb)


def _at_exit():
    if _world.watch is not None:
        if _world.failure is None:
            _rendezvous.say_bye(_world.watch)
        _world.watch = None
    if _world.failure is not None:
        # MPI_Finalize would wait for the rank that died (or never came): end without it.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    """Joins this process to the default process group of world_size ranks.

    The ranks are found by `init_method`: "env://" (default; RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT from the
    environment, as the launcher sets them), "tcp://host:port" or "file:///path"; in a process started by
    `mpirun`/`mpiexec` the MPI world is the group. backend "mpi", or "gloo" (run on MPI); None means "mpi".
    Collectives that wait longer than `timeout` (default 30 minutes) raise DistBackendError."""
    if _world.default_pg is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if store is not None:
        if init_method is not None:
            raise ValueError("Cannot specify both init_method and store.")
        if world_size <= 0 or rank < 0:
            raise ValueError("world_size and rank must be specified if store is specified")
    name = Backend(backend or Backend.MPI)
    devices = dict(part.split(":", 1) if ":" in part else ("cpu", part) for part in name.split(","))
    if any(b not in (Backend.MPI, Backend.GLOO) for d, b in devices.items() if d == "cpu") or \
            any(b == Backend.NCCL for b in devices.values()) and "cpu" not in devices:
        raise RuntimeError(f"Distributed package doesn't have {name.upper()} built in")
    if timeout is None:
        timeout = default_pg_timeout
    if not isinstance(timeout, datetime.timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got {type(timeout)}")
    if not is_available():
        raise RuntimeError("torch.distributed needs the mpi4py package and an MPI library: pip install mpi4py mpich")
    comm = _join_world(init_method, rank, world_size, timeout, store).Dup()
    if not _world.at_exit_registered:
        atexit.register(_at_exit)
        _world.previous_excepthook, sys.excepthook = sys.excepthook, _excepthook
        _world.at_exit_registered = True
    _world.group_count = 0
    pg = ProcessGroup(comm, range(comm.Get_size()), name, timeout)
    _world.default_pg = pg
    _world.groups = [pg]
    GroupMember.WORLD = pg
    _C._set_collective_backend(_OpEngine)


def destroy_process_group(group=None):
    """Destroys the given group, or every group (the default one included) when group is None."""
    if group is None or group is GroupMember.WORLD:
        pgs, _world.groups = _world.groups, []
        _world.default_pg = GroupMember.WORLD = None
        _world.group_count = 0
        _C._set_collective_backend(None)
    elif _not_member(group):
        return
    else:
        if group not in _world.groups:
            raise ValueError("Invalid process group specified")
        _world.groups.remove(group)
        pgs = [group]
    if _world.failure is None:
        for pg in pgs:
            pg._comm.Free()


def get_rank(group=None):
    """This process's rank in group (default: the world); -1 when it is not a member."""
    if _not_member(group):
        return -1
    return _group(group).rank()


def get_world_size(group=None):
    """The number of ranks in group (default: the world); -1 when this process is not a member."""
    if _not_member(group):
        return -1
    return _group(group).size()


def get_backend(group=None):
    """The backend name of group (default: the world)."""
    if _not_member(group):
        raise ValueError("Invalid process group specified")
    return _group(group)._backend


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False,
              group_desc=None, device_id=None):
    """A new group of the given global ranks (all ranks when None). Every rank of the world must call it; ranks
    outside get GroupMember.NON_GROUP_MEMBER."""
    world = _default_group()
    n = world.size()
    ranks = sorted(range(n) if ranks is None else ranks)
    for r in ranks:
        if not 0 <= r < n:
            raise ValueError(f"The new group's rank should be within the world_size set by init_process_group, "
                             f"got rank {r} of world_size {n}")
    if len(set(ranks)) != len(ranks):
        raise ValueError(f"new_group got duplicate ranks: {ranks}")
    return _split(world, [ranks], "new_group", timeout, backend)


def _split(world, partition, opname, timeout=None, backend=None):
    """Groups of the world's ranks, one per list of global ranks in partition (disjoint lists); every rank of the
    world calls it with the same partition and gets its own group (GroupMember.NON_GROUP_MEMBER when it is in
    none). The ranks first agree on the partition (with the timeout), as MPI's split itself cannot time out."""
    _usable()
    flat = [r for ranks in partition for r in ranks]
    digest = int.from_bytes(hashlib.sha1(repr(partition).encode()).digest()[:7], "little")
    mine = np.array([len(flat), digest], dtype=np.int64)
    everyone = np.empty((world.size(), 2), dtype=np.int64)
    _wait([world._comm.Iallgather(mine, everyone)], world, opname)
    if not (everyone == mine).all():
        raise RuntimeError(f"{opname}: the ranks were called with different ranks (this rank: {partition})")
    me = world.rank()
    color, key = next(((i, ranks.index(me)) for i, ranks in enumerate(partition) if me in ranks),
                      (_world.MPI.UNDEFINED, 0))
    comm = world._comm.Split(color, key)
    if color == _world.MPI.UNDEFINED:
        return GroupMember.NON_GROUP_MEMBER
    pg = ProcessGroup(comm, partition[color], Backend(backend) if backend else world._backend,
                      timeout or world._timeout)
    _world.groups.append(pg)
    return pg


def get_process_group_ranks(group):
    """The global ranks of group's members, in group-rank order."""
    return list(_group(group)._ranks)


def get_global_rank(group, group_rank):
    """The global rank of group's rank group_rank."""
    ranks = _group(group)._ranks
    if not 0 <= group_rank < len(ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {group}")
    return ranks[group_rank]


def get_group_rank(group, global_rank):
    """group's rank of the global rank global_rank."""
    ranks = _group(group)._ranks
    if global_rank not in ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {group}")
    return ranks.index(global_rank)


# ---- waiting ------------------------------------------------------------------------------------------------

def _usable():
    if _world.failure is not None:
        raise DistBackendError(f"the process group can no longer be used: {_world.failure}")


def _fail(message):
    _world.failure = message
    raise DistBackendError(message)


# How long a collective may still complete after a peer said it ended (its last messages are in flight)
_EXIT_GRACE = 1.0


def _wait(requests, pg, opname, timeout=None, statuses=None):
    """Waits for MPI requests; a dead rank or the timeout raises DistBackendError (and breaks the groups)."""
    MPI = _world.MPI
    timeout = pg._timeout if timeout is None else timeout
    start = time.monotonic()
    deadline = start + timeout.total_seconds()
    next_watch = start + 0.01
    pause = 0.0
    spins = 0
    while True:
        try:
            if MPI.Request.Testall(requests, statuses):
                return
        except MPI.Exception as e:
            _fail(f"{opname} failed in MPI: {e.Get_error_string()}")
        now = time.monotonic()
        if _world.watch is not None and now >= next_watch:
            next_watch = now + 0.01
            for rank, what in _rendezvous.news(_world.watch):
                if what == "dead":
                    _world.watch = None
                    who = "the rendezvous server (rank 0's host)" if rank < 0 else f"rank {rank}"
                    _fail(f"{opname}: {who} exited while rank {get_rank()} was waiting for it (connection closed "
                          f"by peer)")
                _world.exited.setdefault(rank, now)
        gone = [r for r in pg._ranks if r in _world.exited and now > max(start, _world.exited[r]) + _EXIT_GRACE]
        if gone:
            _fail(f"{opname}: rank {gone[0]} has ended its program while rank {get_rank()} was waiting for it")
        if now > deadline:
            _fail(f"{opname}: timed out after {int(timeout.total_seconds() * 1000)}ms waiting for the other ranks "
                  f"(rank {pg.rank()} of group {pg._ranks}); a rank did not take part")
        # spin briefly (a collective between ranks on one machine takes microseconds), then back off so that
        # waiting ranks leave the cores to the ranks still computing
        spins += 1
        if spins > 200:
            pause = min(1e-3, pause * 2 or 2e-6)
            time.sleep(pause)


class Work:
    """A collective or point-to-point operation in flight (returned with async_op=True): wait() blocks until it
    completed (raising its error), is_completed() asks without blocking."""

    def __init__(self, requests, pg, opname, finish=None, outputs=None, statuses=None):
        self._requests = requests
        self._statuses = statuses
        self._pg = pg
        self._opname = opname
        self._finish = finish
        self._outputs = outputs or []
        self._done = False
        self._exception = None
        self._result_value = None

    def _complete(self):
        if not self._done:
            self._done = True
            if self._finish is not None:
                self._result_value = self._finish()

    def wait(self, timeout=None):
        """Blocks until the operation completed; returns True. timeout (a timedelta) overrides the group's."""
        if not self._done:
            try:
                _wait(self._requests, self._pg, self._opname, timeout, self._statuses)
            except DistBackendError as e:
                self._exception = e
                raise
            self._complete()
        return True

    def is_completed(self):
        """Whether the operation has completed (never blocks)."""
        if not self._done and _world.MPI.Request.Testall(self._requests, self._statuses):
            self._complete()
        return self._done

    def is_success(self):
        """Whether the operation completed without error."""
        return self.is_completed() and self._exception is None

    def exception(self):
        """The error the operation ended with, or None."""
        return self._exception

    def result(self):
        """The output tensors of the operation (after wait())."""
        self.wait()
        return self._outputs

    def get_future(self):
        """A torch.futures.Future completed with the operation's output tensors."""
        from ..futures import _driven
        return _driven(self.is_completed, self.wait, lambda: self._outputs)

    def source_rank(self):
        """For a recv from any source: the sender's rank."""
        self.wait()
        return self._result_value


class GradBucket:
    """One bucket of DistributedDataParallel's gradients, as a communication hook sees it: buffer() is the flat
    tensor of the bucket's gradients, gradients() their views in it, parameters() the parameters."""

    def __init__(self, index, buffer, parameters, is_last):
        self._index, self._buffer, self._parameters, self._is_last = index, buffer, list(parameters), is_last

    def index(self):
        """The bucket's index (bucket 0 holds the last parameters, whose gradients come first)."""
        return self._index

    def buffer(self):
        """The flat gradients."""
        return self._buffer

    def set_buffer(self, buffer):
        """Replaces the flat gradients."""
        self._buffer = buffer

    def gradients(self):
        """Each parameter's gradient, as a view of buffer()."""
        views, offset = [], 0
        for p in self._parameters:
            views.append(self._buffer[offset:offset + p.numel()].view(tuple(p.shape)))
            offset += p.numel()
        return views

    def parameters(self):
        """The bucket's parameters."""
        return list(self._parameters)

    def is_last(self):
        """Whether this is the last bucket of the iteration to be reduced."""
        return self._is_last


def _run(requests, pg, opname, async_op, finish=None, outputs=None):
    return _finish_or_return(Work(requests, pg, opname, finish, outputs), async_op)


def _finish_or_return(work, async_op):
    """What a collective returns: its Work with async_op=True, else None once it completed."""
    if async_op:
        return work
    work.wait()
    return None


# ---- tensors as MPI buffers -----------------------------------------------------------------------------------

def _flowlike():
    import flowlike
    return flowlike


def _np_dtype_ok(t):
    fl = _flowlike()
    return t.dtype in (fl.float32, fl.float64, fl.int8, fl.int16, fl.int32, fl.int64, fl.uint8, fl.bool)


def _check_tensor(t, name="tensor"):
    if not isinstance(t, _flowlike().Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type torch.Tensor\n"
                        f"             but got {type(t)} instead.")


class _Buffer:
    """A tensor's data as a numpy array: the tensor's own memory when it is contiguous with a dtype MPI knows,
    else a staging copy (float32 for float16/bfloat16) that `store()` writes back."""

    def __init__(self, t, read=True):
        self.tensor = t
        self.direct = t.is_contiguous() and _np_dtype_ok(t)
        if self.direct:
            self.array = t.detach().numpy().reshape(-1)
        elif read:
            staged = t.detach() if _np_dtype_ok(t) else t.detach().to(_flowlike().float32)
            self.array = staged.contiguous().numpy().reshape(-1).copy()
        else:  # an output: its old values are not needed
            dtype = np.dtype(str(t.dtype).replace("torch.", "")) if _np_dtype_ok(t) else np.float32
            self.array = np.empty(t.numel(), dtype=dtype)

    def store(self):
        if not self.direct:
            fl = _flowlike()
            with fl.no_grad():
                self.tensor.detach().copy_(fl.from_numpy(self.array.reshape(tuple(self.tensor.shape))))


def _store_all(buffers):
    def finish():
        for b in buffers:
            b.store()
    return finish


_DTYPE_CODES = {}


def _signature(kind, t, *extra):
    """The description of a tensor that all ranks compare before a collective."""
    fl = _flowlike()
    if not _DTYPE_CODES:
        for i, d in enumerate((fl.float32, fl.float64, fl.float16, fl.bfloat16, fl.int8, fl.int16, fl.int32,
                               fl.int64, fl.uint8, fl.bool)):
            _DTYPE_CODES[d] = i
    shape = list(t.shape)[:6]
    return [kind, _DTYPE_CODES.get(t.dtype, 99), t.numel(), t.dim()] + shape + [-1] * (6 - len(shape)) + \
        list(extra) + [0] * (3 - len(extra))


def _describe(sig):
    names = {i: str(d).replace("torch.", "") for d, i in _DTYPE_CODES.items()}
    shape = [int(s) for s in sig[4:4 + min(int(sig[3]), 6)]]
    return f"shape {shape} dtype {names.get(int(sig[1]), '?')}"


def _agree(pg, opname, sig):
    """Raises RuntimeError on every rank when the ranks' signatures differ."""
    _usable()
    mine = np.array(sig, dtype=np.int64)
    everyone = np.empty((pg.size(), len(sig)), dtype=np.int64)
    _wait([pg._comm.Iallgather(mine, everyone)], pg, opname)
    if not (everyone == mine).all():
        detail = "; ".join(f"rank {pg._ranks[r]}: {_describe(row)}" for r, row in enumerate(everyone))
        if (everyone[:, :-3] == mine[:-3]).all():
            detail = "the ranks disagree on the root rank or the reduce op"
        raise RuntimeError(f"{opname}: the ranks passed tensors that do not match: {detail}")


def _mpi_op(op, t, opname):
    MPI = _world.MPI
    op = ReduceOp.RedOpType(int(op))
    fl = _flowlike()
    if t.dtype == fl.bool:
        table = {ReduceOp.SUM: MPI.LOR, ReduceOp.MAX: MPI.LOR, ReduceOp.BOR: MPI.LOR, ReduceOp.PRODUCT: MPI.LAND,
                 ReduceOp.MIN: MPI.LAND, ReduceOp.BAND: MPI.LAND, ReduceOp.BXOR: MPI.LXOR}
    else:
        table = {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD, ReduceOp.MIN: MPI.MIN,
                 ReduceOp.MAX: MPI.MAX}
        if not t.dtype.is_floating_point:
            table.update({ReduceOp.BAND: MPI.BAND, ReduceOp.BOR: MPI.BOR, ReduceOp.BXOR: MPI.BXOR})
    if op not in table:
        raise ValueError(f"{opname}: ReduceOp.{op.name} is not supported for {t.dtype}")
    return table[op]


def _averaged(buffers, op, n):
    """The finish step of a reduction: write staged data back, and divide by the number of ranks for AVG."""
    def finish():
        for b in buffers:
            if op == ReduceOp.AVG:
                if b.array.dtype.kind == "f":
                    b.array /= n
                else:
                    b.array[...] = np.trunc(b.array / n)
            b.store()
    return finish


def _group_rank(pg, global_rank, group_rank, what):
    if group_rank is not None:
        return group_rank
    if global_rank is None:
        raise ValueError(f"Either {what} or group_{what} must be given")
    return get_group_rank(pg, global_rank) if pg is not _world.default_pg else global_rank


# ---- collectives ----------------------------------------------------------------------------------------------

def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduces tensor across all ranks in place (op: ReduceOp.SUM, AVG, PRODUCT, MIN, MAX, ...)."""
    _check_tensor(tensor)
    if _not_member(group):
        return None
    pg = _group(group)
    _mpi_op(op, tensor, "all_reduce")
    _agree(pg, "all_reduce", _signature(1, tensor, int(op) + 1))
    return _finish_or_return(_all_reduce_unchecked(tensor, pg, op), async_op)


def _all_reduce_unchecked(tensor, pg, op=ReduceOp.SUM):
    """all_reduce without the cross-rank shape check, for callers that checked shapes once (DDP's buckets);
    returns its Work. Inside a graph capture it is the collective op, which the program records."""
    if _capturing():
        _C._call_op("_c10d_all_reduce_", tensor, ReduceOp.RedOpType(int(op)).name.lower(), pg.group_name)
        return _completed(pg, "all_reduce", tensor)
    return _mpi_all_reduce(tensor, pg, op)


def _mpi_all_reduce(tensor, pg, op):
    buf = _Buffer(tensor)
    req = pg._comm.Iallreduce(_world.MPI.IN_PLACE, buf.array, _mpi_op(op, tensor, "all_reduce"))
    return Work([req], pg, "all_reduce", _averaged([buf], op, pg.size()), [tensor])


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copies rank src's tensor into tensor on every rank of group."""
    _check_tensor(tensor)
    if _not_member(group):
        return None
    pg = _group(group)
    root = _group_rank(pg, src, group_src, "src")
    _agree(pg, "broadcast", _signature(2, tensor, root + 1))
    return _finish_or_return(_broadcast_unchecked(tensor, pg, root), async_op)


def _broadcast_unchecked(tensor, pg, root):
    """broadcast from group rank root without the shape check; returns its Work (the op inside a capture)."""
    if _capturing():
        _C._call_op("_c10d_broadcast_", tensor, root, pg.group_name)
        return _completed(pg, "broadcast", tensor)
    return _mpi_broadcast(tensor, pg, root)


def _mpi_broadcast(tensor, pg, root):
    buf = _Buffer(tensor)
    return Work([pg._comm.Ibcast(buf.array, root=root)], pg, "broadcast", _store_all([buf]), [tensor])


def _host_all_reduce(array, pg, opname):
    """Sums a numpy array over the group in place: bookkeeping that is not tensor data."""
    _usable()
    _wait([pg._comm.Iallreduce(_world.MPI.IN_PLACE, array, _world.MPI.SUM)], pg, opname)


def _capturing():
    from ..graph._common import tracing
    return tracing()


def _completed(pg, opname, tensor):
    work = Work([], pg, opname, outputs=[tensor])
    work._complete()
    return work


def _named_group(group_name):
    for pg in _world.groups:
        if pg.group_name == group_name:
            return pg
    raise RuntimeError(f"no process group named {group_name!r}: it was destroyed after the program that uses it was "
                       "captured")


class _OpEngine:
    """Runs the collective ops of graph programs (_c10d_all_reduce_, _c10d_broadcast_; Note [Collectives as ops]
    in csrc/ops/collective.h) on MPI, with the same waiting, timeout and dead-rank checks as eager collectives."""

    @staticmethod
    def all_reduce(tensor, reduce_op, group_name):
        _usable()
        _mpi_all_reduce(tensor, _named_group(group_name), ReduceOp.RedOpType[reduce_op.upper()]).wait()

    @staticmethod
    def broadcast(tensor, src, group_name):
        _usable()
        _mpi_broadcast(tensor, _named_group(group_name), src).wait()


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduces tensor across ranks into rank dst's tensor (the other ranks' tensors are left unchanged)."""
    _check_tensor(tensor)
    if _not_member(group):
        return None
    pg = _group(group)
    root = _group_rank(pg, dst, group_dst, "dst")
    mpi_op = _mpi_op(op, tensor, "reduce")
    _agree(pg, "reduce", _signature(3, tensor, root + 1, int(op) + 1))
    buf = _Buffer(tensor)
    MPI = _world.MPI
    if pg.rank() == root:
        req = pg._comm.Ireduce(MPI.IN_PLACE, buf.array, mpi_op, root=root)
        finish = _averaged([buf], op, pg.size())
    else:
        req = pg._comm.Ireduce(buf.array, None, mpi_op, root=root)
        finish = None
    return _run([req], pg, "reduce", async_op, finish, [tensor])


def _check_list(tensors, n, opname, like):
    if len(tensors) != n:
        raise ValueError(f"{opname}: the tensor list has {len(tensors)} tensors, expected one per rank ({n})")
    for t in tensors:
        _check_tensor(t, "tensor_list")
        if t.numel() != like.numel() or t.dtype != like.dtype:
            raise RuntimeError(f"{opname}: tensor list entries must match the input tensor: got shape "
                               f"{list(t.shape)} {t.dtype}, expected {list(like.shape)} {like.dtype}")


def _check_world_sized(opname, big, big_name, small, small_name, world_size):
    """torch's check of the *_tensor collectives: `big` holds world_size times `small`'s elements, same dtype."""
    if big.numel() != small.numel() * world_size or big.dtype != small.dtype:
        raise ValueError(f"{opname}: {big_name} tensor size must be equal to world_size times {small_name} tensor "
                         f"size: {big_name} {list(big.shape)} {big.dtype}, {small_name} {list(small.shape)} "
                         f"{small.dtype}, world_size {world_size}")


def _rows(tensors, shape_numel, dtype_of):
    return np.empty((len(tensors), shape_numel), dtype=dtype_of)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """tensor_list[i] receives rank i's tensor."""
    _check_tensor(tensor)
    if _not_member(group):
        return None
    pg = _group(group)
    _check_list(tensor_list, pg.size(), "all_gather", tensor)
    _agree(pg, "all_gather", _signature(4, tensor))
    src = _Buffer(tensor)
    gathered = _rows(tensor_list, tensor.numel(), src.array.dtype)
    req = pg._comm.Iallgather(src.array, gathered)

    def finish():
        _copy_rows(gathered, tensor_list)
    return _run([req], pg, "all_gather", async_op, finish, tensor_list)


def _copy_rows(rows, tensors):
    fl = _flowlike()
    with fl.no_grad():
        for row, t in zip(rows, tensors):
            t.detach().copy_(fl.from_numpy(row.reshape(tuple(t.shape))))


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """output_tensor receives every rank's input_tensor, concatenated along dim 0 or stacked (output of shape
    (world_size * n, ...) or (world_size, n, ...))."""
    _check_tensor(output_tensor, "output_tensor")
    _check_tensor(input_tensor, "input_tensor")
    if _not_member(group):
        return None
    pg = _group(group)
    _check_world_sized("all_gather_into_tensor", output_tensor, "output", input_tensor, "input", pg.size())
    _agree(pg, "all_gather_into_tensor", _signature(5, input_tensor))
    src, out = _Buffer(input_tensor), _Buffer(output_tensor, read=False)
    req = pg._comm.Iallgather(src.array, out.array)
    return _run([req], pg, "all_gather_into_tensor", async_op, _store_all([out]), [output_tensor])


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """output receives the reduction over ranks of their input_list[rank]."""
    _check_tensor(output, "output")
    if _not_member(group):
        return None
    pg = _group(group)
    _check_list(input_list, pg.size(), "reduce_scatter", output)
    fl = _flowlike()
    return reduce_scatter_tensor(output, fl.cat([t.reshape(-1) for t in input_list]), op, group, async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """output receives its rank's chunk (along dim 0) of input reduced over all ranks."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    if _not_member(group):
        return None
    pg = _group(group)
    _check_world_sized("reduce_scatter_tensor", input, "input", output, "output", pg.size())
    mpi_op = _mpi_op(op, output, "reduce_scatter")
    _agree(pg, "reduce_scatter", _signature(6, output, int(op) + 1))
    src, out = _Buffer(input), _Buffer(output, read=False)
    req = pg._comm.Ireduce_scatter_block(src.array, out.array, mpi_op)
    return _run([req], pg, "reduce_scatter", async_op, _averaged([out], op, pg.size()), [output])


def _rooted(pg, root, group_root, role, op, tensor, tensors, list_name):
    """The group rank of a rooted collective's root (role "dst" or "src"; rank 0 by default) and whether this rank
    is it, after torch's checks of the list that only the root passes."""
    root = _group_rank(pg, 0 if root is None and group_root is None else root, group_root, role)
    is_root = pg.rank() == root
    place = "destination" if role == "dst" else "source"
    if is_root:
        if tensors is None:
            raise ValueError(f"Argument ``{list_name}`` must be specified on {place} rank.")
        _check_list(tensors, pg.size(), op, tensor)
    elif tensors:
        raise ValueError(f"Argument ``{list_name}`` must NOT be specified on non-{place} ranks.")
    return root, is_root


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """Rank dst's gather_list[i] receives rank i's tensor (gather_list only on dst)."""
    _check_tensor(tensor)
    if _not_member(group):
        return None
    pg = _group(group)
    root, is_root = _rooted(pg, dst, group_dst, "dst", "gather", tensor, gather_list, "gather_list")
    _agree(pg, "gather", _signature(7, tensor, root + 1))
    src = _Buffer(tensor)
    rows = _rows(gather_list, tensor.numel(), src.array.dtype) if is_root else None
    req = pg._comm.Igather(src.array, rows, root=root)
    finish = (lambda: _copy_rows(rows, gather_list)) if is_root else None
    return _run([req], pg, "gather", async_op, finish, gather_list or [])


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """Rank i's tensor receives rank src's scatter_list[i] (scatter_list only on src)."""
    _check_tensor(tensor)
    if _not_member(group):
        return None
    pg = _group(group)
    root, is_root = _rooted(pg, src, group_src, "src", "scatter", tensor, scatter_list, "scatter_list")
    _agree(pg, "scatter", _signature(8, tensor, root + 1))
    out = _Buffer(tensor, read=False)
    rows = None
    if is_root:
        rows = np.stack([_Buffer(t).array for t in scatter_list]) if scatter_list else None
    req = pg._comm.Iscatter(rows, out.array, root=root)
    return _run([req], pg, "scatter", async_op, _store_all([out]), [tensor])


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None, async_op=False):
    """Rank i sends chunk j of input (along dim 0; sizes input_split_sizes, default equal) to rank j, and receives
    into chunk j of output (sizes output_split_sizes) from rank j."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    if _not_member(group):
        return None
    pg = _group(group)
    n = pg.size()
    if input.dtype != output.dtype:
        raise RuntimeError(f"all_to_all: input and output dtypes differ: {input.dtype} and {output.dtype}")
    row_in = input.numel() // max(1, input.shape[0]) if input.dim() else 1
    row_out = output.numel() // max(1, output.shape[0]) if output.dim() else 1

    def counts(splits, t, row, name):
        if splits is None or len(splits) == 0:
            if t.shape[0] % n:
                raise ValueError(f"all_to_all: {name} dim 0 ({t.shape[0]}) is not divisible by the world size {n}")
            return [t.shape[0] // n * row] * n
        if len(splits) != n or sum(splits) != t.shape[0]:
            raise ValueError(f"all_to_all: {name}_split_sizes {list(splits)} must have {n} entries summing to "
                             f"{t.shape[0]}")
        return [int(s) * row for s in splits]
    send_counts = counts(input_split_sizes, input, row_in, "input")
    recv_counts = counts(output_split_sizes, output, row_out, "output")
    _usable()
    expected = np.empty(n, dtype=np.int64)
    _wait([pg._comm.Ialltoall(np.array(send_counts, dtype=np.int64), expected)], pg, "all_to_all")
    if list(expected) != recv_counts:
        raise RuntimeError(f"all_to_all: rank {pg._ranks[pg.rank()]} expects {recv_counts} elements from the ranks "
                           f"but they send {list(expected)}")
    src, out = _Buffer(input), _Buffer(output, read=False)
    displ = lambda c: np.concatenate([[0], np.cumsum(c)[:-1]]).astype(np.int64).tolist()  # noqa: E731
    req = pg._comm.Ialltoallv([src.array, (send_counts, displ(send_counts))],
                              [out.array, (recv_counts, displ(recv_counts))])
    return _run([req], pg, "all_to_all", async_op, _store_all([out]), [output])


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """Rank i sends input_tensor_list[j] to rank j, which receives it into output_tensor_list[i]."""
    if _not_member(group):
        return None
    pg = _group(group)
    n = pg.size()
    for name, ts in (("output_tensor_list", output_tensor_list), ("input_tensor_list", input_tensor_list)):
        if len(ts) != n:
            raise ValueError(f"all_to_all: {name} has {len(ts)} tensors, expected one per rank ({n})")
        for t in ts:
            _check_tensor(t, name)
    fl = _flowlike()
    flat_in = fl.cat([t.reshape(-1) for t in input_tensor_list])
    flat_out = fl.empty(sum(t.numel() for t in output_tensor_list), dtype=output_tensor_list[0].dtype)
    work = all_to_all_single(flat_out, flat_in, [t.numel() for t in output_tensor_list],
                             [t.numel() for t in input_tensor_list], group, async_op=True)
    inner = work._finish

    def finish():
        inner()
        with fl.no_grad():
            for t, chunk in zip(output_tensor_list, flat_out.split([t.numel() for t in output_tensor_list])):
                t.detach().copy_(chunk.view(tuple(t.shape)))
    work._finish, work._outputs = finish, output_tensor_list
    if async_op:
        return work
    work.wait()
    return None


def barrier(group=None, async_op=False, device_ids=None):
    """Waits until every rank of group has reached the barrier."""
    if _not_member(group):
        return None
    pg = _group(group)
    _usable()
    return _run([pg._comm.Ibarrier()], pg, "barrier", async_op)


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """A barrier that raises DistBackendError when a rank does not arrive within timeout (default: the group's)."""
    if _not_member(group):
        return None
    pg = _group(group)
    _usable()
    _wait([pg._comm.Ibarrier()], pg, "monitored_barrier", timeout)


def _p2p(tensor, peer, group_peer, group, tag, recv):
    _check_tensor(tensor)
    pg = _group(group)
    _usable()
    MPI = _world.MPI
    if recv and peer is None and group_peer is None:
        other = MPI.ANY_SOURCE
    else:
        other = _group_rank(pg, peer, group_peer, "src" if recv else "dst")
        if other == pg.rank():
            raise ValueError("Invalid destination rank: should not be the same as rank of the current process."
                             if not recv else "Invalid source rank: should not be the same as rank of the current "
                                              "process.")
    buf = _Buffer(tensor, read=not recv)
    if not recv:
        return Work([pg._comm.Isend(buf.array, dest=other, tag=tag)], pg, "send", outputs=[tensor])
    status = MPI.Status()

    def finish():
        count = status.Get_count(MPI._typedict[buf.array.dtype.char])
        sender = pg._ranks[status.Get_source()]
        if count != buf.array.size:
            raise RuntimeError(f"recv: expected {buf.array.size} elements ({list(tensor.shape)} {tensor.dtype}) but "
                               f"rank {sender} sent {count}")
        buf.store()
        return sender
    return Work([pg._comm.Irecv(buf.array, source=other, tag=tag)], pg, "recv", finish, [tensor], [status])


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Starts sending tensor to rank dst; returns a Work to wait on."""
    return _p2p(tensor, dst, group_dst, group, tag, recv=False)


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Starts receiving into tensor from rank src (any rank when None); returns a Work to wait on."""
    return _p2p(tensor, src, group_src, group, tag, recv=True)


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Sends tensor to rank dst, which receives it with recv."""
    isend(tensor, dst, group, tag, group_dst).wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receives into tensor from rank src (any rank when None); returns the sender's rank."""
    work = irecv(tensor, src, group, tag, group_src)
    work.wait()
    return work._result_value


class P2POp:
    """One send or receive for batch_isend_irecv: P2POp(dist.isend or dist.irecv, tensor, peer)."""

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type ``torch.distributed.isend`` or "
                             "``torch.distributed.irecv``.")
        self.op, self.tensor, self.peer, self.group, self.tag, self.group_peer = op, tensor, peer, group, tag, \
            group_peer


def batch_isend_irecv(p2p_op_list):
    """Starts every send and receive of the list; returns their Works."""
    if not p2p_op_list:
        raise ValueError("batch_isend_irecv expects a non-empty list of P2POp")
    return [p.op(p.tensor, p.peer, p.group, p.tag, p.group_peer) for p in p2p_op_list]


# ---- picklable objects --------------------------------------------------------------------------------------

def _gather_bytes(pg, payload, opname):
    """Every rank's bytes, on every rank."""
    _usable()
    sizes = np.empty(pg.size(), dtype=np.int64)
    _wait([pg._comm.Iallgather(np.array([len(payload)], dtype=np.int64), sizes)], pg, opname)
    width = int(sizes.max()) if len(sizes) else 0
    mine = np.zeros(width, dtype=np.uint8)
    mine[:len(payload)] = np.frombuffer(payload, dtype=np.uint8)
    rows = np.empty((pg.size(), width), dtype=np.uint8)
    _wait([pg._comm.Iallgather(mine, rows)], pg, opname)
    return [rows[i, :sizes[i]].tobytes() for i in range(pg.size())]


def _bcast_bytes(pg, payload, root, opname):
    _usable()
    size = np.array([len(payload) if pg.rank() == root else 0], dtype=np.int64)
    _wait([pg._comm.Ibcast(size, root=root)], pg, opname)
    data = np.zeros(int(size[0]), dtype=np.uint8)
    if pg.rank() == root:
        data[:] = np.frombuffer(payload, dtype=np.uint8)
    _wait([pg._comm.Ibcast(data, root=root)], pg, opname)
    return data.tobytes()


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Replaces object_list's entries on every rank by rank src's (picklable objects; the lists must have the same
    length)."""
    if _not_member(group):
        return
    pg = _group(group)
    root = _group_rank(pg, 0 if src is None and group_src is None else src, group_src, "src")
    payload = pickle.dumps(list(object_list)) if pg.rank() == root else b""
    received = pickle.loads(_bcast_bytes(pg, payload, root, "broadcast_object_list"))
    if len(received) != len(object_list):
        raise RuntimeError(f"broadcast_object_list: rank {pg._ranks[root]} sent {len(received)} objects into a list "
                           f"of {len(object_list)}")
    object_list[:] = received


def all_gather_object(object_list, obj, group=None):
    """object_list[i] receives rank i's obj (picklable)."""
    if _not_member(group):
        return
    pg = _group(group)
    if len(object_list) != pg.size():
        raise ValueError(f"all_gather_object: object_list has {len(object_list)} entries, expected {pg.size()}")
    object_list[:] = [pickle.loads(b) for b in _gather_bytes(pg, pickle.dumps(obj), "all_gather_object")]


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    """Rank dst's object_gather_list[i] receives rank i's obj."""
    if _not_member(group):
        return
    pg = _group(group)
    root = _group_rank(pg, 0 if dst is None and group_dst is None else dst, group_dst, "dst")
    if pg.rank() == root and (object_gather_list is None or len(object_gather_list) != pg.size()):
        raise ValueError(f"gather_object: object_gather_list must have {pg.size()} entries on the destination rank")
    everyone = _gather_bytes(pg, pickle.dumps(obj), "gather_object")
    if pg.rank() == root:
        object_gather_list[:] = [pickle.loads(b) for b in everyone]


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None, group=None,
                        group_src=None):
    """scatter_object_output_list[0] on rank i receives rank src's scatter_object_input_list[i]."""
    if _not_member(group):
        return
    pg = _group(group)
    root = _group_rank(pg, 0 if src is None and group_src is None else src, group_src, "src")
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at least 1.")
    payload = b""
    if pg.rank() == root:
        if scatter_object_input_list is None or len(scatter_object_input_list) != pg.size():
            raise ValueError(f"scatter_object_list: scatter_object_input_list must have {pg.size()} entries on the "
                             f"source rank")
        payload = pickle.dumps(list(scatter_object_input_list))
    objects = pickle.loads(_bcast_bytes(pg, payload, root, "scatter_object_list"))
    scatter_object_output_list[0] = objects[pg.rank()]
