"""torch._scaled_mm as torch's CPU build runs it: float8 matrices widened to float32, scaled per tensor or per
row/column, multiplied with float32 accumulation, then cast to the output dtype."""
from . import _dtype as D

__all__ = ["_scaled_mm"]


def _is_float8(t):
    return t.dtype in D.FLOAT8_DTYPES


def _check_scales(mat_a, mat_b, scale_a, scale_b):
    """torch's accepted scalings: TensorWise (one float32 scale each) or RowWise (float32 scales of shapes (m, 1)
    and (1, n), contiguous); anything else is its ValueError."""
    m, n = mat_a.shape[0], mat_b.shape[1]
    floats = scale_a.dtype == D.float32 and scale_b.dtype == D.float32
    tensorwise = scale_a.numel() == 1 and scale_b.numel() == 1
    rowwise = (tuple(scale_a.shape) == (m, 1) and tuple(scale_b.shape) == (1, n) and scale_a.is_contiguous()
               and scale_b.is_contiguous())
    if _is_float8(mat_a) and _is_float8(mat_b) and floats and (tensorwise or rowwise):
        return

    def name(t):
        return D.c10_name(t.dtype)
    raise ValueError(
        "Invalid scaling configuration.\n- For TensorWise scaling, a and b should be float8, scales should be float "
        "and singletons.\n- For RowWise scaling, a and b should be float8, scales should be float, scale_a should be "
        f"({m}, 1) and scale_b should be (1, {n}), and both should be contiguous.\nGot mat_a.dtype()={name(mat_a)}, "
        f"scale_a.dtype()={name(scale_a)}, scale_a.size()={list(scale_a.shape)}, "
        f"scale_a.stride()={list(scale_a.stride())}, mat_b.dtype()={name(mat_b)}, scale_b.dtype()={name(scale_b)}, "
        f"scale_b.size()={list(scale_b.shape)} and scale_b.stride()={list(scale_b.stride())}")


def _scaled_mm(input, mat2, scale_a, scale_b, bias=None, scale_result=None, out_dtype=None, use_fast_accum=False):
    """(input * scale_a) @ (mat2 * scale_b) (+ bias) for float8 matrices, as torch._scaled_mm on the CPU: the
    product accumulates in float32; scale_result divides the result when out_dtype is e4m3fn or e5m2;
    out_dtype defaults to input's dtype. use_fast_accum changes nothing on the CPU."""
    if input.dim() != 2:
        raise RuntimeError("mat1 must be a matrix")
    if mat2.dim() != 2:
        raise RuntimeError("mat2 must be a matrix")
    if input.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat_a and mat_b shapes cannot be multiplied ({input.shape[0]}x{input.shape[1]} and "
                           f"{mat2.shape[0]}x{mat2.shape[1]})")
    _check_scales(input, mat2, scale_a, scale_b)
    n = mat2.shape[1]
    if bias is not None and bias.numel() != n:
        raise RuntimeError(f"Bias must be size {n} but got {bias.numel()}")
    out_dtype = input.dtype if out_dtype is None else out_dtype
    out = (input.detach().float() * scale_a) @ (mat2.detach().float() * scale_b)
    if bias is not None:
        out = out + bias.float()
    if scale_result is not None and out_dtype in (D.float8_e4m3fn, D.float8_e5m2):
        out = out * (1 / scale_result.float())
    return out.to(out_dtype)
