// The FFT engine's vector transposes (fft_transpose.h), built on GCC vector extensions: one W-wide vector is one AVX-512
// register, two AVX2 ones or four SSE ones, depending on the clone they are compiled into.
#include "fft_transpose.h"

#include <algorithm>
#include <cstring>

#include "fft_plan.h"

// The helpers pass 32- and 64-byte vectors between always-inline functions only; no ABI is involved.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace fl::fft::detail {

// Column runs lie a row apart, too far for the hardware prefetchers: the gathers and scatters ask for the run
// kPrefetch points ahead themselves.
constexpr int64_t kPrefetch = 8;
template <typename T>
inline void prefetch_run(const T* p, int64_t len, bool valid, bool write) {
  if (!valid) return;
  for (int64_t i = 0; i < len; i += 64 / static_cast<int64_t>(sizeof(T))) {
    if (write) __builtin_prefetch(p + i, 1);
    else __builtin_prefetch(p + i, 0);
  }
}

// ---- vector transposes between contiguous complex rows and the lane layout -----------------------------------------
// A full group whose sequences are contiguous complex rows moves in tiles of W lanes x W / 2 points (W values of T
// per vector V): the W row vectors (re, im interleaved) are transposed in log2 W shuffle stages into W vectors, the
// real and the imaginary part of each point across the lanes. The transpose is its own inverse (the scatters).

// The stage that swaps bit H of the row index with bit H of the column index.
template <typename V, typename VM, int W, int H>
FL_FFT_INLINE void transpose_stages(V* v) {
  VM lo, hi;
  for (int c = 0; c < W; ++c) {
    lo[c] = (c & H) == 0 ? c : W + c - H;
    hi[c] = (c & H) == 0 ? c + H : W + c;
  }
  for (int i = 0; i < W; ++i)
    if ((i & H) == 0) {
      const V a = v[i], b = v[i + H];
      v[i] = __builtin_shuffle(a, b, lo);
      v[i + H] = __builtin_shuffle(a, b, hi);
    }
  if constexpr (H > 1) transpose_stages<V, VM, W, H / 2>(v);
}

template <typename T, typename V, typename VM>
FL_FFT_INLINE void gather_tiles(const T* const* src, int64_t n, T* r0, T* i0, T sign) {
  constexpr int W = sizeof(V) / sizeof(T), P = W / 2;
  const int64_t full = n / P * P;
  for (int64_t kb = 0; kb < full; kb += P) {
    V v[W];
    for (int l = 0; l < W; ++l) std::memcpy(&v[l], src[l] + 2 * kb, sizeof(V));
    transpose_stages<V, VM, W, W / 2>(v);
    for (int k = 0; k < P; ++k) {
      const V im = v[2 * k + 1] * sign;
      std::memcpy(r0 + (kb + k) * W, &v[2 * k], sizeof(V));
      std::memcpy(i0 + (kb + k) * W, &im, sizeof(V));
    }
  }
  for (int64_t k = full; k < n; ++k)
    for (int l = 0; l < W; ++l) {
      r0[k * W + l] = src[l][2 * k];
      i0[k * W + l] = sign * src[l][2 * k + 1];
    }
}

template <typename T, typename V, typename VM>
FL_FFT_INLINE void scatter_tiles(T* const* dst, int64_t n, const T* rr, const T* ri, T scale, T iscale) {
  constexpr int W = sizeof(V) / sizeof(T), P = W / 2;
  const int64_t full = n / P * P;
  for (int64_t kb = 0; kb < full; kb += P) {
    V v[W];
    for (int k = 0; k < P; ++k) {
      std::memcpy(&v[2 * k], rr + (kb + k) * W, sizeof(V));
      std::memcpy(&v[2 * k + 1], ri + (kb + k) * W, sizeof(V));
      v[2 * k] *= scale;
      v[2 * k + 1] *= iscale;
    }
    transpose_stages<V, VM, W, W / 2>(v);
    for (int l = 0; l < W; ++l) std::memcpy(dst[l] + 2 * kb, &v[l], sizeof(V));
  }
  for (int64_t k = full; k < n; ++k)
    for (int l = 0; l < W; ++l) {
      dst[l][2 * k] = rr[k * W + l] * scale;
      dst[l][2 * k + 1] = ri[k * W + l] * iscale;
    }
}

typedef float VF16 __attribute__((vector_size(64)));
typedef float VF8 __attribute__((vector_size(32)));
typedef int32_t VI16 __attribute__((vector_size(64)));
typedef int32_t VI8 __attribute__((vector_size(32)));
typedef double VD8 __attribute__((vector_size(64)));
typedef double VD4 __attribute__((vector_size(32)));
typedef int64_t VL8 __attribute__((vector_size(64)));
typedef int64_t VL4 __attribute__((vector_size(32)));

