"""nn.Graph training steps against eager flowlike and eager torch, in one process, printing time ratios.

Run: python benchmarks/bench_graph.py   (needs torch==2.13.0 installed beside flowlike)
A ratio below 1.0 means flowlike is faster. The graph replays the captured step in C++ (one boxed call per op,
no Python per op); small models, where per-op overhead dominates, show the difference.
"""
import numpy as np
import torch

import flowlike as fl
from common import compare


def step_fns(lib, width, depth, batch):
    rng = np.random.default_rng(0)
    layers = []
    for _ in range(depth):
        layers += [lib.nn.Linear(width, width), lib.nn.GELU()]
    model = lib.nn.Sequential(*layers, lib.nn.Linear(width, 10))
    opt = lib.optim.AdamW(model.parameters(), lr=1e-3)
    x = lib.from_numpy(rng.standard_normal((batch, width)).astype(np.float32))
    y = lib.from_numpy(rng.integers(0, 10, batch))

    def step():
        loss = lib.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
    return model, opt, x, y, step


def main():
    print(f"threads: flowlike {fl.get_num_threads()}  torch {torch.get_num_threads()}")
    for width, depth, batch in ((32, 4, 16), (256, 4, 64)):
        model, opt, x, y, fl_step = step_fns(fl, width, depth, batch)

        class Step(fl.nn.Graph):
            def __init__(self):
                super().__init__()
                self.model = model
                self.add_optimizer(opt)

            def build(self, x, y):
                return fl_step()

        graph = Step()
        for _ in range(3):
            graph(x, y)  # capture (first step: no optimizer state yet; second: steady state)
        *_, t_step = step_fns(torch, width, depth, batch)
        title = f"MLP {depth}x{width}, batch {batch}, AdamW step"
        compare(f"{title}: eager", fl_step, t_step, "<= 1.0x", number=20)
        compare(f"{title}: nn.Graph", lambda: graph(x, y), t_step, "<= 0.8x", number=20)


if __name__ == "__main__":
    main()
