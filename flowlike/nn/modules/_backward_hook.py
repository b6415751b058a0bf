"""Module full backward (pre-)hooks, built on tensor gradient hooks as torch.utils.hooks.BackwardHook."""
from ..._tensor import Tensor


class BackwardHook:
    """Wraps a module call: gradient hooks on the outputs collect grad_output (and run the pre-hooks), hooks on
    aliases of the inputs collect grad_input and then run the full backward hooks."""

    def __init__(self, module, user_hooks, user_pre_hooks):
        if not hasattr(Tensor, "register_hook"):
            raise NotImplementedError("Module full backward hooks need Tensor.register_hook, which this flowlike "
                                      "build does not provide yet")
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs = None
        self.n_inputs = 0
        self.input_grads = None

    def setup_input_hook(self, args):
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]
        self.n_inputs = len(args)
        self.pending = len(positions)
        self.input_grads = [None] * len(args)
        if not positions:
            return args
        args = list(args)
        for i in positions:
            alias = args[i].view_as(args[i])
            alias.register_hook(self._input_hook(i))
            args[i] = alias
        return tuple(args)

    def _input_hook(self, i):
        def hook(grad):
            self.input_grads[i] = grad
            self.pending -= 1
            if self.pending:
                return None
            grad_input = tuple(self.input_grads)
            for h in self.user_hooks:
                out = h(self.module, grad_input, self.grad_outputs)
                if out is not None:
                    grad_input = tuple(out)
            return grad_input[i]
        return hook

    def setup_output_hook(self, result):
        outputs = result if isinstance(result, tuple) else (result,)
        tensors = [o for o in outputs if isinstance(o, Tensor) and o.requires_grad]
        self.grad_outputs = [None] * len(outputs)
        remaining = [len(tensors)]

        def make(j):
            def hook(grad):
                self.grad_outputs[j] = grad
                remaining[0] -= 1
                if remaining[0]:
                    return None
                grads = tuple(self.grad_outputs)
                for h in self.user_pre_hooks:
                    out = h(self.module, grads)
                    if out is not None:
                        grads = tuple(out)
                self.grad_outputs = grads
                if self.pending == 0:
                    for h in self.user_hooks:
                        h(self.module, (None,) * max(self.n_inputs, 1), grads)
                return grads[j]
            return hook

        for j, o in enumerate(outputs):
            if isinstance(o, Tensor) and o.requires_grad:
                o.register_hook(make(j))
        return result
