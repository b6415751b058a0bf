"""Adadelta (torch.optim.Adadelta)."""
from .. import _C, _creation
from .optimizer import Optimizer, _check_range, _fused_step, _step_tensor, _to_scalar, _use_grad

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Adadelta with weight decay and maximize."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        _check_range("learning rate", lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _check_range("epsilon", eps, text=f"Invalid epsilon value: {eps}")
        _check_range("weight_decay", weight_decay, text=f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize, capturable=capturable,
                        foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def _init_state(self, param):
        state = self.state[param]
        if len(state) == 0:
            state["step"] = _step_tensor()
            state["square_avg"] = _creation.zeros_like(param)
            state["acc_delta"] = _creation.zeros_like(param)
        return state

    @_use_grad
    def step(self, closure=None):
        """One Adadelta step (a fused C++ update per param group for dense float tensors); returns closure() if
        given."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            hyper = dict(lr=_to_scalar(group["lr"]), rho=group["rho"], eps=group["eps"],
                         weight_decay=group["weight_decay"], maximize=group["maximize"])
            _fused_step(group, _C._fused_adadelta_, ("square_avg", "acc_delta", "step"), self._init_state,
                        self._single, hyper)
        return loss

    def _single(self, param, grad, lr, rho, eps, weight_decay, maximize):
        state = self._init_state(param)
        state["step"] += 1
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_()
        delta.div_(std).mul_(grad)
        acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
        param.add_(delta, alpha=-lr)
