"""nn.Graph against eager flowlike and eager torch, in one process, printing time ratios, the first-call (capture)
time and the peak memory of a step.

Run: python benchmarks/bench_graph.py   (needs torch==2.13.0 installed beside flowlike)
A ratio below 1.0 means the first named side is faster. Workloads: training steps of an MLP (784-512-512-10,
batch 128, AdamW), the small CNN of examples/train_cnn.py, a GPT-mini (4 layers, d_model 128, 4 heads, seq 64,
batch 16, AdamW) and a BERT-like encoder's inference (6 layers, hidden 384, seq 128, batch 8). The graph replays
the captured step in C++ (one boxed call per op, no Python per op, each value released after its last use), with
its fusion groups as generated kernels (flowlike.codegen; the benchmark waits for them before timing). For the MLP,
the GPT-mini and the BERT-like encoder it counts the FLOPs of the matrix products and prints the fraction of the
machine's nominal peak float32 rate (threads x 2 FMA units x vector lanes x 2 x clock; the number of FMA units is an
assumption) and of the GEMM ceiling measured in the same run: the products alone at that rate bound the step time
from below, so eager's time over that bound is the most a graph (or fusion) can gain over eager.
"""
import contextlib
import importlib.util
import os
import statistics
import time

import numpy as np
import torch

import flowlike as fl
from flowlike import codegen
from common import cpu_info

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "examples")


