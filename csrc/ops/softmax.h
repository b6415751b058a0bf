// softmax / log_softmax and their backward ops, plus the vector math they share with the fused
// attention kernel (csrc/ops/attention.cpp): a vectorized exp and lane-parallel row reductions.
//
// The helpers use GCC vector extensions over 64 bytes, so the compiler emits one AVX-512 op, two
// AVX2 ops or four SSE ops per step depending on the target of the function they are inlined into
// (callers are built with target_clones for those three targets).
#pragma once
#include <xmmintrin.h>

#include <cstdint>
#include <cstring>
#include <limits>

#include "../core/dispatch.h"
#include "../kernels/loops.h"

// The helpers below pass 64-byte vectors between always-inline functions only; no ABI is involved.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace fl::nnvec {

typedef float VF __attribute__((vector_size(64)));
typedef int32_t VI __attribute__((vector_size(64)));
constexpr int kLanes = 16;

#define FL_NN_INLINE static inline __attribute__((always_inline))
// Hot row kernels are built for AVX-512, AVX2+FMA and the baseline, picked at load time.
#define FL_NN_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))

// f(first_row, row_count) over [0, rows) of n elements each, split over OpenMP threads when large.
template <typename F>
void parallel_rows(int64_t rows, int64_t n, F f) {
  const int nt = omp_in_parallel() ? 1 : omp_get_max_threads();
  if (rows * n < kParallelGrain || nt == 1 || rows == 1) { f(int64_t(0), rows); return; }
#pragma omp parallel num_threads(nt)
  {
    const int t = omp_get_thread_num(), k = omp_get_num_threads();
    const int64_t chunk = (rows + k - 1) / k, b = t * chunk, e = std::min(rows, b + chunk);
    if (b < e) f(b, e - b);
  }
}

FL_NN_INLINE VF load(const float* p) { VF v; std::memcpy(&v, p, sizeof(VF)); return v; }
FL_NN_INLINE void store(float* p, VF v) { std::memcpy(p, &v, sizeof(VF)); }
FL_NN_INLINE VF splat(float s) { return VF{} + s; }

// exp(x) for x <= 0 (or NaN), the only arguments softmax and attention produce (x - rowmax):
// Cephes' expf reduction and polynomial, within ~1 ulp; x below -87.34 gives 0.
FL_NN_INLINE VF exp_nonpos(VF x) {
  const VF lo = splat(-87.3365447504f);
  VF xc = x < lo ? lo : x;
  VF n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  // round to nearest
  VF r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  VF p = splat(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  VF y = p * r * r + r + 1.0f;
  VI e = (__builtin_convertvector(n, VI) + 127) << 23;
  y = y * reinterpret_cast<VF&>(e);
  return x < lo ? VF{} : y;
}

FL_NN_INLINE float hmax(VF v) {
  float m = v[0];
  for (int j = 1; j < kLanes; ++j) m = v[j] > m ? v[j] : m;
  return m;
}
FL_NN_INLINE float hsum(VF v) {
  for (int w = kLanes / 2; w > 0; w /= 2)
    for (int j = 0; j < w; ++j) v[j] += v[j + w];
  return v[0];
}

// max over x[0, n); NaNs are skipped here and propagate through the exp that follows.
FL_NN_INLINE float row_max(const float* x, int64_t n) {
  VF acc = splat(-std::numeric_limits<float>::infinity());
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) { VF v = load(x + i); acc = v > acc ? v : acc; }
  float m = hmax(acc);
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

// y[i] = exp(x[i] * scale - shift) for i < n, returning their sum (x * scale - shift <= 0).
FL_NN_INLINE float exp_shift_sum(const float* x, float* y, int64_t n, float scale, float shift) {
  VF acc = VF{};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    VF e = exp_nonpos(load(x + i) * scale - shift);
    if (y) store(y + i, e);
    acc += e;
  }
  if (i < n) {
    float buf[kLanes];
    for (int j = 0; j < kLanes; ++j) buf[j] = i + j < n ? x[i + j] * scale - shift : -std::numeric_limits<float>::infinity();
    VF e = exp_nonpos(load(buf));
    for (int64_t j = 0; i + j < n; ++j) if (y) y[i + j] = e[j];
    acc += e;  // -inf lanes contribute 0
  }
  return hsum(acc);
}

// An element (or vector) expression over index i for write_row, inlined into the cloned caller.
#define FL_NN_LAMBDA(...) [&](int64_t i) __attribute__((always_inline)) { return __VA_ARGS__; }

// Whether a kernel writing `bytes` of output should bypass the caches: beyond this size the
// result cannot stay cached anyway, and streaming stores save the read-for-ownership of every line.
inline bool stream_output(int64_t bytes) { return bytes >= (int64_t(1) << 23); }

// y[i] for i < n from fv(i) (a vector of the 16 values at i) and fs(i) (one value), with
// non-temporal vector stores when `stream` (callers end their parallel work with sfence()).
template <typename FV, typename FS>
FL_NN_INLINE void write_row(float* y, int64_t n, bool stream, FV fv, FS fs) {
  int64_t i = 0;
  if (stream) {
    for (; i < n && (reinterpret_cast<uintptr_t>(y + i) & 63); ++i) y[i] = fs(i);
    for (; i + kLanes <= n; i += kLanes) {
      __m128 part[4];  // SSE streaming stores exist on every x86-64 target the kernels are cloned for
      const VF v = fv(i);
      std::memcpy(part, &v, sizeof(VF));
      for (int k = 0; k < 4; ++k) _mm_stream_ps(y + i + 4 * k, part[k]);
    }
  } else {
    for (; i + kLanes <= n; i += kLanes) store(y + i, fv(i));
  }
  for (; i < n; ++i) y[i] = fs(i);
}
// Orders this thread's streaming stores before what follows (the end of a parallel region).
inline void sfence() { _mm_sfence(); }

}  // namespace fl::nnvec

namespace fl {
// The kernels of softmax.yaml's ops (log: the log_softmax form).
Tensor softmax_forward(const Tensor& self, int64_t dim, ScalarType dtype, bool log);
Tensor softmax_backward_impl(const Tensor& grad, const Tensor& output, int64_t dim, bool log);
}  // namespace fl

// The ops declared in softmax.yaml (generated: csrc/ops/gen_ops.py).
#include "fl_generated/softmax.h"
