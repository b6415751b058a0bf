"""The GPT of examples/train_gpt.py trained twice from the same weights: eagerly, then as a flowlike nn.Graph
(the training step captured once and replayed in C++). Prints the losses of both runs (equal, bit for bit),
their median step times and their peak memory.

    python examples/graph_gpt.py [--steps 60]
"""
import importlib.util
import math
import os
import statistics
import time

import numpy as np

import flowlike as torch

try:
    from tqdm import tqdm
except ImportError:  # progress bars are optional
    def tqdm(iterable, **kwargs):
        return iterable

_spec = importlib.util.spec_from_file_location("train_gpt", os.path.join(os.path.dirname(__file__), "train_gpt.py"))
train_gpt = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(train_gpt)


class TrainStep(torch.nn.Graph):
    """One training step of train_gpt.py as a graph: forward, backward, clipping, AdamW."""

    def __init__(self, model, optimizer):
        super().__init__()
        self.model = model
        self.optimizer = optimizer
        self.add_optimizer(optimizer)

    def build(self, x, y):
        _, loss = self.model(x, y)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.optimizer.step()
        return loss


def run(steps, graph, batch_size=16, context=64, seed=0, progress=True):
    """Trains `steps` steps (eagerly or as a graph); returns (losses, step times in seconds, the peak bytes
    allocated from the third step on)."""
    torch.manual_seed(seed)
    text = train_gpt.corpus()
    chars = sorted(set(text))
    encode = {ch: i for i, ch in enumerate(chars)}
    data = np.array([encode[ch] for ch in text], dtype=np.int64)
    starts = np.random.default_rng(seed).integers(0, len(data) - context - 1, (steps, batch_size))
    model = train_gpt.build_model(torch, len(chars), context=context)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, betas=(0.9, 0.95), weight_decay=0.1)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 0.5 * (1 + math.cos(math.pi * s / steps)))
    step = TrainStep(model, optimizer) if graph else None
    model.train()
    losses, times = [], []
    for i in tqdm(range(steps), desc="nn.Graph" if graph else "eager", disable=not progress):
        batch = np.stack([data[s:s + context + 1] for s in starts[i]])
        x, y = torch.from_numpy(batch[:, :-1].copy()), torch.from_numpy(batch[:, 1:].copy())
        if i == 2:  # past the graph's two capture steps (without, then with optimizer state): steady steps
            torch.memory.reset_peak_memory_stats()
        t0 = time.perf_counter()
        if graph:
            loss = step(x, y)
        else:
            _, loss = model(x, y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
        scheduler.step()
        times.append(time.perf_counter() - t0)
        losses.append(loss.item())
    if graph and progress:
        step.memory_report(x, y)  # the measured step peaks of the graph and of eager, the planned arena
    return losses, times, torch.memory.max_memory_allocated()


def main(steps=60, progress=True):
    eager = run(steps, graph=False, progress=progress)
    graphed = run(steps, graph=True, progress=progress)
    for name, (losses, times, peak) in (("eager", eager), ("nn.Graph", graphed)):
        steady = times[2:] or times  # the graph's first two steps capture (no optimizer state yet, then steady)
        print(f"{name:9s} loss {losses[0]:.4f} -> {losses[-1]:.4f}   median step {statistics.median(steady) * 1e3:7.2f} ms"
              f"   peak memory of a step {peak / 2**20:7.1f} MiB")
    print("losses equal bit for bit:", eager[0] == graphed[0])
    return eager, graphed


if __name__ == "__main__":
    import argparse
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60)
    main(parser.parse_args().steps)
