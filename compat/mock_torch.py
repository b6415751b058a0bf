"""mock_torch: make `import torch` (and every `torch.X.Y`) resolve to flowlike, for code that cannot be edited.

    >>> from flowlike.compat import mock_torch
    >>> with mock_torch():
    ...     import torch                      # is flowlike
    ...     import torch.nn.functional as F   # is flowlike.nn.functional
    ...     import some_library               # its own `import torch` sees flowlike too

A meta path finder placed first on sys.meta_path maps the module name `torch[.X.Y]` to `flowlike[.X.Y]` and
registers that same module object under the torch name in sys.modules. Entering saves and removes any torch
entries already in sys.modules (so a real torch imported earlier is not served from the import cache), and
likewise the library modules that bound the real torch when they were imported (safetensors.torch, ...), so
importing them inside the block binds flowlike; leaving removes the finder, drops the modules first imported
inside the block that bound flowlike, and puts the saved entries back exactly as they were. enable()/disable()
are reference-counted, so nested uses compose.
"""
import contextlib
import importlib
import importlib.abc
import importlib.util
import sys
import threading
import types

__all__ = ["enable", "disable", "is_enabled", "mock_torch"]

_ALIAS, _TARGET = "torch", "flowlike"


def _is_alias(name):
    return name == _ALIAS or name.startswith(_ALIAS + ".")


def _target_of(name):
    return _TARGET + name[len(_ALIAS):]


class _TorchAliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the module `torch.X` as the module object `flowlike.X`."""

    def find_spec(self, fullname, path=None, target=None):
        if not _is_alias(fullname):
            return None
        target_name = _target_of(fullname)
        try:
            module = importlib.import_module(target_name)
        except ModuleNotFoundError as e:
            # Only a missing flowlike counterpart is reported as such; other missing modules propagate unchanged.
            if e.name is None or not (target_name == e.name or target_name.startswith(e.name + ".")):
                raise
            raise ModuleNotFoundError(f"{fullname} is not provided by flowlike yet ({target_name} does not exist)",
                                      name=fullname) from None
        return importlib.util.spec_from_loader(fullname, self, is_package=hasattr(module, "__path__"))

    def create_module(self, spec):
        module = importlib.import_module(_target_of(spec.name))
        # The import system is about to stamp this torch spec onto the flowlike module; keep its own to restore.
        spec.flowlike_spec = module.__spec__
        return module

    def exec_module(self, module):
        # Giving the flowlike module its own spec back keeps relative imports, reload and pickling inside flowlike
        # working with flowlike names.
        module.__spec__ = module.__spec__.flowlike_spec


_finder = _TorchAliasFinder()
_lock = threading.RLock()
_depth = 0
_saved_modules = {}
_modules_before = set()


def _torch_entries():
    return {name: module for name, module in sys.modules.items() if _is_alias(name)}


def _binds(module, prefix):
    """Whether a module holds (as a global) a module whose name starts with prefix, e.g. `torch`."""
    try:
        values = list(vars(module).values())
    except TypeError:
        return False
    return any(isinstance(v, types.ModuleType) and (v.__name__ == prefix or v.__name__.startswith(prefix + "."))
               for v in values)


def _torch_dependents():
    """Modules already imported with the real torch bound in them (e.g. safetensors.torch): set aside while the
    mock is on, so importing them again inside it binds flowlike."""
    if "torch" not in sys.modules or sys.modules["torch"].__name__ != "torch":
        return {}
    return {name: m for name, m in list(sys.modules.items())
            if m is not None and not _is_alias(name) and not name.startswith(("flowlike", "__main__")) and
            getattr(m, "__file__", None) and _binds(m, "torch")}


def enable():
    """Starts resolving `torch` imports to flowlike (nested calls are counted; each needs a disable())."""
    global _depth
    with _lock:
        _depth += 1
        if _depth > 1:
            return
        _saved_modules.clear()
        _saved_modules.update(_torch_dependents())
        _saved_modules.update(_torch_entries())
        for name in _saved_modules:
            del sys.modules[name]
        _modules_before.clear()
        _modules_before.update(sys.modules)
        sys.meta_path.insert(0, _finder)


def disable():
    """Undoes one enable(); the last one removes the finder and restores sys.modules' torch entries."""
    global _depth
    with _lock:
        if _depth == 0:
            return
        _depth -= 1
        if _depth > 0:
            return
        if _finder in sys.meta_path:
            sys.meta_path.remove(_finder)
        for name in _torch_entries():
            del sys.modules[name]
        # Modules first imported under the mock that bound flowlike as torch are dropped, so code after the
        # mock that imports them again gets them with the real torch.
        for name in [n for n in sys.modules if n not in _modules_before]:
            m = sys.modules[name]
            if m is not None and not name.startswith("flowlike") and _binds(m, "flowlike"):
                del sys.modules[name]
        sys.modules.update(_saved_modules)
        _saved_modules.clear()


def is_enabled():
    """True while at least one enable() is in effect."""
    return _depth > 0


@contextlib.contextmanager
def mock_torch():
    """Context manager (and decorator): `import torch` resolves to flowlike inside the block."""
    enable()
    try:
        yield
    finally:
        disable()


class _CallableModule(types.ModuleType):
    """This module, callable: `from flowlike.compat import mock_torch` gives the module (enable, disable, ...)
    and `with mock_torch():` uses it as the context manager, so the two spellings never disagree."""

    def __call__(self):
        return mock_torch()


sys.modules[__name__].__class__ = _CallableModule
