// Pointwise ops, each declared once in pointwise_list.h: the lists there produce the op objects, their CPU
// kernels (pointwise_*.cpp) and their Python bindings (python/bind_pointwise.cpp).
#pragma once
#include "../core/dispatch.h"
#include "pointwise_list.h"

namespace fl {

enum class BinaryOp : int8_t {
#define FL_X(name, rule, expr, ...) name,
  FL_BINARY_OPS(FL_X)
#undef FL_X
};
enum class UnaryOp : int8_t {
#define FL_X(name, rule, expr, ...) name,
  FL_UNARY_OPS(FL_X)
#undef FL_X
};

// `out` may be null (a new tensor is returned) or a tensor to write into (resized if empty or
// of another shape, as PyTorch's out=); in-place ops pass `out == a`.
Tensor binary_op(BinaryOp op, const Tensor& a, const Tensor& b, Scalar alpha, const Tensor& out);
Tensor unary_op(UnaryOp op, const Tensor& a, const Tensor& out);
const char* binary_op_name(BinaryOp op);
const char* unary_op_name(UnaryOp op);

// dtype/shape checks shared by out= and in-place forms: `out` must hold `result`'s dtype.
void check_can_cast(ScalarType from, ScalarType to, const char* op);
bool can_cast(ScalarType from, ScalarType to);
// Resizes `out` to `sizes` when it is empty or has another shape (PyTorch's out= rule).
void resize_out(const Tensor& out, const IntList& sizes, const char* op);

}  // namespace fl

#define FL_X(name, rule, expr, ...) \
  FL_DECLARE_OP(name, ::fl::Tensor(const ::fl::Tensor&, const ::fl::Tensor&, ::fl::Scalar, const ::fl::Tensor&))
FL_BINARY_OPS(FL_X)
#undef FL_X
#define FL_X(name, rule, expr, ...) \
  FL_DECLARE_OP(name, ::fl::Tensor(const ::fl::Tensor&, const ::fl::Tensor&))
FL_UNARY_OPS(FL_X)
#undef FL_X
