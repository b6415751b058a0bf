"""Stochastic gradient descent (torch.optim.SGD)."""
from .. import _C, _creation
from .optimizer import Optimizer, _check_range, _split_fusable, _to_scalar, _use_grad

__all__ = ["SGD"]


class SGD(Optimizer):
    """SGD with optional momentum, dampening, Nesterov momentum, weight decay and maximize."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *, maximize=False,
                 foreach=None, differentiable=False, fused=None):
        _check_range("learning rate", lr)
        _check_range("momentum", momentum, text=f"Invalid momentum value: {momentum}")
        _check_range("weight_decay", weight_decay, text=f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov,
                        maximize=maximize, foreach=foreach, differentiable=differentiable, fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    @_use_grad
    def step(self, closure=None):
        """One SGD step (a fused C++ update per param group for dense float tensors); returns closure() if given."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, momentum, dampening = _to_scalar(group["lr"]), group["momentum"], group["dampening"]
            weight_decay, nesterov, maximize = group["weight_decay"], group["nesterov"], group["maximize"]
            params, grads, rest = _split_fusable(group, group["differentiable"])
            if params:
                self._fused(params, grads, lr, momentum, dampening, weight_decay, nesterov, maximize)
            for param, grad in rest:
                self._single(param, grad.neg() if maximize else grad, lr, momentum, dampening, weight_decay,
                             nesterov)
        return loss

    def _fused(self, params, grads, lr, momentum, dampening, weight_decay, nesterov, maximize):
        args = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov,
                    maximize=maximize)
        if momentum == 0:
            _C._fused_sgd_(params, grads, [], is_first_step=False, **args)
            return
        # Buffers start as the first (decayed) gradient: those params run the kernel in its first-step mode.
        groups = {True: ([], [], []), False: ([], [], [])}
        for p, g in zip(params, grads):
            state = self.state[p]
            buf = state.get("momentum_buffer")
            first = buf is None
            if first:
                buf = state["momentum_buffer"] = _creation.empty_like(p)
            lists = groups[first]
            lists[0].append(p)
            lists[1].append(g)
            lists[2].append(buf)
        for first, (ps, gs, bs) in groups.items():
            if ps:
                _C._fused_sgd_(ps, gs, bs, is_first_step=first, **args)

    def _single(self, param, grad, lr, momentum, dampening, weight_decay, nesterov):
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        if momentum != 0:
            state = self.state[param]
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = grad.detach().clone()
                state["momentum_buffer"] = buf
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - dampening)
            grad = grad.add(buf, alpha=momentum) if nesterov else buf
        param.add_(grad, alpha=-lr)
