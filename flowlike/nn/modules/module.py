"""nn.Module: the base class of every layer, with PyTorch's registration, state_dict, hooks and repr."""
import functools
import itertools
import weakref
from collections import OrderedDict, namedtuple

from ... import _dtype as D
from ..._creation import empty_like
from ..._tensor import Tensor, check_device, device as Device
from ...autograd import no_grad
from ..parameter import Parameter, is_lazy

__all__ = ["Module", "register_module_forward_pre_hook", "register_module_forward_hook"]

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"
_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()
_global_forward_hooks_always_called = set()


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """The (missing_keys, unexpected_keys) named tuple load_state_dict returns."""

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class RemovableHandle:
    """A handle whose remove() unregisters a hook from the dict(s) it was put in."""

    next_id = 0

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        if extra_dict is None:
            extra_dict = ()
        elif not isinstance(extra_dict, (list, tuple)):
            extra_dict = (extra_dict,)
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extra_dict)

    def remove(self):
        hooks_dict = self.hooks_dict_ref()
        if hooks_dict is not None and self.id in hooks_dict:
            del hooks_dict[self.id]
        for ref in self.extra_dict_ref:
            d = ref()
            if d is not None:
                if isinstance(d, set):
                    d.discard(self.id)
                elif self.id in d:
                    del d[self.id]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


# Bumped whenever any module's parameters, buffers or submodules are added, removed, rebound or converted
# (register_*, attribute assignment and deletion, _apply): nn.Graph recaptures a plan made before such a change.
_structure_version = 0


def _structure_changed():
    global _structure_version
    _structure_version += 1


def structure_version():
    """A counter that changes whenever any module's parameters, buffers or submodules change (see above)."""
    return _structure_version


def register_module_forward_pre_hook(hook):
    """Registers a forward pre-hook common to all modules."""
    handle = RemovableHandle(_global_forward_pre_hooks)
    _global_forward_pre_hooks[handle.id] = hook
    return handle


def register_module_forward_hook(hook, *, always_call=False):
    """Registers a forward hook common to all modules."""
    handle = RemovableHandle(_global_forward_hooks, extra_dict=_global_forward_hooks_always_called)
    _global_forward_hooks[handle.id] = hook
    if always_call:
        _global_forward_hooks_always_called.add(handle.id)
    return handle


def _addindent(s_, num_spaces):
    s = s_.split("\n")
    if len(s) == 1:
        return s_
    first = s.pop(0)
    return first + "\n" + "\n".join((num_spaces * " ") + line for line in s)


def _forward_unimplemented(self, *input):
    raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')


