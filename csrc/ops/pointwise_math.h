// Scalar math behind the pointwise op lists, written once for every opmath type
// (bool, the integer types, float, double); integer branches match PyTorch's integer semantics.
#pragma once
#include <cmath>
#include <limits>
#include <type_traits>

#include "pointwise_special.h"

namespace fl {

template <typename T> constexpr bool is_fp_v = std::is_floating_point_v<T>;

template <typename T> inline T div_trunc_impl(T a, T b) {
  if constexpr (is_fp_v<T>) return std::trunc(a / b);
  else if constexpr (std::is_same_v<T, bool>) return a;
  else { if (b == -1) return static_cast<T>(-static_cast<std::make_unsigned_t<T>>(a)); return b == 0 ? T(0) : static_cast<T>(a / b); }
}
template <typename T> inline T div_floor_impl(T a, T b) {
  if constexpr (is_fp_v<T>) {
    if (b == 0) return a / b;
    T mod = std::fmod(a, b);
    T div = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;
    if (div == 0) return std::copysign(T(0), a / b);
    T fl = std::floor(div);
    if (div - fl > T(0.5)) fl += 1;
    return fl;
  } else if constexpr (std::is_same_v<T, bool>) {
    return a;
  } else {
    if (b == 0) return T(0);
    if (b == -1) return static_cast<T>(-static_cast<std::make_unsigned_t<T>>(a));
    T q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
    return q;
  }
}
template <typename T> inline T remainder_impl(T a, T b) {
  if constexpr (is_fp_v<T>) {
    T m = std::fmod(a, b);
    if (m != 0 && ((b < 0) != (m < 0))) m += b;
    return m;
  } else if constexpr (std::is_same_v<T, bool>) {
    return false;
  } else {
    if (b == 0 || b == -1) return T(0);
    T m = a % b;
    if (m != 0 && ((b < 0) != (m < 0))) m += b;
    return m;
  }
}
template <typename T> inline T fmod_impl(T a, T b) {
  if constexpr (is_fp_v<T>) return std::fmod(a, b);
  else if constexpr (std::is_same_v<T, bool>) return false;
  else return (b == 0 || b == -1) ? T(0) : static_cast<T>(a % b);
}
template <typename T> inline T pow_impl(T a, T b) {
  if constexpr (is_fp_v<T>) return std::pow(a, b);
  else if constexpr (std::is_same_v<T, bool>) return a || !b;
  else {
    // exponentiation by squaring; negative exponents are rejected before the kernel runs
    if (b < 0) return a == 1 ? T(1) : (a == -1 ? ((b & 1) ? T(-1) : T(1)) : T(0));
    using U = std::make_unsigned_t<T>;
    U result = 1, base = static_cast<U>(a);
    auto e = b;
    while (e) { if (e & 1) result *= base; base *= base; e >>= 1; }
    return static_cast<T>(result);
  }
}
template <typename T> inline T max_propagate_nan(T a, T b) {
  if constexpr (is_fp_v<T>) { if (std::isnan(a)) return a; if (std::isnan(b)) return b; }
  return a > b ? a : b;
}
template <typename T> inline T min_propagate_nan(T a, T b) {
  if constexpr (is_fp_v<T>) { if (std::isnan(a)) return a; if (std::isnan(b)) return b; }
  return a < b ? a : b;
}
template <typename T> inline T fmax_impl(T a, T b) {
  if constexpr (is_fp_v<T>) return std::fmax(a, b); else return a > b ? a : b;
}
template <typename T> inline T fmin_impl(T a, T b) {
  if constexpr (is_fp_v<T>) return std::fmin(a, b); else return a < b ? a : b;
}
template <typename T> inline T logaddexp_impl(T a, T b) {
  if (std::isinf(a) && a == b) return a;
  T m = std::max(a, b);
  return m + std::log1p(std::exp(-std::abs(a - b)));
}
template <typename T> inline T logaddexp2_impl(T a, T b) {
  if (std::isinf(a) && a == b) return a;
  T m = std::max(a, b);
  return m + std::log1p(std::exp2(-std::abs(a - b))) / T(0.69314718055994530942);
}
template <typename T> inline T xlogy_impl(T x, T y) {
  if (std::isnan(y)) return y;
  if (x == 0) return 0;
  return x * std::log(y);
}
template <typename T> inline T heaviside_impl(T a, T b) {
  if constexpr (is_fp_v<T>) { if (std::isnan(a)) return a; }
  return a == 0 ? b : static_cast<T>(a > 0);
}
template <typename T> inline T shift_left_impl(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) return a;
  else {
    using U = std::make_unsigned_t<T>;
    if (b < 0 || b >= static_cast<T>(sizeof(T) * 8)) return T(0);
    return static_cast<T>(static_cast<U>(a) << b);
  }
}
template <typename T> inline T shift_right_impl(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) return a;
  else {
    constexpr T bits = static_cast<T>(sizeof(T) * 8);
    if (b < 0 || b >= bits) return std::is_signed_v<T> && a < 0 ? T(-1) : T(0);
    return static_cast<T>(a >> b);
  }
}

