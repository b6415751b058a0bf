"""Key-value stores (torch.distributed.Store and its kinds): what ranks use to find each other and to exchange
small values before and beside the collectives.

Every kind keeps the same table semantics (_Table): values are bytes; `add` keeps a decimal integer; `get` and
`wait` block until the keys exist, up to the store's timeout (DistStoreError after it); queues are lists of values
under a key. HashStore holds the table in this process; TCPStore's master serves it over TCP to every client (one
thread per connection; blocking requests wait in the server, so clients do not poll); FileStore keeps it in a file
that several processes share (read and rewritten under an exclusive lock). PrefixStore puts a prefix before
another store's keys. `init_process_group(store=...)` uses a store to tell the ranks where rank 0's rendezvous
server listens.
"""
import base64
import datetime
import fcntl
import json
import socket
import struct
import threading
import time

__all__ = ["Store", "HashStore", "TCPStore", "FileStore", "PrefixStore"]

_DEFAULT_TIMEOUT = datetime.timedelta(seconds=300)


def _error(message):
    from .distributed_c10d import DistStoreError
    return DistStoreError(message)


def _as_bytes(value, what="value"):
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, (list, tuple)) and all(isinstance(v, int) for v in value):
        return bytes(value)  # torch accepts a list of byte values
    raise TypeError(f"Store {what} must be str or bytes, got {type(value).__name__}")


def _as_key(key):
    if not isinstance(key, str):
        raise TypeError(f"Store keys must be str, got {type(key).__name__}")
    return key


class _Table:
    """The key-value table and the operations of every store, atomic under one condition variable. Blocking
    operations take an absolute deadline (time.monotonic())."""

    def __init__(self, data=None):
        self.data = {} if data is None else data
        self.cond = threading.Condition()

    def apply(self, op, args, deadline):
        with self.cond:
            result = getattr(self, "_" + op)(*args, deadline=deadline)
            self.cond.notify_all()
            return result

    def _wait_for(self, keys, deadline, message):
        while not all(k in self.data for k in keys):
            left = deadline - time.monotonic()
            if left <= 0:
                raise _error(message)
            self.cond.wait(left)

    def _set(self, key, value, deadline=None):
        self.data[key] = value

    def _get(self, key, deadline=None):
        self._wait_for([key], deadline, "Wait timeout")
        value = self.data[key]
        if isinstance(value, list):
            raise _error(f"key {key} holds a queue, not a value")
        return value

    def _add(self, key, amount, deadline=None):
        try:
            value = int(self.data.get(key, b"0")) + int(amount)
        except ValueError:
            raise ValueError("stoll") from None  # torch's message: the stored value is no integer
        self.data[key] = str(value).encode()
        return value

    def _compare_set(self, key, expected, desired, deadline=None):
        if key not in self.data:
            if expected:
                return expected
            self.data[key] = desired
            return desired
        if self.data[key] == expected:
            self.data[key] = desired
        return self.data[key]

    def _wait(self, keys, deadline=None):
        self._wait_for(keys, deadline, "Wait timeout")

    def _check(self, keys, deadline=None):
        return all(k in self.data for k in keys)

    def _delete_key(self, key, deadline=None):
        return self.data.pop(key, None) is not None

    def _num_keys(self, deadline=None):
        return len(self.data)

    def _list_keys(self, deadline=None):
        return list(self.data)

    def _append(self, key, value, deadline=None):
        self.data[key] = self.data.get(key, b"") + value

    def _multi_get(self, keys, deadline=None):
        self._wait_for(keys, deadline, "Wait timeout")
        return [self.data[k] for k in keys]

    def _multi_set(self, keys, values, deadline=None):
        self.data.update(zip(keys, values))

    def _queue_push(self, key, value, deadline=None):
        self.data.setdefault(key, []).append(value)

    def _queue_pop(self, key, block, deadline=None):
        while not self.data.get(key):
            if not block:
                raise _error(f"queue_pop: key {key} is empty")
            left = deadline - time.monotonic()
            if left <= 0:
                raise _error("Wait timeout")
            self.cond.wait(left)
        value = self.data[key].pop(0)
        if not self.data[key]:
            del self.data[key]  # an emptied queue leaves no key, as torch's
        return value

    def _queue_len(self, key, deadline=None):
        return len(self.data.get(key, []))


