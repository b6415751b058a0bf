"""gradcheck and gradgradcheck: analytical gradients (the engine's) against central finite differences."""
from .. import _C
from .grad_mode import no_grad

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck/gradgradcheck when analytical and numerical gradients differ."""


def _tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _outputs(func, inputs):
    return tuple(o for o in _tuple(func(*inputs)) if isinstance(o, _C.Tensor))


def _numerical_jacobian(func, inputs, wrt, eps):
    """For input `wrt`: a list over outputs of (numel_in, numel_out) float64 tensors."""
    from .._creation import zeros
    x = inputs[wrt]
    flat = x.detach().reshape(-1)  # aliases x (dense inputs): perturbing it perturbs the input
    outs = _outputs(func, inputs)
    jac = [zeros(x.numel(), o.numel(), dtype=_float64()) for o in outs]

    def set_to(k, v):
        with no_grad():
            flat[k] = v

    def evaluate():  # func runs with grad mode as the caller has it: it may differentiate inside
        return [o.detach().double().reshape(-1).clone() for o in _outputs(func, inputs)]
    for k in range(x.numel()):
        orig = flat[k].item()
        set_to(k, orig - eps)
        lo = evaluate()
        set_to(k, orig + eps)
        hi = evaluate()
        set_to(k, orig)
        with no_grad():
            for j, (a, b) in enumerate(zip(lo, hi)):
                jac[j][k] = (b - a) / (2 * eps)
    return jac


def _analytical_jacobian(outputs, inputs, wrt_list):
    """A dict (input index, output index) -> (numel_in, numel_out) float64 tensor, from one backward per output
    element."""
    from .._creation import zeros
    jac = {}
    for j, o in enumerate(outputs):
        flat = o.reshape(-1)
        for i in wrt_list:
            jac[i, j] = zeros(inputs[i].numel(), o.numel(), dtype=_float64())
        if not o.requires_grad:
            continue
        for k in range(o.numel()):
            onehot = flat.new_zeros(flat.shape)
            onehot[k] = 1
            grads = _C._run_backward([flat], [onehot], True, False, [inputs[i] for i in wrt_list], True, False)
            for i, g in zip(wrt_list, grads):
                if g is not None:
                    jac[i, j][:, k] = g.detach().double().reshape(-1)
    return jac


def _float64():
    from .. import float64
    return float64


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True, fast_mode=False,
              masked=None):
    """Checks the gradients of func at inputs (the tensors that require grad; use float64) against central
    finite differences. Returns True, or raises GradcheckError (returns False with raise_exception=False)."""
    import warnings
    inputs = _tuple(inputs)
    wrt = [i for i, x in enumerate(inputs) if isinstance(x, _C.Tensor) and x.requires_grad]
    if not wrt:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of the them have "
                         "requires_grad=True.")
    for i in wrt:
        if inputs[i].dtype != _float64():
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating point or complex. "
                          "This check will likely fail if all the inputs are not of double precision floating point "
                          "or complex. ")
    outputs = _outputs(func, inputs)
    analytical = _analytical_jacobian(outputs, inputs, wrt)
    for i in wrt:
        numerical = _numerical_jacobian(func, inputs, i, eps)
        for j, num in enumerate(numerical):
            ana = analytical[i, j]
            diff = (ana - num).abs()
            if bool((diff > atol + rtol * num.abs()).any()):
                msg = (f"Jacobian mismatch for output {j} with respect to input {i},\nnumerical:{num}\n"
                       f"analytical:{ana}\n")
                if raise_exception:
                    raise GradcheckError(msg)
                return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, gen_non_contig_grad_outputs=False,
                  raise_exception=True, nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
                  check_batched_grad=False, check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """Checks second derivatives: gradcheck of the function (inputs, grad_outputs) -> gradients of func."""
    from .._random import randn
    inputs = _tuple(inputs)
    outputs = _outputs(func, inputs)
    if grad_outputs is None:
        grad_outputs = tuple(randn(o.shape, dtype=o.dtype).requires_grad_(True) for o in outputs
                             if o.dtype.is_floating_point)
    grad_outputs = _tuple(grad_outputs)
    n = len(inputs)
    wrt = [i for i, x in enumerate(inputs) if isinstance(x, _C.Tensor) and x.requires_grad]

    def first_grads(*args):
        ins, gos = args[:n], args[n:]
        outs = [o for o in _outputs(func, ins) if o.requires_grad]
        grads = _C._run_backward(outs, list(gos[:len(outs)]), True, True, [ins[i] for i in wrt], True, False)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_grads, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
