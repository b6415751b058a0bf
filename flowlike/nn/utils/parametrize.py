"""Parametrizations (`torch.nn.utils.parametrize`): a module's parameter or buffer is replaced by a property that
computes it from the tensors kept in `module.parametrizations[name]`, a ParametrizationList.

As in torch, registering the first parametrization swaps the module's class for a subclass named
`Parametrized<Class>` (the property lives on that class), and state_dict keys become
`parametrizations.<name>.original` (or `original0`, `original1`, ... when `right_inverse` returns several tensors).
"""
import collections.abc
import copyreg
from contextlib import contextmanager
from copy import deepcopy

from ..._tensor import Tensor
from ...autograd import no_grad
from ..modules.container import ModuleDict, ModuleList
from ..parameter import Parameter

__all__ = ["cached", "ParametrizationList", "register_parametrization", "is_parametrized",
           "remove_parametrizations", "type_before_parametrizations", "transfer_parametrizations_and_params"]

_cache_enabled = 0
_cache = {}


@contextmanager
def cached():
    """Within this context each parametrized tensor is computed once, on first use, and then reused (for a
    parametrized weight used several times in one forward, e.g. an RNN's recurrent kernel)."""
    global _cache, _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache = {}


def _register_parameter_or_buffer(module, name, x):
    if isinstance(x, Parameter):
        module.register_parameter(name, x)
    else:
        module.register_buffer(name, x)


def _set_tensor(owner, name, value):
    """Gives owner.<name> the values of `value`, as torch's `original.set_(value)` does.

    Same shape and dtype: copied in place, so the tensor object (which an optimizer may hold) stays the same.
    Otherwise (only reachable with unsafe=True) flowlike, having no Tensor.set_, registers a new tensor.
    """
    dest = getattr(owner, name)
    if value is dest:
        return
    if dest.shape == value.shape and dest.dtype == value.dtype:
        with no_grad():
            dest.copy_(value)
        return
    value = value.detach()
    if isinstance(dest, Parameter):
        value = Parameter(value, dest.requires_grad)
    _register_parameter_or_buffer(owner, name, value)


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor and the original tensor(s) they are computed from.

    It is `module.parametrizations[tensor_name]` after register_parametrization. The original is held as
    `original` when the first parametrization's right_inverse returns one tensor (or there is no right_inverse),
    and as `original0`, `original1`, ... when it returns a sequence. Not meant to be built by users.
    """

    def __init__(self, modules, original, unsafe=False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape, original_dtype = original.shape, original.dtype
        # The stored tensor(s) are right_inverse(original), through the parametrizations in reverse order.
        with no_grad():
            new = original
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, (Tensor, collections.abc.Sequence)):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                             f"Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                                 f"original.dtype: {original.dtype}\nright_inverse(original).dtype: {new.dtype}")
            _register_parameter_or_buffer(self, "original", original)
            _set_tensor(self, "original", new)
        else:
            for i, originali in enumerate(new):
                if not isinstance(originali, Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                                     f"Got element {i} of the sequence with type {type(originali).__name__}.")
                if isinstance(original, Parameter):
                    originali = Parameter(originali, original.requires_grad)
                originali.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", originali)
        if not self.unsafe:
            # The parametrized tensor must look like the one it replaces.
            z = self()
            if not isinstance(z, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(z).__name__}.")
            if z.dtype != original_dtype:
                raise ValueError("Registering a parametrization may not change the dtype of the tensor, unless "
                                 f"`unsafe` flag is enabled.\nunparametrized dtype: {original_dtype}\n"
                                 f"parametrized dtype: {z.dtype}")
            if z.shape != original_shape:
                raise ValueError("Registering a parametrization may not change the shape of the tensor, unless "
                                 f"`unsafe` flag is enabled.\nunparametrized shape: {original_shape}\n"
                                 f"parametrized shape: {z.shape}")

    def right_inverse(self, value):
        """Stores right_inverse(value) (through the parametrizations in reverse order) as the original(s): what
        `module.<name> = value` does on a parametrized tensor."""
        with no_grad():
            for module in reversed(self):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not implement right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got {type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype {value.dtype} while "
                                     f"`original` has dtype {self.original.dtype}")
                _set_tensor(self, "original", value)
            else:
                if not isinstance(value, collections.abc.Sequence):
                    raise ValueError(f"'right_inverse' must return a sequence of tensors. Got {type(value).__name__}.")
                if len(value) != self.ntensors:
                    raise ValueError("'right_inverse' must return a sequence of tensors of length "
                                     f"{self.ntensors}. Got a sequence of length {len(value)}.")
                for i, tensor in enumerate(value):
                    if not isinstance(tensor, Tensor):
                        raise ValueError("'right_inverse' must return a sequence of tensors or reference-type "
                                         f"opaques. Got element {i} of type {type(tensor).__name__}.")
                    original_i = getattr(self, f"original{i}")
                    if original_i.dtype != tensor.dtype:
                        raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype {tensor.dtype} while "
                                         f"`original{i}` has dtype {original_i.dtype}")
                    _set_tensor(self, f"original{i}", tensor)

    def forward(self):
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _parametrized_getstate(self):
    raise RuntimeError("Serialization of parametrized modules is only supported through state_dict(). See:\n"
                       "https://pytorch.org/tutorials/beginner/saving_loading_models.html"
                       "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training")


def _parametrized_deepcopy(self, memo):
    # deepcopy would otherwise go through __getstate__, which refuses parametrized modules.
    obj = memo.get(id(self))
    if obj is not None:
        return obj
    replica = self.__new__(self.__class__)
    memo[id(self)] = replica
    replica.__dict__ = deepcopy(self.__dict__, memo)
    for slot in copyreg._slotnames(self.__class__):
        if hasattr(self, slot):
            setattr(replica, slot, deepcopy(getattr(self, slot), memo))
    return replica


def _inject_new_class(module):
    """Swaps module's class for a subclass `Parametrized<Class>`, on which the properties are then set."""
    cls = module.__class__
    dct = {"__getstate__": _parametrized_getstate}
    if not hasattr(cls, "__deepcopy__"):
        dct["__deepcopy__"] = _parametrized_deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), dct)


