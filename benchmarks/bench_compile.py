"""flowlike.compile against flowlike eager, the nn.Graph form of the same step, torch eager and torch.compile, in
one process, printing time ratios and first-call times (the capture; torch.compile's includes Inductor's code
generation and C++ compilation, on a cold or warm on-disk cache depending on earlier runs).

Run: python benchmarks/bench_compile.py   (needs torch==2.13.0 and a C++ compiler for torch.compile's Inductor)
A ratio below 1.0 means the first named side is faster. Workloads: the tanh-GELU chain on 4M float32 (a compiled
function), the training steps of benchmarks/bench_graph.py written as torch users write them with torch.compile
(`model = torch.compile(model)`, then loss.backward() and opt.step() eagerly outside: the compiled forward and
backward run as captured programs, the optimizer eagerly), two steps so small that the per-call Python work is
most of their time, and the BERT-like encoder's inference. The nn.Graph column captures the whole step, optimizer
included, as does `fl.compile(step)` (the first call creates the optimizer's state, a graph break; from the second
call the whole step is one program).
"""
import time

import numpy as np
import torch

import flowlike as fl
from bench_graph import _example, cpu_peak, graph_of, training_case


def interleaved(fns, rounds):
    """Seconds per call of each fn (None stays None): the best of `rounds` rounds, each calling every fn in turn, so
    that a load change on the machine hits all sides alike. Each timed call follows an untimed one of the same fn:
    a side timed right after another library's step measured up to 15% slower (caches and memory that step left)."""
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            if fn is not None:
                fn()
                t0 = time.perf_counter()
                fn()
                best[i] = min(best[i], time.perf_counter() - t0)
    return [None if fn is None else t for fn, t in zip(fns, best)]


def first_call(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def gelu_case(number=15):
    def gelu(lib):
        def f(x):
            return 0.5 * x * (1.0 + lib.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))
        return f

    data = np.random.default_rng(0).standard_normal(4 * 2**20).astype(np.float32)
    x, tx = fl.from_numpy(data.copy()), torch.from_numpy(data.copy())
    f, tf = gelu(fl), gelu(torch)
    cf, ctf = fl.compile(f), torch.compile(tf)
    firsts = (first_call(lambda: cf(x)), first_call(lambda: ctf(tx)))
    assert np.allclose(cf(x).numpy(), ctf(tx).numpy(), rtol=1e-4, atol=1e-5)
    times = interleaved([lambda: f(x), lambda: cf(x), None, lambda: tf(tx), lambda: ctf(tx)], number)
    report("tanh-GELU chain, 4M float32 (a compiled function)", times, firsts)


def report(title, times, firsts, whole=None):
    eager, comp, graph, t_eager, t_comp = times
    print(title)
    line = (f"  fl eager {eager * 1e3:8.3f} ms   fl.compile {comp * 1e3:8.3f} ms   torch eager {t_eager * 1e3:8.3f} ms"
            f"   torch.compile {t_comp * 1e3:8.3f} ms")
    if graph is not None:
        line += f"   nn.Graph {graph * 1e3:8.3f} ms"
    print(line)
    ratios = (f"  fl.compile/fl eager {comp / eager:5.2f}x   fl.compile/torch eager {comp / t_eager:5.2f}x   "
              f"fl.compile/torch.compile {comp / t_comp:5.2f}x")
    if graph is not None:
        ratios += f"   fl.compile/nn.Graph {comp / graph:5.2f}x"
    print(ratios)
    if whole is not None:
        print(f"  the whole step compiled (optimizer inside): {whole * 1e3:8.3f} ms   /nn.Graph {whole / graph:5.2f}x   "
              f"/torch.compile (model) {whole / t_comp:5.2f}x")
    print(f"  first call: fl.compile {firsts[0]:.2f} s   torch.compile {firsts[1]:.2f} s   "
          f"ratio {firsts[0] / firsts[1]:5.3f}x", flush=True)


