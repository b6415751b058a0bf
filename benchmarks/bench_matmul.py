"""Matrix products: flowlike against PyTorch on the same inputs, in one process.

Run: python benchmarks/bench_matmul.py   (ratio = flowlike time / torch time; below 1.0 flowlike is faster.
A GFLOP/s target of "at least 0.9x torch's" is a time ratio of at most 1.11x.)
"""
import numpy as np
import torch

import flowlike as fl
from common import compare


def main():
    torch.set_num_threads(fl.get_num_threads())
    print(f"threads: flowlike {fl.get_num_threads()}  torch {torch.get_num_threads()}")
    rng = np.random.default_rng(0)
    for n in (256, 512, 1024, 2048):
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        fa, fb, ta, tb = fl.from_numpy(a), fl.from_numpy(b), torch.from_numpy(a), torch.from_numpy(b)
        number = max(1, int(1e9 / (2 * n ** 3)))
        compare(f"matmul {n}x{n} f32", lambda: fa @ fb, lambda: ta @ tb, "<= 1.11x", number, 7)
    a = rng.standard_normal((32, 128, 128), dtype=np.float32)
    b = rng.standard_normal((32, 128, 128), dtype=np.float32)
    fa, fb, ta, tb = fl.from_numpy(a), fl.from_numpy(b), torch.from_numpy(a), torch.from_numpy(b)
    compare("bmm (32,128,128) @ (32,128,128) f32", lambda: fl.bmm(fa, fb), lambda: torch.bmm(ta, tb), "<= 1.11x", 20)
    x = rng.standard_normal((128, 784), dtype=np.float32)
    w = rng.standard_normal((512, 784), dtype=np.float32)
    bias = rng.standard_normal(512, dtype=np.float32)
    fx, fw, fbias = fl.from_numpy(x), fl.from_numpy(w), fl.from_numpy(bias)
    tx, tw, tbias = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(bias)
    compare("addmm (linear 128x784 -> 512) f32", lambda: fl.addmm(fbias, fx, fw.t()),
            lambda: torch.addmm(tbias, tx, tw.t()), "<= 1.0x", 50)


if __name__ == "__main__":
    main()
