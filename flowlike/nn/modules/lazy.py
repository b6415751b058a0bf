"""LazyModuleMixin: modules whose parameter shapes are inferred from the first input (torch.nn.modules.lazy)."""
import itertools

from ... import autograd
from ..parameter import UninitializedBuffer, is_lazy

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    """Mixin for modules that create their parameters (UninitializedParameter) on the first forward.

    The first call runs `initialize_parameters(*args, **kwargs)`, which materializes every uninitialized parameter
    and buffer; then the module's class becomes `cls_to_become` (e.g. LazyLinear becomes Linear). Loading a state
    dict into an uninitialized module materializes it with the shapes of the loaded tensors.
    """

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        # Uninitialized tensors go into the state dict as themselves (detach() would lose what they are).
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if is_lazy(param) or keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if is_lazy(buf) or keep_vars else buf.detach()

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                        error_msgs):
        """Materializes uninitialized parameters and buffers with the shapes of the tensors being loaded."""
        for name, param in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None:
                input_param = state_dict[key]
                if is_lazy(param) and not is_lazy(input_param):
                    with autograd.no_grad():
                        param.materialize(input_param.shape)
        self._swap_materialized_buffers()

    def _swap_materialized_buffers(self):
        # A materialized UninitializedBuffer keeps its Python class (see UninitializedTensorMixin.materialize):
        # the module holds a plain tensor on the same memory instead, as torch's class change gives.
        for name, buf in self._buffers.items():
            if isinstance(buf, UninitializedBuffer) and not is_lazy(buf):
                self._buffers[name] = buf.detach().requires_grad_(buf.requires_grad)

    def initialize_parameters(self, *args, **kwargs):
        """Materializes the parameters from the shapes of the first inputs (implemented by each lazy module)."""
        raise NotImplementedError(f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self):
        """Whether any parameter or buffer of this module (not its children) is still uninitialized."""
        return any(is_lazy(t) for t in itertools.chain(self._parameters.values(), self._buffers.values()))

    def _infer_parameters(self, module, args, kwargs=None):
        """The forward pre-hook that initializes the module on its first call, then turns it into cls_to_become."""
        module.initialize_parameters(*args, **(kwargs or {}))
        module._swap_materialized_buffers()
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, "_initialize_hook")
        delattr(module, "_load_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with `DataParallel`. Run a dummy "
                           "forward pass to correctly initialize the modules")
