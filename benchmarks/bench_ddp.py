"""Data-parallel training: a GPT-mini DDP step on 2 processes (1 thread each), flowlike (MPI) against PyTorch's
DistributedDataParallel on gloo, in one run.

Run: python benchmarks/bench_ddp.py [--steps 30]   (ratio = flowlike / torch; below 1.0 flowlike is faster)

Each side starts its own 2 ranks (env://); a step is forward, cross-entropy, backward (with the bucketed gradient
all-reduce) and an AdamW step. The rounds alternate between the frameworks, so a load change on the machine hits
both; the time per step is the median over the ranks' slowest of each round.
"""
import argparse
import os
import socket
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def worker(framework, steps, out):
    import importlib
    lib = importlib.import_module(framework)
    lib.set_num_threads(1)
    import bench_train
    dist = lib.distributed
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    lib.manual_seed(0)
    model = lib.nn.parallel.DistributedDataParallel(bench_train.gpt_mini(lib))
    opt = lib.optim.AdamW(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(rank)
    x = lib.from_numpy(rng.integers(0, 256, (8, 65)))
    times = []
    for _ in range(steps + 3):
        dist.barrier()
        t0 = time.perf_counter()
        logits = model(x[:, :-1])
        loss = lib.nn.functional.cross_entropy(logits.reshape(-1, 256), x[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - t0)
    slowest = lib.tensor(times[3:], dtype=lib.float64)
    dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
    if rank == 0:
        np.save(out, slowest.numpy())
    dist.barrier()
    dist.destroy_process_group()


def run(framework, steps, out):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = [subprocess.Popen([sys.executable, __file__, "--worker", framework, "--steps", str(steps), "--out", out],
                              env=dict(os.environ, RANK=str(r), WORLD_SIZE="2", MASTER_ADDR="127.0.0.1",
                                       MASTER_PORT=str(port), OMP_NUM_THREADS="1"))
             for r in range(2)]
    if any(p.wait() for p in procs):
        raise RuntimeError(f"the {framework} ranks failed")
    return np.load(out)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--worker")
    p.add_argument("--out")
    args = p.parse_args()
    if args.worker:
        return worker(args.worker, args.steps, args.out)
    import tempfile
    fl, th = [], []
    with tempfile.TemporaryDirectory() as d:
        for _ in range(args.rounds):
            fl.extend(run("flowlike", args.steps, os.path.join(d, "fl.npy")))
            th.extend(run("torch", args.steps, os.path.join(d, "th.npy")))
    t_fl, t_th = float(np.median(fl)), float(np.median(th))
    print(f"{'GPT-mini DDP step, 2 processes x 1 thread':<48} flowlike {t_fl * 1e3:9.2f} ms   torch (gloo) "
          f"{t_th * 1e3:9.2f} ms   ratio {t_fl / t_th:5.2f}x", flush=True)


if __name__ == "__main__":
    main()
