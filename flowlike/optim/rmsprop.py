"""RMSprop (torch.optim.RMSprop)."""
from .. import _C, _creation
from .optimizer import Optimizer, _check_range, _fused_step, _step_tensor, _to_scalar, _use_grad

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop with optional momentum, centering, weight decay and maximize."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_range("learning rate", lr)
        _check_range("epsilon", eps, text=f"Invalid epsilon value: {eps}")
        _check_range("momentum", momentum, text=f"Invalid momentum value: {momentum}")
        _check_range("weight_decay", weight_decay, text=f"Invalid weight_decay value: {weight_decay}")
        _check_range("alpha", alpha, text=f"Invalid alpha value: {alpha}")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered, weight_decay=weight_decay,
                        capturable=capturable, foreach=foreach, maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def _init_state(self, param, momentum, centered):
        state = self.state[param]
        if len(state) == 0:
            state["step"] = _step_tensor()
            state["square_avg"] = _creation.zeros_like(param)
            if momentum > 0:
                state["momentum_buffer"] = _creation.zeros_like(param)
            if centered:
                state["grad_avg"] = _creation.zeros_like(param)
        return state

    @_use_grad
    def step(self, closure=None):
        """One RMSprop step (a fused C++ update per param group for dense float tensors); returns closure() if given."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            momentum, centered = group["momentum"], group["centered"]
            hyper = dict(lr=_to_scalar(group["lr"]), alpha=group["alpha"], eps=group["eps"],
                         weight_decay=group["weight_decay"], momentum=momentum, centered=centered,
                         maximize=group["maximize"])
            keys = ("square_avg", "grad_avg" if centered else None, "momentum_buffer" if momentum > 0 else None, "step")
            _fused_step(group, _C._fused_rmsprop_, keys, lambda p: self._init_state(p, momentum, centered),
                        self._single, hyper)
        return loss

    def _single(self, param, grad, lr, alpha, eps, weight_decay, momentum, centered, maximize):
        state = self._init_state(param, momentum, centered)
        state["step"] += 1
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        square_avg = state["square_avg"]
        square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
        if centered:
            grad_avg = state["grad_avg"]
            grad_avg.lerp_(grad, 1 - alpha)
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
        else:
            avg = square_avg.sqrt()
        avg = avg.add_(eps)
        if momentum > 0:
            buf = state["momentum_buffer"]
            buf.mul_(momentum).addcdiv_(grad, avg)
            param.add_(buf, alpha=-lr)
        else:
            param.addcdiv_(grad, avg, value=-lr)