// Neighbouring columns (the lanes are consecutive complex elements of each row): point k of the W lanes is one
// contiguous run of 2 W values, split into its real and imaginary parts (and interleaved back by the scatters).
template <typename T, typename V, typename VM>
FL_FFT_INLINE void gather_cols_impl(const T* base, int64_t stride, int64_t n, T* r0, T* i0, T sign) {
  constexpr int W = sizeof(V) / sizeof(T);
  VM ev, od;
  for (int c = 0; c < W; ++c) { ev[c] = 2 * c; od[c] = 2 * c + 1; }
  for (int64_t k = 0; k < n; ++k) {
    const T* s = base + k * stride;
    prefetch_run(s + kPrefetch * stride, 2 * W, k + kPrefetch < n, false);
    V a, b;
    std::memcpy(&a, s, sizeof(V));
    std::memcpy(&b, s + W, sizeof(V));
    const V re = __builtin_shuffle(a, b, ev), im = __builtin_shuffle(a, b, od) * sign;
    std::memcpy(r0 + k * W, &re, sizeof(V));
    std::memcpy(i0 + k * W, &im, sizeof(V));
  }
}

template <typename T, typename V, typename VM>
FL_FFT_INLINE void scatter_cols_impl(T* base, int64_t stride, int64_t n, const T* rr, const T* ri, T scale, T iscale) {
  constexpr int W = sizeof(V) / sizeof(T);
  VM lo, hi;
  for (int c = 0; c < W; ++c) {
    lo[c] = c / 2 + (c % 2) * W;
    hi[c] = (W + c) / 2 + (c % 2) * W;
  }
  for (int64_t k = 0; k < n; ++k) {
    T* d = base + k * stride;
    prefetch_run(d + kPrefetch * stride, 2 * W, k + kPrefetch < n, true);
    V re, im;
    std::memcpy(&re, rr + k * W, sizeof(V));
    std::memcpy(&im, ri + k * W, sizeof(V));
    re *= scale;
    im *= iscale;
    const V a = __builtin_shuffle(re, im, lo), b = __builtin_shuffle(re, im, hi);
    std::memcpy(d, &a, sizeof(V));
    std::memcpy(d + W, &b, sizeof(V));
  }
}

FL_FFT_CLONES void gather_cols(const float* base, int64_t stride, int64_t n, int64_t nl, float* r0, float* i0,
                               float sign) {
  if (nl == 16) gather_cols_impl<float, VF16, VI16>(base, stride, n, r0, i0, sign);
  else gather_cols_impl<float, VF8, VI8>(base, stride, n, r0, i0, sign);
}
FL_FFT_CLONES void gather_cols(const double* base, int64_t stride, int64_t n, int64_t nl, double* r0, double* i0,
                               double sign) {
  if (nl == 8) gather_cols_impl<double, VD8, VL8>(base, stride, n, r0, i0, sign);
  else gather_cols_impl<double, VD4, VL4>(base, stride, n, r0, i0, sign);
}
FL_FFT_CLONES void scatter_cols(float* base, int64_t stride, int64_t n, int64_t nl, const float* rr, const float* ri,
                                float scale, float iscale) {
  if (nl == 16) scatter_cols_impl<float, VF16, VI16>(base, stride, n, rr, ri, scale, iscale);
  else scatter_cols_impl<float, VF8, VI8>(base, stride, n, rr, ri, scale, iscale);
}
FL_FFT_CLONES void scatter_cols(double* base, int64_t stride, int64_t n, int64_t nl, const double* rr, const double* ri,
                                double scale, double iscale) {
  if (nl == 8) scatter_cols_impl<double, VD8, VL8>(base, stride, n, rr, ri, scale, iscale);
  else scatter_cols_impl<double, VD4, VL4>(base, stride, n, rr, ri, scale, iscale);
}

// r2c: two real rows per lane (the real and the imaginary part), W lanes x W points per tile.
template <typename T, typename V, typename VM>
FL_FFT_INLINE void gather_real_impl(const T* const* sa, const T* const* sb, int64_t n, T* r0, T* i0) {
  constexpr int W = sizeof(V) / sizeof(T);
  const int64_t full = n / W * W;
  for (int64_t kb = 0; kb < full; kb += W) {
    V a[W], b[W];
    for (int l = 0; l < W; ++l) {
      std::memcpy(&a[l], sa[l] + kb, sizeof(V));
      std::memcpy(&b[l], sb[l] + kb, sizeof(V));
    }
    transpose_stages<V, VM, W, W / 2>(a);
    transpose_stages<V, VM, W, W / 2>(b);
    for (int k = 0; k < W; ++k) {
      std::memcpy(r0 + (kb + k) * W, &a[k], sizeof(V));
      std::memcpy(i0 + (kb + k) * W, &b[k], sizeof(V));
    }
  }
  for (int64_t k = full; k < n; ++k)
    for (int l = 0; l < W; ++l) {
      r0[k * W + l] = sa[l][k];
      i0[k * W + l] = sb[l][k];
    }
}

