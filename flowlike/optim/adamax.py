"""Adamax (torch.optim.Adamax): Adam with the infinity norm."""
from .. import _C, _creation
from .adam import _check_adam_args
from .optimizer import Optimizer, _fused_step, _get_value, _step_tensor, _to_scalar, _use_grad

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Adamax with weight decay and maximize."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *, maximize=False,
                 differentiable=False, capturable=False):
        _check_adam_args(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _init_state(self, param):
        state = self.state[param]
        if len(state) == 0:
            state["step"] = _step_tensor()
            state["exp_avg"] = _creation.zeros_like(param)
            state["exp_inf"] = _creation.zeros_like(param)
        return state

    @_use_grad
    def step(self, closure=None):
        """One Adamax step (a fused C++ update per param group for dense float tensors); returns closure() if given."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            beta1, beta2 = (_to_scalar(b) for b in group["betas"])
            hyper = dict(lr=_to_scalar(group["lr"]), beta1=beta1, beta2=beta2, eps=group["eps"],
                         weight_decay=group["weight_decay"], maximize=group["maximize"])
            _fused_step(group, _C._fused_adamax_, ("exp_avg", "exp_inf", "step"), self._init_state, self._single,
                        hyper)
        return loss

    def _single(self, param, grad, lr, beta1, beta2, eps, weight_decay, maximize):
        state = self._init_state(param)
        step_t = state["step"]
        step_t += 1
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
        exp_avg.lerp_(grad, 1 - beta1)
        exp_inf.copy_(exp_inf.mul_(beta2).maximum(grad.abs().add_(eps)))
        clr = lr / (1 - beta1 ** _get_value(step_t))
        param.addcdiv_(exp_avg, exp_inf, value=-clr)
