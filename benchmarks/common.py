"""Timing helpers shared by the benchmarks: best-of-N wall time and one report line per workload."""
import timeit


def best(fn, number, repeat=7):
    """Best average seconds per call of fn over `repeat` runs of `number` calls (after one warm-up call)."""
    fn()
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def report(name, t_fl, t_torch, target):
    """Prints both times and flowlike/torch (below 1.0: flowlike is faster) with the target ratio."""
    print(f"{name:<44} flowlike {t_fl * 1e6:10.2f} us   torch {t_torch * 1e6:10.2f} us   "
          f"ratio {t_fl / t_torch:5.2f}x  (target {target})")
