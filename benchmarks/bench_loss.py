"""flowlike vs PyTorch on the losses, in one process: prints each time and the ratio torch / flowlike
(> 1 means flowlike is faster); an optional argument sets the thread count of both. Target: cross_entropy on (4096, 1000) logits, forward + backward, >= 1."""
import sys
import time

import numpy as np
import torch

import flowlike
import flowlike.nn.functional as F
import torch.nn.functional as TF


def compare(name, fl_fn, torch_fn, repeat=20, warmup=3):
    """Best-of-`repeat` times, the two libraries interleaved so that load changes hit both alike."""
    for _ in range(warmup):
        fl_fn()
        torch_fn()
    tf = tt = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fl_fn()
        t1 = time.perf_counter()
        torch_fn()
        t2 = time.perf_counter()
        tf, tt = min(tf, t1 - t0), min(tt, t2 - t1)
    print(f"{name:55s} flowlike {tf * 1e3:8.3f} ms   torch {tt * 1e3:8.3f} ms   ratio {tt / tf:5.2f}")
    return tt / tf


def main():
    if len(sys.argv) > 1:  # bench_loss.py THREADS
        flowlike.set_num_threads(int(sys.argv[1]))
    torch.set_num_threads(flowlike.get_num_threads())
    print(f"threads: {flowlike.get_num_threads()}")
    rng = np.random.default_rng(0)

    def fwd_bwd(lib, fn, x_np, *args, **kw):
        x = lib.tensor(x_np, requires_grad=True)
        return lambda: fn(x, *args, **kw).backward()

    def fwd(lib, fn, x_np, *args, **kw):
        x = lib.tensor(x_np)
        return lambda: fn(x, *args, **kw)

    for n, c in [(4096, 1000), (256, 32000), (64, 10)]:
        x = rng.standard_normal((n, c), dtype=np.float32)
        t = rng.integers(0, c, n)
        ratio = compare(f"cross_entropy ({n}, {c}) fwd+bwd", fwd_bwd(flowlike, F.cross_entropy, x, flowlike.tensor(t)),
                        fwd_bwd(torch, TF.cross_entropy, x, torch.tensor(t)))
        if (n, c) == (4096, 1000):
            target_ratio = ratio
        compare(f"cross_entropy ({n}, {c}) fwd", fwd(flowlike, F.cross_entropy, x, flowlike.tensor(t)),
                fwd(torch, TF.cross_entropy, x, torch.tensor(t)))
    x = rng.standard_normal((4096, 1000), dtype=np.float32)
    t = rng.integers(0, 1000, 4096)
    compare("cross_entropy (4096, 1000) label_smoothing=0.1 fwd+bwd",
            fwd_bwd(flowlike, F.cross_entropy, x, flowlike.tensor(t), label_smoothing=0.1),
            fwd_bwd(torch, TF.cross_entropy, x, torch.tensor(t), label_smoothing=0.1))
    x4 = rng.standard_normal((8, 21, 64, 64), dtype=np.float32)
    t4 = rng.integers(0, 21, (8, 64, 64))
    compare("cross_entropy (8, 21, 64, 64) fwd+bwd", fwd_bwd(flowlike, F.cross_entropy, x4, flowlike.tensor(t4)),
            fwd_bwd(torch, TF.cross_entropy, x4, torch.tensor(t4)))
    y = rng.random((4096, 1000), dtype=np.float32)
    compare("binary_cross_entropy_with_logits (4096, 1000) fwd+bwd",
            fwd_bwd(flowlike, F.binary_cross_entropy_with_logits, x, flowlike.tensor(y)),
            fwd_bwd(torch, TF.binary_cross_entropy_with_logits, x, torch.tensor(y)))
    compare("mse_loss (4096, 1000) fwd+bwd", fwd_bwd(flowlike, F.mse_loss, x, flowlike.tensor(y)),
            fwd_bwd(torch, TF.mse_loss, x, torch.tensor(y)))
    lp = np.log(rng.dirichlet(np.ones(20), (50, 16)).astype(np.float32))
    tg = rng.integers(1, 20, (16, 30))
    il, tl = [50] * 16, list(rng.integers(10, 30, 16))
    compare("ctc_loss T=50 N=16 C=20 S=30 fwd+bwd",
            fwd_bwd(flowlike, F.ctc_loss, lp, flowlike.tensor(tg), il, tl),
            fwd_bwd(torch, TF.ctc_loss, lp, torch.tensor(tg), il, tl), repeat=5)
    print(f"TARGET cross_entropy (4096, 1000) fwd+bwd ratio torch/flowlike = {target_ratio:.2f} (goal >= 1)")


if __name__ == "__main__":
    main()
