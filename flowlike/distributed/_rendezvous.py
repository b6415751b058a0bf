"""Rendezvous for ranks started as independent processes (env://, tcp://, file://): a small TCP server that joins
them into one MPI world, and watches that they stay alive.

Note [MPI world from independent processes]
MPICH's MPI_Init asks a process manager, through the PMI-1 wire protocol on the socket named by PMI_FD, for the
world size, this process's rank, and a key-value space where the ranks exchange their addresses. `mpiexec` is one
such manager; this file holds another: rank 0 starts `_serve` (in a child process, because rank 0's own MPI_Init
blocks while holding the GIL) on the listening socket MASTER_ADDR:MASTER_PORT. Each rank connects, says hello with
its rank and the world size, and waits until all world_size ranks have said hello (so MPI_Init never waits on a
missing rank: a missing one gives a timeout error here, in Python). It then hands the socket to MPICH as PMI_FD and
imports mpi4py: MPI_Init builds one COMM_WORLD over all ranks, and every collective after it is MPI's own.

Each rank also keeps a second connection, its watch line. The kernel closes it when the process ends; a rank
that ends without saying `bye` first has died, and the server tells every other rank on its watch line, so their
waits (distributed_c10d._wait) raise an error at once instead of hanging. A dead rank also counts as present in
later PMI barriers, so the survivors' MPI_Finalize does not wait on it. A rank that ends its program says `bye`
(then waits in MPI_Finalize for the others); the server tells the others it exited, and a collective that still
waits for it a moment later fails, as with torch's gloo when a peer closes its connection.

This file runs as a script (the server) and must import nothing from flowlike.
"""
import os
import select
import socket
import sys
import threading
import time

_LINE_MAX = 1 << 16


def _parse(line):
    return dict(kv.split("=", 1) for kv in line.split() if "=" in kv)


