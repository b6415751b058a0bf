"""Reductions: flowlike against PyTorch on the same inputs, in one process, printing time ratios.

Run: python benchmarks/bench_reduce.py   (ratio = flowlike time / torch time; below 1 is faster)
"""
import numpy as np

import flowlike as fl
from common import best_time

try:
    import torch
except ImportError:  # the benchmark still reports flowlike's own times
    torch = None


ROUNDS = 5



def main():
    if torch is not None:
        torch.set_num_threads(fl.get_num_threads() if hasattr(fl, "get_num_threads") else torch.get_num_threads())
    rng = np.random.default_rng(0)
    cases = {
        "sum 16M f32 (full)": (rng.standard_normal(1 << 24, dtype=np.float32), lambda m, x: m.sum(x)),
        "sum 4096x4096 f32 dim=1": (rng.standard_normal((4096, 4096), dtype=np.float32), lambda m, x: m.sum(x, 1)),
        "sum 4096x4096 f32 dim=0": (rng.standard_normal((4096, 4096), dtype=np.float32), lambda m, x: m.sum(x, 0)),
        "amax 16M f32 (full)": (rng.standard_normal(1 << 24, dtype=np.float32), lambda m, x: m.amax(x)),
        "var 1024x4096 f32 dim=1": (rng.standard_normal((1024, 4096), dtype=np.float32), lambda m, x: m.var(x, 1)),
        "max 1024x4096 f32 dim=1": (rng.standard_normal((1024, 4096), dtype=np.float32), lambda m, x: m.max(x, 1)),
        "sort 1024x1024 f32 dim=1": (rng.standard_normal((1024, 1024), dtype=np.float32), lambda m, x: m.sort(x, 1)),
        "cumsum 4096x4096 f32 dim=1": (rng.standard_normal((4096, 4096), dtype=np.float32), lambda m, x: m.cumsum(x, 1)),
    }
    print(f"{'case':32s} {'flowlike ms':>12s} {'torch ms':>10s} {'ratio':>7s}")
    for name, (a, f) in cases.items():
        xf = fl.from_numpy(a)
        xt = torch.from_numpy(a) if torch is not None else None
        tf = tt = float("inf")
        for _ in range(ROUNDS):  # interleaved rounds, so load from other processes hits both alike
            tf = min(tf, best_time(lambda: f(fl, xf), 10))
            if xt is not None:
                tt = min(tt, best_time(lambda: f(torch, xt), 10))
        if xt is not None:
            print(f"{name:32s} {tf * 1e3:12.3f} {tt * 1e3:10.3f} {tf / tt:7.2f}")
        else:
            print(f"{name:32s} {tf * 1e3:12.3f}")


if __name__ == "__main__":
    main()
