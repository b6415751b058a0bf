"""Autograd: flowlike against PyTorch in one process, on the same models built by the same code.

Run: python benchmarks/bench_autograd.py   (ratio = flowlike time / torch time; below 1.0 flowlike is faster)

- recording one small op (x + y on 10 elements, x requires grad): the per-op overhead of autograd;
- backward of an MLP 784-512-512-10 at batch 128 (forward run once per timed backward, retain_graph off);
- backward of 4 transformer blocks (d_model 128, 4 heads, seq 64, batch 16), pre-norm, causal attention.
"""
import numpy as np
import torch

import flowlike as fl
from common import compare


def params(lib, shapes, seed):
    rng = np.random.default_rng(seed)
    return [lib.tensor((rng.standard_normal(s) / np.sqrt(s[-1])).astype(np.float32), requires_grad=True) for s in shapes]


def mlp(lib, ps, x):
    F = lib.nn.functional
    w1, b1, w2, b2, w3, b3 = ps
    h = F.relu(F.linear(x, w1, b1))
    h = F.relu(F.linear(h, w2, b2))
    return F.cross_entropy(F.linear(h, w3, b3), lib.zeros(x.shape[0], dtype=lib.int64))


def block_shapes(d, hidden):
    return [(d,), (d,), (3 * d, d), (3 * d,), (d, d), (d,), (d,), (d,), (hidden, d), (hidden,), (d, hidden), (d,)]


def transformer(lib, ps, x, heads=4, layers=4):
    F = lib.nn.functional
    b, s, d = x.shape
    per = len(block_shapes(1, 1))
    for i in range(layers):
        g1, be1, wqkv, bqkv, wo, bo, g2, be2, w1, b1, w2, b2 = ps[i * per:(i + 1) * per]
        h = F.layer_norm(x, (d,), g1, be1)
        q, k, v = F.linear(h, wqkv, bqkv).reshape(b, s, 3, heads, d // heads).permute(2, 0, 3, 1, 4).unbind(0)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, s, d)
        x = x + F.linear(a, wo, bo)
        h = F.layer_norm(x, (d,), g2, be2)
        x = x + F.linear(F.gelu(F.linear(h, w1, b1)), w2, b2)
    return x.pow(2).mean()


def backward_case(name, model, shapes, x_shape, target):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(x_shape).astype(np.float32)
    sides = {}
    for lib in (fl, torch):
        ps, xt = params(lib, shapes, 0), lib.tensor(x)

        def step(lib=lib, ps=ps, xt=xt):
            loss = model(lib, ps, xt)
            loss.backward()
            for p in ps:
                p.grad = None
        sides[lib] = step
    compare(name, sides[fl], sides[torch], target, number=3, repeat=7)


def main():
    torch.set_num_threads(fl.get_num_threads())
    print(f"threads: flowlike {fl.get_num_threads()}  torch {torch.get_num_threads()}")
    a = np.random.default_rng(0).standard_normal(10).astype(np.float32)
    gx, gy = fl.tensor(a, requires_grad=True), fl.tensor(a)
    tgx, tgy = torch.tensor(a, requires_grad=True), torch.tensor(a)
    compare("x + y recorded by autograd, 10 float32", lambda: gx + gy, lambda: tgx + tgy, "<= 1.0x", number=2000)
    backward_case("MLP 784-512-512-10, batch 128: fwd+bwd", mlp,
                  [(512, 784), (512,), (512, 512), (512,), (10, 512), (10,)], (128, 784), "<= 1.0x")
    backward_case("4 transformer blocks d128 h4 s64 b16: fwd+bwd", transformer, block_shapes(128, 512) * 4,
                  (16, 64, 128), "<= 1.0x")


if __name__ == "__main__":
    main()
