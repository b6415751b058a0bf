"""F.linear and F.bilinear on the matrix-product primitives (one GEMM with the bias fused for input of 2 or more
dims)."""
import math

from .. import _C
from .. import _autocast

__all__ = ["linear", "bilinear"]


@_autocast.lower_precision
def linear(input, weight, bias=None):
    """input @ weight.T + bias, for input (*, in_features), weight (out_features, in_features), bias (out_features)."""
    if input.dim() == 2 and bias is not None and bias.dim() <= 1:
        return _C._addmm(bias, input, weight.t())  # bias added inside the GEMM (beta=1)
    if input.dim() >= 3 and bias is not None and bias.dim() <= 1 and weight.dim() == 2:
        # one addmm on the (N, K) rows, the bias inside the GEMM (torch does this for a contiguous 3-D input; a
        # strided one is copied once here, as matmul's folding of it would be, instead of a matmul then an add)
        lead = input.shape[:-1]
        flat = input.reshape(math.prod(lead), input.shape[-1])
        return _C._addmm(bias, flat, weight.t()).view(*lead, weight.shape[0])
    if input.dim() == 0 or weight.dim() not in (1, 2):
        raise RuntimeError(f"linear(): input and weight must be at least 1-D and weight at most 2-D, got {input.dim()}-D "
                           f"input and {weight.dim()}-D weight")
    out = _C._matmul(input, weight.t() if weight.dim() == 2 else weight)
    return out if bias is None else out + bias


def bilinear(input1, input2, weight, bias=None):
    """y_k = x1 @ weight[k] @ x2 + bias_k, for weight (out, in1, in2) and inputs (*, in1), (*, in2): one GEMM
    x1 @ W (*, out, in2), then a dot with x2."""
    if weight.dim() != 3:
        raise RuntimeError(f"bilinear(): weight must be 3-dimensional, got {weight.dim()} dimensions")
    out_features, in1, in2 = weight.shape
    if input1.shape[-1] != in1 or input2.shape[-1] != in2:
        raise RuntimeError(f"bilinear(): input sizes {tuple(input1.shape)} and {tuple(input2.shape)} do not match "
                           f"weight size {tuple(weight.shape)}")
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got {tuple(input1.shape[:-1])} and "
                           f"{tuple(input2.shape[:-1])}")
    lead = input1.shape[:-1]
    t = _C._matmul(input1.reshape(-1, in1), weight.permute(1, 0, 2).reshape(in1, out_features * in2))
    out = (t.reshape(-1, out_features, in2) * input2.reshape(-1, 1, in2)).sum(-1)
    if bias is not None:
        out = out + bias
    return out.reshape(*lead, out_features)
