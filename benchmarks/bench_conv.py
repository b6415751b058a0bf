"""Convolution and pooling: flowlike against PyTorch on the same inputs, in one process, printing time ratios.

Run: python benchmarks/bench_conv.py   (ratio = flowlike time / torch time; below 1 is faster; torch runs with
flowlike's thread count). The target case is conv2d 3x3, N=16, 64->64 channels, 56x56, padding 1.
"""
import numpy as np

import flowlike as fl
from common import best_time

try:
    import torch
except ImportError:  # the benchmark still reports flowlike's own times
    torch = None

ROUNDS = 3



def forward_backward(m, x, w, b, **kw):
    out = m.nn.functional.conv2d(x, w, b, **kw)
    out.sum().backward()


def main():
    if torch is not None:
        torch.set_num_threads(fl.get_num_threads())
    print(f"threads: {fl.get_num_threads()}")
    rng = np.random.default_rng(0)

    def arr(*shape):
        return rng.standard_normal(shape, dtype=np.float32)

    x, w, b = arr(16, 64, 56, 56), arr(64, 64, 3, 3), arr(64)
    dw_x, dw_w = arr(16, 128, 56, 56), arr(128, 1, 3, 3)
    c1_x, c1_w = arr(32, 64, 1024), arr(128, 64, 5)
    one_x, one_w = arr(1, 256, 14, 14), arr(256, 256, 3, 3)
    tr_x, tr_w = arr(8, 128, 16, 16), arr(128, 64, 4, 4)
    pool_x = arr(16, 64, 112, 112)
    cases = {
        "conv2d 3x3 16x64x56x56 fwd": ((x, w, b), False, lambda m, x, w, b: m.nn.functional.conv2d(x, w, b, padding=1)),
        "conv2d 3x3 16x64x56x56 fwd+bwd": ((x, w, b), True, lambda m, x, w, b: forward_backward(m, x, w, b, padding=1)),
        "conv2d depthwise 3x3 fwd": ((dw_x, dw_w), False,
                                     lambda m, x, w: m.nn.functional.conv2d(x, w, padding=1, groups=128)),
        "conv1d k5 32x64x1024 fwd": ((c1_x, c1_w), False, lambda m, x, w: m.nn.functional.conv1d(x, w)),
        "conv2d 3x3 N=1 256x14x14 fwd": ((one_x, one_w), False,
                                         lambda m, x, w: m.nn.functional.conv2d(x, w, padding=1)),
        "conv_transpose2d 4x4 s2 fwd": ((tr_x, tr_w), False,
                                        lambda m, x, w: m.nn.functional.conv_transpose2d(x, w, stride=2, padding=1)),
        "max_pool2d 3x3 s2 16x64x112": ((pool_x,), False,
                                        lambda m, x: m.nn.functional.max_pool2d(x, 3, 2, 1)),
        "avg_pool2d 2x2 16x64x112": ((pool_x,), False, lambda m, x: m.nn.functional.avg_pool2d(x, 2)),
    }
    print(f"{'case':34s} {'flowlike ms':>12s} {'torch ms':>10s} {'ratio':>7s}")
    for name, (arrays, grad, f) in cases.items():
        xf = [fl.from_numpy(a).requires_grad_(grad) for a in arrays]
        xt = [torch.from_numpy(a).requires_grad_(grad) for a in arrays] if torch is not None else None
        tf = tt = float("inf")
        for _ in range(ROUNDS):  # interleaved rounds, so load from other processes hits both alike
            tf = min(tf, best_time(lambda: f(fl, *xf)))
            if xt is not None:
                tt = min(tt, best_time(lambda: f(torch, *xt)))
        if xt is not None:
            print(f"{name:34s} {tf * 1e3:12.3f} {tt * 1e3:10.3f} {tf / tt:7.2f}  (speed {tt / tf:.2f}x torch)")
        else:
            print(f"{name:34s} {tf * 1e3:12.3f}")


if __name__ == "__main__":
    main()
