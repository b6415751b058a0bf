// Special functions behind the pointwise op lists (i0, i1, erfcx, igamma, zeta, gcd, ...). The
// floating ones compute in double whatever the dtype (their series need the range and precision)
// and live in pointwise_special.cpp; pointwise_math.h wraps them for every opmath type.
#pragma once
#include <cmath>
#include <cstdint>
#include <type_traits>

// Exported from _C (which is built with hidden visibility) so that the fused kernels generated at run time, which
// link against _C, call these same definitions (codegen/cpp.py).
#define FL_EXPORT __attribute__((visibility("default")))

namespace fl::special {

FL_EXPORT double bessel_i0e(double x);     // exp(-|x|) I0(x)
FL_EXPORT double bessel_i1e(double x);     // exp(-|x|) I1(x)
FL_EXPORT double erfcx(double x);          // exp(x^2) erfc(x)
FL_EXPORT double igamma(double a, double x);   // regularized lower incomplete gamma P(a, x)
FL_EXPORT double igammac(double a, double x);  // regularized upper incomplete gamma Q(a, x)
FL_EXPORT double zeta(double x, double q);     // Hurwitz zeta
FL_EXPORT double bessel_j(int n, double x);    // J0, J1
FL_EXPORT double bessel_y(int n, double x);    // Y0, Y1
FL_EXPORT double bessel_k_scaled(int n, double x);  // exp(x) K0(x), exp(x) K1(x)
FL_EXPORT double airy_ai(double x);

}  // namespace fl::special

namespace fl {

// Magnitudes in the unsigned type: |INT_MIN| has no signed value (negating it overflows, and a gcd of -1
// then traps in lcm's division).
template <typename T> inline std::make_unsigned_t<T> magnitude(T v) {
  using U = std::make_unsigned_t<T>;
  return v < 0 ? static_cast<U>(U(0) - static_cast<U>(v)) : static_cast<U>(v);
}
template <typename T> inline T gcd_impl(T a, T b) {
  if constexpr (std::is_same_v<T, bool> || std::is_floating_point_v<T>) {
    return a || b;  // unreachable: the op accepts integers only
  } else {
    auto x = magnitude(a), y = magnitude(b);
    while (x != 0) { const auto c = x; x = static_cast<decltype(x)>(y % x); y = c; }
    return static_cast<T>(y);
  }
}
template <typename T> inline T lcm_impl(T a, T b) {
  if constexpr (std::is_same_v<T, bool> || std::is_floating_point_v<T>) {
    return a && b;  // unreachable: the op accepts integers only
  } else {
    const auto x = magnitude(a), y = magnitude(b);
    const auto g = magnitude(gcd_impl(a, b));
    if (g == 0) return T(0);
    return static_cast<T>(static_cast<decltype(g)>(x / g * y));  // wraps on overflow, as PyTorch's
  }
}

#define FL_SPECIAL_UNARY(name, expr) \
  template <typename T> inline T name(T xin) { const double x = static_cast<double>(xin); return static_cast<T>(expr); }
FL_SPECIAL_UNARY(i0_impl, std::exp(std::fabs(x)) * special::bessel_i0e(x))
FL_SPECIAL_UNARY(i0e_impl, special::bessel_i0e(x))
FL_SPECIAL_UNARY(i1_impl, std::exp(std::fabs(x)) * special::bessel_i1e(x))
FL_SPECIAL_UNARY(i1e_impl, special::bessel_i1e(x))
FL_SPECIAL_UNARY(erfcx_impl, special::erfcx(x))
FL_SPECIAL_UNARY(bessel_j0_impl, special::bessel_j(0, x))
FL_SPECIAL_UNARY(bessel_j1_impl, special::bessel_j(1, x))
FL_SPECIAL_UNARY(bessel_y0_impl, special::bessel_y(0, x))
FL_SPECIAL_UNARY(bessel_y1_impl, special::bessel_y(1, x))
FL_SPECIAL_UNARY(bessel_k0_impl, std::exp(-x) * special::bessel_k_scaled(0, x))
FL_SPECIAL_UNARY(bessel_k1_impl, std::exp(-x) * special::bessel_k_scaled(1, x))
FL_SPECIAL_UNARY(bessel_k0e_impl, special::bessel_k_scaled(0, x))
FL_SPECIAL_UNARY(bessel_k1e_impl, special::bessel_k_scaled(1, x))
FL_SPECIAL_UNARY(airy_ai_impl, special::airy_ai(x))
#undef FL_SPECIAL_UNARY
#define FL_SPECIAL_BINARY(name, fn) \
  template <typename T> inline T name(T a, T b) {                    \
    return static_cast<T>(fn(static_cast<double>(a), static_cast<double>(b))); \
  }
FL_SPECIAL_BINARY(igamma_impl, special::igamma)
FL_SPECIAL_BINARY(igammac_impl, special::igammac)
FL_SPECIAL_BINARY(zeta_impl, special::zeta)
#undef FL_SPECIAL_BINARY

}  // namespace fl
