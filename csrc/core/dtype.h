// Scalar types, the two 16-bit float formats, and PyTorch's type promotion.
#pragma once
#include <cstdint>
#include <cstring>
#include <cmath>
#include <limits>
#include <type_traits>

namespace fl {

// Order matters: it indexes kPromoteTable, the name tables and the dtype objects in Python (new types go last).
enum class ScalarType : int8_t {
  Bool, UInt8, Int8, Int16, Int32, Int64, Float16, BFloat16, Float32, Float64, ComplexFloat, ComplexDouble,
  Float8_e4m3fn, Float8_e5m2, Float8_e4m3fnuz, Float8_e5m2fnuz, Float8_e8m0fnu, NumTypes
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
      // a NaN keeps its top payload bits and becomes quiet, as x86's F16C conversion (torch's) does
      x = static_cast<uint16_t>(sign | 0x7c00u | (absu > 0x7f800000u ? 0x200u | ((absu >> 13) & 0x3ffu) : 0u));
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
    } else if (exp == 31) {  // inf, or a NaN made quiet as c10's conversion does
      u = sign | 0x7f800000u | (mant ? 0x400000u | (mant << 13) : 0u);
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

inline uint32_t float_bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float bits_float(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

// The float8 formats, stored as bits (they are storage types: torch computes almost nothing in them). The
// conversions from float are c10's bit for bit: round to nearest even; e4m3fn (no inf) saturates to +-448 and keeps
// NaN; e5m2 overflows to inf; the fnuz formats have one NaN (0x80), no inf and no -0; e8m0fnu is an unsigned
// biased exponent (2^-127 .. 2^127) with NaN 0xff, rounding on the guard bits as c10 does.
enum class F8 { E4M3FN, E5M2, E4M3FNUZ, E5M2FNUZ, E8M0FNU };

// e4m3fn/e5m2/fnuz from float: `max` (float bits of the first value that overflows), `denorm` (the magic addend
// that rounds a subnormal result into the low bits), `min_normal` (float bits of the smallest normal), `bias`
// (the format's exponent bias) and `mbits` (mantissa bits).
template <uint32_t max, uint32_t denorm, uint32_t min_normal, int bias, int mbits, bool fnuz>
inline uint8_t f8_encode(float f, uint8_t overflow, uint8_t nan) {
  constexpr int shift = 23 - mbits;
  uint32_t u = float_bits(f);
  const uint32_t sign = u & 0x80000000u;
  u ^= sign;
  uint8_t r;
  if (u >= max) {
    if (fnuz) return 0x80;
    r = u > 0x7f800000u ? nan : overflow;
  } else if (u < min_normal) {
    r = static_cast<uint8_t>(float_bits(bits_float(u) + bits_float(denorm)) - denorm);
    if (fnuz && r == 0) return 0;
  } else {
    const uint32_t mant_odd = (u >> shift) & 1u;
    u += (static_cast<uint32_t>(bias - 127) << 23) + ((1u << (shift - 1)) - 1) + mant_odd;
    r = static_cast<uint8_t>(u >> shift);
    if (!fnuz && mbits == 3 && r == nan) r = overflow;  // e4m3fn: rounding up into the NaN pattern saturates
  }
  return static_cast<uint8_t>(r | (sign >> 24));
}

// e4m3fn/e5m2/fnuz to float (exact; subnormals scaled from the mantissa).
template <int bias, int mbits>
inline float f8_decode(uint8_t x) {
  const uint32_t sign = static_cast<uint32_t>(x & 0x80u) << 24;
  const uint32_t e = (x & 0x7fu) >> mbits, m = x & ((1u << mbits) - 1);
  if (e == 0) {
    const float mag = static_cast<float>(m) * bits_float(static_cast<uint32_t>(127 + 1 - bias - mbits) << 23);
    return bits_float(float_bits(mag) | sign);
  }
  return bits_float(sign | ((e + 127 - bias) << 23) | (m << (23 - mbits)));
}

template <F8 K> inline uint8_t f8_from_float(float f) {
  if constexpr (K == F8::E4M3FN) return f8_encode<1087u << 20, 141u << 23, 121u << 23, 7, 3, false>(f, 0x7e, 0x7f);
  else if constexpr (K == F8::E5M2) return f8_encode<143u << 23, 134u << 23, 113u << 23, 15, 2, false>(f, 0x7c, 0x7f);
  else if constexpr (K == F8::E4M3FNUZ) return f8_encode<0x87u << 23, 0x8cu << 23, 0x78u << 23, 8, 3, true>(f, 0, 0);
  else if constexpr (K == F8::E5M2FNUZ) return f8_encode<0x8fu << 23, 0x85u << 23, 0x70u << 23, 16, 2, true>(f, 0, 0);
  else {
    const uint32_t u = float_bits(f), e = (u >> 23) & 0xffu;  // the sign is dropped
    if (e == 0xffu) return 0xff;
    // c10: round up when the guard bit is set and (round or sticky bits, or a nonzero exponent)
    const bool g = u & 0x400000u, rs = u & 0x3fffffu;
    return static_cast<uint8_t>(e + (g && (rs || e > 0)));
  }
}

template <F8 K> inline float f8_to_float(uint8_t x) {
  if constexpr (K == F8::E4M3FN) {
    if ((x & 0x7fu) == 0x7fu) return bits_float((static_cast<uint32_t>(x & 0x80u) << 24) | 0x7ff00000u);  // c10's NaN
    return f8_decode<7, 3>(x);
  } else if constexpr (K == F8::E5M2) {
    return static_cast<float>(Half::from_bits(static_cast<uint16_t>(x << 8)));
  } else if constexpr (K == F8::E8M0FNU) {
    return x == 0 ? bits_float(0x00400000u) : x == 0xff ? bits_float(0x7f800001u) : bits_float(static_cast<uint32_t>(x) << 23);
  } else {
    if (x == 0x80) return bits_float(0x7f800001u);
    return K == F8::E4M3FNUZ ? f8_decode<8, 3>(x) : f8_decode<16, 2>(x);
  }
}

template <F8 K>
struct Float8 {
  static constexpr F8 kind = K;
  uint8_t x = 0;
  Float8() = default;
  static Float8 from_bits(uint8_t b) { Float8 h; h.x = b; return h; }
  Float8(float f) : x(f8_from_float<K>(f)) {}
  operator float() const { return f8_to_float<K>(x); }
};
using Float8_e4m3fn = Float8<F8::E4M3FN>;
using Float8_e5m2 = Float8<F8::E5M2>;
using Float8_e4m3fnuz = Float8<F8::E4M3FNUZ>;
using Float8_e5m2fnuz = Float8<F8::E5M2FNUZ>;
using Float8_e8m0fnu = Float8<F8::E8M0FNU>;

// The 16- and 8-bit float storage types: arithmetic and conversions go through float.
template <typename T> struct IsReducedFloat : std::false_type {};
template <> struct IsReducedFloat<Half> : std::true_type {};
template <> struct IsReducedFloat<BFloat16> : std::true_type {};
template <F8 K> struct IsReducedFloat<Float8<K>> : std::true_type {};
template <typename T> constexpr bool is_reduced_float_v = IsReducedFloat<T>::value;
template <typename T> struct IsFloat8 : std::false_type {};
template <F8 K> struct IsFloat8<Float8<K>> : std::true_type {};
template <typename T> constexpr bool is_float8_v = IsFloat8<T>::value;

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
template <typename T> constexpr complex<T>& operator+=(complex<T>& a, complex<T> b) { return a = a + b; }
template <typename T> constexpr complex<T>& operator*=(complex<T>& a, complex<T> b) { return a = a * b; }
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
  static constexpr size_t sizes[] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8, 8, 16, 1, 1, 1, 1, 1};
  static_assert(sizeof(sizes) / sizeof(sizes[0]) == kNumScalarTypes);
  return sizes[static_cast<int>(t)];
}
inline bool is_float8(ScalarType t) { return t >= ScalarType::Float8_e4m3fn && t < ScalarType::NumTypes; }
// The floating types kernels compute in. The float8 types are storage types: torch's CPU build has a handful of
// kernels for them, which check for them by name (is_float8), and every other kernel refuses them.
inline bool is_floating(ScalarType t) { return t >= ScalarType::Float16 && t <= ScalarType::Float64; }
// torch's isFloatingType (dtype.is_floating_point): the above and the float8 types.
inline bool is_floating_point(ScalarType t) { return is_floating(t) || is_float8(t); }
inline bool is_complex(ScalarType t) { return t == ScalarType::ComplexFloat || t == ScalarType::ComplexDouble; }
// The dtypes whose tensors can require grad.
inline bool is_differentiable(ScalarType t) { return is_floating_point(t) || is_complex(t); }
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
inline bool is_signed(ScalarType t) {
  return t != ScalarType::Bool && t != ScalarType::UInt8 && t != ScalarType::Float8_e8m0fnu;
}

// The name as PyTorch prints it after "torch.".
const char* dtype_name(ScalarType t);
// The type names PyTorch's error messages use ("Float", "Long", ...).
const char* c10_type_name(ScalarType t);

// Category used by the scalar promotion rules: bool < integral < floating < complex.
inline int category(ScalarType t) { return t == ScalarType::Bool ? 0 : is_complex(t) ? 3 : is_floating_point(t) ? 2 : 1; }

ScalarType promote_types(ScalarType a, ScalarType b);

template <typename T> struct CTypeToScalar;
#define FL_MAP_CTYPE(ct, st) template <> struct CTypeToScalar<ct> { static constexpr ScalarType value = ScalarType::st; };
FL_MAP_CTYPE(bool, Bool) FL_MAP_CTYPE(uint8_t, UInt8) FL_MAP_CTYPE(int8_t, Int8) FL_MAP_CTYPE(int16_t, Int16)
FL_MAP_CTYPE(int32_t, Int32) FL_MAP_CTYPE(int64_t, Int64) FL_MAP_CTYPE(Half, Float16)
FL_MAP_CTYPE(BFloat16, BFloat16) FL_MAP_CTYPE(float, Float32) FL_MAP_CTYPE(double, Float64)
FL_MAP_CTYPE(complex<float>, ComplexFloat) FL_MAP_CTYPE(complex<double>, ComplexDouble)
FL_MAP_CTYPE(Float8_e4m3fn, Float8_e4m3fn) FL_MAP_CTYPE(Float8_e5m2, Float8_e5m2)
FL_MAP_CTYPE(Float8_e4m3fnuz, Float8_e4m3fnuz) FL_MAP_CTYPE(Float8_e5m2fnuz, Float8_e5m2fnuz)
FL_MAP_CTYPE(Float8_e8m0fnu, Float8_e8m0fnu)
#undef FL_MAP_CTYPE

// Arithmetic type for a storage type: 16- and 8-bit floats compute in float.
template <typename T> using opmath_t = std::conditional_t<is_reduced_float_v<T>, float, T>;

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
  } else if constexpr (is_float8_v<From> && std::is_integral_v<To>) {
    // c10 casts the float straight to the integer type: x86's cvttss2si, whose NaN and out-of-range answer is
    // the minimum of int32 (int64 for int64), truncated to narrower types; the fnuz and e8m0 NaN, a constant in
    // c10's conversion, folds to 0
    const float f = static_cast<float>(v);
    if (std::isnan(f) && From::kind != F8::E4M3FN && From::kind != F8::E5M2) return To(0);
    if constexpr (sizeof(To) == 8) {
      return !(f >= -9.2233720368547758e18f && f < 9.2233720368547758e18f) ? std::numeric_limits<int64_t>::min()
                                                                          : static_cast<int64_t>(f);
    } else {
      return static_cast<To>(!(f >= -2147483648.0f && f < 2147483648.0f) ? std::numeric_limits<int32_t>::min()
                                                                         : static_cast<int32_t>(f));
    }
  } else if constexpr (is_reduced_float_v<From>) {
    return convert<To>(static_cast<float>(v));
  } else if constexpr (is_reduced_float_v<To>) {  // a double rounds to float first, as c10's casts
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
// The real types kernels compute in (bool, integers, floating point).
#define FL_DISPATCH_ALL_CASES(...)                                                         \
    FL_DTYPE_CASE(Bool, bool, __VA_ARGS__) FL_DTYPE_CASE(UInt8, uint8_t, __VA_ARGS__)      \
    FL_DTYPE_CASE(Int8, int8_t, __VA_ARGS__) FL_DTYPE_CASE(Int16, int16_t, __VA_ARGS__)    \
    FL_DTYPE_CASE(Int32, int32_t, __VA_ARGS__) FL_DTYPE_CASE(Int64, int64_t, __VA_ARGS__)  \
    FL_DTYPE_CASE(Float16, ::fl::Half, __VA_ARGS__)                                        \
    FL_DTYPE_CASE(BFloat16, ::fl::BFloat16, __VA_ARGS__)                                   \
    FL_DTYPE_CASE(Float32, float, __VA_ARGS__) FL_DTYPE_CASE(Float64, double, __VA_ARGS__)
#define FL_DISPATCH_ALL(TYPE, NAME, ...)                                                   \
  switch (TYPE) {                                                                          \
    FL_DISPATCH_ALL_CASES(__VA_ARGS__)                                                     \
    default: ::fl::throw_unsupported_dtype(NAME, TYPE);                                    \
  }
// The float8 dtypes, for the few kernels torch's CPU build has for them (copies, fill, indexing, comparison).
#define FL_DISPATCH_FLOAT8_CASES(...)                                        \
  FL_DTYPE_CASE(Float8_e4m3fn, ::fl::Float8_e4m3fn, __VA_ARGS__)            \
  FL_DTYPE_CASE(Float8_e5m2, ::fl::Float8_e5m2, __VA_ARGS__)                \
  FL_DTYPE_CASE(Float8_e4m3fnuz, ::fl::Float8_e4m3fnuz, __VA_ARGS__)        \
  FL_DTYPE_CASE(Float8_e5m2fnuz, ::fl::Float8_e5m2fnuz, __VA_ARGS__)        \
  FL_DTYPE_CASE(Float8_e8m0fnu, ::fl::Float8_e8m0fnu, __VA_ARGS__)
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
    FL_DISPATCH_ALL_CASES(__VA_ARGS__)                                                     \
    FL_DISPATCH_COMPLEX_CASES(__VA_ARGS__)                                                 \
    default: ::fl::throw_unsupported_dtype(NAME, TYPE);                                    \
  }
// Every storage type: the kernels that move and convert values (copy_, fill_, item, tolist).
#define FL_DISPATCH_STORAGE(TYPE, NAME, ...)                                                 \
  switch (TYPE) {                                                                          \
    FL_DISPATCH_ALL_CASES(__VA_ARGS__)                                                     \
    FL_DISPATCH_COMPLEX_CASES(__VA_ARGS__)                                                 \
    FL_DISPATCH_FLOAT8_CASES(__VA_ARGS__)                                                  \
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