class _Server:
    """The PMI-1 server plus the watch lines; one thread per connection."""

    def __init__(self, listener, world_size, join_timeout):
        self.listener = listener
        self.world_size = world_size
        self.give_up = time.monotonic() + join_timeout  # with no rank connected after this, the server ends
        self.lock = threading.Condition()
        self.hello = set()          # ranks that said hello
        self.kvs = {}
        self.barrier = {}           # rank -> connection, for the ranks waiting in the current PMI barrier
        self.dead = set()
        self.watchers = {}          # rank -> watch connection
        # MPICH names its shared-memory segments after the key-value space: one name per world, never reused
        self.kvsname = f"flowlike_{os.getpid()}_{time.time_ns()}"
        self.open = 0               # connections being served; the server ends when the last one closes
        self.shm_files = set()      # MPI's shared-memory files the ranks mapped, removed when the world has ended

    def run(self):
        self.listener.settimeout(1.0)
        while True:
            try:
                conn, _ = self.listener.accept()
            except socket.timeout:
                with self.lock:
                    if self.open == 0 and (self.hello or time.monotonic() > self.give_up):
                        self._remove_shm_files()
                        return
                continue
            with self.lock:
                self.open += 1
            threading.Thread(target=self._serve_conn, args=(conn,), daemon=True).start()

    def _remove_shm_files(self):
        # MPI_Finalize removes them; a rank that died, or a survivor that ended without finalizing, leaves them
        for path in self.shm_files:
            try:
                os.unlink(path)
            except OSError:
                pass

    def _release_barrier_if_complete(self):
        if self.barrier and len(self.barrier.keys() | self.dead) >= self.world_size:
            for c in self.barrier.values():
                try:
                    c.sendall(b"cmd=barrier_out\n")
                except OSError:
                    pass
            self.barrier = {}

    def _serve_conn(self, conn):
        try:
            f = conn.makefile("rb")
            d = _parse(f.readline(_LINE_MAX).decode())
            rank = int(d.get("rank", -1))
            if d.get("cmd") == "flowlike_watch":
                self._watch(conn, f, rank)
            elif d.get("cmd") == "flowlike_hello":
                self._pmi(conn, f, rank, int(d.get("world_size", -1)))
        except (OSError, ValueError):
            pass
        finally:
            conn.close()
            with self.lock:
                self.open -= 1

    def _watch(self, conn, f, rank):
        with self.lock:
            self.watchers[rank] = conn
        said_bye = False
        while True:
            line = f.readline(_LINE_MAX)
            if not line:
                break
            d = _parse(line.decode())
            if d.get("cmd") == "bye":
                said_bye = True
                self._tell_others(rank, "exited")
            elif d.get("cmd") == "shm" and _is_mpi_shm_file(d.get("path", "")):
                with self.lock:
                    self.shm_files.add(d["path"])
        if said_bye:
            return
        with self.lock:
            self.dead.add(rank)
            self._release_barrier_if_complete()
        self._tell_others(rank, "dead")

    def _tell_others(self, rank, what):
        with self.lock:
            for r, c in self.watchers.items():
                if r != rank:
                    try:
                        c.sendall(f"cmd={what} rank={rank}\n".encode())
                    except OSError:
                        pass

    def _pmi(self, conn, f, rank, world_size):
        with self.lock:
            if world_size != self.world_size or not 0 <= rank < world_size or rank in self.hello:
                why = (f"rank {rank} is already taken" if rank in self.hello else
                       f"rank {rank} with world_size {world_size} does not fit the world of size {self.world_size} "
                       f"that rank 0 started")
                conn.sendall(f"cmd=flowlike_error msg={why.replace(' ', '_')}\n".encode())
                return
            self.hello.add(rank)
            self.lock.notify_all()
            while len(self.hello) < self.world_size:
                self.lock.wait(0.5)
                if select.select([conn], [], [], 0)[0] and not conn.recv(1, socket.MSG_PEEK):
                    self.hello.discard(rank)  # gave up waiting (its timeout) before the world was complete
                    return
        conn.sendall(b"cmd=flowlike_ok\n")

        def send(text):
            conn.sendall((text + "\n").encode())
        while True:
            line = f.readline(_LINE_MAX)
            if not line:
                break
            d = _parse(line.decode())
            cmd = d.get("cmd")
            if cmd == "init":
                send("cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0")
            elif cmd == "get_maxes":
                send("cmd=maxes kvsname_max=256 keylen_max=256 vallen_max=1024 rc=0")
            elif cmd == "get_appnum":
                send("cmd=appnum appnum=0 rc=0")
            elif cmd == "get_my_kvsname":
                send(f"cmd=my_kvsname kvsname={self.kvsname} rc=0")
            elif cmd == "get_universe_size":
                send(f"cmd=universe_size size={self.world_size} rc=0")
            elif cmd == "put":
                with self.lock:
                    self.kvs[d["key"]] = d.get("value", "")
                send("cmd=put_result rc=0")
            elif cmd == "get":
                with self.lock:
                    value = self.kvs.get(d.get("key"))
                send("cmd=get_result rc=-1 msg=key_not_found" if value is None else
                     f"cmd=get_result rc=0 value={value}")
            elif cmd == "barrier_in":
                with self.lock:
                    self.barrier[rank] = conn
                    self._release_barrier_if_complete()
            elif cmd == "finalize":
                send("cmd=finalize_ack")
            elif cmd == "abort":
                break
            else:
                send(f"cmd={cmd}_result rc=-1 msg=unsupported_by_flowlike")


def _serve(fd, world_size, join_timeout):
    listener = socket.socket(fileno=fd)
    _Server(listener, world_size, join_timeout).run()


# ---- the rank's side ----------------------------------------------------------------------------------------

