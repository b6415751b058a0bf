"""RAdam (torch.optim.RAdam): Adam with a rectified adaptive learning rate."""
from .. import _C, _creation
from .adam import _check_adam_args, _decay_and_moments
from .optimizer import Optimizer, _fused_step, _get_value, _step_tensor, _to_scalar, _use_grad

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """RAdam with L2 or decoupled weight decay and maximize."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False):
        _check_adam_args(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _init_state(self, param):
        state = self.state[param]
        if len(state) == 0:
            state["step"] = _step_tensor()
            state["exp_avg"] = _creation.zeros_like(param)
            state["exp_avg_sq"] = _creation.zeros_like(param)
        return state

    @_use_grad
    def step(self, closure=None):
        """One RAdam step (a fused C++ update per param group for dense float tensors); returns closure() if given."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            beta1, beta2 = (_to_scalar(b) for b in group["betas"])
            hyper = dict(lr=_to_scalar(group["lr"]), beta1=beta1, beta2=beta2, eps=group["eps"],
                         weight_decay=group["weight_decay"], decoupled_weight_decay=group["decoupled_weight_decay"],
                         maximize=group["maximize"])
            _fused_step(group, _C._fused_radam_, ("exp_avg", "exp_avg_sq", "step"), self._init_state, self._single,
                        hyper)
        return loss

    def _single(self, param, grad, lr, beta1, beta2, eps, weight_decay, decoupled_weight_decay, maximize):
        state = self._init_state(param)
        exp_avg, exp_avg_sq, step_t = state["exp_avg"], state["exp_avg_sq"], state["step"]
        step_t += 1
        step = _get_value(step_t)
        _decay_and_moments(param, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, weight_decay, decoupled_weight_decay)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        bias_corrected_exp_avg = exp_avg / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            adaptive_lr = (bias_correction2 ** 0.5) / exp_avg_sq.sqrt().add_(eps)
            param.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
        else:
            param.add_(bias_corrected_exp_avg * lr, alpha=-1.0)
