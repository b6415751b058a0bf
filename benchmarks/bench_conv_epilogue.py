"""The 3x3 convolution forward and the fused bias + activation epilogues, flowlike against PyTorch in one process.

Run: python benchmarks/bench_conv_epilogue.py   (ratio = flowlike time / torch time; below 1 is faster; torch runs
with flowlike's thread count). Cases:
  - conv2d 3x3, N=16, 64->64 channels, 56x56, padding 1, with bias: forward (target: ratio <= 1.0), forward+backward;
  - the same convolution followed by relu: flowlike's fused _conv2d_bias_act (relu applied as each output row is
    stored, still in cache) against flowlike's conv2d then relu, and against torch's conv2d then relu;
  - a Linear layer with gelu (x (256, 1024) @ W^T (1024, 4096) + b): flowlike's _addmm_activation against
    flowlike's addmm then gelu, and against torch (torch._addmm_activation, which on CPU is addmm then gelu).
Each case runs with flowlike's thread count (wall time) and again with one thread (that thread's CPU time, which
other processes' load barely moves). Each line also gives the FLOP rate as a fraction of the machine's peak: cores * GHz * FLOPs per cycle, with the
nominal clock of /proc/cpuinfo (turbo clocks can exceed it, so fractions above 1 are possible) and FLOPs per cycle
per core assumed from the ISA: 32 for AVX-512 on AMD (Zen 4 runs 512-bit FMAs on two 256-bit pipes) and for
AVX2 + FMA (two 8-wide FMA pipes), 64 for AVX-512 on Intel (two 16-wide FMA pipes), 8 otherwise.
FLOWLIKE_BENCH_GHZ overrides the clock.
"""
import os
import platform
import time

import numpy as np

import flowlike as fl

try:
    import torch
except ImportError:  # the benchmark still reports flowlike's own times
    torch = None

ROUNDS = 4
REPEAT = 2


def cpu_info():
    """(model name, vendor, ISA label, nominal GHz, FLOPs per cycle per core) from /proc/cpuinfo."""
    info = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if ":" in line:
                    k, v = (s.strip() for s in line.split(":", 1))
                    info.setdefault(k, v)
    except OSError:
        pass
    flags = set(info.get("flags", "").split())
    vendor = info.get("vendor_id", "")
    if "avx512f" in flags:
        isa, per_cycle = "AVX-512", 32 if vendor == "AuthenticAMD" else 64
    elif {"avx2", "fma"} <= flags:
        isa, per_cycle = "AVX2+FMA", 32
    else:
        isa, per_cycle = "SSE", 8
    ghz = float(os.environ.get("FLOWLIKE_BENCH_GHZ", 0)) or float(info.get("cpu MHz", 0)) / 1000
    return info.get("model name", platform.processor()), vendor, isa, ghz, per_cycle


def timed(cases, clock):
    """Best times of each case's functions by `clock`, in interleaved rounds (load from other processes hits all
    alike), each round in a new order: a library's threads still spinning after its call slow down whatever runs
    next, so no function may always follow the same one."""
    best = {name: [float("inf")] * len(fns) for name, (fns, _) in cases.items()}
    runs = [(name, i, fn) for name, (fns, _) in cases.items() for i, fn in enumerate(fns) if fn is not None]
    order = np.random.default_rng(1)
    for _ in range(ROUNDS):
        for j in order.permutation(len(runs)):
            name, i, fn = runs[j]
            fn()
            for _ in range(REPEAT):
                t0 = clock()
                fn()
                best[name][i] = min(best[name][i], clock() - t0)
    return best


def report(cases, best, peak):
    print(f"{'case':32s} {'flowlike ms':>11s} {'unfused ms':>10s} {'torch ms':>9s} {'ratio':>6s} {'unfused':>8s} "
          f"{'fl peak':>8s}")
    for name, (fns, flops) in cases.items():
        t_fl, t_unfused, t_torch = best[name]
        unfused = f"{t_unfused * 1e3:10.3f}" if fns[1] else f"{'':10s}"
        torch_ms = f"{t_torch * 1e3:9.3f}" if fns[2] else f"{'':9s}"
        ratio = f"{t_fl / t_torch:6.2f}" if fns[2] else f"{'':6s}"
        speedup = f"{t_fl / t_unfused:8.2f}" if fns[1] else f"{'':8s}"  # fused over flowlike's unfused sequence
        frac = f"{flops / t_fl / peak:8.2f}" if peak else f"{'':8s}"
        print(f"{name:32s} {t_fl * 1e3:11.3f} {unfused} {torch_ms} {ratio} {speedup} {frac}")
        if fns[1] and fns[2]:
            print(f"{'  (unfused flowlike / torch)':32s} {'':11s} {'':10s} {'':9s} {t_unfused / t_torch:6.2f}")


