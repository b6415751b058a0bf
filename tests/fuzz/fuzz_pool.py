"""A fuzz worker process with a watchdog: `WorkerPool.run(case)` sends a case to the worker and waits at most
`timeout` seconds. A worker that dies (segfault, abort) or does not answer (hang) is reported as such and replaced
by a fresh one, so the test that sent the case fails with its reproducer and the suite goes on."""
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


class WorkerPool:
    def __init__(self, timeout=20.0):
        self.timeout = timeout
        self.proc = None
        self.stderr = None
        self.cases_run = 0
        self.crashes = 0
        self.hangs = 0
        self.restarts = 0
        self.slowest = []  # (seconds, case)
        self.history = []  # the cases the current worker has run (what a crash that needs earlier state needs)

    def _start(self):
        self.stderr = tempfile.TemporaryFile()
        env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONFAULTHANDLER="1")
        if os.environ.get("FLOWLIKE_FUZZ_MALLOC_CHECK"):  # glibc's checking malloc: a corrupted heap aborts sooner
            debug = "/lib/x86_64-linux-gnu/libc_malloc_debug.so.0"
            if os.path.exists(debug):
                env.update(LD_PRELOAD=debug, GLIBC_TUNABLES="glibc.malloc.check=3")
        # not the repository root as the working directory: the source tree's flowlike/ would shadow the build
        self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "fuzz_worker.py")], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.stderr, cwd=HERE, env=env)

    def _stop(self):
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            self.proc = None

    def _stderr_tail(self, n=1500):
        try:
            self.stderr.seek(0, 2)
            size = self.stderr.tell()
            self.stderr.seek(max(0, size - n))
            return self.stderr.read().decode(errors="replace")
        except Exception:  # noqa: BLE001
            return ""

    def close(self):
        self._stop()

    def _read_exact(self, n, deadline):
        buf = b""
        fd = self.proc.stdout.fileno()
        while len(buf) < n:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                return None
            chunk = os.read(fd, n - len(buf))
            if not chunk:
                return b""
            buf += chunk
        return buf

    def run(self, case, timeout=None, confirm=False):
        """('ok'|'raised'|'setup'|'escaped', detail) from the worker, or ('crash', why) / ('hang', why)."""
        fresh = self.proc is None or self.proc.poll() is not None
        if fresh:
            self._stop()
            self._start()
            self.history = []
        self.history = self.history[-1999:] + [case]
        count = 0 if confirm else 1  # a re-run of a crashed case alone is not a new case, nor a new crash
        self.cases_run += count
        payload = pickle.dumps(case)
        started = time.monotonic()
        deadline = started + (timeout or self.timeout) + (15 if fresh else 0)  # (+ the worker's start)
        try:
            self.proc.stdin.write(struct.pack("<I", len(payload)) + payload)
            self.proc.stdin.flush()
            head = self._read_exact(4, deadline)
            body = self._read_exact(struct.unpack("<I", head)[0], deadline) if head else head
        except (BrokenPipeError, OSError):
            head = body = b""
        if head is None or body is None:
            self.hangs += count
            self.restarts += 1
            tail = self._stderr_tail()
            os.kill(self.proc.pid, signal.SIGKILL)
            self._stop()
            return "hang", f"no answer within {timeout or self.timeout:.0f} s\n{tail}"
        if not head or not body:
            self.proc.wait()
            code = self.proc.returncode
            self.crashes += count
            self.restarts += 1
            why = f"worker died: {'signal ' + signal.Signals(-code).name if code and code < 0 else 'exit code ' + str(code)}"
            tail = self._stderr_tail()
            self._stop()
            return "crash", f"{why}\n{tail}"
        took = time.monotonic() - started
        if took > 0.5:
            self.slowest = sorted(self.slowest + [(took, case)], key=lambda x: -x[0])[:10]
        return pickle.loads(body)

    def replay(self, cases, timeout=None):
        """Runs `cases` in order in a fresh worker; True when the worker crashes on one of them."""
        self.close()
        try:
            for c in cases:
                status, _ = self.run(c, timeout=timeout, confirm=True)
                if status == "crash":
                    return True
            return False
        finally:
            self.close()

    def culprits(self, history, budget=40):
        """For a crash that needs earlier cases: a small subset of `history` (ending with the crashing case) that
        still crashes a fresh worker, by delta debugging (at most `budget` replays); None if the whole history no
        longer crashes."""
        last, earlier = history[-1], history[:-1]
        if not self.replay(earlier + [last]):
            return None
        n = 2
        while len(earlier) >= 1 and budget > 0:
            chunk = max(1, len(earlier) // n)
            reduced = False
            for i in range(0, len(earlier), chunk):
                trial = earlier[:i] + earlier[i + chunk:]
                budget -= 1
                if self.replay(trial + [last]):
                    earlier, n, reduced = trial, max(n - 1, 2), True
                    break
                if budget <= 0:
                    break
            if not reduced:
                if chunk == 1:
                    break
                n = min(len(earlier), n * 2)
        return earlier + [last]
