// Math written without branches or libm calls, so that GCC vectorizes the loops that use it (the
// loss, activation and normalization kernels). Float versions are accurate to about 1 ulp; the
// templates fall back to libm for double.
//
// Note [explicit FMA]
// The polynomials run on std::fma: half the instructions of a multiply and an add (the kernels are built
// without contraction, -ffp-contract=off), and an fma rounds once on every ISA, so every kernel that inlines
// these functions computes the same bits. Callers are compiled for targets with FMA units (target_clones
// arch=x86-64-v3/v4, the generated kernels' -march=native); elsewhere std::fma is a libm call, exact but slow,
// so strided inputs are made dense before these loops rather than run through them element by element.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace fl::vmath {


// Cephes' expf polynomial with the exponent scaled through the float bits, for x in [-87, 88] (NaN
// propagates); elsewhere the value is unspecified. Error ~1 ulp.
inline float exp_f32_in_range(float x) {
  const float k = x * 1.44269504088896341f + 12582912.0f;  // round(x / ln2) through the float mantissa
  uint32_t ki;
  std::memcpy(&ki, &k, 4);
  const float n = k - 12582912.0f;
  float r = std::fma(n, -0.693359375f, x);
  r = std::fma(n, 2.12194440e-4f, r);
  float p = 1.9875691500e-4f;
  p = std::fma(p, r, 1.3981999507e-3f);
  p = std::fma(p, r, 8.3334519073e-3f);
  p = std::fma(p, r, 4.1665795894e-2f);
  p = std::fma(p, r, 1.6666665459e-1f);
  p = std::fma(p, r, 5.0000001201e-1f);
  p = std::fma(p, r * r, r) + 1.0f;
  const uint32_t bits = (ki - 0x4B400000u + 127u) << 23;  // unsigned: no overflow outside the range
  float scale;
  std::memcpy(&scale, &bits, 4);
  return p * scale;
}

// exp for every x: x below -87 (including -inf, e.g. masked logits) gives exactly 0, above 88 it saturates.
inline float exp_f32(float x) {
  const float e = exp_f32_in_range(std::min(std::max(x, -87.0f), 88.0f));
  return x < -87.0f ? 0.0f : e;
}

// log1p(e) for e in [0, 1] as 2 atanh(e / (2 + e)) (a series in s^2 <= 1/9, float accurate, exact
// for tiny e): the softplus tail log1p(exp(-|x|)) without a libm call.
inline float log1p_unit_f32(float e) {
  const float s = e / (2.0f + e), s2 = s * s;
  float p = 1.0f / 15;
  p = p * s2 + 1.0f / 13;
  p = p * s2 + 1.0f / 11;
  p = p * s2 + 1.0f / 9;
  p = p * s2 + 1.0f / 7;
  p = p * s2 + 1.0f / 5;
  p = p * s2 + 1.0f / 3;
  p = p * s2 + 1.0f;
  return 2.0f * s * p;
}

template <typename T> inline T vexp(T x) { return std::exp(x); }
template <> inline float vexp<float>(float x) { return exp_f32(x); }


// erfc(x) with relative error below 1.2e-7 everywhere (Numerical Recipes' Chebyshev fit of
// t exp(-z^2 + P(t)), t = 1 / (1 + z/2)), so tails such as gelu at x = -5 keep their digits.
inline float erfc_f32(float x) {
  const float z = std::fabs(x), t = 1.0f / (1.0f + 0.5f * z);
  float p = 0.17087277f;
  p = std::fma(p, t, -0.82215223f);
  p = std::fma(p, t, 1.48851587f);
  p = std::fma(p, t, -1.13520398f);
  p = std::fma(p, t, 0.27886807f);
  p = std::fma(p, t, -0.18628806f);
  p = std::fma(p, t, 0.09678418f);
  p = std::fma(p, t, 0.37409196f);
  p = std::fma(p, t, 1.00002368f);
  p = std::fma(p, t, -1.26551223f);
  const float r = t * exp_f32(std::fma(-z, z, p));
  return x >= 0.0f ? r : 2.0f - r;
}
template <typename T> inline T verfc(T x) { return std::erfc(x); }
template <> inline float verfc<float>(float x) { return erfc_f32(x); }

// erf(x): Cephes' odd polynomial for |x| < 1 (keeps the relative accuracy of tiny x, which 1 - erfc
// would lose), 1 - erfc(x) beyond.
inline float erf_f32(float x) {
  const float z = x * x;
  float p = 7.853861353153693e-5f;
  p = p * z - 8.010193625184903e-4f;
  p = p * z + 5.188327685732524e-3f;
  p = p * z - 2.685381193529856e-2f;
  p = p * z + 1.128358514861418e-1f;
  p = p * z - 3.761262582423300e-1f;
  p = p * z + 1.128379165726710f;
  return std::fabs(x) < 1.0f ? x * p : 1.0f - erfc_f32(x);
}

// tanh(x): Cephes' odd polynomial for |x| < 0.625, 1 - 2 / (exp(2|x|) + 1) with the sign beyond
// (exp_f32 saturates, so large |x| gives exactly +-1).
inline float tanh_f32(float x) {
  const float z = x * x, ax = std::fabs(x);
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = ax + ax * z * p;
  const float big = 1.0f - 2.0f / (exp_f32(2.0f * ax) + 1.0f);
  return std::copysign(ax < 0.625f ? small : big, x);  // odd, so tanh(-0) = -0
}

// sigmoid(x) = 1 / (1 + exp(-x)), through exp(-|x|) so that neither side overflows.
inline float sigmoid_f32(float x) {
  const float e = exp_f32(-std::fabs(x)), r = 1.0f / (1.0f + e);
  return x >= 0.0f ? r : e * r;
}
template <typename T> inline T vtanh(T x) { return std::tanh(x); }
template <> inline float vtanh<float>(float x) { return tanh_f32(x); }

}  // namespace fl::vmath