class Store:
    """torch.distributed.Store: a key-value store shared by the ranks. Values are bytes (str values are encoded);
    get, wait and multi_get block until their keys exist, at most `timeout`."""

    _internal_keys = ()

    def __init__(self, timeout=_DEFAULT_TIMEOUT):
        self._timeout = timeout

    # one operation on the table; blocking ones end by `deadline` (time.monotonic())
    def _call(self, op, *args, deadline=None):
        raise NotImplementedError

    def _deadline(self, timeout=None):
        return time.monotonic() + (self._timeout if timeout is None else timeout).total_seconds()

    @property
    def timeout(self):
        """How long blocking operations wait (a datetime.timedelta)."""
        return self._timeout

    def set_timeout(self, timeout):
        """Sets how long blocking operations wait."""
        if not isinstance(timeout, datetime.timedelta):
            raise TypeError(f"set_timeout expects a datetime.timedelta, got {type(timeout).__name__}")
        self._timeout = timeout

    def set(self, key, value):
        """Stores value (str or bytes) under key."""
        self._call("set", _as_key(key), _as_bytes(value))

    def get(self, key):
        """The value of key (bytes), waiting for the key to be set."""
        return self._call("get", _as_key(key), deadline=self._deadline())

    def add(self, key, amount):
        """Adds amount to the integer stored under key (0 when missing); returns the new value."""
        if not isinstance(amount, int):
            raise TypeError(f"add: amount must be int, got {type(amount).__name__}")
        return self._call("add", _as_key(key), amount)

    def compare_set(self, key, expected_value, desired_value):
        """Sets key to desired_value if it holds expected_value (or is missing and expected_value is empty);
        returns the value the key holds afterwards (expected_value when the key is missing and stays so)."""
        return self._call("compare_set", _as_key(key), _as_bytes(expected_value, "expected_value"),
                          _as_bytes(desired_value, "desired_value"))

    def wait(self, keys, timeout=None):
        """Waits until every key in keys is set (timeout: a timedelta overriding the store's)."""
        self._call("wait", [_as_key(k) for k in keys], deadline=self._deadline(timeout))

    def check(self, keys):
        """Whether every key in keys is set (never waits)."""
        return self._call("check", [_as_key(k) for k in keys])

    def delete_key(self, key):
        """Removes key; returns whether it existed."""
        return self._call("delete_key", _as_key(key))

    def num_keys(self):
        """The number of keys stored."""
        return self._call("num_keys")

    def list_keys(self):
        """The keys stored (not the store's own bookkeeping keys, which num_keys counts, as torch's)."""
        return [k for k in self._call("list_keys") if k not in self._internal_keys]

    def append(self, key, value):
        """Appends value to the bytes stored under key (creating it)."""
        self._call("append", _as_key(key), _as_bytes(value))

    def multi_get(self, keys):
        """The values of keys, waiting until all are set."""
        return self._call("multi_get", [_as_key(k) for k in keys], deadline=self._deadline())

    def multi_set(self, keys, values):
        """Sets each key of keys to the value at the same position of values."""
        if len(keys) != len(values):
            raise ValueError("multi_set: keys and values must have the same length")
        self._call("multi_set", [_as_key(k) for k in keys], [_as_bytes(v) for v in values])

    def queue_push(self, key, value):
        """Appends value to the queue under key."""
        self._call("queue_push", _as_key(key), _as_bytes(value))

    def queue_pop(self, key, block=True):
        """Removes and returns the first value of the queue under key (waiting for one when block)."""
        return self._call("queue_pop", _as_key(key), bool(block), deadline=self._deadline())

    def queue_len(self, key):
        """The number of values in the queue under key."""
        return self._call("queue_len", _as_key(key))

    def has_extended_api(self):
        """True: append, multi_get, multi_set and the queues are supported."""
        return True


class HashStore(Store):
    """A store held in this process (threads share it)."""

    def __init__(self):
        super().__init__()
        self._table = _Table()

    def _call(self, op, *args, deadline=None):
        return self._table.apply(op, args, deadline)


