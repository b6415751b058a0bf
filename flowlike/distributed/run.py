"""The launcher, as torchrun: `python -m flowlike.distributed.run --nproc-per-node N script.py [args...]`.

Starts N worker processes per node, each with torchrun's environment (RANK, LOCAL_RANK, WORLD_SIZE,
LOCAL_WORLD_SIZE, GROUP_RANK, ROLE_RANK, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_RUN_ID, ...), so that a script's
`init_process_group()` (env://) finds its group. Scripts run under flowlike.compat's mock_torch: torchrun-style
scripts that `import torch` run unchanged. When a worker fails the others are stopped, the whole group is started
again while --max-restarts allows, and the launcher exits with an error naming the first failure.

Several nodes: run the launcher on each with the same --nnodes, --master-addr and --master-port, and its own
--node-rank.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid

from .elastic.multiprocessing.errors import ChildFailedError

__all__ = ["main", "get_args_parser", "parse_args", "run"]


def get_args_parser():
    """torchrun's command line (the options flowlike honours; the elastic ones take fixed sizes only)."""
    p = argparse.ArgumentParser(prog="python -m flowlike.distributed.run",
                                description="Starts a distributed training script on several processes (torchrun).")

    def opt(*names, **kw):
        spelled = []
        for n in names:
            spelled.append(n)
            if "-" in n[2:]:
                spelled.append("--" + n[2:].replace("-", "_"))
        p.add_argument(*spelled, **kw)
    opt("--nnodes", default="1", help="number of nodes, or MIN:MAX (MIN must equal MAX: no elastic resizing)")
    opt("--nproc-per-node", default="1", help="workers per node: a number, 'cpu' (one per core) or 'auto'")
    opt("--node-rank", type=int, default=0, help="this node's rank, for several nodes")
    opt("--master-addr", default="127.0.0.1", help="address of the node of rank 0")
    opt("--master-port", type=int, default=29500, help="a free port on the node of rank 0")
    opt("--rdzv-endpoint", default="", help="host[:port] of the rendezvous (overrides --master-addr/port)")
    opt("--rdzv-backend", default="static", help="accepted: static, c10d (both are flowlike's fixed rendezvous)")
    opt("--rdzv-id", default="none", help="the job id (TORCHELASTIC_RUN_ID)")
    opt("--rdzv-conf", default="", help="accepted for compatibility")
    opt("--standalone", action="store_true", help="single node: a free port on localhost")
    opt("--max-restarts", type=int, default=0, help="how many times the group is started again after a failure")
    opt("--monitor-interval", type=float, default=0.1, help="seconds between checks of the workers")
    opt("--role", default="default", help="the workers' role name")
    opt("--module", "-m", dest="module", action="store_true", help="run the script as a module (python -m)")
    opt("--no-python", action="store_true", help="run the script as an executable, not with python")
    opt("--run-path", action="store_true", help="run the script with runpy.run_path")
    opt("--log-dir", default=None, help="directory for the workers' stdout/stderr (rank_N.log)")
    p.add_argument("training_script", help="the script (or module with -m) each worker runs")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def parse_args(args=None):
    """Parses a torchrun command line."""
    return get_args_parser().parse_args(args)


def _nnodes(text):
    low, _, high = text.partition(":")
    if high and int(high) != int(low):
        raise ValueError(f"--nnodes {text}: flowlike's launcher does not resize groups; give one number")
    return int(low)


def _nproc(text):
    if text in ("cpu", "auto"):
        return os.cpu_count() or 1
    return int(text)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _commands(args):
    if args.no_python:
        if args.module:
            raise ValueError("--no-python cannot be used with --module")
        return [args.training_script] + args.training_script_args
    # mock_torch: `import torch` in the script is flowlike
    runner = [sys.executable, "-u", "-m", "flowlike.compat"]
    if args.module:
        return runner + ["-m", args.training_script] + args.training_script_args
    return runner + [args.training_script] + args.training_script_args