class Module:
    """Base class for all neural network modules, as torch.nn.Module."""

    dump_patches = False
    _version = 1
    training: bool
    call_super_init = False

    def __init__(self, *args, **kwargs):
        if self.call_super_init is False and bool(kwargs):
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        if self.call_super_init is False and bool(args):
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but {len(args) + 1} "
                            "were given")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_backward_pre_hooks"] = OrderedDict()
        d["_backward_hooks"] = OrderedDict()
        d["_is_full_backward_hook"] = None
        d["_forward_hooks"] = OrderedDict()
        d["_forward_hooks_with_kwargs"] = OrderedDict()
        d["_forward_hooks_always_called"] = OrderedDict()
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_pre_hooks_with_kwargs"] = OrderedDict()
        d["_state_dict_hooks"] = OrderedDict()
        d["_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_post_hooks"] = OrderedDict()
        d["_modules"] = {}
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    forward = _forward_unimplemented

    # ---- registration -------------------------------------------------------------------------------

    def register_buffer(self, name, tensor, persistent=True):
        """Adds a buffer (state that is not a parameter); persistent buffers are part of state_dict."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffers[name] = tensor
        _structure_changed()
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        """Adds a parameter (a Parameter or None) to the module."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        elif param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                             f"created explicitly. To express '{name}' as a function of another Tensor, compute the "
                             "value in the forward() method.")
        else:
            self._parameters[name] = param
        _structure_changed()

    def add_module(self, name, module):
        """Adds a child module, reachable as an attribute of the given name."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {type(name).__name__}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module
        _structure_changed()

    def register_module(self, name, module):
        """Alias for add_module."""
        self.add_module(name, module)

    def get_submodule(self, target):
        """The submodule at the dotted path `target` ('' is self)."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target, module, strict=False):
        """Sets the submodule at the dotted path `target`."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        mod = self.get_submodule(".".join(atoms[:-1]))
        if strict and not hasattr(mod, atoms[-1]):
            raise AttributeError(mod._get_name() + " has no attribute `" + atoms[-1] + "`")
        setattr(mod, atoms[-1], module)

    def get_parameter(self, target):
        """The parameter at the dotted path `target`."""
        module_path, _, param_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, param_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + param_name + "`")
        param = getattr(mod, param_name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + param_name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        """The buffer at the dotted path `target`."""
        module_path, _, buffer_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, buffer_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + buffer_name + "`")
        if buffer_name not in mod._buffers:
            raise AttributeError("`" + buffer_name + "` is not a buffer")
        return getattr(mod, buffer_name)

    def get_extra_state(self):
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called.")

    def set_extra_state(self, state):
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called.")

    # ---- attribute protocol --------------------------------------------------------------------------

    def __getattr__(self, name):
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            return d["_parameters"][name]
        if "_buffers" in d and name in d["_buffers"]:
            return d["_buffers"][name]
        if "_modules" in d and name in d["_modules"]:
            return d["_modules"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        def remove_from(*dicts_or_sets):
            for d in dicts_or_sets:
                if name in d:
                    if isinstance(d, dict):
                        del d[name]
                    else:
                        d.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(self.__dict__, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        else:
            modules = self.__dict__.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                remove_from(self.__dict__, self._parameters, self._buffers, self._non_persistent_buffers_set)
                modules[name] = value
                _structure_changed()
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(f"cannot assign '{type(value).__name__}' as child module '{name}' "
                                    "(torch.nn.Module or None expected)")
                modules[name] = value
                _structure_changed()
            else:
                buffers = self.__dict__.get("_buffers")
                if isinstance(value, Tensor) and getattr(value, "_is_buffer", False):
                    if buffers is None:
                        raise AttributeError("cannot assign buffer before Module.__init__() call")
                    remove_from(self.__dict__, self._parameters, self._modules)
                    self.register_buffer(name, value, getattr(value, "persistent", True))
                elif buffers is not None and name in buffers:
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                        "(torch.nn.Buffer, torch.Tensor or None expected)")
                    buffers[name] = value
                    _structure_changed()
                else:
                    object.__setattr__(self, name, value)

    def __delattr__(self, name):
        if name in self._parameters or name in self._buffers or name in self._modules:
            _structure_changed()
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        keys = list(object.__dir__(self)) + list(self._parameters) + list(self._modules) + list(self._buffers)
        return sorted(k for k in set(keys) if not k[0].isdigit())

    def __getstate__(self):
        return self.__dict__.copy()

    def __setstate__(self, state):
        self.__dict__.update(state)

    # ---- iteration -----------------------------------------------------------------------------------

    def _named_members(self, get_members_fn, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse \
            else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members_fn(module):
                if v is None or v in memo:
                    continue
                if remove_duplicate:
                    memo.add(v)
                yield module_prefix + ("." if module_prefix else "") + k, v

    def parameters(self, recurse=True):
        """Iterates over the module's parameters (those of submodules too when recurse)."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """Iterates over (dotted name, parameter)."""
        return self._named_members(lambda m: m._parameters.items(), prefix=prefix, recurse=recurse,
                                   remove_duplicate=remove_duplicate)

    def buffers(self, recurse=True):
        """Iterates over the module's buffers."""
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        """Iterates over (dotted name, buffer)."""
        return self._named_members(lambda m: m._buffers.items(), prefix=prefix, recurse=recurse,
                                   remove_duplicate=remove_duplicate)

    def children(self):
        """Iterates over the immediate child modules."""
        for _, module in self.named_children():
            yield module

    def named_children(self):
        """Iterates over (name, immediate child module), each module once."""
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def modules(self):
        """Iterates over all modules in the tree, self first."""
        for _, module in self.named_modules():
            yield module

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """Iterates over (dotted name, module) for all modules in the tree, self first."""
        if memo is None:
            memo = set()
        if self not in memo:
            if remove_duplicate:
                memo.add(self)
            yield prefix, self
            for name, module in self._modules.items():
                if module is None:
                    continue
                submodule_prefix = prefix + ("." if prefix else "") + name
                yield from module.named_modules(memo, submodule_prefix, remove_duplicate)

    # ---- conversion and modes ------------------------------------------------------------------------

    def apply(self, fn):
        """Calls fn on every submodule (children first) and on self; returns self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def _apply(self, fn, recurse=True):
        if recurse:
            for module in self.children():
                module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            # As torch: the Parameter (and its .grad) stay the same objects, which optimizers hold, and take the
            # converted data.
            for t in (param, param.grad):
                if t is not None:
                    with no_grad():
                        applied = fn(t)
                    if applied is not t:
                        t.data = applied
        for key, buf in self._buffers.items():
            if buf is None:
                continue
            applied = fn(buf)
            if is_lazy(buf):
                # an uninitialized buffer stays one, as torch's subclass does: it takes the converted (empty) data
                if applied is not buf:
                    buf.data = applied
            else:
                self._buffers[key] = applied
        _structure_changed()  # dtypes, devices or tensors changed
        return self

    def to(self, *args, **kwargs):
        """Moves/casts parameters and buffers: to(device), to(dtype), to(device, dtype), to(tensor)."""
        device, dtype = kwargs.pop("device", None), kwargs.pop("dtype", None)
        kwargs.pop("non_blocking", None)
        kwargs.pop("memory_format", None)
        if kwargs:
            raise TypeError(f"to() received an invalid combination of arguments: unexpected '{next(iter(kwargs))}'")
        for a in args:
            if isinstance(a, D.dtype):
                dtype = a
            elif isinstance(a, Tensor):
                dtype, device = a.dtype, a.device
            elif isinstance(a, bool):
                continue
            else:
                device = a
        check_device(device, allow_meta=True)
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, "
                            f"but got desired dtype={dtype}")
        if device is not None:
            self._move(device)
        if dtype is None:
            return self
        return self._cast_floating(dtype)

    def _move(self, device):
        """Moves parameters and buffers to device (cpu or meta); meta tensors have no data to move elsewhere."""
        if Device(device).type == "meta":
            self._apply(lambda t: t.to("meta"))
        elif any(t.is_meta for t in itertools.chain(self.parameters(), self.buffers())):
            raise NotImplementedError("Cannot copy out of meta tensor; no data! Please use torch.nn.Module.to_empty() "
                                      "instead of torch.nn.Module.to() when moving module from meta to a different "
                                      "device.")

    def _cast_floating(self, dtype):
        # Keeps unconverted tensors as they are (the same object), so Parameters are only replaced on a real cast.
        return self._apply(lambda t: t._to_dtype(dtype, False) if t.is_floating_point() and t.dtype != dtype else t)

    def float(self):
        """Casts floating point parameters and buffers to float32."""
        return self._cast_floating(D.float32)

    def double(self):
        """Casts floating point parameters and buffers to float64."""
        return self._cast_floating(D.float64)

    def half(self):
        """Casts floating point parameters and buffers to float16."""
        return self._cast_floating(D.float16)

    def bfloat16(self):
        """Casts floating point parameters and buffers to bfloat16."""
        return self._cast_floating(D.bfloat16)

    def type(self, dst_type):
        """Casts all parameters and buffers to dst_type."""
        return self._apply(lambda t: t.type(dst_type))

    def cpu(self):
        """Moves parameters and buffers to the CPU (where all but meta ones already live); returns self."""
        self._move("cpu")
        return self

    def cuda(self, device=None):
        check_device("cuda")
        return self

    def to_empty(self, *, device=None, recurse=True):
        """Gives every parameter and buffer new uninitialized storage on device (how a module built on meta gets
        memory before its weights are loaded)."""
        check_device(device, allow_meta=True)
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def share_memory(self):
        return self

    def train(self, mode=True):
        """Sets training mode on self and all submodules."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        """Sets evaluation mode (train(False))."""
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """Sets requires_grad on every parameter."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Resets the gradients of all parameters (to None by default)."""
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    g = p.grad
                    if g.grad_fn is not None:
                        g = g.detach()
                        p.grad = g
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    # ---- state dict ----------------------------------------------------------------------------------

    def _register_state_dict_hook(self, hook):
        """Hook called as hook(module, state_dict, prefix, local_metadata) after state_dict()."""
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    register_state_dict_post_hook = _register_state_dict_hook

    def register_state_dict_pre_hook(self, hook):
        """Hook called as hook(module, prefix, keep_vars) before state_dict()."""
        handle = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[handle.id] = hook
        return handle

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = functools.partial(hook, self) if with_module else hook
        return handle

    def register_load_state_dict_pre_hook(self, hook):
        """Hook called as hook(module, state_dict, prefix, local_metadata, strict, missing, unexpected, errors)."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_load_state_dict_post_hook(self, hook):
        """Hook called as hook(module, incompatible_keys) after load_state_dict()."""
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        extra_state_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if getattr(self.__class__, "get_extra_state", Module.get_extra_state) is not Module.get_extra_state:
            destination[extra_state_key] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """An ordered dict of parameters and persistent buffers, keyed by dotted names."""
        if args:
            # Positional (destination, prefix, keep_vars), deprecated in torch but still accepted.
            destination = args[0]
            if len(args) > 1:
                prefix = args[1]
            if len(args) > 2:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            hook_result = hook(self, destination, prefix, local_metadata)
            if hook_result is not None:
                destination = hook_result
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        """Copies this module's own parameters and persistent buffers from state_dict (not its children's)."""
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        persistent_buffers = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in itertools.chain(self._parameters.items(), persistent_buffers.items())
                       if v is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            input_param = state_dict[key]
            if not isinstance(input_param, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like '
                                  f"object from checkpoint but received {type(input_param)}")
                continue
            # an uninitialized (lazy) parameter has no shape to check: it takes an uninitialized input as is
            is_param_lazy = is_lazy(param)
            if not is_param_lazy and len(param.shape) == 0 and len(input_param.shape) == 1 and \
                    input_param.shape[0] == 1:
                input_param = input_param[0]
            if not is_param_lazy and input_param.shape != param.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {input_param.shape} from "
                                  f"checkpoint, the shape in current model is {param.shape}.")
                continue
            try:
                with no_grad():
                    if assign:
                        if isinstance(param, Parameter):
                            if not isinstance(input_param, Parameter):
                                input_param = Parameter(input_param, requires_grad=param.requires_grad)
                            else:
                                input_param.requires_grad_(param.requires_grad)
                        setattr(self, name, input_param)
                    else:
                        param.copy_(input_param)
            except Exception as ex:
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in the model are '
                                  f"{param.size()} and whose dimensions in the checkpoint are {input_param.size()}, "
                                  f"an exception occurred : {ex.args}.")
        extra_state_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if getattr(self.__class__, "set_extra_state", Module.set_extra_state) is not Module.set_extra_state:
            if extra_state_key in state_dict:
                self.set_extra_state(state_dict[extra_state_key])
            elif strict:
                missing_keys.append(extra_state_key)
        elif strict and extra_state_key in state_dict:
            unexpected_keys.append(extra_state_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_state_key:
                    input_name = key[len(prefix):].split(".", 1)
                    if len(input_name) > 1:
                        if input_name[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif input_name[0] not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copies parameters and buffers from state_dict; returns (missing_keys, unexpected_keys)."""
        if not isinstance(state_dict, dict) and not hasattr(state_dict, "keys"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys, unexpected_keys, error_msgs = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata

        def load(module, local_state_dict, prefix=""):
            local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(local_state_dict, prefix, local_metadata, True, missing_keys,
                                         unexpected_keys, error_msgs)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    child_state_dict = {k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)}
                    load(child, child_state_dict, child_prefix)
            incompatible_keys = _IncompatibleKeys(missing_keys, unexpected_keys)
            for hook in module._load_state_dict_post_hooks.values():
                if hook(module, incompatible_keys) is not None:
                    raise AssertionError("Hooks registered with ``register_load_state_dict_post_hook`` are not "
                                         "expected to return new values, if incompatible_keys need to be modified, "
                                         "it should be done inplace.")

        load(self, state_dict)
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                self.__class__.__name__, "\n\t".join(error_msgs)))
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    # ---- hooks and call ------------------------------------------------------------------------------

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """hook(module, args) -> None or new args; with_kwargs: hook(module, args, kwargs) -> None or (args, kwargs)."""
        handle = RemovableHandle(self._forward_pre_hooks, extra_dict=self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """hook(module, args, output) -> None or new output (with_kwargs: hook(module, args, kwargs, output))."""
        handle = RemovableHandle(self._forward_hooks, extra_dict=[self._forward_hooks_with_kwargs,
                                                                  self._forward_hooks_always_called])
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """hook(module, grad_output) -> None or new grad_output, called before the module's input gradients."""
        handle = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[handle.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(self, hook, prepend=False):
        """hook(module, grad_input, grad_output) -> None or new grad_input, called once input gradients exist."""
        if self._is_full_backward_hook is False:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        self._is_full_backward_hook = True
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_backward_hook(self, hook):
        """Deprecated in torch; registered here as a full backward hook."""
        return self.register_full_backward_hook(hook)

    def __call__(self, *args, **kwargs):
        # Fast path: no hooks anywhere means a plain forward call.
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks or self._backward_pre_hooks
                or _global_forward_pre_hooks or _global_forward_hooks):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    _call_impl = __call__

    def _call_with_hooks(self, args, kwargs):
        result = None
        called_always = set()
        try:
            for hook_id, hook in (*_global_forward_pre_hooks.items(), *self._forward_pre_hooks.items()):
                if hook_id in self._forward_pre_hooks_with_kwargs:
                    out = hook(self, args, kwargs)
                    if out is not None:
                        if isinstance(out, tuple) and len(out) == 2:
                            args, kwargs = out
                        else:
                            raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, "
                                               f"new_kwargs), but got {out}.")
                else:
                    out = hook(self, args)
                    if out is not None:
                        args = out if isinstance(out, tuple) else (out,)
            bw = None
            if self._backward_hooks or self._backward_pre_hooks:
                from ._backward_hook import BackwardHook
                bw = BackwardHook(self, list(self._backward_hooks.values()), list(self._backward_pre_hooks.values()))
                args = bw.setup_input_hook(args)
            result = self.forward(*args, **kwargs)
            for hook_id, hook in (*_global_forward_hooks.items(), *self._forward_hooks.items()):
                called_always.add(hook_id)
                if hook_id in self._forward_hooks_with_kwargs:
                    out = hook(self, args, kwargs, result)
                else:
                    out = hook(self, args, result)
                if out is not None:
                    result = out
            if bw is not None:
                result = bw.setup_output_hook(result)
            return result
        except Exception:
            for hook_id, hook in (*_global_forward_hooks.items(), *self._forward_hooks.items()):
                always = hook_id in self._forward_hooks_always_called or hook_id in _global_forward_hooks_always_called
                if always and hook_id not in called_always:
                    try:
                        if hook_id in self._forward_hooks_with_kwargs:
                            out = hook(self, args, kwargs, result)
                        else:
                            out = hook(self, args, result)
                        if out is not None:
                            result = out
                    except Exception:
                        continue
            raise

    # ---- repr ----------------------------------------------------------------------------------------

    def _get_name(self):
        return self.__class__.__name__

    def extra_repr(self):
        """Extra text shown inside the module's repr (override in subclasses)."""
        return ""

    def __repr__(self):
        extra_lines = []
        extra_repr = self.extra_repr()
        if extra_repr:
            extra_lines = extra_repr.split("\n")
        child_lines = []
        for key, module in self._modules.items():
            mod_str = _addindent(repr(module), 2)
            child_lines.append("(" + key + "): " + mod_str)
        lines = extra_lines + child_lines
        main_str = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main_str += extra_lines[0]
            else:
                main_str += "\n  " + "\n  ".join(lines) + "\n"
        return main_str + ")"

    def _replicate_for_data_parallel(self):
        replica = self.__new__(type(self))
        replica.__dict__ = self.__dict__.copy()
        replica._parameters = dict()
        replica._buffers = replica._buffers.copy()
        replica._modules = replica._modules.copy()
        return replica

    def compile(self, *args, **kwargs):
        """torch.compile in place (torch.compile's arguments): the module's forward runs compiled from now on, its
        state_dict keys unchanged."""
        from ...graph.compile import compile_forward
        compile_forward(self, *args, **kwargs)
