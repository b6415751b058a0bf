"""flowlike vs PyTorch on the losses, in one process: prints each time and the ratio torch / flowlike
(> 1 means flowlike is faster). Target: cross_entropy on (4096, 1000) logits, forward + backward, >= 1."""
import time

import numpy as np
import torch

import flowlike
import flowlike.nn.functional as F
import torch.nn.functional as TF


def best_time(fn, repeat=20, warmup=3):
    for _ in range(warmup):
        fn()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def compare(name, make_fl, make_torch, repeat=20):
    tf, tt = best_time(make_fl, repeat), best_time(make_torch, repeat)
    print(f"{name:55s} flowlike {tf * 1e3:8.3f} ms   torch {tt * 1e3:8.3f} ms   ratio {tt / tf:5.2f}")
    return tt / tf


def main():
    torch.set_num_threads(flowlike.get_num_threads())
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