def _stop(procs, grace=5.0):
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + grace
    for p in procs:
        try:
            p.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def run(args):
    """Runs the workers of this node until they all succeed (0) or a failure is final (the failed exit code)."""
    nnodes, nproc = _nnodes(args.nnodes), _nproc(args.nproc_per_node)
    addr, port = args.master_addr, args.master_port
    if args.rdzv_endpoint:
        host, _, p = args.rdzv_endpoint.rpartition(":")
        addr, port = (host, int(p)) if host else (p, port)
    if args.standalone:
        addr, port = "127.0.0.1", _free_port()
    world = nnodes * nproc
    run_id = args.rdzv_id if args.rdzv_id != "none" else uuid.uuid4().hex[:12]
    command = _commands(args)
    if nproc > 1 and "OMP_NUM_THREADS" not in os.environ:
        print("Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your "
              "system being overloaded, please further tune the variable for optimal performance in your "
              "application as needed.", file=sys.stderr)
    error_dir = tempfile.mkdtemp(prefix="flowlike_run_")
    try:
        return _run_attempts(args, nnodes, nproc, world, addr, port, run_id, command, error_dir)
    finally:
        shutil.rmtree(error_dir, ignore_errors=True)


def _run_attempts(args, nnodes, nproc, world, addr, port, run_id, command, error_dir):
    for restart in range(args.max_restarts + 1):
        procs, logs = [], []
        for local in range(nproc):
            rank = args.node_rank * nproc + local
            env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(local), WORLD_SIZE=str(world),
                       LOCAL_WORLD_SIZE=str(nproc), GROUP_RANK=str(args.node_rank), GROUP_WORLD_SIZE=str(nnodes),
                       ROLE_RANK=str(rank), ROLE_WORLD_SIZE=str(world), ROLE_NAME=args.role, MASTER_ADDR=addr,
                       MASTER_PORT=str(port), TORCHELASTIC_RUN_ID=run_id, TORCHELASTIC_RESTART_COUNT=str(restart),
                       TORCHELASTIC_MAX_RESTARTS=str(args.max_restarts), TORCHELASTIC_USE_AGENT_STORE="False",
                       TORCHELASTIC_ERROR_FILE=os.path.join(error_dir, f"error_{restart}_{rank}.json"))
            if nproc > 1:
                env.setdefault("OMP_NUM_THREADS", "1")
            out = None
            if args.log_dir:
                os.makedirs(args.log_dir, exist_ok=True)
                out = open(os.path.join(args.log_dir, f"rank_{rank}.log"), "w")
                logs.append(out)
            procs.append(subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT if out else None))
        failure = None
        try:
            while failure is None and any(p.poll() is None for p in procs):
                time.sleep(args.monitor_interval)
                failure = next(((i, p) for i, p in enumerate(procs) if p.poll() not in (None, 0)), None)
            if failure is None:
                failure = next(((i, p) for i, p in enumerate(procs) if p.returncode != 0), None)
        except KeyboardInterrupt:
            _stop(procs)
            raise
        finally:
            for f in logs:
                f.close()
        if failure is None:
            return 0
        _stop(procs)
        local, proc = failure
        rank = args.node_rank * nproc + local
        code = proc.returncode
        reason = f"signal {-code} ({signal.Signals(-code).name})" if code < 0 else f"exit code {code}"
        error_file = os.path.join(error_dir, f"error_{restart}_{rank}.json")
        if os.path.exists(error_file):  # the worker's @record wrote its exception
            with open(error_file) as f:
                reason += ": " + json.load(f)["message"]["message"]
        print(f"flowlike.distributed.run: worker rank {rank} (local_rank {local}, pid {proc.pid}) failed with "
              f"{reason}" + (f"; restarting the group ({restart + 1}/{args.max_restarts})"
                             if restart < args.max_restarts else ""), file=sys.stderr)
        if restart < args.max_restarts:
            time.sleep(1.5)  # the previous group's rendezvous server lets go of the port
            if args.standalone:
                port = _free_port()
    print(ChildFailedError(args.training_script, {rank: reason}), file=sys.stderr)
    return code if code > 0 else 1


def main(args=None):
    """Entry point: `python -m flowlike.distributed.run ...` (torchrun)."""
    return run(parse_args(args))


if __name__ == "__main__":
    sys.exit(main())
