// Dense float32 kernels for the unary ops whose libm calls GCC cannot vectorize (exp, tanh, sigmoid,
// erf): written over fl::vmath and compiled for AVX-512, AVX2 and the baseline, picked at load
// time. pointwise_unary.cpp routes contiguous float32 tensors here.
#pragma once
#include <cstdint>

#include "pointwise.h"

namespace fl {

// Whether op has a dense float32 kernel.
bool has_unary_dense_f32(UnaryOp op);
// out[i] = op(in[i]) for i < n (out may be in), for an op with a dense kernel.
void unary_dense_f32(UnaryOp op, float* out, const float* in, int64_t n);

}  // namespace fl
