"""NAdam (torch.optim.NAdam): Adam with Nesterov momentum."""
from .. import _creation, _dtype as D
from .adam import _check_adam_args
from .optimizer import Optimizer, _get_value, _grads_of, _step_tensor, _to_scalar, _use_grad

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """NAdam with momentum decay, L2 or decoupled weight decay, and maximize."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False, differentiable=False):
        _check_adam_args(lr, eps, betas, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    @_use_grad
    def step(self, closure=None):
        """One NAdam step; returns closure() when given."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps, weight_decay = _to_scalar(group["lr"]), group["eps"], group["weight_decay"]
            momentum_decay, decoupled = group["momentum_decay"], group["decoupled_weight_decay"]
            for param, grad in _grads_of(group, group["maximize"]):
                state = self.state[param]
                if len(state) == 0:
                    state["step"] = _step_tensor()
                    # mu_product is a float32 tensor in torch: its rounding is part of the trajectory.
                    state["mu_product"] = _creation.ones((), dtype=D.float32)
                    state["exp_avg"] = _creation.zeros_like(param)
                    state["exp_avg_sq"] = _creation.zeros_like(param)
                step_t, mu_product = state["step"], state["mu_product"]
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                step_t += 1
                step = _get_value(step_t)
                bias_correction2 = 1 - beta2 ** step
                if weight_decay != 0:
                    if decoupled:
                        param.mul_(1 - lr * weight_decay)
                    else:
                        grad = grad.add(param, alpha=weight_decay)
                mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
                mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
                mu_product *= mu
                exp_avg.lerp_(grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                denom = exp_avg_sq.div(bias_correction2).sqrt()
                mu_product_value = _get_value(mu_product)
                mu_product_next = mu_product_value * mu_next
                denom.add_(eps)
                param.addcdiv_(grad, denom, value=(-lr * (1.0 - mu) / (1.0 - mu_product_value)))
                param.addcdiv_(exp_avg, denom, value=(-lr * mu_next) / (1.0 - mu_product_next))
        return loss
