"""flowlike.linalg against torch.linalg on the same inputs in one run: inv, solve, svd, cholesky, eigh, eig on a
(64, 64, 64) batch and on one 512x512 matrix. Prints times and the flowlike/torch ratio (< 1: flowlike faster).

    python benchmarks/bench_linalg.py [--repeat N] [--dtype float32|float64|complex64|complex128]
"""
import argparse
import time

import numpy as np

import flowlike as fl

try:
    import torch
except ImportError:  # flowlike alone still runs
    torch = None


def bench(fn, repeat):
    fn()  # warm up (allocator, OpenBLAS threads)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--dtype", default="float32", choices=["float32", "float64", "complex64", "complex128"])
    args = p.parse_args()
    rng = np.random.default_rng(0)
    cases = {"batch (64, 64, 64)": (64, 64), "single 512x512": (None, 512)}
    print(f"{'op':<10}{'shape':<22}{'flowlike ms':>12}{'torch ms':>10}{'ratio':>8}")
    for label, (batch, n) in cases.items():
        shape = (n, n) if batch is None else (batch, n, n)
        cplx = args.dtype.startswith("complex")
        a = (rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if cplx else 0)).astype(args.dtype)
        spd = a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n, dtype=args.dtype)  # (Hermitian positive-definite)
        b = rng.standard_normal(shape[:-1] + (8,)).astype(args.dtype)
        ops = {
            "inv": (lambda m, x: m.linalg.inv(x), a),
            "solve": (lambda m, x: m.linalg.solve(x, m.from_numpy(b)), a),
            "svd": (lambda m, x: m.linalg.svd(x, full_matrices=False), a),
            "cholesky": (lambda m, x: m.linalg.cholesky(x), spd),
            "eigh": (lambda m, x: m.linalg.eigh(x), spd),
            "eig": (lambda m, x: m.linalg.eig(x), a),
        }
        for name, (op, x) in ops.items():
            fx = fl.from_numpy(x)
            t_fl = bench(lambda: op(fl, fx), args.repeat)
            if torch is not None:
                tx = torch.from_numpy(x)
                t_t = bench(lambda: op(torch, tx), args.repeat)
                print(f"{name:<10}{label:<22}{t_fl * 1e3:>12.2f}{t_t * 1e3:>10.2f}{t_fl / t_t:>8.2f}")
            else:
                print(f"{name:<10}{label:<22}{t_fl * 1e3:>12.2f}{'-':>10}{'-':>8}")


if __name__ == "__main__":
    main()
