"""flowlike.utils.checkpoint (torch.utils.checkpoint): activation checkpointing, trading compute for memory.

checkpoint(fn, *args) runs fn without recording its graph (its intermediate activations are freed); backward
runs fn again with the same inputs (and, with preserve_rng_state, the same random numbers) to rebuild them, then
backpropagates through the recomputation. Gradients reach the inputs and every parameter fn uses.
"""
import warnings

from .. import _random
from ..autograd import Function, backward as _backward, enable_grad, no_grad
from .._tensor import Tensor

__all__ = ["checkpoint", "checkpoint_sequential"]


class _Checkpoint(Function):
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, kwargs, *args):
        ctx.run_function, ctx.kwargs = run_function, kwargs
        ctx.rng_state = _random.get_rng_state() if preserve_rng_state else None
        ctx.tensor_positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.args = [None if isinstance(a, Tensor) else a for a in args]
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        with no_grad():
            return run_function(*args, **kwargs)

    @staticmethod
    def backward(ctx, *grad_outputs):
        args = list(ctx.args)
        tensors = ctx.saved_tensors
        inputs = []
        for i, t in zip(ctx.tensor_positions, tensors):
            d = t.detach()
            d.requires_grad_(t.requires_grad)
            args[i] = d
            inputs.append(d)
        saved_rng = None
        if ctx.rng_state is not None:
            saved_rng = _random.get_rng_state()
            _random.set_rng_state(ctx.rng_state)
        try:
            with enable_grad():
                outputs = ctx.run_function(*args, **ctx.kwargs)
        finally:
            if saved_rng is not None:
                _random.set_rng_state(saved_rng)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grad_outputs)
                 if isinstance(o, Tensor) and o.requires_grad and g is not None]
        if pairs:
            _backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None, None) + tuple(a.grad if isinstance(a, Tensor) else None for a in args)


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check="default", debug=False,
               preserve_rng_state=True, **kwargs):
    """Runs function(*args, **kwargs) without keeping its activations; backward recomputes them."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Refer to "
                      "docs for more details on the differences between the two variants.", stacklevel=2)
    if context_fn is not None:
        raise ValueError("Passing `context_fn` is only supported when use_reentrant=False, and flowlike's checkpoint "
                         "does not support it yet")
    return _Checkpoint.apply(function, preserve_rng_state, kwargs, *args)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Runs a Sequential (or list of modules) in `segments` checkpointed chunks; the last chunk runs normally."""
    if isinstance(functions, Tensor):
        raise TypeError("checkpoint_sequential expects the modules first, then segments, then the input")
    functions = list(functions.children()) if hasattr(functions, "children") else list(functions)
    size = len(functions) // segments

    def run(start, end):
        def chunk(x):
            for f in functions[start:end + 1]:
                x = f(x)
            return x
        return chunk
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, **kwargs)
    return run(end + 1, len(functions) - 1)(input)
