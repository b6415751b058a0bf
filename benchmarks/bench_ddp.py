"""Data-parallel training: a GPT-mini DDP step on 2 processes (1 thread each), flowlike (MPI) eager and as an
nn.Graph step against PyTorch's DistributedDataParallel on gloo, in one run.

Run: python benchmarks/bench_ddp.py [--steps 30]   (ratio = flowlike / torch; below 1.0 flowlike is faster)

Each side starts its own 2 ranks (env://); a step is forward, cross-entropy, backward (with the bucketed gradient
all-reduce) and an AdamW step; the graph step records all of it, the all-reduces included, into one program. The
rounds alternate between the sides, so a load change on the machine hits all; the time per step is the median over
the ranks' slowest of each round.
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


def worker(side, steps, out):
    import importlib
    framework, _, mode = side.partition("-")
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

    def eager_step(x):
        logits = model(x[:, :-1])
        loss = lib.nn.functional.cross_entropy(logits.reshape(-1, 256), x[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss
    if mode == "graph":
        class Step(lib.nn.Graph):
            def __init__(self):
                super().__init__()
                self.model = model
                self.add_optimizer(opt)

            def build(self, x):
                return eager_step(x)
    step = Step() if mode == "graph" else eager_step
    times = []
    for _ in range(steps + 3):
        dist.barrier()
        t0 = time.perf_counter()
        step(x)
        times.append(time.perf_counter() - t0)
    slowest = lib.tensor(times[3:], dtype=lib.float64)
    dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
    if rank == 0:
        np.save(out, slowest.numpy())
    dist.barrier()
    dist.destroy_process_group()


def run(side, steps, out):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = [subprocess.Popen([sys.executable, __file__, "--worker", side, "--steps", str(steps), "--out", out],
                              env=dict(os.environ, RANK=str(r), WORLD_SIZE="2", MASTER_ADDR="127.0.0.1",
                                       MASTER_PORT=str(port), OMP_NUM_THREADS="1"))
             for r in range(2)]
    if any(p.wait() for p in procs):
        raise RuntimeError(f"the {side} ranks failed")
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
    sides = ("flowlike", "flowlike-graph", "torch")
    times = {side: [] for side in sides}
    with tempfile.TemporaryDirectory() as d:
        for _ in range(args.rounds):
            for side in sides:
                times[side].extend(run(side, args.steps, os.path.join(d, side + ".npy")))
    t = {side: float(np.median(v)) for side, v in times.items()}
    from bench_graph import cpu_peak
    print(cpu_peak()[0])
    for side, label in (("flowlike", "eager"), ("flowlike-graph", "nn.Graph")):
        print(f"GPT-mini DDP step, 2 processes x 1 thread, flowlike {label:<9} {t[side] * 1e3:8.2f} ms   torch (gloo) "
              f"{t['torch'] * 1e3:8.2f} ms   ratio {t[side] / t['torch']:5.2f}x", flush=True)
    print(f"nn.Graph / flowlike eager: {t['flowlike-graph'] / t['flowlike']:5.2f}x")

if __name__ == "__main__":
    main()
