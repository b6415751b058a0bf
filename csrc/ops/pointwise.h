// Pointwise ops, each declared once here: the lists below produce the op objects, their CPU
// kernels (pointwise_*.cpp) and their Python bindings (python/bind_pointwise.cpp).
#pragma once
#include "../core/dispatch.h"

namespace fl {

// Binary ops. Columns: name, result rule, expression over `a`, `b` (opmath values; `alpha`
// is the add/sub multiplier). Result rules:
//   ARITH  result_type(a, b)                 FLOAT  result_type, integers -> default float
//   CMP    compute in result_type, bool out  INT    integral (and bool) dtypes only
#define FL_BINARY_OPS(X)                                                          \
  X(add, ARITH, a + alpha * b)                                                    \
  X(sub, ARITH, a - alpha * b)                                                    \
  X(mul, ARITH, a * b)                                                            \
  X(div, FLOAT, a / b)                                                            \
  X(div_trunc, ARITH, div_trunc_impl(a, b))                                       \
  X(div_floor, ARITH, div_floor_impl(a, b))                                       \
  X(remainder, ARITH, remainder_impl(a, b))                                       \
  X(fmod, ARITH, fmod_impl(a, b))                                                 \
  X(pow, ARITH, pow_impl(a, b))                                                   \
  X(maximum, ARITH, max_propagate_nan(a, b))                                      \
  X(minimum, ARITH, min_propagate_nan(a, b))                                      \
  X(fmax, ARITH, fmax_impl(a, b))                                                 \
  X(fmin, ARITH, fmin_impl(a, b))                                                 \
  X(atan2, FLOAT, std::atan2(a, b))                                               \
  X(hypot, FLOAT, std::hypot(a, b))                                               \
  X(logaddexp, FLOAT, logaddexp_impl(a, b))                                       \
  X(logaddexp2, FLOAT, logaddexp2_impl(a, b))                                     \
  X(xlogy, FLOAT, xlogy_impl(a, b))                                               \
  X(copysign, FLOAT, std::copysign(a, b))                                         \
  X(nextafter, ARITH, std::nextafter(a, b))                                       \
  X(heaviside, ARITH, heaviside_impl(a, b))                                       \
  X(bitwise_and, INT, a & b)                                                      \
  X(bitwise_or, INT, a | b)                                                       \
  X(bitwise_xor, INT, a ^ b)                                                      \
  X(bitwise_left_shift, INT, shift_left_impl(a, b))                               \
  X(bitwise_right_shift, INT, shift_right_impl(a, b))                             \
  X(eq, CMP, a == b)                                                              \
  X(ne, CMP, a != b)                                                              \
  X(lt, CMP, a < b)                                                               \
  X(le, CMP, a <= b)                                                              \
  X(gt, CMP, a > b)                                                               \
  X(ge, CMP, a >= b)                                                              \
  X(logical_and, LOGICAL, (a != 0) && (b != 0))                                   \
  X(logical_or, LOGICAL, (a != 0) || (b != 0))                                    \
  X(logical_xor, LOGICAL, (a != 0) != (b != 0))

// Unary ops. Columns: name, result rule, expression over `x`. Result rules:
//   FLOAT  integers and bool -> default float   SAME  keeps the dtype
//   BOOL   bool out (predicates)                INT   integral (and bool) only
#define FL_UNARY_OPS(X)                                             \
  X(neg, SAME, -x)                                                  \
  X(abs, SAME, abs_impl(x))                                         \
  X(sign, SAME, sign_impl(x))                                       \
  X(square, SAME, x * x)                                            \
  X(exp, FLOAT, std::exp(x))                                        \
  X(exp2, FLOAT, std::exp2(x))                                      \
  X(expm1, FLOAT, std::expm1(x))                                    \
  X(log, FLOAT, std::log(x))                                        \
  X(log2, FLOAT, std::log2(x))                                      \
  X(log10, FLOAT, std::log10(x))                                    \
  X(log1p, FLOAT, std::log1p(x))                                    \
  X(sqrt, FLOAT, std::sqrt(x))                                      \
  X(rsqrt, FLOAT, 1 / std::sqrt(x))                                 \
  X(reciprocal, FLOAT, 1 / x)                                       \
  X(sin, FLOAT, std::sin(x))                                        \
  X(cos, FLOAT, std::cos(x))                                        \
  X(tan, FLOAT, std::tan(x))                                        \
  X(asin, FLOAT, std::asin(x))                                      \
  X(acos, FLOAT, std::acos(x))                                      \
  X(atan, FLOAT, std::atan(x))                                      \
  X(sinh, FLOAT, std::sinh(x))                                      \
  X(cosh, FLOAT, std::cosh(x))                                      \
  X(tanh, FLOAT, std::tanh(x))                                      \
  X(asinh, FLOAT, std::asinh(x))                                    \
  X(acosh, FLOAT, std::acosh(x))                                    \
  X(atanh, FLOAT, std::atanh(x))                                    \
  X(sigmoid, FLOAT, sigmoid_impl(x))                                \
  X(erf, FLOAT, std::erf(x))                                        \
  X(erfc, FLOAT, std::erfc(x))                                      \
  X(erfinv, FLOAT, erfinv_impl(x))                                  \
  X(lgamma, FLOAT, std::lgamma(x))                                  \
  X(digamma, FLOAT, digamma_impl(x))                                \
  X(floor, SAME, floor_impl(x))                                     \
  X(ceil, SAME, ceil_impl(x))                                       \
  X(trunc, SAME, trunc_impl(x))                                     \
  X(round, SAME, round_impl(x))                                     \
  X(frac, SAME, x - trunc_impl(x))                                  \
  X(bitwise_not, INT, bitwise_not_impl(x))                          \
  X(logical_not, BOOL, !(x != 0))                                   \
  X(isnan, BOOL, isnan_impl(x))                                     \
  X(isinf, BOOL, isinf_impl(x))                                     \
  X(isposinf, BOOL, isinf_impl(x) && x > 0)                         \
  X(isneginf, BOOL, isinf_impl(x) && x < 0)                         \
  X(isfinite, BOOL, !isnan_impl(x) && !isinf_impl(x))               \
  X(signbit, BOOL, signbit_impl(x))

enum class BinaryOp : int8_t {
#define FL_X(name, rule, expr) name,
  FL_BINARY_OPS(FL_X)
#undef FL_X
};
enum class UnaryOp : int8_t {
#define FL_X(name, rule, expr) name,
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
// The type names PyTorch's error messages use ("Float", "Long", ...).
const char* c10_type_name(ScalarType t);
// Resizes `out` to `sizes` when it is empty or has another shape (PyTorch's out= rule).
void resize_out(const Tensor& out, const IntList& sizes, const char* op);

}  // namespace fl

#define FL_X(name, rule, expr) \
  FL_DECLARE_OP(name, ::fl::Tensor(const ::fl::Tensor&, const ::fl::Tensor&, ::fl::Scalar, const ::fl::Tensor&))
FL_BINARY_OPS(FL_X)
#undef FL_X
#define FL_X(name, rule, expr) \
  FL_DECLARE_OP(name, ::fl::Tensor(const ::fl::Tensor&, const ::fl::Tensor&))
FL_UNARY_OPS(FL_X)
#undef FL_X
