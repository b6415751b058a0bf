// Scalar types, the two 16-bit float formats, and PyTorch's type promotion.
#pragma once
#include <cstdint>
#include <cstring>
#include <cmath>
#include <limits>
#include <type_traits>

namespace fl {

// Order matters: it indexes kPromoteTable and the dtype objects in Python.
enum class ScalarType : int8_t {
  Bool, UInt8, Int8, Int16, Int32, Int64, Float16, BFloat16, Float32, Float64, ComplexFloat, ComplexDouble, NumTypes
};
constexpr int kNumScalarTypes = static_cast<int>(ScalarType::NumTypes);

// IEEE half precision, stored as bits; arithmetic happens in float.
struct Half {
  uint16_t x = 0;
  Half() = default;
  static Half from_bits(uint16_t b) { Half h; h.x = b; return h; }
  Half(float f) {  // round to nearest even
    uint32_t u; std::memcpy(&u, &f, 4);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t absu = u & 0x7fffffffu;
    if (absu >= 0x7f800000u) {  // inf or nan
      x = static_cast<uint16_t>(sign | 0x7c00u | (absu > 0x7f800000u ? 0x200u : 0u));
      return;
    }
    if (absu >= 0x477ff000u) { x = static_cast<uint16_t>(sign | 0x7c00u); return; }  // overflow
    if (absu < 0x38800000u) {  // subnormal half (or zero)
      float af; std::memcpy(&af, &absu, 4);
      // scale so that the subnormal unit becomes 1, then round-to-even via float addition
      float scaled = af * 16777216.0f;  // 2^24
      uint32_t m = static_cast<uint32_t>(std::nearbyint(scaled));
      x = static_cast<uint16_t>(sign | m);
      return;
    }
    uint32_t mant_odd = (absu >> 13) & 1u;
    absu += 0xc8000fffu + mant_odd;  // rebias exponent (-112<<23) and round
    x = static_cast<uint16_t>(sign | (absu >> 13));
  }
  operator float() const {
    uint32_t sign = (uint32_t)(x & 0x8000u) << 16;
    uint32_t exp = (x >> 10) & 0x1fu, mant = x & 0x3ffu;
    uint32_t u;
    if (exp == 0) {
      if (mant == 0) { u = sign; }
      else {
        float f = static_cast<float>(mant) * (1.0f / 16777216.0f);
        std::memcpy(&u, &f, 4); u |= sign;
      }
    } else if (exp == 31) {
      u = sign | 0x7f800000u | (mant << 13);
    } else {
      u = sign | ((exp + 112) << 23) | (mant << 13);
    }
    float f; std::memcpy(&f, &u, 4); return f;
  }
};

// bfloat16: the upper half of a float32, rounded to nearest even.
struct BFloat16 {
  uint16_t x = 0;
  BFloat16() = default;
  static BFloat16 from_bits(uint16_t b) { BFloat16 h; h.x = b; return h; }
  BFloat16(float f) {
    uint32_t u; std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) { x = static_cast<uint16_t>((u >> 16) | 0x40u); return; }
    u += 0x7fffu + ((u >> 16) & 1u);
    x = static_cast<uint16_t>(u >> 16);
  }
  operator float() const { uint32_t u = (uint32_t)x << 16; float f; std::memcpy(&f, &u, 4); return f; }
};

