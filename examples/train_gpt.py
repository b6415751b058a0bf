"""Train a tiny character-level GPT: ordinary PyTorch code (a transformer with causal attention, AdamW, a
cosine schedule with warm-up, gradient clipping, a safetensors checkpoint, sampling), which runs unchanged
on flowlike.

    python examples/train_gpt.py                        # on PyTorch
    python -m flowlike.compat examples/train_gpt.py     # the same file on flowlike

The text is the Zen of Python and the docstrings of a few standard-library modules, read from the Python
installation itself (nothing is downloaded).
"""
import codecs
import math
import os
import tempfile

import numpy as np
import torch

try:
    from tqdm import tqdm
except ImportError:  # progress bars are optional
    def tqdm(iterable, **kwargs):
        return iterable


def corpus():
    """Text shipped with Python: the Zen of Python and some standard-library docstrings."""
    import collections
    import contextlib
    import io
    import json
    import textwrap
    with contextlib.redirect_stdout(io.StringIO()):  # importing `this` prints the Zen; its text is rot13 in this.s
        import this
    zen = codecs.decode(this.s, "rot13")
    docs = [m.__doc__ or "" for m in (collections, json, textwrap, math)]
    return "\n".join([zen] + docs)


def build_model(torch, vocab, d_model=64, heads=4, layers=2, context=64):
    nn, F = torch.nn, torch.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
            self.qkv = nn.Linear(d_model, 3 * d_model)
            self.proj = nn.Linear(d_model, d_model)
            self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
            q, k, v = (z.view(b, t, heads, c // heads).transpose(1, 2) for z in (q, k, v))
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(a.transpose(1, 2).contiguous().view(b, t, c))
            return x + self.mlp(self.ln2(x))

    class TinyGPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.context = context
            self.tok = nn.Embedding(vocab, d_model)
            self.pos = nn.Parameter(torch.zeros(1, context, d_model))
            self.blocks = nn.ModuleList(Block() for _ in range(layers))
            self.ln = nn.LayerNorm(d_model)
            self.head = nn.Linear(d_model, vocab, bias=False)
            self.head.weight = self.tok.weight  # tied input and output embeddings
            nn.init.normal_(self.pos, std=0.02)
            nn.init.normal_(self.tok.weight, std=0.02)  # also the output layer's weight: keep first logits small

        def forward(self, idx, targets=None):
            x = self.tok(idx) + self.pos[:, :idx.shape[1]]
            for block in self.blocks:
                x = block(x)
            logits = self.head(self.ln(x))
            if targets is None:
                return logits
            return logits, F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))

        @torch.no_grad()
        def generate(self, idx, steps, temperature=0.8, generator=None):
            for _ in range(steps):
                logits = self(idx[:, -self.context:])[:, -1] / temperature
                idx = torch.cat([idx, torch.multinomial(logits.softmax(-1), 1, generator=generator)], dim=1)
            return idx

    return TinyGPT()


def train(torch, steps=200, batch_size=16, context=64, init_state=None, seed=0, progress=True, checkpoint=True):
    """Trains for `steps` steps; returns (loss per step, a generated sample, final state_dict as numpy).
    init_state (a dict of numpy arrays) starts from given weights, so two frameworks can start identically.
    With `checkpoint`, the model goes through a safetensors file and the restored copy writes the sample."""
    torch.manual_seed(seed)
    text = corpus()
    chars = sorted(set(text))
    encode = {ch: i for i, ch in enumerate(chars)}
    data = np.array([encode[ch] for ch in text], dtype=np.int64)
    # batch positions come from numpy, so they are the same on every framework
    rng = np.random.default_rng(seed)
    starts = rng.integers(0, len(data) - context - 1, (steps, batch_size))

    model = build_model(torch, len(chars), context=context)
    if init_state is not None:
        model.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in init_state.items()})
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                                  lr=3e-3, betas=(0.9, 0.95))
    warmup = max(1, steps // 10)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: (s + 1) / warmup if s < warmup else 0.5 * (1 + math.cos(math.pi * (s - warmup) / steps)))

    losses = []
    model.train()
    bar = tqdm(range(steps), desc="training", disable=not progress)
    for step in bar:
        batch = np.stack([data[s:s + context + 1] for s in starts[step]])
        x, y = torch.from_numpy(batch[:, :-1].copy()), torch.from_numpy(batch[:, 1:].copy())
        _, loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
        if progress and step % 20 == 0:
            bar.set_postfix(loss=f"{loss.item():.3f}")

    # a safetensors checkpoint round trip (tied weights are saved once, as safetensors requires)
    sample = ""
    try:
        from safetensors.torch import load_model, save_model
    except ImportError:
        checkpoint = False
    if checkpoint:
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "tiny_gpt.safetensors")
            save_model(model, path)
            restored = build_model(torch, len(chars), context=context)
            load_model(restored, path)
        restored.eval()
        prompt = torch.tensor([[encode[ch] for ch in "Beautiful is "]])
        out = restored.generate(prompt, 80, generator=torch.Generator().manual_seed(seed))
        sample = "".join(chars[i] for i in out[0].tolist())
    state = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    return losses, sample, state


if __name__ == "__main__":
    import argparse
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    losses, sample, _ = train(torch, steps=parser.parse_args().steps)
    print(f"{torch.__name__}: loss {losses[0]:.3f} -> {np.mean(losses[-10:]):.3f}")
    if sample:
        print("sample:", sample)
