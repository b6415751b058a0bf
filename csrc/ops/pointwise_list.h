// The pointwise op lists, each op declared once: its name, result rule and scalar expression
// (plus its gradient over tensors). Only macros, so that the eager kernels (pointwise_*.cpp) and the
// fused kernels generated at run time (codegen/cpp.py, through csrc/graph/fused_prelude.h) expand the
// same expressions and agree bit for bit.
#pragma once

// Binary ops. Columns: name, result rule, expression over `a`, `b` (opmath values; `alpha`
// is the add/sub multiplier), then the gradients for `a` and `b` written over tensors (`g` the
// incoming gradient, `r` the result; NONDIFF: output not differentiable; NOTIMPL: no formula
// yet, backward raises). Result rules:
//   ARITH  result_type(a, b)                 FLOAT  result_type, integers -> default float
//   CMP    compute in result_type, bool out  INT    integral (and bool) dtypes only
#define FL_BINARY_OPS(X)                                                          \
  X(add, ARITH, a + alpha * b, g, g * alpha)                                                    \
  X(sub, ARITH, a - alpha * b, g, -(g * alpha))                                                    \
  X(mul, ARITH, a * b, g * b, g * a)                                                            \
  X(div, FLOAT, a / b, g / b, -(g * (a / b)) / b)                                                            \
  X(div_trunc, ARITH, div_trunc_impl(a, b), zeros_like(g), zeros_like(g))                                     \
  X(div_floor, ARITH, div_floor_impl(a, b), zeros_like(g), zeros_like(g))                                     \
  X(remainder, ARITH, remainder_impl(a, b), g, -(g * floor_div(a, b)))                                       \
  X(fmod, ARITH, fmod_impl(a, b), g, -(g * trunc(a / b)))                                                 \
  X(pow, ARITH, pow_impl(a, b), pow_grad_base(g, a, b), pow_grad_exponent(g, a, b, r))                                                   \
  X(maximum, ARITH, max_propagate_nan(a, b), minmax_grad(g, a, b, true), minmax_grad(g, b, a, true))                                      \
  X(minimum, ARITH, min_propagate_nan(a, b), minmax_grad(g, a, b, false), minmax_grad(g, b, a, false))                                      \
  X(fmax, ARITH, fmax_impl(a, b), fminmax_grad(g, a, b, true, true), fminmax_grad(g, a, b, true, false))                                                 \
  X(fmin, ARITH, fmin_impl(a, b), fminmax_grad(g, a, b, false, true), fminmax_grad(g, a, b, false, false))                                                 \
  X(atan2, FLOAT, std::atan2(a, b), g * b * atan2_recip(a, b), -(g * a) * atan2_recip(a, b))                                               \
  X(hypot, FLOAT, std::hypot(a, b), g * a / r, g * b / r)                                               \
  X(logaddexp, FLOAT, logaddexp_impl(a, b), g / (exp(b - a) + 1.0), g / (exp(a - b) + 1.0))                                       \
  X(logaddexp2, FLOAT, logaddexp2_impl(a, b), g / (exp2(b - a) + 1.0), g / (exp2(a - b) + 1.0))                                     \
  X(xlogy, FLOAT, xlogy_impl(a, b), xlogy_grad_x(g, a, b), g * a / b)                                               \
  X(copysign, FLOAT, std::copysign(a, b), copysign_grad(g, a, r), zeros_like(g))                                         \
  X(nextafter, ARITH, std::nextafter(a, b), g, zeros_like(g))                                       \
  X(heaviside, ARITH, heaviside_impl(a, b), NOTIMPL, NOTIMPL)                                       \
  X(bitwise_and, INT, a & b, NONDIFF, NONDIFF)                                                      \
  X(bitwise_or, INT, a | b, NONDIFF, NONDIFF)                                                       \
  X(bitwise_xor, INT, a ^ b, NONDIFF, NONDIFF)                                                      \
  X(bitwise_left_shift, INT, shift_left_impl(a, b), NONDIFF, NONDIFF)                               \
  X(bitwise_right_shift, INT, shift_right_impl(a, b), NONDIFF, NONDIFF)                             \
  X(gcd, INT, gcd_impl(a, b), NONDIFF, NONDIFF)                                                     \
  X(lcm, INT, lcm_impl(a, b), NONDIFF, NONDIFF)                                                     \
  X(igamma, FLOAT, igamma_impl(a, b), NOTIMPL, g * exp((a - 1.0) * log(b) - b - un(UnaryOp::lgamma, a))) \
  X(igammac, FLOAT, igammac_impl(a, b), NOTIMPL, -(g * exp((a - 1.0) * log(b) - b - un(UnaryOp::lgamma, a)))) \
  X(special_zeta, FLOAT, zeta_impl(a, b), NOTIMPL, -(g * a * bin(BinaryOp::special_zeta, a + 1.0, b))) \
  X(eq, CMP, a == b, NONDIFF, NONDIFF)                                                              \
  X(ne, CMP, a != b, NONDIFF, NONDIFF)                                                              \
  X(lt, CMP, a < b, NONDIFF, NONDIFF)                                                               \
  X(le, CMP, a <= b, NONDIFF, NONDIFF)                                                              \
  X(gt, CMP, a > b, NONDIFF, NONDIFF)                                                               \
  X(ge, CMP, a >= b, NONDIFF, NONDIFF)                                                              \
  X(logical_and, LOGICAL, (a != 0) && (b != 0), NONDIFF, NONDIFF)                                   \
  X(logical_or, LOGICAL, (a != 0) || (b != 0), NONDIFF, NONDIFF)                                    \
  X(logical_xor, LOGICAL, (a != 0) != (b != 0), NONDIFF, NONDIFF)

