"""torch.fft on flowlike against PyTorch in one process, on the same inputs.

Run: python benchmarks/bench_fft.py   (ratio = flowlike time / torch time; below 1 flowlike is faster). Cases:
  - a batch of 1-D transforms of length 4096: fft (complex64, 256 x 4096) and rfft (float32, 256 x 4096);
  - a 2-D 1024 x 1024 transform: fft2 (complex64) and rfft2 (float32);
  - a batch of a prime length, 4099 (Bluestein), fft (complex64, 32 x 4099);
  - and, for the gradient path, fft followed by its backward (complex64, 256 x 4096).
Targets: ratio <= 1.0 on the 4096 batch and the 1024 x 1024 transform. Each case runs with one thread (the thread's
CPU time, which other processes' load barely moves) and with two threads (wall time). GFLOP/s use the usual
5 N log2 N convention for a complex transform of N points (2.5 N log2 N for a real one).
"""
import math
import time

import numpy as np

import flowlike as fl
from bench_conv_epilogue import cpu_info

try:
    import torch
except ImportError:  # flowlike's own times are still printed
    torch = None

ROUNDS = 7


def timed(fn, clock, number):
    """Best seconds per call of fn over ROUNDS rounds of `number` calls, after a warm-up call."""
    fn()
    best = float("inf")
    for _ in range(ROUNDS):
        t0 = clock()
        for _ in range(number):
            fn()
        best = min(best, (clock() - t0) / number)
    return best


def cases():
    rng = np.random.default_rng(0)

    def cplx(*shape):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)

    def real(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    def backward(m, x):
        y = m.fft.fft(x)
        y.backward(y.detach())  # grad of 0.5 |fft(x)|^2

    c1, r1, c2, r2, cp = cplx(256, 4096), real(256, 4096), cplx(1024, 1024), real(1024, 1024), cplx(32, 4099)
    return [
        # name, input, function of (module, tensor), flops, calls per round, needs grad
        ("fft 256 x 4096 complex64", c1, lambda m, x: m.fft.fft(x), 256 * 5 * 4096 * 12, 4, False),
        ("rfft 256 x 4096 float32", r1, lambda m, x: m.fft.rfft(x), 256 * 2.5 * 4096 * 12, 8, False),
        ("fft2 1024 x 1024 complex64", c2, lambda m, x: m.fft.fft2(x), 5 * 2 ** 20 * 20, 2, False),
        ("rfft2 1024 x 1024 float32", r2, lambda m, x: m.fft.rfft2(x), 2.5 * 2 ** 20 * 20, 4, False),
        ("fft 32 x 4099 complex64 (prime)", cp, lambda m, x: m.fft.fft(x), 32 * 5 * 4099 * math.log2(4099), 2,
         False),
        ("fft + backward 256 x 4096 complex64", c1, backward, 2 * 256 * 5 * 4096 * 12, 2, True),
    ]


def main():
    model, vendor, isa, _, _ = cpu_info()
    print(f"CPU: {model} ({vendor}), ISA {isa}; flowlike/torch ratio below 1 is faster")
    for threads, clock, label in ((1, time.thread_time, "1 thread, CPU time"), (2, time.perf_counter, "2 threads")):
        fl.set_num_threads(threads)
        if torch is not None:
            torch.set_num_threads(threads)
        print(f"-- {label}")
        for name, x, fn, flops, number, grad in cases():
            fx = fl.from_numpy(x).requires_grad_(grad)
            t_fl = timed(lambda: fn(fl, fx), clock, number)
            line = f"{name:<38} flowlike {t_fl * 1e3:8.2f} ms {flops / t_fl / 1e9:6.2f} GFLOP/s"
            if torch is not None:
                tx = torch.from_numpy(x).requires_grad_(grad)
                t_torch = timed(lambda: fn(torch, tx), clock, number)
                line += (f"   torch {t_torch * 1e3:8.2f} ms {flops / t_torch / 1e9:6.2f} GFLOP/s   "
                         f"ratio {t_fl / t_torch:5.2f}x")
            print(line, flush=True)


if __name__ == "__main__":
    main()