// A complex number as c10::complex lays it out (real, imag), with c10's arithmetic: the plain formula for *
// (std::complex's takes C Annex G's NaN recovery path) and the scaled one for / (so results match torch's CPU).
// The transcendental functions go through std::complex (pointwise_math.h), as c10's do.
template <typename T>
struct alignas(2 * sizeof(T)) complex {
  using value_type = T;
  T re = T(0), im = T(0);
  constexpr complex() = default;
  constexpr complex(T r, T i = T(0)) : re(r), im(i) {}
  template <typename U> explicit constexpr complex(const complex<U>& o) : re(static_cast<T>(o.re)), im(static_cast<T>(o.im)) {}
  constexpr T real() const { return re; }
  constexpr T imag() const { return im; }
};
template <typename T> constexpr complex<T> operator+(complex<T> a, complex<T> b) { return {a.re + b.re, a.im + b.im}; }
template <typename T> constexpr complex<T> operator-(complex<T> a, complex<T> b) { return {a.re - b.re, a.im - b.im}; }
template <typename T> constexpr complex<T> operator-(complex<T> a) { return {-a.re, -a.im}; }
template <typename T> constexpr complex<T> operator*(complex<T> a, complex<T> b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
template <typename T> inline complex<T> operator/(complex<T> x, complex<T> y) {
  const T a = x.re, b = x.im, c = y.re, d = y.im, abs_c = std::abs(c), abs_d = std::abs(d);
  if (abs_c >= abs_d) {
    if (abs_c == T(0) && abs_d == T(0)) return {a / abs_c, b / abs_d};  // a complex inf or nan
    const T rat = d / c, scl = T(1) / (c + d * rat);
    return {(a + b * rat) * scl, (b - a * rat) * scl};
  }
  const T rat = c / d, scl = T(1) / (d + c * rat);
  return {(a * rat + b) * scl, (b * rat - a) * scl};
}
template <typename T> constexpr bool operator==(complex<T> a, complex<T> b) { return a.re == b.re && a.im == b.im; }
template <typename T> constexpr bool operator!=(complex<T> a, complex<T> b) { return !(a == b); }
template <typename T> constexpr complex<T> conj(complex<T> a) { return {a.re, -a.im}; }

template <typename T> struct IsComplex : std::false_type {};
template <typename T> struct IsComplex<complex<T>> : std::true_type {};
template <typename T> constexpr bool is_complex_v = IsComplex<T>::value;
// v, conjugated when `c` (the conjugate bit) is set and v is complex.
template <typename T> constexpr T conj_if(T v, bool c) {
  if constexpr (is_complex_v<T>) return c ? conj(v) : v;
  else return v;
}

inline size_t element_size(ScalarType t) {
  static constexpr size_t sizes[] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8, 8, 16};
  return sizes[static_cast<int>(t)];
}
inline bool is_floating(ScalarType t) { return t >= ScalarType::Float16 && t <= ScalarType::Float64; }
inline bool is_complex(ScalarType t) { return t == ScalarType::ComplexFloat || t == ScalarType::ComplexDouble; }
// The dtypes whose tensors can require grad.
inline bool is_differentiable(ScalarType t) { return is_floating(t) || is_complex(t); }
// complex64 <-> float32, complex128 <-> float64 (torch's toRealValueType / toComplexType; the 16-bit floats,
// whose complex32 flowlike lacks, widen to complex64).
inline ScalarType to_real_type(ScalarType t) {
  return t == ScalarType::ComplexFloat ? ScalarType::Float32 : t == ScalarType::ComplexDouble ? ScalarType::Float64 : t;
}
inline ScalarType to_complex_type(ScalarType t) {
  return t == ScalarType::Float64 || t == ScalarType::ComplexDouble ? ScalarType::ComplexDouble : ScalarType::ComplexFloat;
}
inline bool is_integral(ScalarType t, bool include_bool) {
  return (t != ScalarType::Bool || include_bool) && t <= ScalarType::Int64;
}
inline bool is_signed(ScalarType t) { return t != ScalarType::Bool && t != ScalarType::UInt8; }

// The name as PyTorch prints it after "torch.".
const char* dtype_name(ScalarType t);
// The type names PyTorch's error messages use ("Float", "Long", ...).
const char* c10_type_name(ScalarType t);

// Category used by the scalar promotion rules: bool < integral < floating < complex.
inline int category(ScalarType t) { return t == ScalarType::Bool ? 0 : is_complex(t) ? 3 : is_floating(t) ? 2 : 1; }

ScalarType promote_types(ScalarType a, ScalarType b);

template <typename T> struct CTypeToScalar;
#define FL_MAP_CTYPE(ct, st) template <> struct CTypeToScalar<ct> { static constexpr ScalarType value = ScalarType::st; };
FL_MAP_CTYPE(bool, Bool) FL_MAP_CTYPE(uint8_t, UInt8) FL_MAP_CTYPE(int8_t, Int8) FL_MAP_CTYPE(int16_t, Int16)
FL_MAP_CTYPE(int32_t, Int32) FL_MAP_CTYPE(int64_t, Int64) FL_MAP_CTYPE(Half, Float16)
FL_MAP_CTYPE(BFloat16, BFloat16) FL_MAP_CTYPE(float, Float32) FL_MAP_CTYPE(double, Float64)
FL_MAP_CTYPE(complex<float>, ComplexFloat) FL_MAP_CTYPE(complex<double>, ComplexDouble)
#undef FL_MAP_CTYPE

// Arithmetic type for a storage type: 16-bit floats compute in float.
template <typename T> struct OpMath { using type = T; };
template <> struct OpMath<Half> { using type = float; };
template <> struct OpMath<BFloat16> { using type = float; };
template <typename T> using opmath_t = typename OpMath<T>::type;

