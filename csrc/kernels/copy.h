// Kernels of the copy and fill ops (ops/tensor_ops.h). Everything else calls the ops: fl::copy_into, fl::fill.
#pragma once
#include "../core/tensor.h"

namespace fl {
// Copies src into dst (broadcasting src, converting dtype). Does not bump versions.
void copy_kernel(const Tensor& dst, const Tensor& src);
void fill_kernel(const Tensor& t, Scalar value);
// torch's error for a complex number with an imaginary part meeting a real dtype (Scalar::to<T> in c10).
void check_fits(const Scalar& value, ScalarType dtype);
// fill_'s check of its value (check_fits, and c10's range check for the float8 types).
void check_fill_value(const Scalar& value, ScalarType dtype);
// dst += src element by element, in order: dst may be a view whose elements share memory (each one then
// receives the sum of everything written to it).
void accumulate_kernel(const Tensor& dst, const Tensor& src);
}  // namespace fl
