"""F.linear and F.bilinear on the matrix-product primitives (one GEMM with the bias fused for 2-D input)."""
from .. import _C
from .._linalg_products import einsum

__all__ = ["linear", "bilinear"]


def linear(input, weight, bias=None):
    """input @ weight.T + bias, for input (*, in_features), weight (out_features, in_features), bias (out_features)."""
    if input.dim() == 2 and bias is not None and bias.dim() <= 1:
        return _C._addmm(bias, input, weight.t(), 1, 1)  # bias added inside the GEMM (beta=1)
    if input.dim() == 0 or weight.dim() not in (1, 2):
        raise RuntimeError(f"linear(): input and weight must be at least 1-D and weight at most 2-D, got {input.dim()}-D "
                           f"input and {weight.dim()}-D weight")
    out = _C._matmul(input, weight.t() if weight.dim() == 2 else weight)
    return out if bias is None else out + bias


def bilinear(input1, input2, weight, bias=None):
    """y_k = x1 @ weight[k] @ x2 + bias_k, for weight (out, in1, in2) and inputs (*, in1), (*, in2)."""
    if weight.dim() != 3:
        raise RuntimeError(f"bilinear(): weight must be 3-dimensional, got {weight.dim()} dimensions")
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got {tuple(input1.shape[:-1])} and "
                           f"{tuple(input2.shape[:-1])}")
    if input1.shape[-1] != weight.shape[1] or input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input sizes {input1.shape[-1]}, {input2.shape[-1]} do not match weight "
                           f"{tuple(weight.shape)}")
    out = einsum("...i,kij,...j->...k", input1, weight, input2)
    return out if bias is None else out + bias
