"""Tensor-core benchmarks: flowlike and torch in one process, printing time ratios.

Run: python benchmarks/bench_core.py   (needs torch==2.13.0 installed beside flowlike)
A ratio below 1.0 means flowlike is faster.
"""

import numpy as np
import torch

import flowlike as fl
from common import best, compare, report




def main():
    print(f"threads: flowlike {fl.get_num_threads()}  torch {torch.get_num_threads()}")
    a = np.random.default_rng(0).standard_normal(10).astype(np.float32)
    x, y = fl.from_numpy(a.copy()), fl.from_numpy(a.copy())
    tx, ty = torch.from_numpy(a.copy()), torch.from_numpy(a.copy())
    report("x + y, 10 float32 (per call)", best(lambda: x + y, 20000), best(lambda: tx + ty, 20000), "<= 0.5x")

    big = np.random.default_rng(1).standard_normal(16 * 1024 * 1024).astype(np.float32)
    A, B = fl.from_numpy(big.copy()), fl.from_numpy(big[::-1].copy())
    TA, TB = torch.from_numpy(big.copy()), torch.from_numpy(big[::-1].copy())
    report("a + b, 16M float32, result allocated", best(lambda: A + B, 5), best(lambda: TA + TB, 5), "<= 0.67x")
    report("full sum, 16M float32", best(lambda: A.sum(), 5), best(lambda: TA.sum(), 5), "<= 1.0x")

    gx, gy = fl.from_numpy(a.copy()).requires_grad_(), fl.from_numpy(a.copy())
    tgx, tgy = torch.from_numpy(a.copy()).requires_grad_(), torch.from_numpy(a.copy())
    report("x + y recorded by autograd, 10 float32", best(lambda: gx + gy, 20000), best(lambda: tgx + tgy, 20000),
           "<= 0.6x")

    # the in-place writes of optimizer steps and zero_grad (grad mode off), and one recorded by autograd (generated
    # in-place kernel: check, old edge, write, node, view rebase)
    with fl.no_grad(), torch.no_grad():
        report("p.copy_(y) under no_grad, 10 float32", best(lambda: x.copy_(y), 20000), best(lambda: tx.copy_(ty), 20000),
               "<= 0.6x")
        report("p.zero_() under no_grad, 10 float32", best(lambda: x.zero_(), 20000), best(lambda: tx.zero_(), 20000),
               "<= 0.6x")
    h, th = gx * 1, tgx * 1
    report("h.copy_(y) recorded by autograd, 10 float32", best(lambda: h.copy_(gy), 20000),
           best(lambda: th.copy_(tgy), 20000), "<= 0.6x")
    report("h.fill_(1) recorded by autograd, 10 float32", best(lambda: h.fill_(1.0), 20000),
           best(lambda: th.fill_(1.0), 20000), "<= 0.6x")

    # per-call overhead of the hot view and write faces (attention reshapes, casts, fills): generated
    # faces (bind_ops.cpp), overloaded ones (view, fill_) included
    m, tm = x.view(2, 5), tx.view(2, 5)
    s, ts = fl.from_numpy(np.array(1.5, np.float32)), torch.from_numpy(np.array(1.5, np.float32))
    hot = [("x.view(2, 5)", lambda: x.view(2, 5), lambda: tx.view(2, 5)),
           ("x.view(float32)", lambda: x.view(fl.float32), lambda: tx.view(torch.float32)),
           ("x.reshape(5, 2)", lambda: x.reshape(5, 2), lambda: tx.reshape(5, 2)),
           ("m.permute(1, 0)", lambda: m.permute(1, 0), lambda: tm.permute(1, 0)),
           ("m.expand(3, 2, 5)", lambda: m.expand(3, 2, 5), lambda: tm.expand(3, 2, 5)),
           ("x.to(float64)", lambda: x.to(fl.float64), lambda: tx.to(torch.float64)),
           ("y.fill_(0.5)", lambda: y.fill_(0.5), lambda: ty.fill_(0.5)),
           ("y.fill_(0-dim tensor)", lambda: y.fill_(s), lambda: ty.fill_(ts))]
    # the indexing writes' generated overloaded faces (a number value binds the Scalar overload, after the Tensor one
    # is tried) and the restrides and squeeze() faces
    mask, tmask = m > 0, tm > 0
    r, tr = m.clone(), tm.clone()
    u, tu = x.view(1, 10, 1), tx.view(1, 10, 1)
    hot += [("m.masked_fill(mask, 0.5)", lambda: m.masked_fill(mask, 0.5), lambda: tm.masked_fill(tmask, 0.5)),
            ("r.masked_fill_(mask, 0.5)", lambda: r.masked_fill_(mask, 0.5), lambda: tr.masked_fill_(tmask, 0.5)),
            ("r.transpose_(0, 1)", lambda: r.transpose_(0, 1), lambda: tr.transpose_(0, 1)),
            ("u.squeeze()", lambda: u.squeeze(), lambda: tu.squeeze())]
    for name, fl_fn, torch_fn in hot:
        compare(f"{name}, 10 float32 (per call)", fl_fn, torch_fn, "<= 1.0x", number=20000, repeat=7)


if __name__ == "__main__":
    main()
