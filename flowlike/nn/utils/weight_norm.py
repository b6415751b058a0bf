"""Weight normalization w = g * v / ||v|| as a forward pre-hook (`torch.nn.utils.weight_norm`, deprecated in
torch in favour of `parametrizations.weight_norm`), and the ops both versions compute it with."""
import warnings

from ... import linalg
from ..parameter import Parameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm", "norm_except_dim"]


def norm_except_dim(v, pow=2, dim=0):
    """The `pow`-norm of v over every dim except `dim`, keeping v's rank (torch.norm_except_dim);
    dim=-1 means the norm of the whole tensor (a 0-dim result), as in torch."""
    if dim == -1:
        return linalg.vector_norm(v, pow)
    if v.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    v.size(dim)  # IndexError for a dim out of range, as torch's transpose(0, dim) raises
    dim %= v.dim()
    others = [d for d in range(v.dim()) if d != dim]
    if not others:  # a 1-d v: each element is its own slice
        return v.abs()
    return linalg.vector_norm(v, pow, dim=others, keepdim=True)


def _weight_norm(v, g, dim=0):
    """v * (g / ||v||) with the norm taken over every dim except `dim` (torch._weight_norm)."""
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook that recomputes module.<name> from <name>_g and <name>_v before each call."""

    def __init__(self, name, dim):
        if dim is None:
            dim = -1
        self.name = name
        self.dim = dim

    def compute_weight(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module, name, dim):
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        if dim is None:
            dim = -1
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        # g and v replace the weight; it becomes a plain attribute recomputed before every forward.
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, dim).detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Reparametrizes module.<name> as g * v / ||v|| with parameters <name>_g (the norms over every dim except
    `dim`; dim=None: the norm of the whole tensor) and <name>_v, recomputed by a forward pre-hook.
    Returns the module."""
    WeightNorm.apply(module, name, dim)
    return module


def _remove_pre_hook(module, hook_type, name, label):
    """Removes the forward pre-hook of type hook_type reparametrizing module.<name> (hook.remove(module) restores a
    plain parameter); ValueError, as torch, when there is none."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, hook_type) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return
    raise ValueError(f"{label} of '{name}' not found in {module}")


def remove_weight_norm(module, name="weight"):
    """Undoes weight_norm: module.<name> becomes a plain parameter holding the current weight."""
    _remove_pre_hook(module, WeightNorm, name, "weight_norm")
    return module
