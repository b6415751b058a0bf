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
  Bool, UInt8, Int8, Int16, Int32, Int64, Float16, BFloat16, Float32, Float64, NumTypes
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

inline size_t element_size(ScalarType t) {
  static constexpr size_t sizes[] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8};
  return sizes[static_cast<int>(t)];
}
inline bool is_floating(ScalarType t) { return t >= ScalarType::Float16; }
inline bool is_integral(ScalarType t, bool include_bool) {
  return (t != ScalarType::Bool || include_bool) && t <= ScalarType::Int64;
}
inline bool is_signed(ScalarType t) { return t != ScalarType::Bool && t != ScalarType::UInt8; }

// The name as PyTorch prints it after "torch.".
const char* dtype_name(ScalarType t);
// The type names PyTorch's error messages use ("Float", "Long", ...).
const char* c10_type_name(ScalarType t);

// Category used by the scalar promotion rules: bool < integral < floating.
inline int category(ScalarType t) { return t == ScalarType::Bool ? 0 : (is_floating(t) ? 2 : 1); }

ScalarType promote_types(ScalarType a, ScalarType b);

template <typename T> struct CTypeToScalar;
#define FL_MAP_CTYPE(ct, st) template <> struct CTypeToScalar<ct> { static constexpr ScalarType value = ScalarType::st; };
FL_MAP_CTYPE(bool, Bool) FL_MAP_CTYPE(uint8_t, UInt8) FL_MAP_CTYPE(int8_t, Int8) FL_MAP_CTYPE(int16_t, Int16)
FL_MAP_CTYPE(int32_t, Int32) FL_MAP_CTYPE(int64_t, Int64) FL_MAP_CTYPE(Half, Float16)
FL_MAP_CTYPE(BFloat16, BFloat16) FL_MAP_CTYPE(float, Float32) FL_MAP_CTYPE(double, Float64)
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
