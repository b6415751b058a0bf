"""Vision and embedding ops: flowlike against PyTorch on the same inputs, in one process, printing time
ratios (forward + backward).

Run: python benchmarks/bench_vision.py   (ratio = flowlike time / torch time; below 1 is faster)
"""
import numpy as np

import flowlike as fl
from common import best_time
import flowlike.nn.functional as flF

try:
    import torch
    import torch.nn.functional as TF
except ImportError:  # the benchmark still reports flowlike's own times
    torch = TF = None

ROUNDS = 5



def bilinear_case(m, F, x, g):
    def run():
        x.grad = None
        y = F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)
        y.backward(g)
    return run


def embedding_case(m, F, w, idx, g):
    def run():
        w.grad = None
        y = F.embedding(idx, w)
        y.backward(g)
    return run


def main():
    if torch is not None:
        torch.set_num_threads(fl.get_num_threads())
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 64, 56, 56), dtype=np.float32)
    gx = rng.standard_normal((16, 64, 112, 112), dtype=np.float32)
    w = rng.standard_normal((50000, 512), dtype=np.float32)
    idx = rng.integers(0, 50000, (32, 128))
    gw = rng.standard_normal((32, 128, 512), dtype=np.float32)

    def make(lib, F):
        if lib is None:
            return {}
        t = lib.tensor
        return {
            "bilinear 16x64x56x56 -> 2x fwd+bwd": bilinear_case(lib, F, t(x, requires_grad=True), t(gx)),
            "embedding 50000x512 [32x128] fwd+bwd": embedding_case(lib, F, t(w, requires_grad=True), t(idx), t(gw)),
        }
    fcases, tcases = make(fl, flF), make(torch, TF)
    print(f"{'case':40s} {'flowlike ms':>12s} {'torch ms':>10s} {'ratio':>7s}")
    for name, ff in fcases.items():
        tf = tt = float("inf")
        for _ in range(ROUNDS):  # interleaved rounds, so load from other processes hits both alike
            tf = min(tf, best_time(ff))
            if torch is not None:
                tt = min(tt, best_time(tcases[name]))
        ratio = f"{tf / tt:7.2f}" if torch is not None else "    n/a"
        print(f"{name:40s} {tf * 1e3:12.2f} {tt * 1e3:10.2f} {ratio}")


if __name__ == "__main__":
    main()
