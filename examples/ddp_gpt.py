"""Train the tiny GPT of train_gpt.py on several processes with DistributedDataParallel: ordinary torchrun-style
PyTorch code, which runs unchanged on flowlike.

    torchrun --nproc-per-node 2 examples/ddp_gpt.py                       # on PyTorch (gloo)
    python -m flowlike.distributed.run --nproc-per-node 2 examples/ddp_gpt.py   # the same file on flowlike (MPI)
    mpirun -n 2 python -m flowlike.compat examples/ddp_gpt.py              # or started by MPI

Every rank trains on its own share of each batch (DistributedSampler over the batch positions); DDP averages the
gradients, so the ranks keep identical weights, and the run equals one process training on the whole batch.
With --graph (flowlike only) each step is an nn.Graph: forward, backward, the gradient all-reduces, clipping and
the AdamW update recorded once and replayed as one program.
"""
import argparse
import math

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from train_gpt import build_model, corpus


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=32, help="the global batch, split over the ranks")
    parser.add_argument("--context", type=int, default=64)
    parser.add_argument("--graph", action="store_true", help="run each step as an nn.Graph (flowlike's graph mode)")
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)

    text = corpus()
    chars = sorted(set(text))
    data = torch.tensor([chars.index(ch) for ch in text])
    rng = np.random.default_rng(0)  # the same windows on every rank; the sampler splits them
    starts = torch.from_numpy(rng.integers(0, len(data) - args.context - 1, args.steps * args.batch_size))
    windows = torch.stack([data[s:s + args.context + 1] for s in starts.tolist()])
    sampler = DistributedSampler(TensorDataset(windows), num_replicas=world, rank=rank, shuffle=False)
    loader = DataLoader(TensorDataset(windows), batch_size=args.batch_size // world, sampler=sampler)

    model = DistributedDataParallel(build_model(torch, len(chars), context=args.context))
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, betas=(0.9, 0.95), weight_decay=0.1)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min(1.0, (s + 1) / 10) * 0.5 * (1 + math.cos(math.pi * s / args.steps)))

    def train_step(x, y):
        _, loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        mean_loss = loss.detach().clone()
        dist.all_reduce(mean_loss, op=dist.ReduceOp.SUM)
        return mean_loss

    if args.graph:
        class GraphStep(torch.nn.Graph):
            def __init__(self):
                super().__init__()
                self.model = model
                self.add_optimizer(optimizer, lr_sch=scheduler)  # the graph steps the scheduler after each call

            def build(self, x, y):
                return train_step(x, y)
        step_fn = GraphStep()
    else:
        def step_fn(x, y):
            mean_loss = train_step(x, y)
            scheduler.step()
            return mean_loss

    for step, (batch,) in enumerate(loader):
        mean_loss = step_fn(batch[:, :-1].contiguous(), batch[:, 1:].contiguous())
        if rank == 0 and step % 20 == 0:
            print(f"step {step:4d}  loss {mean_loss.item() / world:.3f}", flush=True)

    # every rank holds the same weights: check it, and save once
    checksum = torch.tensor([sum(p.double().sum().item() for p in model.parameters())])
    everyone = [torch.zeros(1, dtype=checksum.dtype) for _ in range(world)]
    dist.all_gather(everyone, checksum)
    assert all(torch.equal(c, checksum) for c in everyone), "ranks diverged"
    if rank == 0:
        print(f"{world} ranks, identical weights; final loss {mean_loss.item() / world:.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
