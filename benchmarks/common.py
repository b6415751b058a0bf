"""Timing helpers shared by the benchmarks. Every ratio printed is flowlike time / torch time: below 1.0
flowlike is faster. The two sides run interleaved, so a load change on the machine hits both alike."""
import platform
import time
import timeit


def cpu_info():
    """(CPU model, widest float vector ISA, lanes of float32 per vector, MHz) from /proc/cpuinfo."""
    flags, mhz, model = "", 0.0, platform.processor()
    with open("/proc/cpuinfo") as f:
        for line in f:
            key, _, value = line.partition(":")
            key = key.strip()
            if key == "flags" and not flags:
                flags = value
            elif key == "cpu MHz" and not mhz:
                mhz = float(value)
            elif key == "model name":
                model = value.strip()
    flags = flags.split()
    lanes, isa = (16, "AVX-512") if "avx512f" in flags else (8, "AVX2") if "avx2" in flags else (4, "SSE")
    return model, isa, lanes, mhz


def best(fn, number, repeat=7):
    """Best average seconds per call of fn over `repeat` runs of `number` calls (after one warm-up call)."""
    fn()
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def best_time(fn, repeat=5):
    """Best single-call seconds of fn over `repeat` calls (after one warm-up call)."""
    return best(fn, 1, repeat)


def report(name, t_fl, t_torch, target):
    """Prints both times and flowlike/torch with the target ratio."""
    print(f"{name:<48} flowlike {t_fl * 1e6:11.1f} us   torch {t_torch * 1e6:11.1f} us   "
          f"ratio {t_fl / t_torch:5.2f}x  (target {target})", flush=True)


def compare(name, fl_fn, torch_fn, target, number=1, repeat=15):
    """Times fl_fn and torch_fn interleaved (best of `repeat` rounds of `number` calls each), reports, and returns
    the ratio flowlike/torch."""
    fl_fn()
    torch_fn()
    t_fl = t_torch = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fl_fn()
        t1 = time.perf_counter()
        for _ in range(number):
            torch_fn()
        t2 = time.perf_counter()
        t_fl, t_torch = min(t_fl, (t1 - t0) / number), min(t_torch, (t2 - t1) / number)
    report(name, t_fl, t_torch, target)
    return t_fl / t_torch
