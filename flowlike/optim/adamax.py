"""Adamax (torch.optim.Adamax): Adam with the infinity norm."""
from .. import _creation
from .adam import _check_adam_args
from .optimizer import Optimizer, _get_value, _grads_of, _step_tensor, _to_scalar, _use_grad

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Adamax with weight decay and maximize."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *, maximize=False,
                 differentiable=False, capturable=False):
        _check_adam_args(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    @_use_grad
    def step(self, closure=None):
        """One Adamax step; returns closure() when given."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps, weight_decay = _to_scalar(group["lr"]), group["eps"], group["weight_decay"]
            for param, grad in _grads_of(group, group["maximize"]):
                state = self.state[param]
                if len(state) == 0:
                    state["step"] = _step_tensor()
                    state["exp_avg"] = _creation.zeros_like(param)
                    state["exp_inf"] = _creation.zeros_like(param)
                step_t = state["step"]
                step_t += 1
                if weight_decay != 0:
                    grad = grad.add(param, alpha=weight_decay)
                exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
                exp_avg.lerp_(grad, 1 - beta1)
                exp_inf.copy_(exp_inf.mul_(beta2).maximum(grad.abs().add_(eps)))
                clr = lr / (1 - beta1 ** _get_value(step_t))
                param.addcdiv_(exp_avg, exp_inf, value=-clr)
        return loss