def _example(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(EXAMPLES, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cpu_peak():
    """(description, peak float32 FLOP/s) of the threads flowlike uses."""
    model, isa, lanes, mhz = cpu_info()
    threads = fl.get_num_threads()
    peak = threads * 2 * lanes * 2 * mhz * 1e6
    return (f"{model}, {isa}, {threads} threads at {mhz:.0f} MHz (/proc/cpuinfo; a turbo clock is higher, and so "
            f"is the true peak): peak {peak / 1e9:.0f} GFLOP/s", peak)


def gemm_ceiling():
    """The float32 GEMM rate this machine sustains on the threads in use: the better of flowlike's and torch's on a
    1024^3 product. The nominal peak above assumes two full-width FMA units per core; some cores (AMD Zen 4) run a
    512-bit FMA on two 256-bit halves, and the clock varies, so the measured rate is the bound that matters."""
    a = np.random.default_rng(1).standard_normal((1024, 1024)).astype(np.float32)
    best = float("inf")
    for lib in (fl, torch):
        x = lib.from_numpy(a.copy())
        lib.mm(x, x)
        for _ in range(10):  # the fastest run: a ceiling, not a typical time
            t0 = time.perf_counter()
            lib.mm(x, x)
            best = min(best, time.perf_counter() - t0)
    return 2 * 1024 ** 3 / best


def timed(fn, number):
    return timed_together([fn], number)[0]


def timed_together(fns, number):
    """The median time of each function, the functions run in turn within each round: a slow spell of a shared
    machine then falls on all of them alike instead of on whichever ran during it, so their ratios hold."""
    times = [[] for _ in fns]
    for _ in range(number):
        for fn, ts in zip(fns, times):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
    return [statistics.median(ts) for ts in times]


def peak_of(fn):
    fn()
    fl.memory.reset_peak_memory_stats()
    fn()
    return fl.memory.max_memory_allocated()


def training_case(lib, make_model, make_batch):
    model = make_model(lib)
    opt = lib.optim.AdamW(model.parameters(), lr=1e-3)
    x, y = make_batch(lib)

    def step():
        out = model(x)
        loss = lib.nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
    return model, opt, (x, y), step


def graph_of(model, opt, fn):
    class Step(fl.nn.Graph):
        def __init__(self):
            super().__init__()
            self.model = model
            if opt is not None:
                self.add_optimizer(opt)

        def build(self, *args):
            return fn(*args)
    return Step()


def compare_case(title, make_model, make_batch, number, train=True, flops=None, peak=None, ceiling=None):
    if train:
        model, opt, args, fl_step = training_case(fl, make_model, make_batch)
        *_, t_step = training_case(torch, make_model, make_batch)
        # torch.compile as users apply it: the model compiled, backward and the optimizer step eager around it
        *_, tc_step = training_case(torch, lambda lib: torch.compile(make_model(lib)), make_batch)
        graph = graph_of(model, opt, lambda *a: fl_step())
    else:
        model, t_model = make_model(fl).eval(), make_model(torch).eval()
        x, tx = make_batch(fl)[0], make_batch(torch)[0]
        args = (x,)

        def fl_step():
            with fl.no_grad():
                return model(x)

        def t_step():
            with torch.no_grad():
                return t_model(tx)
        tc_model = torch.compile(t_model)

        def tc_step():
            with torch.no_grad():
                return tc_model(tx)
        graph = graph_of(model, None, lambda a: model(a))
        graph.eval()
    t0 = time.perf_counter()
    if train:
        graph(*args)
        graph(*args)  # first step without optimizer state, then the steady step
        run_graph = lambda: graph(*args)  # noqa: E731
    else:
        with fl.no_grad():
            graph(*args)

        def run_graph():
            with fl.no_grad():
                return graph(*args)
    capture = time.perf_counter() - t0
    t0 = time.perf_counter()
    tc_step()
    tc_step()
    tc_first = time.perf_counter() - t0
    t_eager, t_graph, t_torch, t_compiled = timed_together([fl_step, run_graph, t_step, tc_step], number)
    m_eager, m_graph = peak_of(fl_step), peak_of(run_graph)
    print(f"{title}")
    print(f"  eager {t_eager * 1e3:8.2f} ms   graph {t_graph * 1e3:8.2f} ms   torch {t_torch * 1e3:8.2f} ms   "
          f"graph/eager {t_graph / t_eager:5.2f}x   graph/torch {t_graph / t_torch:5.2f}x")
    print(f"  torch.compile {t_compiled * 1e3:8.2f} ms   graph/torch.compile {t_graph / t_compiled:5.2f}x   first two calls: "
          f"graph {capture:.2f} s (capture + kernel compilation), torch.compile {tc_first:.2f} s")
    line = f"  peak memory of a step: eager {m_eager / 2**20:7.1f} MiB   graph {m_graph / 2**20:7.1f} MiB"
    if flops:
        line += f"   graph at {flops / t_graph / 1e9:6.1f} GFLOP/s = {flops / t_graph / peak:5.1%} of peak"
    print(line, flush=True)
    if flops:
        # the step's matrix products alone, at the measured GEMM rate: no plan can run the step faster
        bound = flops / ceiling
        print(f"  matrix products {flops / 1e9:.2f} GFLOP: at least {bound * 1e3:.2f} ms at the GEMM ceiling "
              f"({ceiling / 1e9:.0f} GFLOP/s); eager at {bound / t_eager:5.1%} of that bound, graph at "
              f"{bound / t_graph:5.1%}; the most any graph can gain over eager: {t_eager / bound:.2f}x", flush=True)
        with fl.no_grad() if not train else contextlib.nullcontext():
            per_op = graph.time_report(*args, steps=number, top=8)
        # the step's calls by kind: the products are bound by the GEMM rate; the rest is what a graph can shorten
        kinds = {"matrix products": 0.0, "attention": 0.0, "the rest": 0.0}
        for op, ms in per_op.items():  # (an epilogue group is a product with its activation: codegen/fusion.py)
            product = op in _PRODUCTS or op.startswith("epilogue_")
            kinds["matrix products" if product else "attention" if op in _ATTENTION else "the rest"] += ms
        print("  a graph step's calls: " + ", ".join(f"{k} {v:.2f} ms" for k, v in kinds.items()), flush=True)


_PRODUCTS = {"mm", "addmm", "bmm", "baddbmm", "matmul", "_addmm_activation", "convolution", "_conv2d_bias_act"}
_ATTENTION = {"scaled_dot_product_attention", "scaled_dot_product_attention_backward"}


def main():
    codegen.config.async_compile = False  # the fused kernels are built before the first timed step
    desc, peak = cpu_peak()
    print(desc)
    ceiling = gemm_ceiling()
    print(f"GEMM ceiling (float32 1024^3, the better of flowlike and torch): {ceiling / 1e9:.0f} GFLOP/s = "
          f"{ceiling / peak:.0%} of the nominal peak")
    rng = np.random.default_rng(0)

    def data(shape, classes, batch_shape):
        x = rng.standard_normal(shape).astype(np.float32)
        y = rng.integers(0, classes, batch_shape)
        return lambda lib: (lib.from_numpy(x.copy()), lib.from_numpy(y.copy()))

    # forward and weight gradients: 2 B (sum of in x out) each; input gradients for the two upper layers only
    mlp_flops = 2 * 128 * (2 * (784 * 512 + 512 * 512 + 512 * 10) + 512 * 512 + 512 * 10)
    compare_case("MLP 784-512-512-10, batch 128, AdamW step",
                 lambda lib: lib.nn.Sequential(lib.nn.Linear(784, 512), lib.nn.ReLU(), lib.nn.Linear(512, 512),
                                               lib.nn.ReLU(), lib.nn.Linear(512, 10)),
                 data((128, 784), 10, (128,)), number=20, flops=mlp_flops, peak=peak, ceiling=ceiling)
    cnn = _example("train_cnn")
    compare_case("small CNN (examples/train_cnn.py), batch 32, AdamW step", cnn.build_model,
                 data((32, 1, 12, 12), 3, (32,)), number=20)
    # GPT-mini: forward products per layer (qkv, projection, MLP, causal attention counted whole) and the head;
    # backward twice the forward
    tokens_n, d, vocab = 16 * 64, 128, 64
    layer = 2 * tokens_n * d * (3 * d + d + 2 * 4 * d) + 2 * 2 * 16 * 64 * 64 * d
    gpt_flops = 3 * (4 * layer + 2 * tokens_n * d * vocab)
    # BERT-like: per layer qkv, projection, feed-forward and attention (inference: forward only)
    bert_tokens = 8 * 128
    bert_flops = 6 * (2 * bert_tokens * 384 * (3 * 384 + 384 + 2 * 1536) + 2 * 2 * 8 * 128 * 128 * 384)
    gpt = _example("train_gpt")
    tokens = rng.integers(0, 64, (16, 65))
    compare_case("GPT-mini (4 layers, d_model 128, 4 heads, seq 64, batch 16), AdamW step",
                 lambda lib: gpt.build_model(lib, 64, d_model=128, heads=4, layers=4, context=64),
                 lambda lib: (lib.from_numpy(tokens[:, :-1].copy()), lib.from_numpy(tokens[:, 1:].copy())), number=10,
                 flops=gpt_flops, peak=peak, ceiling=ceiling)
    hidden = rng.standard_normal((8, 128, 384)).astype(np.float32)
    compare_case("BERT-like encoder inference (6 layers, hidden 384, seq 128, batch 8)",
                 lambda lib: lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(384, 6, 1536, dropout=0.0,
                                                                                       batch_first=True), 6),
                 lambda lib: (lib.from_numpy(hidden.copy()),), number=10, train=False, flops=bert_flops, peak=peak,
                 ceiling=ceiling)


if __name__ == "__main__":
    main()
