// Matrix products. The primitives are mm, bmm, addmm and baddbmm (GEMM through csrc/kernels/blas.h,
// float16/bfloat16 accumulated in float32); matmul is their composite with torch.matmul's
// dimension rules, written once here in terms of views and the primitives. The other products
// (mv, dot, outer, einsum, tensordot, ...) are Python composites in flowlike/_linalg_products.py.
#pragma once
#include "../core/dispatch.h"

FL_DECLARE_OP(mm, ::fl::Tensor(const ::fl::Tensor&, const ::fl::Tensor&))
FL_DECLARE_OP(bmm, ::fl::Tensor(const ::fl::Tensor&, const ::fl::Tensor&))
// addmm(self, mat1, mat2, beta, alpha) = beta * self + alpha * mat1 @ mat2 (self broadcasts)
FL_DECLARE_OP(addmm, ::fl::Tensor(const ::fl::Tensor&, const ::fl::Tensor&, const ::fl::Tensor&, ::fl::Scalar, ::fl::Scalar))
// _addmm_activation(self, mat1, mat2, beta, alpha, use_gelu) = relu, or gelu when use_gelu, of addmm (as
// torch._addmm_activation): the activation fused into the GEMM's stores for float32. Linear + activation
// is _addmm_activation(bias, x, weight.t()).
FL_DECLARE_OP(_addmm_activation, ::fl::Tensor(const ::fl::Tensor&, const ::fl::Tensor&, const ::fl::Tensor&, ::fl::Scalar,
                                              ::fl::Scalar, bool))
FL_DECLARE_OP(baddbmm, ::fl::Tensor(const ::fl::Tensor&, const ::fl::Tensor&, const ::fl::Tensor&, ::fl::Scalar, ::fl::Scalar))

namespace fl::ops {
// torch.matmul: dot, mv, mm, broadcast bmm by the operands' ranks.
Tensor matmul(const Tensor& a, const Tensor& b);
}  // namespace fl::ops
