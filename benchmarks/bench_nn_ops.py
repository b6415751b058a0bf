"""nn ops: flowlike against PyTorch on the same inputs, in one process, printing time ratios.

Run: python benchmarks/bench_nn_ops.py   (ratio = flowlike time / torch time; below 1 is faster)
Cases: softmax and layer_norm over (4096, 1024) float32, forward and forward+backward; GELU (erf), exp and
sigmoid over the same tensor, GELU also over its transpose (a strided input); causal
scaled_dot_product_attention (batch 8, 8 heads, seq 512, head dim 64, float32), with flowlike's
peak allocator memory compared to the size of one full attention matrix.
"""
import numpy as np

import flowlike as fl
from common import best_time, cpu_info
import flowlike.nn.functional as F

try:
    import torch
    import torch.nn.functional as TF
except ImportError:  # the benchmark still reports flowlike's own times
    torch = TF = None

ROUNDS = 5



def fwd_bwd(op, g):
    def run(m, *xs):
        for x in xs:
            x.grad = None
        op(m, *xs).backward(g[m is fl])
    return run


def cases(rng):
    x = rng.standard_normal((4096, 1024), dtype=np.float32)
    g = rng.standard_normal((4096, 1024), dtype=np.float32)
    w = rng.standard_normal(1024, dtype=np.float32)
    b = rng.standard_normal(1024, dtype=np.float32)
    q, k, v = (rng.standard_normal((8, 8, 512, 64), dtype=np.float32) for _ in range(3))
    go = rng.standard_normal((8, 8, 512, 64), dtype=np.float32)
    grads = {True: fl.from_numpy(g), False: torch.from_numpy(g) if torch else None}
    agrads = {True: fl.from_numpy(go), False: torch.from_numpy(go) if torch else None}

    def smx(m, x):
        return (F if m is fl else TF).softmax(x, dim=-1)

    def ln(m, x, w, b):
        return (F if m is fl else TF).layer_norm(x, (1024,), w, b)

    def gelu(m, x):
        return (F if m is fl else TF).gelu(x)

    def gelu_t(m, x):
        return (F if m is fl else TF).gelu(x.t())

    def exp(m, x):
        return m.exp(x)

    def sigmoid(m, x):
        return m.sigmoid(x)

    def attn(m, q, k, v):
        return (F if m is fl else TF).scaled_dot_product_attention(q, k, v, is_causal=True)

    return [
        ("softmax 4096x1024 fwd", (x,), False, smx, 20),
        ("softmax 4096x1024 fwd+bwd", (x,), True, fwd_bwd(smx, grads), 10),
        ("layer_norm 4096x1024 fwd", (x, w, b), False, ln, 20),
        ("layer_norm 4096x1024 fwd+bwd", (x, w, b), True, fwd_bwd(ln, grads), 10),
        ("gelu 4096x1024 fwd", (x,), False, gelu, 20),
        ("gelu 4096x1024 fwd+bwd", (x,), True, fwd_bwd(gelu, grads), 10),
        ("gelu of the transpose fwd", (x,), False, gelu_t, 10),
        ("exp 4096x1024", (x,), False, exp, 20),
        ("sigmoid 4096x1024", (x,), False, sigmoid, 20),
        ("sdpa 8x8x512x64 causal fwd", (q, k, v), False, attn, 5),
        ("sdpa 8x8x512x64 causal fwd+bwd", (q, k, v), True, fwd_bwd(attn, agrads), 3),
    ]


def attention_memory(rng):
    q, k, v = (fl.from_numpy(rng.standard_normal((8, 8, 512, 64), dtype=np.float32)) for _ in range(3))
    for t in (q, k, v):
        t.requires_grad_()
    fl.memory.reset_peak_memory_stats()
    base = fl.memory.memory_allocated()
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    out.sum().backward()
    peak = fl.memory.max_memory_allocated() - base
    full = 8 * 8 * 512 * 512 * 4
    print(f"sdpa fwd+bwd peak flowlike memory above inputs: {peak / 2**20:.1f} MiB; one full (8,8,512,512) float32 "
          f"attention matrix: {full / 2**20:.1f} MiB (the math path holds several)")


def main():
    if torch is not None:
        torch.set_num_threads(fl.get_num_threads())
    model, isa, _, mhz = cpu_info()
    print(f"{model}, {isa}, {mhz:.0f} MHz")
    print(f"threads: flowlike {fl.get_num_threads()}" + (f", torch {torch.get_num_threads()}" if torch else ""))
    rng = np.random.default_rng(0)
    print(f"{'case':34s} {'flowlike ms':>12s} {'torch ms':>10s} {'ratio':>7s}")
    for name, arrays, grad, op, rep in cases(rng):
        xf = [fl.from_numpy(a).requires_grad_(grad) for a in arrays]
        xt = [torch.from_numpy(a).requires_grad_(grad) for a in arrays] if torch else None
        tf = tt = float("inf")
        for _ in range(ROUNDS):  # interleaved rounds, so load from other processes hits both alike
            tf = min(tf, best_time(lambda: op(fl, *xf), rep))
            if xt is not None:
                tt = min(tt, best_time(lambda: op(torch, *xt), rep))
        if xt is not None:
            print(f"{name:34s} {tf * 1e3:12.3f} {tt * 1e3:10.3f} {tf / tt:7.2f}")
        else:
            print(f"{name:34s} {tf * 1e3:12.3f}")
    attention_memory(rng)


if __name__ == "__main__":
    main()
