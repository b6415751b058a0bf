"""The nn ops PyTorch also exposes in the torch namespace and as Tensor methods (softmax,
log_softmax, relu, selu, layer_norm, ...), defined once in flowlike/nn/_functional_*.py."""
from . import _C
from ._tensor import Tensor
from .nn import _functional_activation as _A
from .nn import _functional_norm as _N

__all__ = ["softmax", "log_softmax", "relu", "relu_", "selu", "selu_", "celu", "celu_", "rrelu", "rrelu_", "prelu",
           "hardshrink", "threshold", "threshold_", "layer_norm", "rms_norm", "group_norm", "batch_norm",
           "instance_norm"]


def softmax(input, dim, dtype=None):
    """softmax along dim (torch.softmax: dim is required)."""
    return _C._softmax(input, dim, dtype)


def log_softmax(input, dim, dtype=None):
    """log_softmax along dim (torch.log_softmax: dim is required)."""
    return _C._log_softmax(input, dim, dtype)


relu, relu_, selu, selu_, celu, celu_ = _A.relu, _A.relu_, _A.selu, _A.selu_, _A.celu, _A.celu_
rrelu, rrelu_, prelu, hardshrink, threshold, threshold_ = (_A.rrelu, _A.rrelu_, _A.prelu, _A.hardshrink, _A.threshold,
                                                           _A.threshold_)
rms_norm = _N.rms_norm


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    """torch.layer_norm: see nn.functional.layer_norm."""
    return _N.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    """torch.group_norm: see nn.functional.group_norm."""
    return _N.group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    """torch.batch_norm (ATen argument order): see nn.functional.batch_norm."""
    return _N.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled):
    """torch.instance_norm (ATen argument order): see nn.functional.instance_norm."""
    return _N.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def _softmax_method(self, dim, dtype=None):
    """Tensor.softmax(dim, dtype=None)."""
    return _C._softmax(self, dim, dtype)


def _log_softmax_method(self, dim, dtype=None):
    """Tensor.log_softmax(dim, dtype=None)."""
    return _C._log_softmax(self, dim, dtype)


for _name, _fn in (("softmax", _softmax_method), ("log_softmax", _log_softmax_method), ("relu", _A.relu),
                   ("relu_", _A.relu_), ("hardshrink", _A.hardshrink), ("prelu", _A.prelu)):
    setattr(Tensor, _name, _fn)
