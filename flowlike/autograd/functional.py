"""autograd.functional: vjp, jvp, jacobian, hessian, vhp and hvp of Python functions, built on autograd.grad
(jvp by the double-vjp trick), with PyTorch's argument conventions and output nesting."""
from .. import _C
from .grad_mode import enable_grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


def _as_tuple(x, arg, fn):
    if isinstance(x, tuple):
        items, was_tuple = x, True
    elif isinstance(x, list):
        items, was_tuple = tuple(x), True
    else:
        items, was_tuple = (x,), False
    for i, t in enumerate(items):
        if not isinstance(t, _C.Tensor):
            raise TypeError(f"The {arg} given to {fn} must be either a Tensor or a tuple of Tensors but the value at "
                            f"index {i} has type {type(t).__name__}.")
    return was_tuple, items


def _grad_inputs(inputs, create_graph):
    # Fresh leaves (or graph-connected aliases with create_graph) that require grad.
    return tuple(x.view_as(x) if create_graph and x.requires_grad else x.detach().requires_grad_(True) for x in inputs)


def _grad(outputs, inputs, grad_outputs, create_graph, strict, what):
    outs = [o for o in outputs]
    gos = list(grad_outputs)
    live = [(o, g) for o, g in zip(outs, gos) if o.requires_grad]
    if not live:
        grads = (None,) * len(inputs)
    else:
        grads = _C._run_backward([o for o, _ in live], [g for _, g in live], True, create_graph, list(inputs), True,
                                 False)
    result = []
    for i, (g, x) in enumerate(zip(grads, inputs)):
        if g is None:
            if strict:
                raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is not "
                                   f"allowed in strict mode{what}.")
            g = x.new_zeros(x.shape)
        result.append(g)
    return tuple(result)


def _finish(xs, create_graph, was_tuple):
    xs = tuple(x if create_graph else x.detach() for x in xs)
    return xs if was_tuple else xs[0]


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product of func at inputs."""
    in_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
    with enable_grad():
        xs = _grad_inputs(inputs, create_graph)
        out = func(*xs)
        out_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "vjp")
        if v is None:
            if len(outs) != 1 or outs[0].numel() != 1:
                raise RuntimeError("The vector v can only be None if the user-provided function returns a single "
                                   "Tensor with a single element.")
            vs = (outs[0].new_ones(outs[0].shape),)
        else:
            vs = _as_tuple(v, "v", "vjp")[1]
        grads = _grad(outs, xs, vs, create_graph, strict, "")
    return _finish(outs, create_graph, out_tuple), _finish(grads, create_graph, in_tuple)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product, by differentiating a vjp with respect to its vector."""
    in_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
    if v is None:
        if len(inputs) != 1 or inputs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the input to the user-provided function is a single "
                               "Tensor with a single element.")
        vs = (inputs[0].new_ones(inputs[0].shape),)
    else:
        vs = _as_tuple(v, "v", "jvp")[1]
    with enable_grad():
        xs = _grad_inputs(inputs, create_graph)
        out = func(*xs)
        out_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "jvp")
        us = tuple(o.new_zeros(o.shape).requires_grad_(True) for o in outs)
        g = _grad(outs, xs, us, True, strict, "")
        live = [(gi, vi) for gi, vi in zip(g, vs) if gi.requires_grad]
        if live:
            jv = _C._run_backward([a for a, _ in live], [b for _, b in live], True, create_graph, list(us), True, False)
        else:
            jv = (None,) * len(us)
        jv = tuple(o.new_zeros(o.shape) if j is None else j for j, o in zip(jv, outs))
    return _finish(outs, create_graph, out_tuple), _finish(jv, create_graph, out_tuple)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of func at inputs: for output i and input j, a tensor of shape out_i.shape + in_j.shape."""
    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your function has '
                         'more outputs than inputs, "forward-mode" tends to be more performant. Otherwise, prefer to '
                         'use "reverse-mode".')
    in_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    with enable_grad():
        xs = _grad_inputs(inputs, create_graph)
        out = func(*xs)
        out_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "jacobian")
        jac = []
        for o in outs:
            flat = o.reshape(-1)
            rows = [[] for _ in xs]
            for k in range(flat.numel()):
                if o.requires_grad:
                    onehot = flat.new_zeros(flat.shape)
                    onehot[k] = 1
                    g = _grad([flat], xs, [onehot], create_graph, strict, "")
                else:
                    if strict:
                        raise RuntimeError("Output 0 of the user-provided function does not require gradients. The "
                                           "outputs must be computed in a differentiable manner from the input when "
                                           "running in strict mode.")
                    g = tuple(x.new_zeros(x.shape) for x in xs)
                for j, gj in enumerate(g):
                    rows[j].append(gj)
            from .._joining import stack
            per_input = tuple(stack(r).reshape(tuple(o.shape) + tuple(x.shape)) if r else
                              xs[j].new_zeros(tuple(o.shape) + tuple(xs[j].shape)) for j, (r, x) in
                              enumerate(zip(rows, xs)))
            jac.append(_finish(per_input, create_graph, True))
    if out_tuple and in_tuple:
        return tuple(jac)
    if out_tuple:
        return tuple(j[0] for j in jac)
    if in_tuple:
        return jac[0]
    return jac[0][0]


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar function: the Jacobian of its gradient."""
    in_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")

    def gradient(*xs):
        out = func(*xs)
        _, outs = _as_tuple(out, "outputs of the user-provided function", "hessian")
        if len(outs) != 1 or outs[0].numel() != 1:
            raise RuntimeError("The function given to hessian should return a single Tensor with a single element.")
        return _grad(outs, xs, (outs[0].new_ones(outs[0].shape),), True, strict, "")

    res = jacobian(gradient, inputs if in_tuple else inputs[0], create_graph=create_graph, strict=strict)
    if not in_tuple:
        return res[0] if isinstance(res, tuple) else res
    return res


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) for a scalar function."""
    return _hessian_product(func, inputs, v, create_graph, strict, "vhp")


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) for a scalar function (equal to vhp: the Hessian is symmetric)."""
    return _hessian_product(func, inputs, v, create_graph, strict, "hvp")


def _hessian_product(func, inputs, v, create_graph, strict, name):
    in_tuple, inputs = _as_tuple(inputs, "inputs", name)
    if v is None:
        if len(inputs) != 1 or inputs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the input to the user-provided function is a single "
                               "Tensor with a single element.")
        vs = (inputs[0].new_ones(inputs[0].shape),)
    else:
        vs = _as_tuple(v, "v", name)[1]
    with enable_grad():
        xs = _grad_inputs(inputs, create_graph)
        out = func(*xs)
        _, outs = _as_tuple(out, "outputs of the user-provided function", name)
        if len(outs) != 1 or outs[0].numel() != 1:
            raise RuntimeError(f"The function given to {name} should return a single Tensor with a single element.")
        g = _grad(outs, xs, (outs[0].new_ones(outs[0].shape),), True, strict, "")
        live = [(gi, vi) for gi, vi in zip(g, vs) if gi.requires_grad]
        res = _grad([a for a, _ in live], xs, [b for _, b in live], create_graph, strict, "") if live else \
            tuple(x.new_zeros(x.shape) for x in xs)
    return _finish(outs, create_graph, False), _finish(res, create_graph, in_tuple)