// r2c: separates the spectra A, B of each lane's two rows (A_k = (Z_k + conj Z_{n-k}) / 2, B_k = (Z_k - conj Z_{n-k})
// / 2i) and writes points [0, nout) of both, W / 2 points per tile.
template <typename T, typename V, typename VM>
FL_FFT_INLINE void scatter_real_impl(T* const* da, T* const* db, int64_t n, int64_t nout, const T* zr, const T* zi,
                                     T half) {
  constexpr int W = sizeof(V) / sizeof(T), P = W / 2;
  for (int64_t kb = 0; kb < nout; kb += P) {
    const int cnt = static_cast<int>(std::min<int64_t>(P, nout - kb));
    V va[W], vb[W];
    for (int k = 0; k < P; ++k) {
      const int64_t kk = kb + std::min(k, cnt - 1), c = kk == 0 ? 0 : n - kk;
      V pr, pi, cr, ci;
      std::memcpy(&pr, zr + kk * W, sizeof(V));
      std::memcpy(&pi, zi + kk * W, sizeof(V));
      std::memcpy(&cr, zr + c * W, sizeof(V));
      std::memcpy(&ci, zi + c * W, sizeof(V));
      va[2 * k] = (pr + cr) * half;
      va[2 * k + 1] = (pi - ci) * half;
      vb[2 * k] = (pi + ci) * half;
      vb[2 * k + 1] = (cr - pr) * half;
    }
    transpose_stages<V, VM, W, W / 2>(va);
    transpose_stages<V, VM, W, W / 2>(vb);
    if (cnt == P) {
      for (int l = 0; l < W; ++l) {
        std::memcpy(da[l] + 2 * kb, &va[l], sizeof(V));
        std::memcpy(db[l] + 2 * kb, &vb[l], sizeof(V));
      }
    } else {
      for (int l = 0; l < W; ++l) {
        std::memcpy(da[l] + 2 * kb, &va[l], 2 * cnt * sizeof(T));
        std::memcpy(db[l] + 2 * kb, &vb[l], 2 * cnt * sizeof(T));
      }
    }
  }
}

FL_FFT_CLONES void gather_real(const float* const* sa, const float* const* sb, int64_t n, int64_t nl, float* r0,
                               float* i0) {
  if (nl == 16) gather_real_impl<float, VF16, VI16>(sa, sb, n, r0, i0);
  else gather_real_impl<float, VF8, VI8>(sa, sb, n, r0, i0);
}
FL_FFT_CLONES void gather_real(const double* const* sa, const double* const* sb, int64_t n, int64_t nl, double* r0,
                               double* i0) {
  if (nl == 8) gather_real_impl<double, VD8, VL8>(sa, sb, n, r0, i0);
  else gather_real_impl<double, VD4, VL4>(sa, sb, n, r0, i0);
}
FL_FFT_CLONES void scatter_real(float* const* da, float* const* db, int64_t n, int64_t nout, int64_t nl,
                                const float* zr, const float* zi, float half) {
  if (nl == 16) scatter_real_impl<float, VF16, VI16>(da, db, n, nout, zr, zi, half);
  else scatter_real_impl<float, VF8, VI8>(da, db, n, nout, zr, zi, half);
}
FL_FFT_CLONES void scatter_real(double* const* da, double* const* db, int64_t n, int64_t nout, int64_t nl,
                                const double* zr, const double* zi, double half) {
  if (nl == 8) scatter_real_impl<double, VD8, VL8>(da, db, n, nout, zr, zi, half);
  else scatter_real_impl<double, VD4, VL4>(da, db, n, nout, zr, zi, half);
}

FL_FFT_CLONES void gather_rows(const float* const* src, int64_t n, int64_t nl, float* r0, float* i0, float sign) {
  if (nl == 16) gather_tiles<float, VF16, VI16>(src, n, r0, i0, sign);
  else gather_tiles<float, VF8, VI8>(src, n, r0, i0, sign);
}
FL_FFT_CLONES void gather_rows(const double* const* src, int64_t n, int64_t nl, double* r0, double* i0, double sign) {
  if (nl == 8) gather_tiles<double, VD8, VL8>(src, n, r0, i0, sign);
  else gather_tiles<double, VD4, VL4>(src, n, r0, i0, sign);
}
FL_FFT_CLONES void scatter_rows(float* const* dst, int64_t n, int64_t nl, const float* rr, const float* ri, float scale,
                                float iscale) {
  if (nl == 16) scatter_tiles<float, VF16, VI16>(dst, n, rr, ri, scale, iscale);
  else scatter_tiles<float, VF8, VI8>(dst, n, rr, ri, scale, iscale);
}
FL_FFT_CLONES void scatter_rows(double* const* dst, int64_t n, int64_t nl, const double* rr, const double* ri,
                                double scale, double iscale) {
  if (nl == 8) scatter_tiles<double, VD8, VL8>(dst, n, rr, ri, scale, iscale);
  else scatter_tiles<double, VD4, VL4>(dst, n, rr, ri, scale, iscale);
}

}  // namespace fl::fft::detail
