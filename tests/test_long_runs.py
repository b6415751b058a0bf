"""Long runs (issue 15 item 6): memory stays flat over 10,000 training steps; a DataLoader worker that dies
(os._exit, a segfault, SIGKILL) or raises gives the main process a clear error instead of a hang; Ctrl-C during a
DataLoader loop with workers ends it with KeyboardInterrupt, leaving no worker behind. The DataLoader cases run in
a child interpreter under a timeout, so that a hang fails the test instead of stalling the suite."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import flowlike as torch


def test_training_memory_stays_flat_over_10000_steps():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.standard_normal((8, 8)).astype(np.float32))
    y = torch.from_numpy(rng.standard_normal((8, 1)).astype(np.float32))
    marks = {}
    for step in range(10_000):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        if step % 1000 == 999:
            marks[step] = torch.memory.memory_allocated()
    assert np.isfinite(loss.item())
    # after the first steps (Adam's state, the first .grad buffers) nothing may accumulate
    assert len(set(marks.values())) == 1, marks


_LOADER = """
import os, signal, sys, time
import flowlike as torch
from flowlike.utils.data import DataLoader, Dataset

class Data(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        if i == 5:
            {fail}
        time.sleep({sleep})
        return torch.tensor([float(i)])

def note_pid(worker_id):
    with open(sys.argv[1], "a") as f:
        f.write(f"{{os.getpid()}}\\n")

print("started", flush=True)
for batch in DataLoader(Data(), batch_size=2, num_workers=2, worker_init_fn=note_pid):
    pass
print("finished", flush=True)
"""


def _run_loader(tmp_path, fail, sleep=0.0, timeout=90, interrupt_after=None, kill=None):
    """Runs the loop above in a child interpreter (its own session, as a terminal's foreground job), sending
    `interrupt_after` seconds into the loop SIGINT to its process group (Ctrl-C) or `kill` to the main process;
    returns (returncode, stdout + stderr, worker pids)."""
    pids = tmp_path / "pids"
    script = tmp_path / "loader.py"
    script.write_text(textwrap.dedent(_LOADER.format(fail=fail, sleep=sleep)))
    proc = subprocess.Popen([sys.executable, str(script), str(pids)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        if interrupt_after is not None:
            assert proc.stdout.readline().strip() == "started"
            deadline = time.monotonic() + 30
            while not (pids.exists() and len(pids.read_text().split()) == 2) and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(interrupt_after)
            if kill is None:
                os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the whole foreground process group
            else:
                os.kill(proc.pid, kill)
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"the DataLoader loop hung (over {timeout} s)")
    return proc.returncode, out, [int(p) for p in pids.read_text().split()] if pids.exists() else []


def _gone(pid, wait=10.0):
    """Whether process pid has exited (a zombie awaiting its reaper counts as exited) within `wait` seconds."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().split(")")[-1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.1)
    return False


@pytest.mark.parametrize("fail,message", [
    ("os._exit(3)", "exited unexpectedly with exit code 3"),
    ("os.kill(os.getpid(), signal.SIGSEGV)", "killed by signal: Segmentation fault"),
    ("os.kill(os.getpid(), signal.SIGKILL)", "killed by signal: Killed"),
    ("raise ValueError('bad sample 5')", "ValueError: bad sample 5"),
], ids=["exit", "segfault", "killed", "raises"])
def test_dataloader_worker_failure_is_a_clear_error(tmp_path, fail, message):
    code, out, pids = _run_loader(tmp_path, fail)
    assert code != 0 and "finished" not in out, out
    assert message in out, out
    assert "RuntimeError" in out or "ValueError" in out, out
    assert len(pids) == 2 and all(_gone(p) for p in pids), out


def test_ctrl_c_during_a_dataloader_loop_exits_cleanly(tmp_path):
    code, out, pids = _run_loader(tmp_path, "pass", sleep=0.2, interrupt_after=0.5)
    assert code != 0 and "finished" not in out, out
    assert "KeyboardInterrupt" in out, out
    # the workers neither print their own tracebacks nor outlive the loop
    assert out.count("Traceback") == 1, out
    assert len(pids) == 2 and all(_gone(p) for p in pids), out


def test_workers_do_not_outlive_a_killed_main_process(tmp_path):
    code, out, pids = _run_loader(tmp_path, "pass", sleep=0.2, interrupt_after=0.5, kill=signal.SIGKILL)
    assert code == -signal.SIGKILL, out
    # a worker notices within its 5 s poll of the index queue
    assert len(pids) == 2 and all(_gone(p, wait=20.0) for p in pids), out
