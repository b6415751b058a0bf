"""functional_call: running a module with some parameters and buffers replaced (torch.nn.utils.stateless)."""
import contextlib
import warnings

from ..._tensor import Tensor

__all__ = ["functional_call"]

_MISSING = object()


def _swap_tensor(module, name, tensor):
    """Puts tensor (or _MISSING: nothing) at module.<name> (a parameter, buffer or plain attribute) and returns
    what was there (_MISSING when nothing)."""
    if tensor is not _MISSING and not isinstance(tensor, Tensor):
        raise TypeError(f"{tensor} is not an instance of torch.Tensor")
    for slots in (module._parameters, module._buffers):
        if name in slots:
            orig = slots[name]
            if tensor is _MISSING:
                del slots[name]
            else:
                slots[name] = tensor  # as torch: a plain tensor may stand in a parameter slot
            return orig
    orig = getattr(module, name) if hasattr(module, name) else _MISSING
    if orig is not _MISSING and not isinstance(orig, Tensor):
        raise TypeError(f"attribute `{name}`: {orig} is not an instance of torch.Tensor")
    if tensor is not _MISSING:
        setattr(module, name, tensor)
    elif hasattr(module, name):
        delattr(module, name)
    return orig


def _swap_tensors(module, named_tensors):
    """Swaps each dotted name's tensor in; returns the tensors that were there."""
    orig = {}
    for name, tensor in named_tensors.items():
        *path, attr = name.split(".")
        owner = module
        for part in path:
            owner = getattr(owner, part)
        orig[name] = _swap_tensor(owner, attr, tensor)
    return orig


def _untie_named_tensors_map(module, parameters_and_buffers):
    """parameters_and_buffers extended to every name of a tied (shared) tensor that was given under one name."""
    named = dict(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    names_of = {}
    for name, tensor in named.items():
        names_of.setdefault(id(tensor), set()).add(name)
    tied = {name: names for names in names_of.values() if len(names) > 1 for name in names}
    given_tied = {name for name in parameters_and_buffers if name in tied}
    for name in given_tied:
        names = tied[name]
        values = {id(parameters_and_buffers[n]) for n in names if n in parameters_and_buffers}
        if len(names & given_tied) > 1 and len(values) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, which are tied. "
                             "Consider using tie_weights=False")
    untied = dict(parameters_and_buffers)
    for name in given_tied:
        for tied_name in tied[name]:
            untied[tied_name] = parameters_and_buffers[name]
    return untied


@contextlib.contextmanager
def _reparametrize_module(module, parameters_and_buffers, tie_weights=False, strict=False):
    if strict:
        expected = {n for n, _ in module.named_parameters(remove_duplicate=False)}
        expected |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
        errors = []
        unexpected = [k for k in parameters_and_buffers if k not in expected]
        missing = sorted(k for k in expected if k not in parameters_and_buffers)
        if unexpected:
            errors.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            errors.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if errors:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(module._get_name(),
                                                                                  "\n\t".join(errors)))
    untied = _untie_named_tensors_map(module, parameters_and_buffers) if tie_weights else parameters_and_buffers
    orig = {}
    try:
        for name, tensor in untied.items():
            orig.update(_swap_tensors(module, {name: tensor}))
        yield
    finally:
        _swap_tensors(module, orig)


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """Deprecated in torch 2.0 (FutureWarning) in favour of torch.func.functional_call, which it equals."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed in a "
                  "future version of PyTorch. Please use `torch.func.functional_call` instead which is a drop-in "
                  "replacement.", FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)


def _functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """module(*args, **kwargs) with the parameters and buffers named in parameters_and_buffers (dotted names, as in
    state_dict) replaced by the given tensors for this call only; the module is restored afterwards.

    tie_weights: a tensor shared under several names is replaced under all of them when given under one.
    strict: every parameter and buffer must be given, and no other name.
    """
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)
