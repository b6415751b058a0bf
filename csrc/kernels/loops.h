// The elementwise engine every pointwise kernel runs on.
//
// ElementwiseIter takes an output and inputs that broadcast to the output's shape, orders the
// dims by the output's memory layout, merges dims that are contiguous across all operands, and
// walks the result as a series of 1-D inner loops, split across OpenMP threads when large.
#pragma once
#include <omp.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "../core/tensor.h"

namespace fl {

constexpr int kMaxOperands = 4;
constexpr int kMaxDims = 64;
// Below this many elements a loop runs on one thread: thread start-up would cost more.
constexpr int64_t kParallelGrain = 32768;

struct ElementwiseIter {
  int nops = 0;
  int ndim = 0;  // innermost first
  int64_t numel = 1;
  int64_t shape[kMaxDims];
  int64_t strides[kMaxOperands][kMaxDims];  // bytes
  char* base[kMaxOperands];
  int64_t itemsize[kMaxOperands];

  // ops[0] is the output; every input must broadcast to its shape.
  explicit ElementwiseIter(std::initializer_list<const TensorImpl*> ops, const char* opname = "elementwise");

  bool is_contiguous() const {
    if (ndim > 1) return false;
    if (ndim == 0) return true;
    for (int k = 0; k < nops; ++k) if (strides[k][0] != itemsize[k]) return false;
    return true;
  }

  // f(char** ptrs, const int64_t* inner_strides, int64_t n) over every inner run.
  template <typename F>
  void for_each(F&& f, int64_t grain = kParallelGrain) const {
    if (numel == 0) return;
    if (ndim == 0) {
      char* p[kMaxOperands];
      int64_t s[kMaxOperands] = {0, 0, 0, 0};
      for (int k = 0; k < nops; ++k) p[k] = base[k];
      f(p, s, int64_t(1));
      return;
    }
    int nthreads = numel >= grain ? omp_get_max_threads() : 1;
    if (nthreads <= 1 || omp_in_parallel()) { run_range(f, 0, numel); return; }
#pragma omp parallel num_threads(nthreads)
    {
      int t = omp_get_thread_num(), nt = omp_get_num_threads();
      int64_t chunk = (numel + nt - 1) / nt;
      int64_t b = t * chunk, e = std::min(numel, b + chunk);
      if (b < e) run_range(f, b, e);
    }
  }

 private:
  template <typename F>
  void run_range(F& f, int64_t begin, int64_t end) const {
    int64_t idx[kMaxDims];
    int64_t rem = begin;
    char* p[kMaxOperands];
    for (int k = 0; k < nops; ++k) p[k] = base[k];
    for (int d = 0; d < ndim; ++d) {
      idx[d] = rem % shape[d];
      rem /= shape[d];
      for (int k = 0; k < nops; ++k) p[k] += idx[d] * strides[k][d];
    }
    int64_t inner[kMaxOperands];
    for (int k = 0; k < nops; ++k) inner[k] = strides[k][0];
    int64_t pos = begin;
    while (pos < end) {
      int64_t n = std::min(shape[0] - idx[0], end - pos);
      f(p, inner, n);
      pos += n;
      if (pos >= end) break;
      // advance to the start of the next inner run
      for (int k = 0; k < nops; ++k) p[k] += (n - 1) * strides[k][0];
      idx[0] += n - 1;
      for (int d = 0; d < ndim; ++d) {
        if (++idx[d] < shape[d]) {
          for (int k = 0; k < nops; ++k) p[k] += strides[k][d];
          break;
        }
        for (int k = 0; k < nops; ++k) p[k] -= (shape[d] - 1) * strides[k][d];
        idx[d] = 0;
      }
    }
  }
};

// Whether t's elements fill numel consecutive slots of memory (a permutation of a contiguous layout, such as
// a transposed matrix): two such operands with equal strides pair their elements at equal memory offsets, so an
// elementwise loop may walk both as one flat run.
inline bool dense_in_memory(const TensorImpl& t) {
  if (t.contiguous) return true;
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.sizes[d] != 1) dims.push_back(d);
  std::sort(dims.begin(), dims.end(), [&](int64_t a, int64_t b) { return t.strides[a] < t.strides[b]; });
  int64_t expected = 1;
  for (int64_t d : dims) {
    if (t.strides[d] != expected) return false;
    expected *= t.sizes[d];
  }
  return true;
}