// Static conversion between any two storage types (C++ semantics, as PyTorch's casts).
template <typename To, typename From>
inline To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (is_complex_v<To> && is_complex_v<From>) {
    return To(v);
  } else if constexpr (is_complex_v<To>) {
    return To(convert<typename To::value_type>(v));
  } else if constexpr (is_complex_v<From> && std::is_same_v<To, bool>) {
    return v.re != 0 || v.im != 0;
  } else if constexpr (is_complex_v<From>) {  // complex -> real drops the imaginary part, as torch
    return convert<To>(v.re);
  } else if constexpr (std::is_same_v<To, bool>) {
    return static_cast<float>(v) != 0.0f || static_cast<opmath_t<From>>(v) != 0;
  } else if constexpr (std::is_same_v<From, Half> || std::is_same_v<From, BFloat16>) {
    return convert<To>(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, Half> || std::is_same_v<To, BFloat16>) {
    return To(static_cast<float>(v));
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    // float -> int: truncate; out-of-range values wrap through int64 like PyTorch on x86
    if (std::isnan(v)) return static_cast<To>(std::numeric_limits<int64_t>::min());
    if constexpr (sizeof(To) < 8) return static_cast<To>(static_cast<int64_t>(v));
    else {
      if (v >= 9.2233720368547758e18 || v < -9.2233720368547758e18) return static_cast<To>(std::numeric_limits<int64_t>::min());
      return static_cast<To>(v);
    }
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace fl

// Runs `__VA_ARGS__` with `scalar_t` bound to the C++ type of `TYPE`.
#define FL_DTYPE_CASE(st, ct, ...) case ::fl::ScalarType::st: { using scalar_t = ct; __VA_ARGS__; break; }
#define FL_DISPATCH_ALL(TYPE, NAME, ...)                                                   \
  switch (TYPE) {                                                                          \
    FL_DTYPE_CASE(Bool, bool, __VA_ARGS__) FL_DTYPE_CASE(UInt8, uint8_t, __VA_ARGS__)      \
    FL_DTYPE_CASE(Int8, int8_t, __VA_ARGS__) FL_DTYPE_CASE(Int16, int16_t, __VA_ARGS__)    \
    FL_DTYPE_CASE(Int32, int32_t, __VA_ARGS__) FL_DTYPE_CASE(Int64, int64_t, __VA_ARGS__)  \
    FL_DTYPE_CASE(Float16, ::fl::Half, __VA_ARGS__)                                        \
    FL_DTYPE_CASE(BFloat16, ::fl::BFloat16, __VA_ARGS__)                                   \
    FL_DTYPE_CASE(Float32, float, __VA_ARGS__) FL_DTYPE_CASE(Float64, double, __VA_ARGS__) \
    default: ::fl::throw_unsupported_dtype(NAME, TYPE);                                    \
  }
// The complex dtypes, for the kernels that support them (every other kernel dispatches real types only and raises
// torch's "not implemented for 'ComplexFloat'" error on a complex input).
#define FL_DISPATCH_COMPLEX_CASES(...)                                      \
  FL_DTYPE_CASE(ComplexFloat, ::fl::complex<float>, __VA_ARGS__)           \
  FL_DTYPE_CASE(ComplexDouble, ::fl::complex<double>, __VA_ARGS__)
#define FL_DISPATCH_COMPLEX(TYPE, NAME, ...)                                \
  switch (TYPE) {                                                           \
    FL_DISPATCH_COMPLEX_CASES(__VA_ARGS__)                                  \
    default: ::fl::throw_unsupported_dtype(NAME, TYPE);                     \
  }
#define FL_DISPATCH_ALL_AND_COMPLEX(TYPE, NAME, ...)                                       \
  switch (TYPE) {                                                                          \
    FL_DTYPE_CASE(Bool, bool, __VA_ARGS__) FL_DTYPE_CASE(UInt8, uint8_t, __VA_ARGS__)      \
    FL_DTYPE_CASE(Int8, int8_t, __VA_ARGS__) FL_DTYPE_CASE(Int16, int16_t, __VA_ARGS__)    \
    FL_DTYPE_CASE(Int32, int32_t, __VA_ARGS__) FL_DTYPE_CASE(Int64, int64_t, __VA_ARGS__)  \
    FL_DTYPE_CASE(Float16, ::fl::Half, __VA_ARGS__)                                        \
    FL_DTYPE_CASE(BFloat16, ::fl::BFloat16, __VA_ARGS__)                                   \
    FL_DTYPE_CASE(Float32, float, __VA_ARGS__) FL_DTYPE_CASE(Float64, double, __VA_ARGS__) \
    FL_DISPATCH_COMPLEX_CASES(__VA_ARGS__)                                                 \
    default: ::fl::throw_unsupported_dtype(NAME, TYPE);                                    \
  }
#define FL_DISPATCH_FLOATING(TYPE, NAME, ...)                                              \
  switch (TYPE) {                                                                          \
    FL_DTYPE_CASE(Float16, ::fl::Half, __VA_ARGS__)                                        \
    FL_DTYPE_CASE(BFloat16, ::fl::BFloat16, __VA_ARGS__)                                   \
    FL_DTYPE_CASE(Float32, float, __VA_ARGS__) FL_DTYPE_CASE(Float64, double, __VA_ARGS__) \
    default: ::fl::throw_unsupported_dtype(NAME, TYPE);                                    \
  }
#define FL_DISPATCH_INTEGRAL(TYPE, NAME, ...)                                              \
  switch (TYPE) {                                                                          \
    FL_DTYPE_CASE(Bool, bool, __VA_ARGS__) FL_DTYPE_CASE(UInt8, uint8_t, __VA_ARGS__)      \
    FL_DTYPE_CASE(Int8, int8_t, __VA_ARGS__) FL_DTYPE_CASE(Int16, int16_t, __VA_ARGS__)    \
    FL_DTYPE_CASE(Int32, int32_t, __VA_ARGS__) FL_DTYPE_CASE(Int64, int64_t, __VA_ARGS__)  \
    default: ::fl::throw_unsupported_dtype(NAME, TYPE);                                    \
  }

namespace fl {
[[noreturn]] void throw_unsupported_dtype(const char* op, ScalarType t);
}
