"""autograd.graph: saved-tensor hooks and the graph's Node type."""
from .. import _C

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks", "Node"]

Node = _C.Node


class saved_tensors_hooks:
    """Inside the block, every tensor autograd saves for backward goes through pack_hook(tensor) -> object,
    and comes back through unpack_hook(object) -> tensor when backward needs it."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _disabled_message is not None:
            raise RuntimeError(_disabled_message)
        _C._push_saved_tensors_hooks(self.pack_hook, self.unpack_hook)
        return self

    def __exit__(self, *exc):
        _C._pop_saved_tensors_hooks()
        return False


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept on the CPU (where flowlike tensors already live): a copy, so later in-place
    changes to the original do not affect backward."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        super().__init__(lambda t: t.detach().clone(), lambda t: t)


_disabled_message = None


class disable_saved_tensors_hooks:
    """Makes saved_tensors_hooks raise `error_message` inside the block."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        global _disabled_message
        self._prev, _disabled_message = _disabled_message, self.error_message
        return self

    def __exit__(self, *exc):
        global _disabled_message
        _disabled_message = self._prev
        return False