def _inject_property(module, tensor_name):
    """Makes module.<tensor_name> a property evaluating (or, assigned, inverting) its ParametrizationList."""
    if hasattr(module, tensor_name):
        raise AssertionError(f"Module already has an attribute named '{tensor_name}'")

    def get_parametrized(self):
        parametrization = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return parametrization()
        key = (id(module), tensor_name)
        tensor = _cache.get(key)
        if tensor is None:
            tensor = _cache[key] = parametrization()
        return tensor

    def set_original(self, value):
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def _check_unchanged(tensor_name, y, x, head, x_label):
    """The dtype/shape checks of stacking a parametrization on an already parametrized tensor y; head and
    x_label are message templates with an {attr} field."""
    for attr in ("dtype", "shape"):
        if getattr(x, attr) != getattr(y, attr):
            raise ValueError(head.format(attr=attr) + ", unless the `unsafe` flag is enabled.\n"
                             f"module.{tensor_name}.{attr}: {getattr(y, attr)}\n"
                             f"{x_label.format(attr=attr)}: {getattr(x, attr)}")


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Makes module.<tensor_name> the output of `parametrization` applied to the tensor(s) it is stored as.

    The original parameter or buffer moves to `module.parametrizations[tensor_name].original` (or `original0`,
    `original1`, ... when parametrization.right_inverse returns a sequence); registering on an already
    parametrized tensor appends to its ParametrizationList. Assigning module.<tensor_name> = value stores
    right_inverse(value). With unsafe=True the parametrization may change the tensor's shape and dtype and is
    not checked. Raises ValueError if the module has no parameter, buffer or parametrized tensor of that name.
    Returns the module.
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            if not isinstance(x, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(x).__name__}.")
            _check_unchanged(tensor_name, y, x, "Registering a parametrization may not change the {attr} of the "
                             "tensor", f"parametrization(module.{tensor_name}).{{attr}}")
            if hasattr(parametrization, "right_inverse"):
                try:
                    z = parametrization.right_inverse(x)
                except NotImplementedError:
                    pass
                else:
                    if not isinstance(z, Tensor):
                        raise ValueError(f"parametrization.right_inverse must return a tensor. Got: "
                                         f"{type(z).__name__}")
                    _check_unchanged(tensor_name, y, z, "The tensor returned by parametrization.right_inverse "
                                     f"must have the same {{attr}} as module.{tensor_name}", "returned {attr}")
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized element with "
                         f"name '{tensor_name}'")
    return module


def is_parametrized(module, tensor_name=None):
    """Whether module has a parametrization on tensor_name (on any tensor when tensor_name is None)."""
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Removes the parametrizations of module.<tensor_name>, making it a plain parameter or buffer again.

    leave_parametrized=True keeps its current (parametrized) value; False restores the original tensor, which
    is only possible when it is a single tensor. When no parametrization is left the module gets its original
    class back. Returns the module.
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with no_grad():
                t = getattr(module, tensor_name)
            _set_tensor(parametrizations, "original", t)
            original = parametrizations.original
    elif leave_parametrized:
        t = getattr(module, tensor_name)
        original = Parameter(t) if t.requires_grad else t
    else:
        raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is parametrized "
                         "in terms of a sequence of tensors.")
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module):
    """The module's class before parametrizations were registered (its class when it has none)."""
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(from_module, to_module, tensor_name=None):
    """Registers from_module's parametrizations (all, or those of tensor_name) on to_module and shares the
    original tensors with it, creating the parameters to_module lacks. Returns to_module."""
    if is_parametrized(from_module):
        names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
        for name in names:
            if not hasattr(to_module, name):
                setattr(to_module, name, Parameter(getattr(from_module, name)))
            source = from_module.parametrizations[name]
            for param_func in source:
                register_parametrization(to_module, name, param_func)
            target = to_module.parametrizations[name]
            if hasattr(source, "original"):
                target.original = source.original
            else:
                i = 0
                while hasattr(source, f"original{i}"):
                    setattr(target, f"original{i}", getattr(source, f"original{i}"))
                    i += 1
    return to_module