# ---- TCPStore: the table served over TCP --------------------------------------------------------------------

def _encode(value):
    """JSON-safe form of the values a store operation takes or returns (bytes travel as base64)."""
    if isinstance(value, bytes):
        return {"b": base64.b64encode(value).decode()}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    return value


def _decode(value):
    if isinstance(value, dict):
        return base64.b64decode(value["b"])
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


_HEADER = struct.Struct("!I")
_MAX_MESSAGE = 1 << 30


def _send(sock, message):
    data = json.dumps(_encode(message)).encode()
    sock.sendall(_HEADER.pack(len(data)) + data)


def _receive(sock):
    def exactly(n):
        chunks = []
        while n:
            chunk = sock.recv(min(n, 1 << 20))
            if not chunk:
                raise ConnectionError("the store's connection was closed")
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)
    (size,) = _HEADER.unpack(exactly(_HEADER.size))
    if size > _MAX_MESSAGE:
        raise ConnectionError(f"a store message of {size} bytes: not a store peer")
    return _decode(json.loads(exactly(size)))


_OPS = {"set", "get", "add", "compare_set", "wait", "check", "delete_key", "num_keys", "list_keys", "append",
        "multi_get", "multi_set", "queue_push", "queue_pop", "queue_len"}


class _TCPServer:
    """The master's side: a listening socket and one thread per client connection, all on one _Table."""

    def __init__(self, port):
        self.table = _Table()
        self.listener = socket.create_server(("", port))  # every interface, as torch's master listens
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True, name="flowlike-TCPStore").start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return  # closed
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        with conn:
            while True:
                try:
                    op, args, seconds = _receive(conn)
                except (ConnectionError, OSError, ValueError, TypeError):
                    return
                try:
                    if op not in _OPS:
                        raise ValueError(f"unknown store operation {op!r}")
                    deadline = None if seconds is None else time.monotonic() + seconds
                    reply = ["ok", self.table.apply(op, args, deadline)]
                except Exception as e:  # sent back to the client, which raises it as its own
                    reply = ["error", type(e).__name__, str(e)]
                try:
                    _send(conn, reply)
                except OSError:
                    return


class TCPStore(Store):
    """torch.distributed.TCPStore: the master (is_master=True) serves the table on host_name:port (port 0 picks a
    free port, see .port); clients connect to it. With wait_for_workers, the master's constructor waits until
    world_size processes (itself included) have connected."""

    _internal_keys = ("init/",)

    def __init__(self, host_name, port, world_size=None, is_master=False, timeout=_DEFAULT_TIMEOUT,
                 wait_for_workers=True, multi_tenant=False, master_listen_fd=None, use_libuv=True):
        super().__init__(timeout)
        self.host = host_name
        self._server = None
        if is_master:
            try:
                self._server = _TCPServer(port)
            except OSError as e:
                from .distributed_c10d import DistNetworkError
                raise DistNetworkError(f"The server socket has failed to listen on {host_name}:{port}: {e}") from None
            port = self._server.port
        self.port = port
        self._lock = threading.Lock()
        self._sock = self._connect(self._deadline())
        self._call("add", "init/", 1)  # torch's count of the processes that joined
        if is_master and wait_for_workers and world_size:
            deadline = self._deadline()
            while int(self._call("get", "init/", deadline=deadline)) < world_size:
                if time.monotonic() > deadline:
                    raise _error(f"Timed out after {self._timeout.total_seconds():.0f} seconds waiting for "
                                 f"{world_size} workers to join the TCPStore at {host_name}:{port}")
                time.sleep(0.01)

    @property
    def libuvBackend(self):  # noqa: N802 (torch's name)
        return False

    def _connect(self, deadline):
        while True:
            try:
                sock = socket.create_connection((self.host, self.port), timeout=max(0.1, deadline - time.monotonic()))
                sock.settimeout(None)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                return sock
            except OSError as e:
                if time.monotonic() > deadline:
                    from .distributed_c10d import DistNetworkError
                    raise DistNetworkError(f"The client socket has timed out after "
                                           f"{self._timeout.total_seconds():.0f}s while trying to connect to "
                                           f"({self.host}, {self.port}): {e}") from None
                time.sleep(0.05)

    def _call(self, op, *args, deadline=None):
        seconds = None if deadline is None else max(0.0, deadline - time.monotonic())
        with self._lock:
            # the server ends a blocking request at the deadline; the socket waits a little longer for its answer
            self._sock.settimeout(None if seconds is None else seconds + 30.0)
            try:
                _send(self._sock, [op, list(args), seconds])
                reply = _receive(self._sock)
            except (OSError, ConnectionError) as e:
                raise _error(f"TCPStore {op}: lost the connection to {self.host}:{self.port}: {e}") from None
        if reply[0] == "ok":
            return reply[1]
        kind, message = reply[1], reply[2]
        if kind == "DistStoreError" and message == "Wait timeout":
            keys = args[0] if isinstance(args[0], list) else [args[0]]
            message = (f"wait timeout after {round((seconds or 0) * 1000)}ms, keys: "
                       + ", ".join("/" + k for k in keys))
        raise {"ValueError": ValueError, "TypeError": TypeError}.get(kind, _error)(message)

    def __del__(self):
        sock = getattr(self, "_sock", None)
        if sock is not None:
            sock.close()


