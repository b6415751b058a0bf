// The convolution kernels on contiguous float/double buffers: im2col/col2im, the GEMM path per
// group, and the direct depthwise path. See Note [Convolution geometry] in conv.h.
#include "conv_kernels.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <cstring>

#include "../kernels/blas.h"

namespace fl::conv {

bool Geom::pointwise() const {
  for (int i = 0; i < kD; ++i)
    if (k[i] != 1 || s[i] != 1 || p[i] != 0 || in[i] != out[i]) return false;
  return true;
}

namespace {

// Calls f(tap, out_row, in_row, lo, hi, iw0) for every kernel tap and every output row (od, oh):
// out_row and in_row are the rows' offsets in the output and input planes (in_row < 0 when the
// input row lies in the padding); output columns [lo, hi) read input column ow * s[2] + iw0, the
// others read padding.
template <typename F>
void for_rows(const Geom& g, F&& f) {
  const int64_t W = g.in[2], OW = g.out[2], sw = g.s[2];
  int64_t tap = 0;
  for (int64_t kd = 0; kd < g.k[0]; ++kd)
    for (int64_t kh = 0; kh < g.k[1]; ++kh)
      for (int64_t kw = 0; kw < g.k[2]; ++kw, ++tap) {
        const int64_t iw0 = kw * g.d[2] - g.p[2];
        const int64_t lo = std::min(OW, iw0 >= 0 ? 0 : (-iw0 + sw - 1) / sw);
        const int64_t hi = std::max(lo, W - 1 - iw0 >= 0 ? std::min(OW, (W - 1 - iw0) / sw + 1) : 0);
        for (int64_t od = 0; od < g.out[0]; ++od) {
          const int64_t id = od * g.s[0] - g.p[0] + kd * g.d[0];
          const bool d_in = id >= 0 && id < g.in[0];
          for (int64_t oh = 0; oh < g.out[1]; ++oh) {
            const int64_t ih = oh * g.s[1] - g.p[1] + kh * g.d[1];
            const bool in = d_in && ih >= 0 && ih < g.in[1];
            f(tap, (od * g.out[1] + oh) * OW, in ? (id * g.in[1] + ih) * W : int64_t(-1), lo, hi, iw0);
          }
        }
      }
}

// OpenBLAS's own thread count, set for a scope (batch-parallel loops run single-threaded GEMMs).
struct BlasThreads {
  int prev;
  explicit BlasThreads(int n) : prev(scipy_openblas_get_num_threads()) { scipy_openblas_set_num_threads(n); }
  ~BlasThreads() { scipy_openblas_set_num_threads(prev); }
};

// Runs body(n, slot, inner_parallel) for every sample n: across samples (one slot per thread,
// single-threaded BLAS inside) when there are at least as many samples as threads, otherwise
// one sample at a time in slot 0 with threaded BLAS and parallel im2col.
struct BatchPlan {
  int slots = 1;
  bool across = false;
  explicit BatchPlan(int64_t N) {
    const int nt = omp_in_parallel() ? 1 : omp_get_max_threads();
    across = nt > 1 && N >= nt;
    slots = across ? nt : 1;
  }
  template <typename F>
  void run(int64_t N, F&& body) const {
    if (!across) {
      for (int64_t n = 0; n < N; ++n) body(n, 0, true);
      return;
    }
    BlasThreads one(1);
#pragma omp parallel num_threads(slots)
    {
      const int slot = omp_get_thread_num();
#pragma omp for schedule(static)
      for (int64_t n = 0; n < N; ++n) body(n, slot, false);
    }
  }
};

// Scratch memory from the caching allocator (fresh pages cost more than the copies they hold).
template <typename T>
T* scratch(Tensor& holder, int64_t n) {
  holder = empty({std::max<int64_t>(n, 1)}, CTypeToScalar<T>::value);
  return holder->data<T>();
}

template <typename T>
void gemm(int64_t m, int64_t n, int64_t k, const T* a, int64_t ars, int64_t acs, const T* b, int64_t brs, int64_t bcs,
          T beta, T* c, int64_t crs) {
  blas::gemm<T>(m, n, k, T(1), {a, ars, acs}, {b, brs, bcs}, beta, {c, crs, 1});
}

// ---- depthwise: direct loops, parallel over planes -------------------------------------------------

template <typename T>
void dw_forward(const Geom& g, const T* x, const T* w, const T* bias, T* y) {
  const int64_t L = g.out_plane(), inP = g.in_plane(), taps = g.taps(), cog = g.cout_g(), sw = g.s[2];
#pragma omp parallel for schedule(static) if (g.N * g.Cout * L * taps > 32768)
  for (int64_t nc = 0; nc < g.N * g.Cout; ++nc) {
    const int64_t n = nc / g.Cout, co = nc % g.Cout;
    const T* xp = x + (n * g.Cin + co / cog) * inP;
    T* yp = y + nc * L;
    std::fill(yp, yp + L, bias ? bias[co] : T(0));
    for_rows(g, [&](int64_t tap, int64_t orow, int64_t irow, int64_t lo, int64_t hi, int64_t iw0) {
      if (irow < 0) return;
      const T wv = w[co * taps + tap];
      const T* src = xp + irow + iw0;
      T* dst = yp + orow;
      for (int64_t ow = lo; ow < hi; ++ow) dst[ow] += wv * src[ow * sw];
    });
  }
}

template <typename T>
void dw_backward_data(const Geom& g, const T* gy, const T* w, T* gx) {
  const int64_t L = g.out_plane(), inP = g.in_plane(), taps = g.taps(), cog = g.cout_g(), sw = g.s[2];
#pragma omp parallel for schedule(static) if (g.N * g.Cout * L * taps > 32768)
  for (int64_t nc = 0; nc < g.N * g.Cin; ++nc) {
    const int64_t n = nc / g.Cin, ci = nc % g.Cin;
    T* gxp = gx + nc * inP;
    std::fill(gxp, gxp + inP, T(0));
    for (int64_t co = ci * cog; co < (ci + 1) * cog; ++co) {
      const T* gyp = gy + (n * g.Cout + co) * L;
      for_rows(g, [&](int64_t tap, int64_t orow, int64_t irow, int64_t lo, int64_t hi, int64_t iw0) {
        if (irow < 0) return;
        const T wv = w[co * taps + tap];
        const T* src = gyp + orow;
        T* dst = gxp + irow + iw0;
        for (int64_t ow = lo; ow < hi; ++ow) dst[ow * sw] += wv * src[ow];
      });
    }
  }
}

template <typename T>
void dw_backward_weight(const Geom& g, const T* gy, const T* x, T* gw) {
  const int64_t L = g.out_plane(), inP = g.in_plane(), taps = g.taps(), cog = g.cout_g(), sw = g.s[2];
#pragma omp parallel for schedule(static) if (g.N * g.Cout * L * taps > 32768)
  for (int64_t co = 0; co < g.Cout; ++co) {
    T* gwc = gw + co * taps;
    std::fill(gwc, gwc + taps, T(0));
    for (int64_t n = 0; n < g.N; ++n) {
      const T* gyp = gy + (n * g.Cout + co) * L;
      const T* xp = x + (n * g.Cin + co / cog) * inP;
      for_rows(g, [&](int64_t tap, int64_t orow, int64_t irow, int64_t lo, int64_t hi, int64_t iw0) {
        if (irow < 0) return;
        const T* a = gyp + orow;
        const T* b = xp + irow + iw0;
        T acc = 0;
        for (int64_t ow = lo; ow < hi; ++ow) acc += a[ow] * b[ow * sw];
        gwc[tap] += acc;
      });
    }
  }
}

}  // namespace

template <typename T>
void im2col(const Geom& g, const T* x, T* col, bool par) {
  const int64_t L = g.out_plane(), OW = g.out[2], inP = g.in_plane(), taps = g.taps(), sw = g.s[2];
#pragma omp parallel for schedule(static) if (par && g.Cin * taps * L > 32768 && !omp_in_parallel())
  for (int64_t c = 0; c < g.Cin; ++c) {
    const T* xc = x + c * inP;
    T* colc = col + c * taps * L;
    for_rows(g, [&](int64_t tap, int64_t orow, int64_t irow, int64_t lo, int64_t hi, int64_t iw0) {
      T* dst = colc + tap * L + orow;
      if (irow < 0) {
        std::fill(dst, dst + OW, T(0));
        return;
      }
      const T* src = xc + irow + iw0;
      std::fill(dst, dst + lo, T(0));
      if (sw == 1) std::memcpy(dst + lo, src + lo, sizeof(T) * (hi - lo));
      else for (int64_t ow = lo; ow < hi; ++ow) dst[ow] = src[ow * sw];
      std::fill(dst + hi, dst + OW, T(0));
    });
  }
}

template <typename T>
void col2im(const Geom& g, const T* col, T* x, bool par) {
  const int64_t L = g.out_plane(), inP = g.in_plane(), taps = g.taps(), sw = g.s[2];
#pragma omp parallel for schedule(static) if (par && g.Cin * taps * L > 32768 && !omp_in_parallel())
  for (int64_t c = 0; c < g.Cin; ++c) {
    T* xc = x + c * inP;
    const T* colc = col + c * taps * L;
    std::fill(xc, xc + inP, T(0));
    for_rows(g, [&](int64_t tap, int64_t orow, int64_t irow, int64_t lo, int64_t hi, int64_t iw0) {
      if (irow < 0) return;
      const T* src = colc + tap * L + orow;
      T* dst = xc + irow + iw0;
      for (int64_t ow = lo; ow < hi; ++ow) dst[ow * sw] += src[ow];
    });
  }
}

template <typename T>
void forward(const Geom& g, const T* x, const T* w, const T* bias, T* y) {
  if (g.depthwise()) return dw_forward(g, x, w, bias, y);
  const int64_t L = g.out_plane(), K = g.K(), cog = g.cout_g(), inP = g.in_plane();
  const bool pw = g.pointwise();
  BatchPlan plan(g.N);
  Tensor hold;
  T* cols = pw ? nullptr : scratch<T>(hold, plan.slots * g.Cin * g.taps() * L);
  plan.run(g.N, [&](int64_t n, int slot, bool par) {
    const T* xn = x + n * g.Cin * inP;
    T* yn = y + n * g.Cout * L;
    const T* col = xn;
    if (!pw) {
      T* c = cols + slot * g.Cin * g.taps() * L;
      im2col(g, xn, c, par);
      col = c;
    }
    for (int64_t grp = 0; grp < g.G; ++grp)
      gemm<T>(cog, L, K, w + grp * cog * K, K, 1, col + grp * K * L, L, 1, T(0), yn + grp * cog * L, L);
    if (bias)
      for (int64_t co = 0; co < g.Cout; ++co) {
        T* row = yn + co * L;
        const T b = bias[co];
        for (int64_t i = 0; i < L; ++i) row[i] += b;
      }
  });
}

template <typename T>
void backward_data(const Geom& g, const T* gy, const T* w, T* gx) {
  if (g.depthwise()) return dw_backward_data(g, gy, w, gx);
  const int64_t L = g.out_plane(), K = g.K(), cog = g.cout_g(), inP = g.in_plane();
  const bool pw = g.pointwise();
  BatchPlan plan(g.N);
  Tensor hold;
  T* cols = pw ? nullptr : scratch<T>(hold, plan.slots * g.Cin * g.taps() * L);
  plan.run(g.N, [&](int64_t n, int slot, bool par) {
    const T* gyn = gy + n * g.Cout * L;
    T* gxn = gx + n * g.Cin * inP;
    T* col = pw ? gxn : cols + slot * g.Cin * g.taps() * L;
    // W_g^T (K x cog) @ gy_g (cog x L): the weight read transposed (row stride 1, column stride K)
    for (int64_t grp = 0; grp < g.G; ++grp)
      gemm<T>(K, L, cog, w + grp * cog * K, 1, K, gyn + grp * cog * L, L, 1, T(0), col + grp * K * L, L);
    if (!pw) col2im(g, col, gxn, par);
  });
}

template <typename T>
void backward_weight(const Geom& g, const T* gy, const T* x, T* gw) {
  if (g.depthwise()) return dw_backward_weight(g, gy, x, gw);
  const int64_t L = g.out_plane(), K = g.K(), cog = g.cout_g(), inP = g.in_plane();
  const int64_t wsize = g.Cout * K, colsize = g.Cin * g.taps() * L;
  const bool pw = g.pointwise();
  BatchPlan plan(g.N);
  // Each slot accumulates its samples' contributions in its own buffer (slot 0 in gw itself);
  // the buffers are summed at the end.
  Tensor hold;
  T* buf = scratch<T>(hold, plan.slots * ((pw ? 0 : colsize) + wsize));
  T* partial = buf + plan.slots * (pw ? 0 : colsize);
  std::fill(gw, gw + wsize, T(0));
  if (plan.slots > 1) std::fill(partial, partial + plan.slots * wsize, T(0));
  plan.run(g.N, [&](int64_t n, int slot, bool par) {
    const T* xn = x + n * g.Cin * inP;
    const T* gyn = gy + n * g.Cout * L;
    const T* col = xn;
    if (!pw) {
      T* c = buf + slot * colsize;
      im2col(g, xn, c, par);
      col = c;
    }
    T* acc = plan.slots > 1 ? partial + slot * wsize : gw;
    // gy_g (cog x L) @ col_g^T (L x K)
    for (int64_t grp = 0; grp < g.G; ++grp)
      gemm<T>(cog, K, L, gyn + grp * cog * L, L, 1, col + grp * K * L, 1, L, T(1), acc + grp * cog * K, K);
  });
  if (plan.slots > 1)
    for (int s = 0; s < plan.slots; ++s)
      for (int64_t i = 0; i < wsize; ++i) gw[i] += partial[s * wsize + i];
}

#define FL_CONV_INSTANTIATE(T)                                              \
  template void im2col<T>(const Geom&, const T*, T*, bool);                  \
  template void col2im<T>(const Geom&, const T*, T*, bool);                  \
  template void forward<T>(const Geom&, const T*, const T*, const T*, T*);   \
  template void backward_data<T>(const Geom&, const T*, const T*, T*);       \
  template void backward_weight<T>(const Geom&, const T*, const T*, T*);
FL_CONV_INSTANTIATE(float)
FL_CONV_INSTANTIATE(double)
#undef FL_CONV_INSTANTIATE

}  // namespace fl::conv
