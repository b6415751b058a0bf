"""NAdam (torch.optim.NAdam): Adam with Nesterov momentum."""
from .. import _C, _creation, _dtype as D
from .adam import _check_adam_args, _decay_and_moments
from .optimizer import Optimizer, _fused_step, _get_value, _step_tensor, _to_scalar, _use_grad

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

    def _init_state(self, param):
        state = self.state[param]
        if len(state) == 0:
            state["step"] = _step_tensor()
            # mu_product is a float32 tensor in torch: its rounding is part of the trajectory.
            state["mu_product"] = _creation.ones((), dtype=D.float32)
            state["exp_avg"] = _creation.zeros_like(param)
            state["exp_avg_sq"] = _creation.zeros_like(param)
        return state

    @_use_grad
    def step(self, closure=None):
        """One NAdam step (a fused C++ update per param group for dense float tensors); returns closure() if given."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            beta1, beta2 = (_to_scalar(b) for b in group["betas"])
            hyper = dict(lr=_to_scalar(group["lr"]), beta1=beta1, beta2=beta2, eps=group["eps"],
                         weight_decay=group["weight_decay"], momentum_decay=group["momentum_decay"],
                         decoupled_weight_decay=group["decoupled_weight_decay"], maximize=group["maximize"])
            _fused_step(group, _C._fused_nadam_, ("exp_avg", "exp_avg_sq", "mu_product", "step"), self._init_state,
                        self._single, hyper)
        return loss

    def _single(self, param, grad, lr, beta1, beta2, eps, weight_decay, momentum_decay, decoupled_weight_decay,
                maximize):
        state = self._init_state(param)
        step_t, mu_product = state["step"], state["mu_product"]
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        step_t += 1
        step = _get_value(step_t)
        bias_correction2 = 1 - beta2 ** step
        grad = _decay_and_moments(param, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, weight_decay,
                                  decoupled_weight_decay)
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        mu_product *= mu
        denom = exp_avg_sq.div(bias_correction2).sqrt()
        mu_product_value = _get_value(mu_product)
        mu_product_next = mu_product_value * mu_next
        denom.add_(eps)
        param.addcdiv_(grad, denom, value=(-lr * (1.0 - mu) / (1.0 - mu_product_value)))
        param.addcdiv_(exp_avg, denom, value=(-lr * mu_next) / (1.0 - mu_product_next))
