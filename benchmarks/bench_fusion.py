"""Generated fused kernels (flowlike.codegen) against the unfused ops and against torch, in one process.

Run: python benchmarks/bench_fusion.py   (needs torch==2.13.0 beside flowlike; torch.compile needs a C++ compiler)
Workloads: the tanh-GELU chain 0.5*x*(1+tanh(0.79788456*(x+0.044715*x**3))) on 4M float32 as eight ops,
softmax and layer_norm written out of primitives (on 4096 x 1024 float32), attention scores scaled, viewed per head,
masked and normalized (a chain across a view into a row group), and a bias gradient (a chain ending in a sum over
every dimension but the last). Each runs in flowlike eager (one kernel
per op), as a flowlike nn.Graph (the program's fusion groups compiled to C++), in torch eager and under
torch.compile (TorchInductor's C++ backend). A ratio below 1.0 means the first named side is faster.

The GELU chain is memory-bound when fused: its kernel reads 16 MB and writes 16 MB once, so the benchmark prints
the time of a 16 MB copy (same traffic) and the fraction of that copy speed the fused kernel reaches.
"""
import os
import sys
import time

import torch

import flowlike as fl
from flowlike import codegen

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_graph import cpu_peak, timed, timed_together  # noqa: E402


def gelu_chain(t):
    return lambda x: 0.5 * x * (1 + t.tanh(0.79788456 * (x + 0.044715 * x ** 3)))


def softmax_primitives(t):
    def f(x):
        e = (x - x.amax(-1, keepdim=True)).exp()
        return e / e.sum(-1, keepdim=True)
    return f


def layer_norm_primitives(t):
    def f(x, w, b):
        mu = x.mean(-1, keepdim=True)
        d = x - mu
        var = (d * d).mean(-1, keepdim=True)
        return d * (var + 1e-5).rsqrt() * w + b
    return f


def masked_scores(t):
    def f(s, mask):  # s: (batch * heads, T, T) as bmm makes it
        e = (s * 0.125).view(16, 4, 64, 64) + mask
        e = (e - e.amax(-1, keepdim=True)).exp()
        return e / e.sum(-1, keepdim=True)
    return f


def bias_gradient(t):
    return lambda g, x: (g * x.sigmoid() * 1).sum([0, 1])


def median_time(fn, number=20):
    fn()
    return timed(fn, number)


def as_graph(fn):
    class G(fl.nn.Graph):
        def build(self, *args):
            return fn(*args)
    return G()


def run(name, make, fl_args, torch_args, hand_fl=None):
    eager = make(fl)
    graph = as_graph(eager)
    t0 = time.perf_counter()
    graph(*fl_args)
    plan = next(reversed(graph._plans.values()))
    plan.fusion.wait()
    first = time.perf_counter() - t0
    graph(*fl_args)
    groups = ", ".join(f"{len(g.nodes)} ops" for g in plan.fusion.groups) or "none"
    torch_fn = make(torch)
    compiled = torch.compile(torch_fn)
    t0 = time.perf_counter()
    compiled(*torch_args)
    torch_first = time.perf_counter() - t0
    sides = {
        "flowlike eager": lambda: eager(*fl_args),
        "flowlike graph (fused)": lambda: graph(*fl_args),
        "torch eager": lambda: torch_fn(*torch_args),
        "torch.compile": lambda: compiled(*torch_args),
    }
    if hand_fl is not None:
        sides["flowlike hand-written kernel"] = lambda: hand_fl(*fl_args)
    for fn in sides.values():
        fn()
    times = dict(zip(sides, timed_together(list(sides.values()), 20)))
    print(f"\n{name}: fusion groups [{groups}]; first call: graph capture+compile {first:.2f} s, "
          f"torch.compile {torch_first:.2f} s")
    base = times["flowlike graph (fused)"]
    for side, t in times.items():
        print(f"  {side:<30} {t * 1e3:9.3f} ms   fused / this = {base / t:5.2f}x")
    return times


