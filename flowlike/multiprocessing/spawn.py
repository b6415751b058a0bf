"""spawn / start_processes (torch.multiprocessing.spawn): fn(i, *args) on nprocs processes; an error in one ends
the others and is raised in the parent with the child's traceback."""
import contextlib
import multiprocessing
import multiprocessing.connection
import multiprocessing.spawn
import os
import pickle
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback

__all__ = ["spawn", "start_processes", "ProcessContext", "SpawnContext", "ProcessException", "ProcessRaisedException",
           "ProcessExitedException"]


class ProcessException(Exception):
    """A spawned process failed."""

    def __init__(self, msg, error_index, pid):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.pid = pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A spawned process raised an exception (its traceback is in the message)."""


class ProcessExitedException(ProcessException):
    """A spawned process exited with a nonzero code or was killed by a signal."""

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code, self.signal_name)


def _wrap(fn, i, args, error_file):
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:
        with open(error_file, "wb") as f:
            pickle.dump(traceback.format_exc(), f)
        c10d = sys.modules.get("flowlike.distributed.distributed_c10d")
        if c10d is not None:  # leave the process group at once, not after the other ranks (MPI_Finalize)
            c10d._crashed(f"the spawned function raised {sys.exc_info()[0].__name__}")
        sys.exit(1)


class ProcessContext:
    """The processes spawn() started; join() waits for them and raises the first failure."""

    def __init__(self, processes, error_files, error_dir=None):
        self.processes = processes
        self.error_files = error_files
        self.error_dir = error_dir
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self):
        """The processes' ids."""
        return [p.pid for p in self.processes]

    def join(self, timeout=None, grace_period=None):
        """Waits up to timeout seconds; True once all processes ended successfully. A failed process ends the
        others (SIGTERM, then SIGKILL after grace_period seconds) and raises ProcessRaisedException or
        ProcessExitedException."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(list(self.sentinels), timeout=timeout)
        failed = None
        for sentinel in ready:
            i = self.sentinels.pop(sentinel)
            p = self.processes[i]
            p.join()
            if p.exitcode != 0 and failed is None:
                failed = i
        if failed is None:
            if not self.sentinels:
                self._remove_error_dir()
            return not self.sentinels
        for p in self.processes:
            if p.is_alive():
                p.terminate()
        deadline = time.monotonic() + (grace_period or 0)
        for p in self.processes:
            p.join(max(0.0, deadline - time.monotonic()))
            if p.is_alive():
                p.kill()
                p.join()
        self.sentinels.clear()
        # several may have failed by now (the others of a process group fail when one dies): report the first
        # exception raised, by the time its error file was written
        raised = [i for i, f in enumerate(self.error_files) if os.path.exists(f)]
        if raised:
            failed = min(raised, key=lambda i: os.path.getmtime(self.error_files[i]))
        p = self.processes[failed]
        if os.path.exists(self.error_files[failed]):
            with open(self.error_files[failed], "rb") as f:
                original = pickle.load(f)
            self._remove_error_dir()
            raise ProcessRaisedException(f"\n\n-- Process {failed} terminated with the following error:\n{original}",
                                         failed, p.pid)
        self._remove_error_dir()
        if p.exitcode < 0:
            name = signal.Signals(-p.exitcode).name
            raise ProcessExitedException(f"process {failed} terminated with signal {name}", failed, p.pid,
                                         p.exitcode, name)
        raise ProcessExitedException(f"process {failed} terminated with exit code {p.exitcode}", failed, p.pid,
                                     p.exitcode)


    def _remove_error_dir(self):
        if self.error_dir is not None:
            shutil.rmtree(self.error_dir, ignore_errors=True)
            self.error_dir = None


class SpawnContext(ProcessContext):
    """The ProcessContext of spawn() (torch's name)."""


_launch_lock = threading.Lock()


@contextlib.contextmanager
def _children_mock_torch():
    """While processes start: if mock_torch is on here, their command line turns it on before they import the
    parent's main module (which may `import torch`)."""
    from ..compat import mock_torch
    if not mock_torch.is_enabled():
        yield
        return
    original = multiprocessing.spawn.get_command_line

    def command_line(**kwds):
        cmd = original(**kwds)
        i = cmd.index("-c") + 1
        cmd[i] = "from flowlike.compat import mock_torch; mock_torch.enable(); " + cmd[i]
        return cmd
    with _launch_lock:
        multiprocessing.spawn.get_command_line = command_line
        try:
            yield
        finally:
            multiprocessing.spawn.get_command_line = original


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Runs fn(i, *args) for i in range(nprocs), each in a new process started by start_method; with join, waits
    for all of them (raising the first failure), else returns their ProcessContext."""
    ctx = multiprocessing.get_context(start_method)
    error_dir = tempfile.mkdtemp(prefix="flowlike_spawn_")
    processes, error_files = [], []
    with _children_mock_torch():
        for i in range(nprocs):
            error_file = os.path.join(error_dir, f"error_{i}")
            p = ctx.Process(target=_wrap, args=(fn, i, args, error_file), daemon=daemon)
            p.start()
            processes.append(p)
            error_files.append(error_file)
    context = ProcessContext(processes, error_files, error_dir)
    if not join:
        return context
    while not context.join():
        pass


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """start_processes with the "spawn" start method (torch.multiprocessing.spawn)."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)