// special_* ops are torch.special functions that torch has neither in torch.* nor as Tensor methods
// (flowlike/special.py exports them under their torch.special names).
// Unary ops. Columns: name, result rule, expression over `x`, gradient over tensors `g`, `x`, `r`.
// Result rules:
//   FLOAT  integers and bool -> default float   SAME  keeps the dtype
//   BOOL   bool out (predicates)                INT   integral (and bool) only
#define FL_UNARY_OPS(X)                                             \
  X(neg, SAME, -x, -g)                                                  \
  X(abs, SAME, abs_impl(x), g * sgn(x))                                          \
  X(sign, SAME, sign_impl(x), zeros_like(g))                                       \
  X(sgn, SAME, sign_impl(x), sgn_grad(g, x, r))                                    \
  X(square, SAME, x * x, g * x * 2.0)                                            \
  X(exp, FLOAT, std::exp(x), g * r)                                        \
  X(exp2, FLOAT, std::exp2(x), g * r * 0.6931471805599453)                                      \
  X(expm1, FLOAT, std::expm1(x), g * (r + 1.0))                                    \
  X(log, FLOAT, std::log(x), g / x)                                        \
  X(log2, FLOAT, std::log2(x), g / (x * 0.6931471805599453))                                      \
  X(log10, FLOAT, std::log10(x), g / (x * 2.302585092994046))                                    \
  X(log1p, FLOAT, std::log1p(x), g / (x + 1.0))                                    \
  X(sqrt, FLOAT, std::sqrt(x), g / (r * 2.0))                                      \
  X(rsqrt, FLOAT, 1 / std::sqrt(x), g * r * r * r * -0.5)                                 \
  X(reciprocal, FLOAT, 1 / x, -(g * r * r))                                       \
  X(sin, FLOAT, std::sin(x), g * cos(x))                                        \
  X(cos, FLOAT, std::cos(x), -(g * sin(x)))                                        \
  X(tan, FLOAT, std::tan(x), g * (r * r + 1.0))                                        \
  X(asin, FLOAT, std::asin(x), g * rsqrt(-(x * x) + 1.0))                                      \
  X(acos, FLOAT, std::acos(x), -(g * rsqrt(-(x * x) + 1.0)))                                      \
  X(atan, FLOAT, std::atan(x), g / (x * x + 1.0))                                      \
  X(sinh, FLOAT, std::sinh(x), g * cosh(x))                                      \
  X(cosh, FLOAT, std::cosh(x), g * sinh(x))                                      \
  X(tanh, FLOAT, std::tanh(x), g * (-(r * r) + 1.0))                                      \
  X(asinh, FLOAT, std::asinh(x), g * rsqrt(x * x + 1.0))                                    \
  X(acosh, FLOAT, std::acosh(x), acosh_grad(g, x))                                           \
  X(atanh, FLOAT, std::atanh(x), g / (-(x * x) + 1.0))                                    \
  X(sigmoid, FLOAT, sigmoid_impl(x), g * r * (-r + 1.0))                                \
  X(erf, FLOAT, std::erf(x), g * exp(-(x * x)) * 1.1283791670955126)                                        \
  X(erfc, FLOAT, std::erfc(x), g * exp(-(x * x)) * -1.1283791670955126)                                      \
  X(erfinv, FLOAT, erfinv_impl(x), g * exp(r * r) * 0.886226925452758)                                  \
  X(lgamma, FLOAT, std::lgamma(x), g * digamma(x))                                  \
  X(digamma, FLOAT, digamma_impl(x), g * trigamma(x))                        \
  X(i0, FLOAT, i0_impl(x), g * un(UnaryOp::special_i1, x))                                           \
  X(special_i0e, FLOAT, i0e_impl(x), g * (un(UnaryOp::special_i1e, x) - sign(x) * r))               \
  X(special_i1, FLOAT, i1_impl(x), g * where(bin(BinaryOp::eq, x, num(0.0)), num(0.5), un(UnaryOp::i0, x) - r / x)) \
  X(special_i1e, FLOAT, i1e_impl(x),                                                                 \
    g * where(bin(BinaryOp::eq, x, num(0.0)), num(0.5), un(UnaryOp::special_i0e, x) - r * sign(x) - r / x)) \
  X(special_erfcx, FLOAT, erfcx_impl(x), g * (x * r * 2.0 - 1.1283791670955126))                    \
  X(special_airy_ai, FLOAT, airy_ai_impl(x), NOTIMPL)                                                \
  X(special_bessel_j0, FLOAT, bessel_j0_impl(x), -(g * un(UnaryOp::special_bessel_j1, x)))          \
  X(special_bessel_j1, FLOAT, bessel_j1_impl(x),                                                     \
    g * where(bin(BinaryOp::eq, x, num(0.0)), num(0.5), un(UnaryOp::special_bessel_j0, x) - r / x))  \
  X(special_bessel_y0, FLOAT, bessel_y0_impl(x), -(g * un(UnaryOp::special_bessel_y1, x)))          \
  X(special_bessel_y1, FLOAT, bessel_y1_impl(x), g * (un(UnaryOp::special_bessel_y0, x) - r / x))   \
  X(special_modified_bessel_k0, FLOAT, bessel_k0_impl(x), -(g * un(UnaryOp::special_modified_bessel_k1, x))) \
  X(special_modified_bessel_k1, FLOAT, bessel_k1_impl(x),                                            \
    -(g * (un(UnaryOp::special_modified_bessel_k0, x) + r / x)))                                     \
  X(special_scaled_modified_bessel_k0, FLOAT, bessel_k0e_impl(x),                                    \
    g * (r - un(UnaryOp::special_scaled_modified_bessel_k1, x)))                                     \
  X(special_scaled_modified_bessel_k1, FLOAT, bessel_k1e_impl(x),                                    \
    g * (r - un(UnaryOp::special_scaled_modified_bessel_k0, x) - r / x))                             \
  X(floor, SAME, floor_impl(x), zeros_like(g))                                     \
  X(ceil, SAME, ceil_impl(x), zeros_like(g))                                       \
  X(trunc, SAME, trunc_impl(x), zeros_like(g))                                     \
  X(round, SAME, round_impl(x), zeros_like(g))                                     \
  X(frac, SAME, x - trunc_impl(x), g)                                  \
  X(bitwise_not, INT, bitwise_not_impl(x), NONDIFF)                          \
  X(logical_not, BOOL, !(x != 0), NONDIFF)                                   \
  X(isnan, BOOL, isnan_impl(x), NONDIFF)                                     \
  X(isinf, BOOL, isinf_impl(x), NONDIFF)                                     \
  X(isposinf, BOOL, isinf_impl(x) && x > 0, NONDIFF)                         \
  X(isneginf, BOOL, isinf_impl(x) && x < 0, NONDIFF)                         \
  X(isfinite, BOOL, !isnan_impl(x) && !isinf_impl(x), NONDIFF)               \
  X(signbit, BOOL, signbit_impl(x), NONDIFF)

// Float32 ops whose libm call GCC cannot vectorize get a vectorizable form (fl::vmath), used by
// the dense kernels (pointwise_dense.cpp) and the fused kernels.
// Columns: op, vectorizable expression, the range [lo, hi] of inputs where it stands (outside it libm's result
// replaces it: exp_f32 saturates above to inf and flushes subnormal results below to 0, which sigmoid inherits;
// NaN is in range), libm expression. A kernel finds whether a block needs libm from the block's min and max input,
// two vectorized reductions; inside the range exp needs none of exp_f32's clamps.
#define FL_DENSE_UNARY(X)                                                                            \
  X(exp, vmath::exp_f32_in_range(x), -87.0f, 88.0f, std::exp(x))                                   \
  X(tanh, vmath::tanh_f32(x), -INFINITY, INFINITY, std::tanh(x))                                   \
  X(sigmoid, vmath::sigmoid_f32(x), -87.0f, INFINITY, 1.0f / (1.0f + std::exp(-x)))                \
  X(erf, vmath::erf_f32(x), -INFINITY, INFINITY, std::erf(x))
