"""Whole training steps: flowlike against PyTorch eager, same models built by the same code, in one process.

Run: python benchmarks/bench_train.py   (ratio = flowlike / torch; below 1.0 flowlike is faster or smaller)

- one step (zero_grad, forward, cross-entropy, backward, AdamW step) of
  - an MLP 784-512-512-10 at batch 128,
  - a small CNN (two conv-batchnorm-relu blocks, max-pool, linear) at batch 64 of 1x28x28,
  - a GPT-mini (4 pre-norm blocks, d_model 128, 4 heads, seq 64, batch 16, vocab 256);
- peak memory of 20 such steps: how far the peak resident set size rises above the resident size with the
  model, optimizer and data built, each side in a fresh subprocess importing only itself (torch has no CPU
  allocator statistics);
- Module.__call__ overhead: Linear(10, 10) on a (1, 10) input.
"""
import importlib
import os
import subprocess
import sys
import tempfile

import numpy as np


def mlp(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))


def cnn(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
                         nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(64 * 14 * 14, 10))


def gpt_mini(lib, vocab=256, d=128, heads=4, layers=4, seq=64):
    nn, F = lib.nn, lib.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

        def forward(self, x):
            b, s, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).reshape(b, s, 3, heads, d // heads).permute(2, 0, 3, 1, 4).unbind(0)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, s, d)
            x = x + self.proj(a)
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(seq, d)
            self.blocks = nn.Sequential(*[Block() for _ in range(layers)])
            self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)

        def forward(self, idx):
            x = self.tok(idx) + self.pos(lib.arange(idx.shape[1]))
            return self.head(self.ln(self.blocks(x))).reshape(-1, vocab)

    return GPT()


def case_data(name):
    """(model builder, input array, target array) of one benchmark case, from a fixed seed."""
    rng = np.random.default_rng(0)
    if name == "mlp":
        return mlp, rng.standard_normal((128, 784)).astype(np.float32), rng.integers(0, 10, 128)
    if name == "cnn":
        return cnn, rng.standard_normal((64, 1, 28, 28)).astype(np.float32), rng.integers(0, 10, 64)
    return gpt_mini, rng.integers(0, 256, (16, 64)), rng.integers(0, 256, 16 * 64)


def make_step(lib, name, weights):
    """A closure running one training step of case `name` on `lib`, from `weights` (numpy arrays)."""
    build, x, y = case_data(name)
    lib.manual_seed(0)
    model = build(lib)
    model.load_state_dict({k: lib.tensor(v) for k, v in weights.items()})
    opt = lib.optim.AdamW(model.parameters(), lr=1e-3)
    xt, yt = lib.tensor(x), lib.tensor(y)

    def step():
        opt.zero_grad()
        loss = lib.nn.functional.cross_entropy(model(xt), yt)
        loss.backward()
        opt.step()
        return loss
    return step


def reference_weights(torch, name):
    """The case's initial weights as numpy arrays (torch's initialization), shared by both sides."""
    torch.manual_seed(0)
    return {k: v.detach().numpy().copy() for k, v in case_data(name)[0](torch).state_dict().items()}


def _status_kib(field):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":"))


def peak_rss_rise(side, name, weights, steps=20):
    """Runs `steps` training steps of case `name` on one side in a fresh process that imports only that side;
    returns how far its peak resident set size rose above its resident size with the model, optimizer and
    data built (Linux: the peak is reset through /proc/self/clear_refs)."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "weights.npz")
        np.savez(path, **weights)
        out = subprocess.run([sys.executable, __file__, "--memory", side, name, str(steps), path],
                             capture_output=True, text=True, check=True)
    return int(out.stdout.split()[-1])


def memory_child(side, name, steps, weights_path):
    lib = importlib.import_module(side)
    step = make_step(lib, name, dict(np.load(weights_path)))
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # resets the peak resident size (VmHWM) to the current one
    before = _status_kib("VmRSS")
    for _ in range(steps):
        step()
    print((_status_kib("VmHWM") - before) * 1024)


def main():
    import torch

    import flowlike as fl
    from common import compare

    torch.set_num_threads(fl.get_num_threads())
    print(f"threads: flowlike {fl.get_num_threads()}  torch {torch.get_num_threads()}")
    titles = {"mlp": "MLP 784-512-512-10 b128", "cnn": "small CNN b64 1x28x28", "gpt": "GPT-mini 4L d128 s64 b16"}
    weights = {name: reference_weights(torch, name) for name in titles}
    for name, title in titles.items():
        f_step, t_step = make_step(fl, name, weights[name]), make_step(torch, name, weights[name])
        compare(f"train step (AdamW) {title}", f_step, t_step, "<= 1.0x", number=3, repeat=7)
    for name, title in titles.items():
        f_mem = peak_rss_rise("flowlike", name, weights[name])
        t_mem = peak_rss_rise("torch", name, weights[name])
        print(f"{'peak memory rise, 20 steps, ' + title:<48} flowlike {f_mem / 2**20:8.1f} MiB  torch "
              f"{t_mem / 2**20:8.1f} MiB   ratio {f_mem / max(t_mem, 1):5.2f}x  (target <= 1.0x)", flush=True)
    f_lin, t_lin = fl.nn.Linear(10, 10), torch.nn.Linear(10, 10)
    fx, tx = fl.randn(1, 10), torch.randn(1, 10)
    with fl.no_grad(), torch.no_grad():
        compare("Linear(10, 10) module call, no_grad", lambda: f_lin(fx), lambda: t_lin(tx), "<= 1.0x", number=2000)
    compare("Linear(10, 10) module call, grad mode", lambda: f_lin(fx), lambda: t_lin(tx), "<= 0.75x", number=2000)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--memory":
        memory_child(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
    else:
        main()