def main():
    codegen.config.async_compile = False
    desc, _ = cpu_peak()
    print(desc)
    n = 1 << 22
    x = fl.randn(n)
    tx = torch.from_numpy(x.numpy().copy())
    times = run("tanh-GELU chain, 4M float32", gelu_chain, (x,), (tx,))
    dst = fl.empty_like(x)
    copy = median_time(lambda: dst.copy_(x))
    fused = times["flowlike graph (fused)"]
    print(f"  16 MB copy (read 16 MB + write 16 MB) {copy * 1e3:.3f} ms = {2 * 4 * n / copy / 1e9:.1f} GB/s; the fused "
          f"kernel moves the same bytes at {copy / fused:.0%} of that speed")
    print(f"  targets: fused <= 0.15x torch eager: {fused / times['torch eager']:.2f}x; faster than torch.compile: "
          f"{fused / times['torch.compile']:.2f}x")

    rows = fl.randn(4096, 1024)
    trows = torch.from_numpy(rows.numpy().copy())
    t = run("softmax out of primitives, 4096 x 1024 float32", softmax_primitives, (rows,), (trows,),
            hand_fl=lambda r: fl.softmax(r, -1))
    print(f"  target: fused <= 1.0x the hand-written softmax: "
          f"{t['flowlike graph (fused)'] / t['flowlike hand-written kernel']:.2f}x")
    w, b = fl.randn(1024), fl.randn(1024)
    tw, tb = torch.from_numpy(w.numpy().copy()), torch.from_numpy(b.numpy().copy())
    t = run("layer_norm out of primitives, 4096 x 1024 float32", layer_norm_primitives, (rows, w, b), (trows, tw, tb),
            hand_fl=lambda r, w, b: fl.nn.functional.layer_norm(r, (1024,), w, b))
    print(f"  target: fused <= 1.0x the hand-written layer_norm: "
          f"{t['flowlike graph (fused)'] / t['flowlike hand-written kernel']:.2f}x")

    s, mask = fl.randn(64, 64, 64), fl.randn(64, 64)
    run("attention scores: scale -> view per head -> + mask -> softmax, (16*4, 64, 64) float32", masked_scores,
        (s, mask), (torch.from_numpy(s.numpy().copy()), torch.from_numpy(mask.numpy().copy())))
    g, h = fl.randn(16, 64, 512), fl.randn(16, 64, 512)
    run("bias gradient: (g * sigmoid(x) * 1).sum over (0, 1), (16, 64, 512) float32", bias_gradient, (g, h),
        (torch.from_numpy(g.numpy().copy()), torch.from_numpy(h.numpy().copy())))


_FIRST_CALL = """
import os, sys, time
sys.path.insert(0, {examples!r})
import train_gpt
import flowlike as fl
from flowlike import codegen, nn
codegen.config.async_compile = False
fl.manual_seed(0)
model = train_gpt.build_model(fl, 64, d_model=128, heads=4, layers=4, context=64)
opt = fl.optim.AdamW(model.parameters(), lr=1e-3)
class Step(nn.Graph):
    def __init__(self):
        super().__init__()
        self.model = model
        self.add_optimizer(opt)
    def build(self, x, y):
        out = self.model(x)
        loss = nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
step = Step()
x, y = fl.randint(0, 64, (16, 64)), fl.randint(0, 64, (16, 64))
t0 = time.perf_counter()
step(x, y)
step(x, y)
compiled = sum(plan.fusion.compiled for plan in step._plans.values())
print(time.perf_counter() - t0, compiled)
"""


def first_calls():
    """The GPT-mini training step's first two calls (capture + kernel compilation) in new processes: with an empty
    kernel cache, then with the cache the first filled."""
    import subprocess
    import tempfile
    examples = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "examples")
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, FLOWLIKE_CACHE_DIR=cache)
        runs = []
        for _ in range(2):
            out = subprocess.run([sys.executable, "-c", _FIRST_CALL.format(examples=examples)], env=env,
                                 capture_output=True, text=True, check=True)
            seconds, compiled = out.stdout.split()[-2:]
            runs.append((float(seconds), int(compiled)))
    print(f"\nGPT-mini training step, first two calls in a new process: cold (empty kernel cache) {runs[0][0]:.2f} s, "
          f"{runs[0][1]} libraries compiled; warm (cache filled) {runs[1][0]:.2f} s, {runs[1][1]} compiled "
          f"(targets: cold < 20 s, warm < 2 s; bench_graph.py prints torch.compile's first calls beside)")


if __name__ == "__main__":
    main()
    first_calls()
