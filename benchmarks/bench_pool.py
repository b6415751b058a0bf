"""Max-pool forward (values and indices): flowlike against PyTorch on the same inputs, in one process, printing
time ratios (flowlike time / torch time; below 1 is faster). torch runs with flowlike's thread count.

Run: python benchmarks/bench_pool.py   (OMP_NUM_THREADS=1 for the single-thread figures)
Cases: the two poolings of the small CNN (examples/train_cnn.py, batch 32), ResNet's 3x3 stride-2 stem pooling,
2x2 stride 2 on a large map, and the same in channels-last memory format. Target: at most 1.0x torch.
"""
import numpy as np
import torch

import flowlike as fl
from common import compare, cpu_info


def main():
    torch.set_num_threads(fl.get_num_threads())
    model, isa, _, mhz = cpu_info()
    print(f"{model}, {isa}, {fl.get_num_threads()} threads at {mhz:.0f} MHz")
    rng = np.random.default_rng(0)
    cases = [  # (name, input shape, kernel, stride, padding, channels-last, calls per timing)
        ("CNN pool 1: 32x8x12x12 2x2 s2", (32, 8, 12, 12), 2, 2, 0, False, 200),
        ("CNN pool 2: 32x16x6x6 2x2 s2", (32, 16, 6, 6), 2, 2, 0, False, 200),
        ("ResNet stem: 16x64x112x112 3x3 s2 p1", (16, 64, 112, 112), 3, 2, 1, False, 1),
        ("16x64x112x112 2x2 s2", (16, 64, 112, 112), 2, 2, 0, False, 1),
        ("16x64x112x112 3x3 s2 p1 channels-last", (16, 64, 112, 112), 3, 2, 1, True, 1),
    ]
    for name, shape, k, s, pad, last, number in cases:
        x = rng.standard_normal(shape, dtype=np.float32)
        xf, xt = fl.from_numpy(x), torch.from_numpy(x)
        if last:
            xf, xt = xf.to(memory_format=fl.channels_last), xt.to(memory_format=torch.channels_last)
        compare(name, lambda: fl.nn.functional.max_pool2d(xf, k, s, pad, return_indices=True),
                lambda: torch.nn.functional.max_pool2d(xt, k, s, pad, return_indices=True), "<= 1.0x",
                number=number, repeat=7)


if __name__ == "__main__":
    main()
