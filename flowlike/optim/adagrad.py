"""Adagrad (torch.optim.Adagrad)."""
from .. import _C, _creation
from .optimizer import Optimizer, _check_range, _fused_step, _get_value, _step_tensor, _to_scalar, _use_grad

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad with learning-rate decay, weight decay and maximize; state is created at construction, as torch."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check_range("learning rate", lr)
        _check_range("lr_decay", lr_decay, text=f"Invalid lr_decay value: {lr_decay}")
        _check_range("weight_decay", weight_decay, text=f"Invalid weight_decay value: {weight_decay}")
        _check_range("initial_accumulator_value", initial_accumulator_value,
                     text=f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        _check_range("epsilon", eps, text=f"Invalid epsilon value: {eps}")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = _step_tensor()
                state["sum"] = _creation.full_like(p, group["initial_accumulator_value"])

    @_use_grad
    def step(self, closure=None):
        """One Adagrad step (a fused C++ update per param group for dense float tensors); returns closure() if given."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            hyper = dict(lr=_to_scalar(group["lr"]), lr_decay=group["lr_decay"], weight_decay=group["weight_decay"],
                         eps=group["eps"], maximize=group["maximize"])
            _fused_step(group, _C._fused_adagrad_, ("sum", "step"), lambda p: self.state[p], self._single, hyper)
        return loss

    def _single(self, param, grad, lr, lr_decay, weight_decay, eps, maximize):
        state = self.state[param]
        step_t = state["step"]
        step_t += 1
        step = _get_value(step_t)
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        clr = lr / (1 + (step - 1) * lr_decay)
        state_sum = state["sum"]
        state_sum.addcmul_(grad, grad, value=1)
        std = state_sum.sqrt().add_(eps)
        param.addcdiv_(grad, std, value=-clr)