template <typename T> inline T abs_impl(T x) {
  if constexpr (std::is_same_v<T, bool> || std::is_unsigned_v<T>) return x;
  else if constexpr (is_fp_v<T>) return std::fabs(x);
  else return x < 0 ? static_cast<T>(-x) : x;
}
template <typename T> inline T sign_impl(T x) {
  if constexpr (std::is_same_v<T, bool>) return x;
  else if constexpr (is_fp_v<T>) return static_cast<T>((T(0) < x) - (x < T(0)));  // nan (neither) gives 0, as torch
  else return static_cast<T>((T(0) < x) - (x < T(0)));
}
template <typename T> inline T sigmoid_impl(T x) { return T(1) / (T(1) + std::exp(-x)); }
template <typename T> inline T floor_impl(T x) { if constexpr (is_fp_v<T>) return std::floor(x); else return x; }
template <typename T> inline T ceil_impl(T x) { if constexpr (is_fp_v<T>) return std::ceil(x); else return x; }
template <typename T> inline T trunc_impl(T x) { if constexpr (is_fp_v<T>) return std::trunc(x); else return x; }
template <typename T> inline T round_impl(T x) { if constexpr (is_fp_v<T>) return std::nearbyint(x); else return x; }
template <typename T> inline T bitwise_not_impl(T x) {
  if constexpr (std::is_same_v<T, bool>) return !x; else return static_cast<T>(~x);
}
template <typename T> inline bool isnan_impl(T x) { if constexpr (is_fp_v<T>) return std::isnan(x); else return false; }
template <typename T> inline bool isinf_impl(T x) { if constexpr (is_fp_v<T>) return std::isinf(x); else return false; }
template <typename T> inline bool signbit_impl(T x) {
  if constexpr (is_fp_v<T>) return std::signbit(x);
  else if constexpr (std::is_signed_v<T>) return x < 0;
  else return false;
}

// Inverse error function: Giles' single-precision approximation refined by two Newton steps.
template <typename T> inline T erfinv_impl(T y) {
  if (y <= -1) return y == -1 ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::quiet_NaN();
  if (y >= 1) return y == 1 ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::quiet_NaN();
  double x = static_cast<double>(y);
  double w = -std::log((1.0 - x) * (1.0 + x)), p;
  if (w < 5.0) {
    w -= 2.5;
    p = 2.81022636e-08; p = 3.43273939e-07 + p * w; p = -3.5233877e-06 + p * w; p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w; p = -0.00125372503 + p * w; p = -0.00417768164 + p * w; p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
  } else {
    w = std::sqrt(w) - 3.0;
    p = -0.000200214257; p = 0.000100950558 + p * w; p = 0.00134934322 + p * w; p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w; p = -0.0076224613 + p * w; p = 0.00943887047 + p * w; p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
  }
  double r = p * x;
  const double k = 1.1283791670955126;  // 2/sqrt(pi)
  for (int i = 0; i < 2; ++i) r -= (std::erf(r) - x) / (k * std::exp(-r * r));
  return static_cast<T>(r);
}

// Digamma: reflection for negatives, recurrence up to 6, then the asymptotic series.
template <typename T> inline T digamma_impl(T xin) {
  double x = static_cast<double>(xin);
  if (x == 0) return std::copysign(std::numeric_limits<T>::infinity(), -xin);
  if (x < 0) {
    if (x == std::floor(x)) return std::numeric_limits<T>::quiet_NaN();
    const double pi = 3.14159265358979323846;
    return static_cast<T>(digamma_impl<double>(1 - x) - pi / std::tan(pi * x));
  }
  double r = 0;
  while (x < 6) { r -= 1 / x; x += 1; }
  double f = 1 / (x * x);
  double t = f * (-1.0 / 12 + f * (1.0 / 120 + f * (-1.0 / 252 + f * (1.0 / 240 + f * (-1.0 / 132)))));
  return static_cast<T>(r + std::log(x) - 0.5 / x + t);
}

}  // namespace fl