def training_compare(title, make_model, make_batch, number):
    model, opt, args, fl_step = training_case(fl, make_model, make_batch)
    t_model, t_opt, t_args, t_step = training_case(torch, make_model, make_batch)
    graph = graph_of(model, opt, lambda *a: fl_step())
    cmodel, ct_model = fl.compile(model), torch.compile(t_model)

    def step_with(lib, m, o, a):
        def step():
            out = m(a[0])
            loss = lib.nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]), a[1].reshape(-1))
            loss.backward()
            o.step()
            o.zero_grad()
            return loss
        return step

    c_step, ct_step = step_with(fl, cmodel, opt, args), step_with(torch, ct_model, t_opt, t_args)
    firsts = (first_call(c_step), first_call(ct_step))  # forward capture and, at its backward, the backward's
    graph(*args)
    graph(*args)
    whole = fl.compile(fl_step)  # the step with its backward and optimizer: one program from its second call on
    whole()
    whole()
    times = interleaved([fl_step, c_step, lambda: graph(*args), t_step, ct_step, whole], number)
    assert cmodel._compiled.captures == 1 and whole._compiled_code.captures == 1
    report(title, times[:5], firsts, whole=times[5])


def inference_compare(title, make_model, x_of, number):
    model, t_model = make_model(fl).eval(), make_model(torch).eval()
    x, tx = x_of(fl), x_of(torch)
    cmodel, ct_model = fl.compile(model), torch.compile(t_model)
    graph = graph_of(model, None, lambda a: model(a))
    graph.eval()

    def no_grad(lib, fn):
        def run():
            with lib.no_grad():
                return fn()
        return run

    firsts = (first_call(no_grad(fl, lambda: cmodel(x))), first_call(no_grad(torch, lambda: ct_model(tx))))
    no_grad(fl, lambda: graph(x))()
    times = interleaved([no_grad(fl, lambda: model(x)), no_grad(fl, lambda: cmodel(x)), no_grad(fl, lambda: graph(x)),
                         no_grad(torch, lambda: t_model(tx)), no_grad(torch, lambda: ct_model(tx))], number)
    report(title, times, firsts)


def main():
    print(cpu_peak()[0])
    rng = np.random.default_rng(0)

    def data(shape, classes, batch_shape):
        x = rng.standard_normal(shape).astype(np.float32)
        y = rng.integers(0, classes, batch_shape)
        return lambda lib: (lib.from_numpy(x.copy()), lib.from_numpy(y.copy()))

    gelu_case()
    training_compare("MLP 784-512-512-10, batch 128, AdamW step",
                     lambda lib: lib.nn.Sequential(lib.nn.Linear(784, 512), lib.nn.ReLU(), lib.nn.Linear(512, 512),
                                                   lib.nn.ReLU(), lib.nn.Linear(512, 10)),
                     data((128, 784), 10, (128,)), number=20)
    cnn = _example("train_cnn")
    training_compare("small CNN (examples/train_cnn.py), batch 32, AdamW step", cnn.build_model,
                     data((32, 1, 12, 12), 3, (32,)), number=20)
    gpt = _example("train_gpt")
    tokens = rng.integers(0, 64, (16, 65))
    training_compare("GPT-mini (4 layers, d_model 128, 4 heads, seq 64, batch 16), AdamW step",
                     lambda lib: gpt.build_model(lib, 64, d_model=128, heads=4, layers=4, context=64),
                     lambda lib: (lib.from_numpy(tokens[:, :-1].copy()), lib.from_numpy(tokens[:, 1:].copy())),
                     number=10)
    # steps so small that the per-call Python work (guards, flattening, the autograd node) is most of the time
    training_compare("per-call overhead: MLP 8-8-2, batch 4, AdamW step",
                     lambda lib: lib.nn.Sequential(lib.nn.Linear(8, 8), lib.nn.ReLU(), lib.nn.Linear(8, 2)),
                     data((4, 8), 2, (4,)), number=300)
    inference_compare("per-call overhead: Linear 8-8 inference, batch 4",
                      lambda lib: lib.nn.Linear(8, 8), lambda lib: lib.from_numpy(np.ones((4, 8), np.float32)),
                      number=300)
    hidden = rng.standard_normal((8, 128, 384)).astype(np.float32)
    inference_compare("BERT-like encoder inference (6 layers, hidden 384, seq 128, batch 8)",
                      lambda lib: lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(
                          384, 6, 1536, dropout=0.0, batch_first=True), 6),
                      lambda lib: lib.from_numpy(hidden.copy()), number=10)


if __name__ == "__main__":
    main()