// Whether a and b have one shape and one memory layout that is dense in memory (see above).
inline bool flat_alike(const TensorImpl& a, const TensorImpl& b) {
  if (a.sizes != b.sizes || !dense_in_memory(a) || !dense_in_memory(b)) return false;
  for (int64_t d = 0; d < a.dim(); ++d)
    if (a.sizes[d] != 1 && a.strides[d] != b.strides[d]) return false;
  return true;
}

// out = f(a) elementwise; f works on opmath types (float for the 16-bit floats).
template <typename Out, typename In, typename F>
void unary_loop(const ElementwiseIter& it, F f) {
  using OM = opmath_t<In>;
  it.for_each([&](char** p, const int64_t* s, int64_t n) {
    // GCC 12 crashes vectorizing bfloat16 -> bool predicates; those take the strided loop.
    constexpr bool fast = !(std::is_same_v<In, BFloat16> && std::is_same_v<Out, bool>);
    if (fast && s[0] == sizeof(Out) && s[1] == sizeof(In)) {
      Out* o = reinterpret_cast<Out*>(p[0]);
      const In* a = reinterpret_cast<const In*>(p[1]);
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<Out>(f(static_cast<OM>(a[i])));
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<Out*>(p[0] + i * s[0]) =
            static_cast<Out>(f(static_cast<OM>(*reinterpret_cast<const In*>(p[1] + i * s[1]))));
    }
  });
}

// out = f(a, b) elementwise, with fast paths for contiguous operands and a broadcast scalar.
template <typename Out, typename In, typename F>
void binary_loop(const ElementwiseIter& it, F f) {
  using OM = opmath_t<In>;
  it.for_each([&](char** p, const int64_t* s, int64_t n) {
    Out* o = reinterpret_cast<Out*>(p[0]);
    const In* a = reinterpret_cast<const In*>(p[1]);
    const In* b = reinterpret_cast<const In*>(p[2]);
    if (s[0] == sizeof(Out) && s[1] == sizeof(In) && s[2] == sizeof(In)) {
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<Out>(f(static_cast<OM>(a[i]), static_cast<OM>(b[i])));
    } else if (s[0] == sizeof(Out) && s[1] == sizeof(In) && s[2] == 0) {
      const OM bv = static_cast<OM>(*b);
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<Out>(f(static_cast<OM>(a[i]), bv));
    } else if (s[0] == sizeof(Out) && s[1] == 0 && s[2] == sizeof(In)) {
      const OM av = static_cast<OM>(*a);
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<Out>(f(av, static_cast<OM>(b[i])));
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<Out*>(p[0] + i * s[0]) = static_cast<Out>(f(
            static_cast<OM>(*reinterpret_cast<const In*>(p[1] + i * s[1])),
            static_cast<OM>(*reinterpret_cast<const In*>(p[2] + i * s[2]))));
    }
  });
}

// out = f(a, b, c) elementwise (clamp with tensor bounds, where, lerp, addcmul, ...).
template <typename Out, typename A, typename B, typename C, typename F>
void ternary_loop(const ElementwiseIter& it, F f) {
  it.for_each([&](char** p, const int64_t* s, int64_t n) {
    for (int64_t i = 0; i < n; ++i)
      *reinterpret_cast<Out*>(p[0] + i * s[0]) = static_cast<Out>(f(
          static_cast<opmath_t<A>>(*reinterpret_cast<const A*>(p[1] + i * s[1])),
          static_cast<opmath_t<B>>(*reinterpret_cast<const B*>(p[2] + i * s[2])),
          static_cast<opmath_t<C>>(*reinterpret_cast<const C*>(p[3] + i * s[3]))));
  });
}

}  // namespace fl
