"""torch.library on flowlike: custom operators defined in Python (custom_op, register_fake, register_autograd) and
the `torch.ops.<namespace>.<name>` namespace that serves them.

An op runs its Python function on flowlike tensors and records one autograd node, as torch does: its backward is
the function given to register_autograd (setup_context saves what it needs, as for autograd.Function), and
without one, backpropagating through the op raises torch's error. register_fake keeps the
shape function, which flowlike's eager execution does not need to call."""
import inspect
import re

from .autograd import Function

__all__ = ["custom_op", "register_fake", "register_autograd", "register_kernel", "CustomOpDef", "ops"]


class CustomOpDef:
    """A custom operator `namespace::name`: callable, also as `.default` (torch's overload name)."""

    def __init__(self, qualname, fn, mutates_args, schema):
        self._namespace, self._name = _split(qualname)
        self._fn, self._signature = fn, inspect.signature(fn)
        self._mutates_args, self._schema = mutates_args, schema
        self._fake = self._backward = self._setup_context = None
        op = self

        class _Autograd(Function):
            @staticmethod
            def forward(*args):
                return op._fn(*args)

            @staticmethod
            def setup_context(ctx, inputs, output):
                if op._setup_context is not None:
                    op._setup_context(ctx, inputs, output)

            @staticmethod
            def backward(ctx, *grads):
                if op._backward is None:
                    raise RuntimeError(f"Trying to backward through {op._namespace}.{op._name}.default but no "
                                       f"autograd formula was registered. Please use register_autograd to add one.")
                return op._backward(ctx, *grads)

        # Named after the op, so its backward node reads e.g. "transformers_grouped_mmBackward".
        self._autograd = type(f"{self._namespace}_{self._name}", (_Autograd,), {})

    def __call__(self, *args, **kwargs):
        bound = self._signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return self._autograd.apply(*bound.args)

    @property
    def default(self):
        return self

    def register_fake(self, fn):
        """Keeps fn, the op's output-shape function (a decorator too)."""
        self._fake = fn
        return fn

    def register_kernel(self, device_types, fn=None):
        """Replaces the implementation for device_types (flowlike runs every op on the CPU)."""
        def register(f):
            self._fn, self._signature = f, inspect.signature(f)
            return f
        return register(fn) if fn is not None else register

    def register_autograd(self, backward, *, setup_context=None):
        """Makes the op differentiable: backward(ctx, *grads) returns one gradient per input."""
        self._backward, self._setup_context = backward, setup_context

    def __repr__(self):
        return f"<CustomOpDef({self._namespace}::{self._name})>"


def _split(qualname):
    if not isinstance(qualname, str) or not re.fullmatch(r"\w+::\w+", qualname):
        raise ValueError(f"Expected there to be a namespace in {qualname}, i.e. The operator name should look "
                         f"something like ns::foo")
    return tuple(qualname.split("::"))


class _Namespace:
    """torch.ops.<namespace>: its custom ops as attributes."""

    def __init__(self, name):
        self._name, self._ops = name, {}

    def __getattr__(self, op):
        if op.startswith("__"):
            raise AttributeError(op)
        try:
            return self._ops[op]
        except KeyError:
            raise AttributeError(f"'_OpNamespace' '{self._name}' object has no attribute '{op}'") from None


class _Ops:
    """torch.ops: one namespace per prefix of the registered custom ops."""

    def __init__(self):
        self._namespaces = {}

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self._namespaces.setdefault(name, _Namespace(name))


ops = _Ops()


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None):
    """Defines the operator `name` ("namespace::op") implemented by fn (or decorates fn); returns its
    CustomOpDef, also reachable as torch.ops.namespace.op."""
    def define(f):
        op = CustomOpDef(name, f, mutates_args, schema)
        namespace = getattr(ops, op._namespace)
        if op._name in namespace._ops:
            raise RuntimeError(f"Tried to register an operator ({name}) with the same name and overload name "
                               f"multiple times.")
        namespace._ops[op._name] = op
        return op
    return define(fn) if fn is not None else define


def _op(op):
    if isinstance(op, CustomOpDef):
        return op
    namespace, name = _split(op)
    found = getattr(ops, namespace)._ops.get(name)
    if found is None:
        raise RuntimeError(f"operator {op} does not exist (define it with torch.library.custom_op first)")
    return found


def register_fake(op, fn=None, /, *, lib=None, _stacklevel=1):
    """Registers the shape function of a custom op (given as its CustomOpDef or "namespace::name")."""
    return _op(op).register_fake(fn) if fn is not None else _op(op).register_fake


def register_autograd(op, backward, /, *, setup_context=None, lib=None):
    """Registers the backward of a custom op (see CustomOpDef.register_autograd)."""
    _op(op).register_autograd(backward, setup_context=setup_context)


def register_kernel(op, device_types, fn=None, /, *, lib=None):
    """Registers a device implementation of a custom op."""
    return _op(op).register_kernel(device_types, fn)
