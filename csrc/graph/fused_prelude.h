// What every generated fused kernel (codegen/cpp.py) includes: the scalar function of each fusible op, expanded
// from the same op lists as the eager kernels (pointwise_list.h, activation_math.h), so a fused chain computes
// each element exactly as the eager ops do one after another. Only headers without the dispatcher, so that a
// program's translation unit compiles in about a second.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

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
// expression inside the op's range, libm outside it. A generated loop runs a block with dense_<op>_fast, tracking the
// least and greatest argument (the range's bounds are literals in the generated source, from _C._fusible_ops), and
// runs it again with dense_<op> when one lay outside, as the eager kernel does, so the common case vectorizes.
// Elsewhere eager's strided loop applies un_<op>.
#define FL_X(name, expr, lo, hi, libm_expr)                                         \
  inline float dense_##name##_fast(float x) { return expr; }                       \
  inline float dense_##name(float x) { return (x < (lo) || x > (hi)) ? libm_expr : expr; }
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

// A finished row copied to its place in a large output with streaming stores, which skip reading the destination
// lines into the cache first (as the hand-written row kernels write large outputs: nnvec::write_row): a third less
// memory traffic for a kernel that reads one input and writes one output. stream_fence() orders them before the
// parallel region ends.
// The widest streaming store of the CPU the program is compiled for (-march=native): 64-byte ones fill a line at once.
#if defined(__AVX512F__)
using StreamVec = __m512i;
inline void stream_store(void* p, StreamVec v) { _mm512_stream_si512(reinterpret_cast<StreamVec*>(p), v); }
#elif defined(__AVX__)
using StreamVec = __m256i;
inline void stream_store(void* p, StreamVec v) { _mm256_stream_si256(reinterpret_cast<StreamVec*>(p), v); }
#elif defined(__SSE2__)
using StreamVec = __m128i;
inline void stream_store(void* p, StreamVec v) { _mm_stream_si128(reinterpret_cast<StreamVec*>(p), v); }
#endif
template <typename T> inline void stream_row(T* __restrict__ dst, const T* __restrict__ src, int64_t n) {
  int64_t i = 0;
#if defined(__SSE2__)
  constexpr int64_t lanes = sizeof(StreamVec) / sizeof(T);
  for (; i < n && (reinterpret_cast<uintptr_t>(dst + i) % sizeof(StreamVec)); ++i) dst[i] = src[i];
  for (; i + lanes <= n; i += lanes) {
    StreamVec v;
    std::memcpy(&v, src + i, sizeof(v));
    stream_store(dst + i, v);
  }
#endif
  for (; i < n; ++i) dst[i] = src[i];
}
inline void stream_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

}  // namespace fl::fused