def _connect(addr, port, deadline):
    last = None
    while True:
        try:
            return socket.create_connection((addr, port), timeout=max(0.1, deadline - time.monotonic()))
        except OSError as e:
            last = e
        if time.monotonic() > deadline:
            raise TimeoutError(f"could not reach the rendezvous server at {addr}:{port}: {last}")
        time.sleep(0.05)


def start_server(port, world_size, join_timeout, host=""):
    """Rank 0: binds the listening socket (an error now if the port is taken) and starts the server process on it.
    Returns the bound port (the one asked for, or the free one chosen when port is 0)."""
    import subprocess
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except OSError as e:
        listener.close()
        raise OSError(e.errno, f"The server socket has failed to listen on any local network address. port: {port}, "
                               f"message: {e.strerror}") from None
    listener.listen(max(128, world_size * 2))
    bound = listener.getsockname()[1]
    subprocess.Popen([sys.executable, os.path.abspath(__file__), str(listener.fileno()), str(world_size),
                      str(join_timeout)],
                     pass_fds=(listener.fileno(),), stdin=subprocess.DEVNULL, start_new_session=True)
    listener.close()
    return bound


def join(addr, port, rank, world_size, timeout):
    """Connects this rank's PMI line and watch line; returns them once all ranks are present."""
    deadline = time.monotonic() + timeout
    pmi = _connect(addr, port, deadline)
    pmi.sendall(f"cmd=flowlike_hello rank={rank} world_size={world_size}\n".encode())
    reply = b""
    while not reply.endswith(b"\n"):
        left = deadline - time.monotonic()
        ready, _, _ = select.select([pmi], [], [], max(0.0, left))
        if not ready:
            pmi.close()
            raise TimeoutError(f"Timed out after {timeout:.0f} seconds waiting for all {world_size} ranks to join the "
                               f"rendezvous at {addr}:{port} (this is rank {rank})")
        chunk = pmi.recv(4096)
        if not chunk:
            raise ConnectionError(f"the rendezvous server at {addr}:{port} closed the connection")
        reply += chunk
    d = _parse(reply.decode())
    if d.get("cmd") != "flowlike_ok":
        pmi.close()
        raise ValueError("rendezvous refused: " + d.get("msg", "?").replace("_", " "))
    watch = _connect(addr, port, deadline)
    watch.sendall(f"cmd=flowlike_watch rank={rank}\n".encode())
    watch.setblocking(False)
    pmi.settimeout(None)
    return pmi, watch


def news(watch):
    """What the server reported on this watch line since the last call (never blocks): a list of (rank, what),
    what being "dead" (ended without bye: crashed or killed) or "exited" (ended its program: said bye). Rank -1
    "dead" means the server itself is gone."""
    try:
        data = watch.recv(4096)
    except (BlockingIOError, InterruptedError):
        return []
    except OSError:
        return [(-1, "dead")]
    if not data:
        return [(-1, "dead")]
    found = []
    for line in data.decode().splitlines():
        d = _parse(line)
        if d.get("cmd") in ("dead", "exited"):
            found.append((int(d.get("rank", -1)), d["cmd"]))
    return found


def _is_mpi_shm_file(path):
    return os.path.dirname(path) == "/dev/shm" and os.path.basename(path).startswith("mpich_shm_")


def report_shm_files(watch):
    """Tells the server which MPI shared-memory files this process mapped (read from /proc/self/maps), so that it
    removes them once the world has ended, also when no rank could finalize."""
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if "/dev/shm/mpich_shm_" in line}
    except OSError:
        return
    message = "".join(f"cmd=shm path={p}\n" for p in sorted(paths) if _is_mpi_shm_file(p))
    if message:
        watch.setblocking(True)
        watch.sendall(message.encode())
        watch.setblocking(False)


def say_bye(watch):
    """Tells the server this rank ends on purpose (not a death)."""
    try:
        watch.setblocking(True)
        watch.sendall(b"cmd=bye\n")
        watch.close()
    except OSError:
        pass


if __name__ == "__main__":
    _serve(int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]))
