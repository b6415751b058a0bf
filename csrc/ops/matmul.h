// Matrix products. The primitives are mm, bmm, addmm and baddbmm (GEMM through csrc/kernels/blas.h,
// float16/bfloat16 accumulated in float32); matmul is their composite with torch.matmul's
// dimension rules, written once here in terms of views and the primitives. The other products
// (mv, dot, outer, einsum, tensordot, ...) are Python composites in flowlike/_linalg_products.py.
#pragma once
#include "../core/dispatch.h"

// The ops declared in matmul.yaml (generated: csrc/ops/gen_ops.py).
#include "fl_generated/matmul.h"

namespace fl::ops {
// torch.matmul: dot, mv, mm, broadcast bmm by the operands' ranks.
Tensor matmul(const Tensor& a, const Tensor& b);
}  // namespace fl::ops