# ---- FileStore: the table in a shared file ------------------------------------------------------------------

class FileStore(Store):
    """torch.distributed.FileStore: the table in file_name, shared by the processes that open it (each operation
    reads and rewrites it under an exclusive lock; blocking ones poll it)."""

    _internal_keys = ("cleanupKey",)

    def has_extended_api(self):
        """False, as torch's FileStore: it has no queues."""
        return False

    def __init__(self, file_name, world_size=-1):
        super().__init__()
        self.path = file_name
        self.world_size = world_size
        self._call("add", "cleanupKey", 1)  # as torch's: the count of the stores that opened the file

    def _call(self, op, *args, deadline=None):
        if op.startswith("queue_"):
            raise NotImplementedError("queue support is not implemented.")  # as torch's FileStore
        blocking = op in ("get", "wait", "multi_get")
        while True:
            with open(self.path, "a+b") as f:
                fcntl.flock(f, fcntl.LOCK_EX)
                f.seek(0)
                text = f.read()
                table = _Table({k: _decode(v) for k, v in json.loads(text).items()} if text else {})
                try:
                    # never wait while holding the lock: a blocking operation that would wait polls instead
                    result = table.apply(op, args, time.monotonic() if blocking else deadline)
                except Exception as e:
                    if not (blocking and "Wait timeout" in str(e)):
                        raise
                    if time.monotonic() >= deadline:  # torch's FileStore raises plain RuntimeErrors here
                        ms = round(self._timeout.total_seconds() * 1000)
                        raise RuntimeError(f"Timeout waiting for key: {args[0]} after {ms} ms" if op == "get"
                                           else "Wait timeout") from None
                else:
                    f.seek(0)
                    f.truncate()
                    f.write(json.dumps({k: _encode(v) for k, v in table.data.items()}).encode())
                    return True if op == "delete_key" else result  # torch's FileStore says True for any key
            time.sleep(0.01)


class PrefixStore(Store):
    """torch.distributed.PrefixStore: store's keys under "prefix/"."""

    def __init__(self, prefix, store):
        super().__init__(store.timeout)
        self._prefix = prefix
        self.underlying_store = store

    def _key(self, key):
        return f"{self._prefix}/{key}"

    def _call(self, op, *args, deadline=None):
        if op in ("set", "get", "add", "compare_set", "delete_key", "append", "queue_push", "queue_pop",
                  "queue_len"):
            args = (self._key(args[0]),) + args[1:]
        elif op in ("wait", "check", "multi_get", "multi_set"):
            args = ([self._key(k) for k in args[0]],) + args[1:]
        elif op == "list_keys":
            start = self._prefix + "/"
            return [k[len(start):] for k in self.underlying_store.list_keys() if k.startswith(start)]
        return self.underlying_store._call(op, *args, deadline=deadline)
