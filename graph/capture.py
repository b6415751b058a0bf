"""Capture at the dispatcher's Tracer key (Note [Tracer] in csrc/core/dispatch.h), and the one-door check built on
it: run a step eagerly while the tracer records it, then replay the recorded program through the boxed calls and
demand eager's results bit for bit.

A bypass of the dispatcher shows up twice: as a hole (a tensor the program reads that no recorded op made) and
as a replayed value that differs from eager's (a write the program never saw)."""
import numpy as np

from .. import _dtype, _random
from ._common import trace_begin, trace_end


def record(step):
    """Runs step() with the tracer installed; returns (its result, the program, the RNG state it started from)."""
    rng = _random.get_rng_state()
    trace_begin()
    try:
        result = step()
    finally:
        program = trace_end()
    return result, program, rng


def _bits(t):
    """The tensor's values as raw bytes (bfloat16 has no numpy dtype: its bits are read as int16)."""
    t = t.detach().contiguous()
    if t.dtype == _dtype.bfloat16:
        t = t.view(_dtype.int16)
    return np.ascontiguousarray(t.numpy()).view(np.uint8)


def replay_mismatches(step, tensors_after):
    """Records step(), replays it, and returns a list of problems (empty when the replay reproduced eager).

    tensors_after(result) lists (name, tensor) pairs to compare once the step ran: outputs, parameters, their
    gradients, optimizer state."""
    result, program, rng = record(step)
    if program.holes:
        return [f"hole: {h}" for h in program.holes[:5]]
    expected = [(name, t) for name, t in tensors_after(result) if t is not None]
    _random.set_rng_state(rng)
    values = program.replay()
    problems = []
    for name, t in expected:
        vid = program.value_of(t)
        if vid < 0:
            problems.append(f"{name}: not read or made by any recorded op")
            continue
        got = values[vid]
        if got is None or got.dtype != t.dtype or tuple(got.shape) != tuple(t.shape):
            problems.append(f"{name}: replay gave {None if got is None else (got.dtype, tuple(got.shape))}, "
                            f"eager {(t.dtype, tuple(t.shape))}")
        elif not np.array_equal(_bits(got), _bits(t)):
            problems.append(f"{name}: replayed values differ from eager's")
    return problems
