// A Python number crossing into C++: bool, int, float or complex, remembering which.
#pragma once
#include <cstdint>
#include "dtype.h"

namespace fl {

struct Scalar {
  enum class Kind : uint8_t { Bool, Int, Float, Complex } kind = Kind::Int;
  union { bool b; int64_t i; double d; } v{};
  double im = 0;  // the imaginary part of a Complex (v.d is its real part)
  Scalar() { v.i = 0; }
  Scalar(bool b) : kind(Kind::Bool) { v.b = b; }
  Scalar(int64_t i) : kind(Kind::Int) { v.i = i; }
  Scalar(int i) : kind(Kind::Int) { v.i = i; }
  Scalar(double d) : kind(Kind::Float) { v.d = d; }
  Scalar(complex<double> c) : kind(Kind::Complex), im(c.im) { v.d = c.re; }

  bool is_bool() const { return kind == Kind::Bool; }
  bool is_int() const { return kind == Kind::Int; }
  bool is_float() const { return kind == Kind::Float; }
  bool is_complex() const { return kind == Kind::Complex; }
  // A complex number gives its real part to the real conversions.
  double to_double() const { return kind >= Kind::Float ? v.d : kind == Kind::Int ? static_cast<double>(v.i) : v.b; }
  int64_t to_int() const { return kind >= Kind::Float ? static_cast<int64_t>(v.d) : kind == Kind::Int ? v.i : v.b; }
  bool to_bool() const { return kind >= Kind::Float ? (v.d != 0 || im != 0) : kind == Kind::Int ? v.i != 0 : v.b; }
  complex<double> to_complex() const { return {to_double(), kind == Kind::Complex ? im : 0.0}; }

  template <typename T> T to() const {
    if constexpr (std::is_same_v<T, bool>) return to_bool();
    else if constexpr (is_complex_v<T>) return T(to_complex());
    else if constexpr (std::is_integral_v<T>) return kind >= Kind::Float ? convert<T>(v.d) : static_cast<T>(to_int());
    else if constexpr (std::is_same_v<T, double>) return to_double();
    else return T(static_cast<float>(to_double()));
  }
  // The dtype a lone Python number of this kind gets as a tensor (float uses the default dtype, complex its
  // complex counterpart).
  ScalarType natural_dtype(ScalarType default_float) const {
    return kind == Kind::Bool ? ScalarType::Bool : kind == Kind::Int ? ScalarType::Int64
           : kind == Kind::Complex ? to_complex_type(default_float) : default_float;
  }
};

// An element value as a Scalar of its kind.
template <typename T> Scalar scalar_of(T v) {
  if constexpr (is_complex_v<T>) return Scalar(complex<double>(v));
  else if constexpr (std::is_same_v<T, bool>) return Scalar(v);
  else if constexpr (std::is_integral_v<T>) return Scalar(static_cast<int64_t>(v));
  else return Scalar(static_cast<double>(static_cast<opmath_t<T>>(v)));
}

}  // namespace fl
