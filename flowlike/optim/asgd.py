"""ASGD (torch.optim.ASGD)."""
from .. import _C, _creation
from .. import _dtype as D
from .._tensor import Tensor
from .optimizer import Optimizer, _step_tensor, _to_scalar, _use_grad

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """Averaged stochastic gradient descent: SGD with a decaying step eta = lr / (1 + lambd * lr * t) ** alpha, and
    a running average `ax` of the parameters that starts averaging after t0 steps."""

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None, maximize=False,
                 differentiable=False, capturable=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    @_use_grad
    def step(self, closure=None):
        """One ASGD step; returns closure() if given."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, lambd, alpha, t0 = _to_scalar(group["lr"]), group["lambd"], group["alpha"], group["t0"]
            for param in group["params"]:
                if param.grad is None:
                    continue
                state = self.state[param]
                if len(state) == 0:
                    # eta and mu are 0-d tensors of torch's scalar dtype (their rounding shapes the trajectory)
                    scalar_dtype = D.float64 if D.get_default_dtype() == D.float64 else D.float32
                    state["step"] = _step_tensor()
                    state["eta"] = _C._scalar_tensor(float(lr), scalar_dtype)
                    state["mu"] = _C._scalar_tensor(1.0, scalar_dtype)
                    state["ax"] = _creation.zeros_like(param)
                grad = -param.grad if group["maximize"] else param.grad
                mu, ax, eta = state["mu"], state["ax"], state["eta"]
                state["step"] += 1
                if group["weight_decay"] != 0:
                    grad = grad.add(param, alpha=group["weight_decay"])
                eta_value = eta.item()
                param.mul_(1 - lambd * eta_value)
                param.add_(grad, alpha=-eta_value)
                if mu.item() != 1:
                    ax.add_(param.sub(ax).mul_(mu))
                else:
                    ax.copy_(param)
                step = state["step"].item()
                # as torch: the new values pass through a tensor of the default dtype (float32-rounded by default)
                eta.copy_(_creation.as_tensor(lr / ((1 + lambd * lr * step) ** alpha)))
                mu.copy_(_creation.as_tensor(1 / max(1, step - t0)))
        return loss
