"""Every op-database entry run under the tracer: its forward and its backward (a weighted sum of the outputs,
differentiated) replay through the boxed calls to eager's outputs and input gradients, bit for bit, with no hole
in the program. The guard that keeps the dispatcher the only door (Note [Tracer] in csrc/core/dispatch.h); torch
is needed only for the database's sample inputs."""
import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402
from flowlike.graph.capture import replay_mismatches  # noqa: E402
from helpers import to_flowlike  # noqa: E402
from opdb import DATABASE  # noqa: E402

CASES = [op for op in DATABASE if op.resolve(fl) is not None]


def _outputs(r):
    return list(r) if isinstance(r, (tuple, list)) else [r]


def _run(op, inputs, grad):
    """The op's outputs and, when grad, the input gradients of a weighted sum of its floating outputs."""
    outs = _outputs(op.call(fl, *inputs))
    named = [(f"output {i}", o) for i, o in enumerate(outs) if isinstance(o, fl.Tensor)]
    diff = [o for _, o in named if o.requires_grad]
    if grad and diff:
        sum((o * fl.linspace(-1, 1, o.numel()).view(o.shape).to(o.dtype)).sum() for o in diff).backward()
        named += [(f"grad of input {i}", t.grad) for i, t in enumerate(inputs) if isinstance(t, fl.Tensor)]
    return named


@pytest.mark.parametrize("op", CASES, ids=[op.id for op in CASES])
def test_op_replays_bit_for_bit(op):
    dtype = op.dtypes[0]
    grad = op.grad and dtype in ("float32", "float64")
    problems = []
    for label, samples in op.samples(torch, dtype):
        inputs = [to_flowlike(t).requires_grad_(grad and t.dtype.is_floating_point) if isinstance(t, torch.Tensor)
                  else t for t in samples]
        try:
            op.call(fl, *[t.detach() if isinstance(t, fl.Tensor) else t for t in inputs])
        except Exception:  # noqa: BLE001 - samples on which the op raises record nothing to replay
            continue
        found = replay_mismatches(lambda: _run(op, inputs, grad), lambda named: named)
        problems += [f"[{label}] {p}" for p in found]
    assert not problems, "\n".join(problems)