def set_threads(n):
    fl.set_num_threads(n)
    if torch is not None:
        torch.set_num_threads(n)


def main():
    threads = fl.get_num_threads()
    set_threads(threads)
    model, vendor, isa, ghz, per_cycle = cpu_info()
    peak = threads * ghz * per_cycle * 1e9
    print(f"CPU: {model} ({vendor}), ISA {isa}, threads {threads}")
    print(f"peak: {threads} cores x {ghz:.2f} GHz x {per_cycle} FLOP/cycle = {peak / 1e9:.0f} GFLOP/s (assumed)")
    rng = np.random.default_rng(0)

    def arr(*shape):
        return rng.standard_normal(shape, dtype=np.float32)

    x, w, b = arr(16, 64, 56, 56), arr(64, 64, 3, 3), arr(64)
    lx, lw, lb = arr(256, 1024), arr(4096, 1024), arr(4096)
    xf, wf, bf = (fl.from_numpy(a) for a in (x, w, b))
    lxf, lwf, lbf = (fl.from_numpy(a) for a in (lx, lw, lb))
    gf = [fl.from_numpy(a).requires_grad_(True) for a in (x, w, b)]
    Ff = fl.nn.functional
    conv_flops = 2 * 16 * 64 * 64 * 9 * 56 * 56
    linear_flops = 2 * 256 * 1024 * 4096

    def fl_fwd_bwd():
        Ff.conv2d(*gf, padding=1).sum().backward()

    # name: ([flowlike fused or plain, flowlike unfused or None, torch], flops)
    cases = {
        "conv2d 3x3 16x64x56x56 fwd": ([lambda: Ff.conv2d(xf, wf, bf, padding=1), None, None], conv_flops),
        "conv2d 3x3 fwd+bwd": ([fl_fwd_bwd, None, None], 3 * conv_flops),
        "conv2d 3x3 + bias + relu": ([lambda: fl._C._call_op("_conv2d_bias_act", xf, wf, bf, [1, 1], [1, 1], [1, 1], 1,
                                                              "relu"),
                                      lambda: Ff.relu(Ff.conv2d(xf, wf, bf, padding=1)), None], conv_flops),
        "linear 256x1024->4096 + gelu": ([lambda: fl._addmm_activation(lbf, lxf, lwf.t(), use_gelu=True),
                                          lambda: Ff.gelu(fl.addmm(lbf, lxf, lwf.t())), None], linear_flops),
    }
    if torch is not None:
        xt, wt, bt = (torch.from_numpy(a) for a in (x, w, b))
        lxt, lwt, lbt = (torch.from_numpy(a) for a in (lx, lw, lb))
        gt = [torch.from_numpy(a).requires_grad_(True) for a in (x, w, b)]
        Ft = torch.nn.functional

        def torch_fwd_bwd():
            Ft.conv2d(*gt, padding=1).sum().backward()

        torch_fns = [lambda: Ft.conv2d(xt, wt, bt, padding=1), torch_fwd_bwd,
                     lambda: Ft.relu(Ft.conv2d(xt, wt, bt, padding=1)),
                     lambda: torch._addmm_activation(lbt, lxt, lwt.t(), use_gelu=True)]
        for (fns, _), fn in zip(cases.values(), torch_fns):
            fns[2] = fn
    print(f"\n{threads} threads, wall time (best of {ROUNDS * REPEAT}):")
    report(cases, timed(cases, time.perf_counter), peak)
    # On a machine shared with other jobs the wall times above swing with their load; one thread's own CPU
    # time does not (much), so it compares the two libraries' work more steadily.
    set_threads(1)
    print(f"\n1 thread, CPU time of the calling thread (peak fraction against one core):")
    report(cases, timed(cases, time.thread_time), peak / threads)
    set_threads(threads)

if __name__ == "__main__":
    main()
