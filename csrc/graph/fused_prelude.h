// What every generated fused kernel (codegen/cpp.py) includes: the scalar function of each fusible op, expanded
// from the same op lists as the eager kernels (pointwise_list.h, activation_math.h), so a fused chain computes
// each element exactly as the eager ops do one after another. Only headers without the dispatcher, so that a
// program's translation unit compiles in about a second.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "../core/dtype.h"
#include "../kernels/vec_math.h"
#include "../ops/activation_math.h"
#include "../ops/pointwise_list.h"
#include "../ops/pointwise_math.h"

namespace fl::fused {

// un_<op>(x), bin_<op>(a, b, alpha) over opmath values, as the eager unary and binary loops apply them.
#define FL_X(name, rule, expr, ...) \
  template <typename OM> inline auto un_##name(OM x) { return expr; }
FL_UNARY_OPS(FL_X)
#undef FL_X
// dense_<op>(x): the float32 form that eager uses where operand and result are contiguous: the vectorizable
// expression, with libm standing in where dense_<op>_libm(x) says so. A generated loop runs a block with
// dense_<op>_fast and runs it again with dense_<op> when some element needed libm, as the eager kernel does, so the
// common case vectorizes. Elsewhere eager's strided loop applies un_<op>.
#define FL_X(name, expr, use_libm, libm_expr)                                        \
  inline float dense_##name##_fast(float x) { return expr; }                       \
  inline bool dense_##name##_libm([[maybe_unused]] float x) { return use_libm; }   \
  inline float dense_##name(float x) { return (use_libm) ? libm_expr : expr; }
FL_DENSE_UNARY(FL_X)
#undef FL_X
#define FL_X(name, rule, expr, ...) \
  template <typename OM> inline auto bin_##name(OM a, OM b, [[maybe_unused]] OM alpha) { return expr; }
FL_BINARY_OPS(FL_X)
#undef FL_X

// act_<op>(x, a, b, c) and act_<op>_backward(g, x, a, b, c): the activation list's forward and first derivative.
#define FL_X(name, fwd, bwd, bwd2)                                                                 \
  template <typename T> inline T act_##name(T x, [[maybe_unused]] T a, [[maybe_unused]] T b,      \
                                            [[maybe_unused]] T c) { return fwd; }                  \
  template <typename T> inline T act_##name##_backward(T g, T x, [[maybe_unused]] T a,            \
                                                       [[maybe_unused]] T b, [[maybe_unused]] T c) { return bwd; }
FL_ACTIVATIONS(FL_X)
#undef FL_X

// pow with a Python-number exponent, as the eager kernel special-cases it (pointwise_binary.cpp): `r` rounds an
// intermediate to the storage type T.
template <typename T, typename OM> inline OM pow_square(OM a) { return a * a; }
template <typename T, typename OM> inline OM pow_cube(OM a) { return static_cast<OM>(static_cast<T>(a * a)) * a; }
template <typename T, typename OM> inline OM pow_rsqrt(OM a) { return OM(1) / static_cast<OM>(static_cast<T>(std::sqrt(a))); }
template <typename T, typename OM> inline OM pow_inv_square(OM a) { return OM(1) / static_cast<OM>(static_cast<T>(a * a)); }

}  // namespace fl::fused
