"""Adam (torch.optim.Adam); AdamW is Adam with decoupled weight decay."""
from .. import _C, _creation
from .optimizer import Optimizer, _check_range, _fused_step, _get_value, _step_tensor, _to_scalar, _use_grad

__all__ = ["Adam"]


def _decay_and_moments(param, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, weight_decay, decoupled_weight_decay):
    """The Adam family's shared part of one per-parameter step: weight decay (decoupled: shrink the parameter;
    else: add to the gradient), then the two moment averages. Returns the gradient used."""
    if weight_decay != 0:
        if decoupled_weight_decay:
            param.mul_(1 - lr * weight_decay)
        else:
            grad = grad.add(param, alpha=weight_decay)
    exp_avg.lerp_(grad, 1 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    return grad


def _check_adam_args(lr, eps, betas, weight_decay):
    _check_range("learning rate", lr)
    _check_range("epsilon", eps, text=f"Invalid epsilon value: {eps}")
    _check_range("beta", betas[0], high=1.0, text=f"Invalid beta parameter at index 0: {betas[0]}")
    _check_range("beta", betas[1], high=1.0, text=f"Invalid beta parameter at index 1: {betas[1]}")
    _check_range("weight_decay", weight_decay, text=f"Invalid weight_decay value: {weight_decay}")


class Adam(Optimizer):
    """Adam, with amsgrad, maximize, L2 or decoupled weight decay (capturable/foreach/fused are accepted)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False, fused=None, decoupled_weight_decay=False):
        _check_adam_args(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            for k, v in (("amsgrad", False), ("maximize", False), ("foreach", None), ("capturable", False),
                         ("differentiable", False), ("fused", None), ("decoupled_weight_decay", False)):
                group.setdefault(k, v)

    def _init_state(self, param, amsgrad):
        state = self.state[param]
        if len(state) == 0:
            state["step"] = _step_tensor()
            state["exp_avg"] = _creation.zeros_like(param)
            state["exp_avg_sq"] = _creation.zeros_like(param)
            if amsgrad:
                state["max_exp_avg_sq"] = _creation.zeros_like(param)
        return state

    @_use_grad
    def step(self, closure=None):
        """One Adam step (a fused C++ update per param group for dense float tensors); returns closure() if given."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            beta1, beta2 = (_to_scalar(b) for b in group["betas"])
            hyper = dict(lr=_to_scalar(group["lr"]), beta1=beta1, beta2=beta2, weight_decay=group["weight_decay"],
                         eps=group["eps"], amsgrad=group["amsgrad"], maximize=group["maximize"],
                         decoupled_weight_decay=group["decoupled_weight_decay"])
            amsgrad = hyper["amsgrad"]
            keys = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq" if amsgrad else None, "step")
            _fused_step(group, _C._fused_adam_, keys, lambda p: self._init_state(p, amsgrad), self._single, hyper)
        return loss

    def _single(self, param, grad, lr, beta1, beta2, weight_decay, eps, amsgrad, maximize, decoupled_weight_decay):
        state = self._init_state(param, amsgrad)
        exp_avg, exp_avg_sq, step_t = state["exp_avg"], state["exp_avg_sq"], state["step"]
        step_t += 1
        _decay_and_moments(param, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, weight_decay, decoupled_weight_decay)
        step = _get_value(step_t)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        step_size = lr / bias_correction1
        bias_correction2_sqrt = bias_correction2 ** 0.5
        if amsgrad:
            max_sq = state["max_exp_avg_sq"]
            max_sq.copy_(max_sq.maximum(exp_avg_sq))
            denom = (max_sq.sqrt() / bias_correction2_sqrt).add_(eps)
        else:
            denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
        param.addcdiv_(exp_avg, denom, value=-step_size)
