"""torch.func-style function transforms and control flow (also at flowlike.vmap, flowlike.cond, flowlike.while_loop),
and functional_call.

vmap runs the function once per batch element and stacks the results: the semantics of torch.vmap for functions
without side effects, at the cost of one call per element (flowlike has no batching rules).
"""
import builtins

from . import _C
from ._missing import module_getattr
from .nn.utils.stateless import _functional_call

__all__ = ["vmap", "cond", "while_loop", "functional_call"]


def _leaves(tree, dims, where):
    """(tensor, dim) pairs of a pytree (tuple, list, dict) matched against in_dims `dims`."""
    if isinstance(tree, _C.Tensor):
        if dims is not None and not isinstance(dims, builtins.int):
            raise ValueError(f"vmap: in_dim for a Tensor must be an int or None, got {dims!r} at {where}")
        return [(tree, dims)]
    if isinstance(tree, (tuple, list, dict)):
        keys = list(tree.keys()) if isinstance(tree, dict) else list(range(len(tree)))
        if isinstance(dims, (tuple, list, dict)):
            dim_keys = list(dims.keys()) if isinstance(dims, dict) else list(range(len(dims)))
            if dim_keys != keys:
                raise ValueError(f"vmap: in_dims is not compatible with the structure of the inputs at {where}")
            return [leaf for k in keys for leaf in _leaves(tree[k], dims[k], f"{where}[{k!r}]")]
        return [leaf for k in keys for leaf in _leaves(tree[k], dims, f"{where}[{k!r}]")]
    return []


def _select(tree, dims, i):
    """tree with every mapped tensor replaced by its i-th slice along its mapped dim."""
    if isinstance(tree, _C.Tensor):
        return tree if dims is None else tree.select(dims, i)
    if isinstance(tree, (tuple, list)):
        per = dims if isinstance(dims, (tuple, list)) else [dims] * len(tree)
        return type(tree)(_select(t, d, i) for t, d in zip(tree, per))
    if isinstance(tree, dict):
        return {k: _select(v, dims[k] if isinstance(dims, dict) else dims, i) for k, v in tree.items()}
    return tree


def _stack(results, out_dims):
    """Stacks a list of per-element outputs (pytrees of tensors) along out_dims."""
    first = results[0]
    if isinstance(first, _C.Tensor):
        if out_dims is None:
            return first
        from ._joining import stack
        return stack(results, out_dims)
    if isinstance(first, (tuple, list)):
        per = out_dims if isinstance(out_dims, (tuple, list)) else [out_dims] * len(first)
        return type(first)(_stack([r[j] for r in results], per[j]) for j in range(len(first)))
    if isinstance(first, dict):
        return {k: _stack([r[k] for r in results], out_dims[k] if isinstance(out_dims, dict) else out_dims)
                for k in first}
    raise ValueError(f"vmap: the function must return Tensors (or tuples, lists, dicts of Tensors), got "
                     f"{type(first).__name__}")


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """Maps func over a batch dim of its inputs (in_dims: an int, None, or one entry per argument, nested like the
    arguments) and stacks its outputs along out_dims."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")

    def wrapped(*args, **kwargs):
        dims = in_dims if isinstance(in_dims, (tuple, list)) else (in_dims,) * len(args)
        if len(dims) != len(args):
            raise ValueError(f"vmap(func, in_dims={in_dims}, ...)(<inputs>): expected one in_dim per input (got "
                             f"{len(args)} inputs) or a single in_dim for all inputs")
        leaves = _leaves(tuple(args), tuple(dims), "args")
        mapped = [(t, d + t.dim() if d < 0 else d) for t, d in leaves if d is not None]
        if not mapped:
            raise ValueError(f"vmap(func, in_dims={in_dims}, ...)(<inputs>): at least one input must be a Tensor "
                             f"mapped over (got in_dims={in_dims})")
        for t, d in mapped:
            if not 0 <= d < t.dim():
                raise ValueError(f"vmap: in_dim {d} is out of range for an input of dimension {t.dim()}")
        sizes = {t.shape[d] for t, d in mapped}
        if len(sizes) != 1:
            raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                             f"{[t.shape[d] for t, d in mapped]} for the mapped dimension")
        batch = sizes.pop()
        norm = tuple(_normalize_dims(a, d) for a, d in zip(args, dims))
        results = [func(*_select(tuple(args), norm, i), **kwargs) for i in range(batch)]
        if not results:
            raise ValueError("vmap: the mapped dimension has size 0, so there is no output to infer a shape from")
        return _stack(results, out_dims)
    return wrapped


def _normalize_dims(arg, dims):
    """dims with negative tensor dims made positive (per tensor of arg)."""
    if isinstance(arg, _C.Tensor):
        return dims + arg.dim() if isinstance(dims, builtins.int) and dims < 0 else dims
    if isinstance(arg, (tuple, list)):
        per = dims if isinstance(dims, (tuple, list)) else [dims] * len(arg)
        return type(arg)(_normalize_dims(a, d) for a, d in zip(arg, per))
    if isinstance(arg, dict):
        return {k: _normalize_dims(v, dims[k] if isinstance(dims, dict) else dims) for k, v in arg.items()}
    return dims


def cond(pred, true_fn, false_fn, operands=()):
    """true_fn(*operands) if pred (a bool or a one-element tensor) else false_fn(*operands)."""
    if isinstance(pred, _C.Tensor) and pred.numel() != 1:
        raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
    return (true_fn if builtins.bool(pred) else false_fn)(*operands)


def while_loop(cond_fn, body_fn, carried_inputs):
    """Runs carried_inputs = body_fn(*carried_inputs) while cond_fn(*carried_inputs) holds; returns the final values."""
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"carried_inputs must be a tuple or list, got {type(carried_inputs)}")
    carried = tuple(carried_inputs)
    while builtins.bool(cond_fn(*carried)):
        carried = body_fn(*carried)
        carried = tuple(carried) if isinstance(carried, (tuple, list)) else (carried,)
        if len(carried) != len(carried_inputs):
            raise RuntimeError(f"body_fn must return as many values as carried_inputs ({len(carried_inputs)}), got "
                               f"{len(carried)}")
    return carried


__getattr__ = module_getattr(__name__, "torch.func")


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """module(*args, **kwargs) with parameters and buffers replaced, as nn.utils.stateless.functional_call; the
    replacements may be split over a sequence of dicts (a name given in two of them is an error)."""
    if isinstance(parameter_and_buffer_dicts, dict):
        parameters_and_buffers = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, (list, tuple)):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
        counts = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated_keys = [k for k, n in counts.items() if n > 1]
        if repeated_keys:
            raise ValueError(f"{repeated_keys} appeared in multiple dictionaries; behavior of functional call is "
                             "ambiguous")
        parameters_and_buffers = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                         f"{type(parameter_and_buffer_dicts)}")
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)
