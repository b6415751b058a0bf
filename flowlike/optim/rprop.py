"""Rprop (torch.optim.Rprop)."""
from .. import _creation
from .._tensor import Tensor
from .optimizer import Optimizer, _step_tensor, _to_scalar, _use_grad

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """The resilient backpropagation algorithm: per-element step sizes grown by etas[1] while the gradient keeps its
    sign and shrunk by etas[0] when it flips (then that element skips its update), within step_sizes."""

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    @_use_grad
    def step(self, closure=None):
        """One Rprop step; returns closure() if given."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            etaminus, etaplus = group["etas"]
            step_size_min, step_size_max = group["step_sizes"]
            for param in group["params"]:
                if param.grad is None:
                    continue
                state = self.state[param]
                if len(state) == 0:
                    state["step"] = _step_tensor()
                    state["prev"] = _creation.zeros_like(param)
                    state["step_size"] = _creation.full_like(param.grad, _to_scalar(group["lr"]))
                grad = -param.grad if group["maximize"] else param.grad
                prev, step_size = state["prev"], state["step_size"]
                state["step"] += 1
                sign = grad.mul(prev.clone() if group["differentiable"] else prev).sign()
                flipped = sign.lt(0)
                factor = sign.masked_fill(sign.gt(0), etaplus).masked_fill(flipped, etaminus).masked_fill(sign.eq(0), 1)
                step_size.mul_(factor).clamp_(step_size_min, step_size_max)
                # an element whose gradient flipped sign skips this update and forgets its gradient
                grad = grad.masked_fill(flipped, 0)
                param.addcmul_(grad.sign(), step_size, value=-1)
                prev.copy_(grad)
        return loss
