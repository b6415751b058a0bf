"""Optimizer steps: flowlike against PyTorch in one process, on the same parameters and gradients.

Run: python benchmarks/bench_optim.py [THREADS]   (ratio = flowlike time / torch time; below 1.0 flowlike is
faster; THREADS sets the thread count of both libraries)

One step() of each optimizer over the parameters of an MLP 784-512-512-10 (float32, 669,706 elements in 6
tensors) whose gradients are set; flowlike updates each param group in one fused C++ call, torch runs its default
(on the CPU: the single-tensor for-loop implementation).
"""
import sys

import numpy as np
import torch

import flowlike as fl
from common import compare

SHAPES = [(512, 784), (512,), (512, 512), (512,), (10, 512), (10,)]

CASES = [
    ("SGD momentum=0.9", "SGD", dict(lr=0.01, momentum=0.9)),
    ("Adam", "Adam", dict(lr=1e-3)),
    ("AdamW", "AdamW", dict(lr=1e-3)),
    ("RMSprop", "RMSprop", dict(lr=1e-3)),
    ("Adagrad", "Adagrad", dict(lr=1e-2)),
    ("Adadelta", "Adadelta", dict()),
    ("Adamax", "Adamax", dict()),
    ("NAdam", "NAdam", dict()),
    ("RAdam", "RAdam", dict()),
]


def params_with_grads(lib):
    rng = np.random.default_rng(0)
    ps = []
    for s in SHAPES:
        p = lib.nn.Parameter(lib.tensor((rng.standard_normal(s) / np.sqrt(s[-1])).astype(np.float32)))
        p.grad = lib.tensor(rng.standard_normal(s).astype(np.float32) * 1e-2)
        ps.append(p)
    return ps


def main():
    if len(sys.argv) > 1:
        fl.set_num_threads(int(sys.argv[1]))
    torch.set_num_threads(fl.get_num_threads())
    print(f"threads: flowlike {fl.get_num_threads()}  torch {torch.get_num_threads()}")
    for label, name, kwargs in CASES:
        opt_fl = getattr(fl.optim, name)(params_with_grads(fl), **kwargs)
        opt_torch = getattr(torch.optim, name)(params_with_grads(torch), **kwargs)
        compare(f"{label}: step() over MLP 784-512-512-10 params", opt_fl.step, opt_torch.step, "<= 1.0x",
                number=5, repeat=15)


if __name__ == "__main__":
    main()
