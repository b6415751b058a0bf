// The convolution kernels on contiguous float/double buffers: im2col/col2im, the GEMM path per
// group, and the direct depthwise path. See Note [Convolution geometry] in conv.h.
#include "conv_kernels.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "../kernels/blas.h"
#include "../kernels/sgemm.h"

namespace fl::conv {

bool Geom::pointwise() const {
  for (int i = 0; i < kD; ++i)
    if (k[i] != 1 || s[i] != 1 || p[i] != 0 || in[i] != out[i]) return false;
  return true;
}

namespace {

// Calls f(tap, out_col, in_row, lo, hi, iw0) for every kernel tap and every output row (od, oh)
// among rows [r0, r1) of the flattened (od, oh) rows: out_col is the row's first column relative to
// row r0 (r - r0) * OW, in_row its input row's offset in the input plane (< 0 when that row lies in
// the padding); output columns [lo, hi) read input column ow * s[2] + iw0, the others padding.
template <typename F>
void for_rows(const Geom& g, int64_t r0, int64_t r1, F&& f) {
  const int64_t W = g.in[2], OW = g.out[2], sw = g.s[2];
  int64_t tap = 0;
  for (int64_t kd = 0; kd < g.k[0]; ++kd)
    for (int64_t kh = 0; kh < g.k[1]; ++kh)
      for (int64_t kw = 0; kw < g.k[2]; ++kw, ++tap) {
        const int64_t iw0 = kw * g.d[2] - g.p[2];
        const int64_t lo = std::min(OW, iw0 >= 0 ? 0 : (-iw0 + sw - 1) / sw);
        const int64_t hi = std::max(lo, W - 1 - iw0 >= 0 ? std::min(OW, (W - 1 - iw0) / sw + 1) : 0);
        for (int64_t r = r0; r < r1; ++r) {
          const int64_t od = r / g.out[1], oh = r % g.out[1];
          const int64_t id = od * g.s[0] - g.p[0] + kd * g.d[0];
          const int64_t ih = oh * g.s[1] - g.p[1] + kh * g.d[1];
          const bool in = id >= 0 && id < g.in[0] && ih >= 0 && ih < g.in[1];
          f(tap, (r - r0) * OW, in ? (id * g.in[1] + ih) * W : int64_t(-1), lo, hi, iw0);
        }
      }
}
template <typename F>
void for_rows(const Geom& g, F&& f) {
  for_rows(g, 0, g.out[0] * g.out[1], f);
}

// OpenBLAS's own thread count, set for a scope (batch-parallel loops run single-threaded GEMMs).
struct BlasThreads {
  int prev;
  explicit BlasThreads(int n) : prev(scipy_openblas_get_num_threads()) { scipy_openblas_set_num_threads(n); }
  ~BlasThreads() { scipy_openblas_set_num_threads(prev); }
};

// Threads available to a kernel's parallel loop over `count` work items.
int thread_slots(int64_t count) {
  const int nt = omp_in_parallel() ? 1 : omp_get_max_threads();
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(nt, count)));
}

// Runs body(item, slot) for items [0, count) on `slots` OpenMP threads (slot: the thread), with
// single-threaded GEMMs inside. All the parallelism is OpenMP's: OpenMP workers spinning between
// regions would starve OpenBLAS's own threads if the two alternated.
template <typename F>
void parallel_items(int64_t count, int slots, F&& body) {
  if (slots <= 1) {
    for (int64_t i = 0; i < count; ++i) body(i, 0);
    return;
  }
  BlasThreads one(1);
#pragma omp parallel num_threads(slots)
  {
    const int slot = omp_get_thread_num();
#pragma omp for schedule(static)
    for (int64_t i = 0; i < count; ++i) body(i, slot);
  }
}

// Scratch memory from the caching allocator (fresh pages cost more than the copies they hold).
template <typename T>
T* scratch(Tensor& holder, int64_t n) {
  holder = empty({std::max<int64_t>(n, 1)}, CTypeToScalar<T>::value);
  return holder->data<T>();
}

// C = A @ B + beta * C, then ep on C (float only).
template <typename T>
void gemm(int64_t m, int64_t n, int64_t k, const T* a, int64_t ars, int64_t acs, const T* b, int64_t brs, int64_t bcs,
          T beta, T* c, int64_t crs, const blas::Epilogue& ep = {}) {
  if constexpr (std::is_same_v<T, float>)
    blas::sgemm_epilogue(m, n, k, 1.0f, {a, ars, acs}, {b, brs, bcs}, beta, {c, crs, 1}, ep);
  else
    blas::gemm<T>(m, n, k, T(1), {a, ars, acs}, {b, brs, bcs}, beta, {c, crs, 1});
}

// ---- depthwise: direct loops, parallel over planes -------------------------------------------------

template <typename T>
void dw_forward(const Geom& g, const T* x, const T* w, const T* bias, T* y, const blas::Epilogue& ep) {
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
      if (sw == 1)
        for (int64_t ow = lo; ow < hi; ++ow) dst[ow] += wv * src[ow];
      else
        for (int64_t ow = lo; ow < hi; ++ow) dst[ow] += wv * src[ow * sw];
    });
    if constexpr (std::is_same_v<T, float>)
      if (ep) ep(yp, L);  // the plane is still in cache
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
        if (sw == 1)
          for (int64_t ow = lo; ow < hi; ++ow) dst[ow] += wv * src[ow];
        else
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
        if (sw == 1)
          for (int64_t ow = lo; ow < hi; ++ow) acc += a[ow] * b[ow];
        else
          for (int64_t ow = lo; ow < hi; ++ow) acc += a[ow] * b[ow * sw];
        gwc[tap] += acc;
      });
    }
  }
}

// dst (cols x rows) = src (rows x cols)^T, in cache-sized tiles.
template <typename T>
void transpose(const T* src, int64_t rows, int64_t cols, T* dst) {
  constexpr int64_t B = 16;
  for (int64_t r0 = 0; r0 < rows; r0 += B)
    for (int64_t c0 = 0; c0 < cols; c0 += B) {
      const int64_t r1 = std::min(rows, r0 + B), c1 = std::min(cols, c0 + B);
      for (int64_t c = c0; c < c1; ++c)
        for (int64_t r = r0; r < r1; ++r) dst[c * rows + r] = src[r * cols + c];
    }
}

// Output rows (od, oh) per chunk: a chunk's columns (about 1 MiB) stay in L2 between im2col and the
// GEMM that reads them, and a small batch is cut into enough chunks to keep every thread busy.
int64_t chunk_rows(const Geom& g, size_t elem) {
  const int64_t rows = std::max<int64_t>(1, g.out[0] * g.out[1]);
  const int64_t bytes_per_row = std::max<int64_t>(1, g.out[2] * g.Cin * g.taps() * static_cast<int64_t>(elem));
  const int64_t cached = std::clamp<int64_t>((int64_t(1) << 20) / bytes_per_row, 1, rows);
  const int64_t nt = omp_get_max_threads(),
                per_sample = (nt + std::max<int64_t>(g.N, 1) - 1) / std::max<int64_t>(g.N, 1);
  return std::min(cached, std::max<int64_t>(1, rows / per_sample));
}

// Columns of output rows [r0, r1) of one sample (Cin, in_plane): row c * taps + tap, one column per
// output position, leading dimension (r1 - r0) * OW. Parallel over channels when `par`.
template <typename T>
void im2col_rows(const Geom& g, const T* x, T* col, int64_t r0, int64_t r1, bool par) {
  const int64_t np = (r1 - r0) * g.out[2], OW = g.out[2], inP = g.in_plane(), taps = g.taps(), sw = g.s[2];
#pragma omp parallel for schedule(static) if (par && g.Cin * taps * np > 32768 && !omp_in_parallel())
  for (int64_t c = 0; c < g.Cin; ++c) {
    const T* xc = x + c * inP;
    T* colc = col + c * taps * np;
    for_rows(g, r0, r1, [&](int64_t tap, int64_t oc, int64_t irow, int64_t lo, int64_t hi, int64_t iw0) {
      T* dst = colc + tap * np + oc;
      if (irow < 0) {
        std::fill(dst, dst + OW, T(0));
        return;
      }
      const T* src = xc + irow + iw0;
      std::fill(dst, dst + lo, T(0));
      if (sw == 1) std::memcpy(dst + lo, src + lo, sizeof(T) * (hi - lo));
      else
        for (int64_t ow = lo; ow < hi; ++ow) dst[ow] = src[ow * sw];
      std::fill(dst + hi, dst + OW, T(0));
    });
  }
}

// The adjoint of im2col_rows: adds the columns into x (not cleared first).
template <typename T>
void col2im_rows(const Geom& g, const T* col, T* x, int64_t r0, int64_t r1, bool par) {
  const int64_t np = (r1 - r0) * g.out[2], inP = g.in_plane(), taps = g.taps(), sw = g.s[2];
#pragma omp parallel for schedule(static) if (par && g.Cin * taps * np > 32768 && !omp_in_parallel())
  for (int64_t c = 0; c < g.Cin; ++c) {
    T* xc = x + c * inP;
    const T* colc = col + c * taps * np;
    for_rows(g, r0, r1, [&](int64_t tap, int64_t oc, int64_t irow, int64_t lo, int64_t hi, int64_t iw0) {
      if (irow < 0) return;
      const T* src = colc + tap * np + oc;
      T* dst = xc + irow + iw0;
      if (sw == 1)
        for (int64_t ow = lo; ow < hi; ++ow) dst[ow] += src[ow];
      else
        for (int64_t ow = lo; ow < hi; ++ow) dst[ow * sw] += src[ow];
    });
  }
}

// The float32 forward of a stride-1 2-d (or 1-d) convolution as GEMMs that read B in place (sgemm_rows).
// A chunk of output rows of one sample is computed over the padded width Wp (its columns ow >= OW are junk),
// so that the columns of channel c and kernel tap (th, tw) are the padded input's elements from
// c * plane + th * dh * Wp + tw * dw on: one contiguous row each, with no im2col and no packing of the
// 9x larger column matrix. The chunk's padded input and output (a few hundred KiB) stay in L2; the bias and
// `ep` are applied as the valid columns are copied out. False when this path does not apply.
bool forward_rows(const Geom& g, const float* x, const float* w, const float* bias, float* y,
                  const blas::Epilogue& ep) {
  const int64_t NR = blas::sgemm_rows_width();
  if (!NR || g.s[1] != 1 || g.s[2] != 1 || g.in[0] != 1 || g.out[0] != 1 || g.K() == 0) return false;
  const int64_t OH = g.out[1], OW = g.out[2], H = g.in[1], W = g.in[2], kh = g.k[1], kw = g.k[2];
  const int64_t Wp = OW + g.d[2] * (kw - 1), halo = g.d[1] * (kh - 1), L = g.out_plane(), K = g.K();
  const int64_t cig = g.cin_g(), cog = g.cout_g(), N = std::max<int64_t>(g.N, 1);
  // Output rows per chunk: at most about 1024 columns, and few enough that every thread gets work; among
  // those, the count that computes the fewest columns in all (chunks x columns rounded up to whole panels).
  const int64_t per_sample = (thread_slots(INT64_MAX) + N - 1) / N;
  const int64_t most = std::clamp<int64_t>(std::min(1024 / Wp, (OH + per_sample - 1) / per_sample), 1, OH);
  int64_t CR = most, best = INT64_MAX;
  for (int64_t cr = most; cr >= std::max<int64_t>(1, most / 4); --cr) {
    const int64_t work = (OH + cr - 1) / cr * ((cr * Wp + NR - 1) / NR * NR);
    if (work < best) best = work, CR = cr;
  }
  // Narrow planes waste too much on the junk columns and whole panels (14 x 14 split for two threads: 31%
  // more columns, and slower than im2col): those keep the packed path.
  if (best * 10 > OH * OW * 11) return false;
  const int64_t chunks = (OH + CR - 1) / CR, rows_p = CR + halo, plane = rows_p * Wp;
  const int64_t Q = (CR * Wp + NR - 1) / NR * NR;  // the GEMM's columns: whole panels
  // the last panels read up to Q - CR * Wp + dw * (kw - 1) elements past the padded channels: zeros
  const int64_t xsize = g.Cin * plane + Q - CR * Wp + g.d[2] * (kw - 1), csize = g.Cout * Q;
  std::vector<int64_t> boff(K);
  for (int64_t c = 0, p = 0; c < cig; ++c)
    for (int64_t th = 0; th < kh; ++th)
      for (int64_t tw = 0; tw < kw; ++tw) boff[p++] = c * plane + th * g.d[1] * Wp + tw * g.d[2];
  const int slots = thread_slots(g.N * chunks);
  Tensor hold;
  float* buf = scratch<float>(hold, slots * (xsize + csize));
  parallel_items(g.N * chunks, slots, [&](int64_t item, int slot) {
    const int64_t n = item / chunks, r0 = (item % chunks) * CR, nr = std::min(CR, OH - r0);
    float* xp = buf + slot * (xsize + csize);
    float* cext = xp + xsize;
    // padded row i of channel c: input row r0 + i - ph, input column j - pw at column j (zeros outside)
    const int64_t lo = std::min(g.p[2], Wp), hi = std::clamp<int64_t>(g.p[2] + W, lo, Wp);
    for (int64_t c = 0; c < g.Cin; ++c)
      for (int64_t i = 0; i < rows_p; ++i) {
        float* dst = xp + c * plane + i * Wp;
        const int64_t ih = r0 + i - g.p[1];
        if (i >= nr + halo || ih < 0 || ih >= H) {
          std::fill(dst, dst + Wp, 0.0f);
          continue;
        }
        std::fill(dst, dst + lo, 0.0f);
        std::memcpy(dst + lo, x + ((n * g.Cin + c) * H + ih) * W + (lo - g.p[2]), sizeof(float) * (hi - lo));
        std::fill(dst + hi, dst + Wp, 0.0f);
      }
    std::fill(xp + g.Cin * plane, xp + xsize, 0.0f);
    for (int64_t grp = 0; grp < g.G; ++grp)
      blas::sgemm_rows(cog, Q, K, {w + grp * cog * K, K, 1}, xp + grp * cig * plane, boff.data(), 0.0f,
                       {cext + grp * cog * Q, Q, 1});
    for (int64_t co = 0; co < g.Cout; ++co)
      for (int64_t r = 0; r < nr; ++r) {
        float* dst = y + (n * g.Cout + co) * L + (r0 + r) * OW;
        const float* src = cext + co * Q + r * Wp;
        if (bias) {
          const float b = bias[co];
          for (int64_t ow = 0; ow < OW; ++ow) dst[ow] = src[ow] + b;
        } else {
          std::memcpy(dst, src, sizeof(float) * OW);
        }
        if (ep) ep(dst, OW);  // the row is still in L1
      }
  });
  return true;
}

}  // namespace

template <typename T>
void im2col(const Geom& g, const T* x, T* col, bool par) {
  im2col_rows(g, x, col, 0, g.out[0] * g.out[1], par);
}

template <typename T>
void col2im(const Geom& g, const T* col, T* x, bool par) {
  std::fill(x, x + g.Cin * g.in_plane(), T(0));
  col2im_rows(g, col, x, 0, g.out[0] * g.out[1], par);
}

// Per sample and chunk of output rows: the chunk's columns (im2col, about 1 MiB so they stay in L2),
// then y[group rows, chunk] = W[group] @ columns, written straight into the NCHW output (row stride
// = the output plane) on top of the bias. The packed GEMM reads the columns row by row, so no
// transposition is needed anywhere. Parallel over (sample, chunk) items.
template <typename T>
void forward(const Geom& g, const T* x, const T* w, const T* bias, T* y, const blas::Epilogue& ep) {
  if (g.depthwise()) return dw_forward(g, x, w, bias, y, ep);
  if constexpr (std::is_same_v<T, float>)
    if (!g.pointwise() && forward_rows(g, x, w, bias, y, ep)) return;
  const int64_t L = g.out_plane(), K = g.K(), cog = g.cout_g(), inP = g.in_plane();
  const int64_t OW = g.out[2], rows = g.out[0] * g.out[1], CR = chunk_rows(g, sizeof(T));
  const int64_t chunks = (rows + CR - 1) / CR;
  const bool pw = g.pointwise();
  Tensor hold;
  const int slots = thread_slots(g.N * chunks);
  const int64_t colsize = pw ? 0 : CR * OW * g.G * K;
  T* cols = scratch<T>(hold, slots * colsize);
  parallel_items(g.N * chunks, slots, [&](int64_t item, int slot) {
    const int64_t n = item / chunks, r0 = (item % chunks) * CR, r1 = std::min(rows, r0 + CR), np = (r1 - r0) * OW;
    const T* xn = x + n * g.Cin * inP;
    const T* col = pw ? xn + r0 * OW : cols + slot * colsize;
    const int64_t ld = pw ? L : np;
    if (!pw) im2col_rows(g, xn, cols + slot * colsize, r0, r1, false);
    T* yn = y + n * g.Cout * L + r0 * OW;
    for (int64_t co = 0; co < g.Cout; ++co) std::fill(yn + co * L, yn + co * L + np, bias ? bias[co] : T(0));
    for (int64_t grp = 0; grp < g.G; ++grp)
      gemm<T>(cog, np, K, w + grp * cog * K, K, 1, col + grp * K * ld, ld, 1, T(1), yn + grp * cog * L, L, ep);
  });
}

// Columns = W^T @ gy (the fast orientation here: many rows), added back into the input gradient by
// col2im. Chunks of one sample overlap in the input, so a large batch runs a sample per thread; a
// small one fills one sample's whole column matrix in parallel chunks, then col2im's channels.
template <typename T>
void backward_data(const Geom& g, const T* gy, const T* w, T* gx) {
  if (g.depthwise()) return dw_backward_data(g, gy, w, gx);
  const int64_t L = g.out_plane(), K = g.K(), GK = g.G * K, cog = g.cout_g(), inP = g.in_plane(), OW = g.out[2];
  const int64_t rows = g.out[0] * g.out[1], CR = chunk_rows(g, sizeof(T)), chunks = (rows + CR - 1) / CR;
  const bool pw = g.pointwise();
  // columns of rows [r0, r1) of sample n into out (leading dimension ld)
  auto columns = [&](int64_t n, int64_t r0, int64_t r1, T* out, int64_t ld) {
    for (int64_t grp = 0; grp < g.G; ++grp)
      gemm<T>(K, (r1 - r0) * OW, cog, w + grp * cog * K, 1, K, gy + (n * g.Cout + grp * cog) * L + r0 * OW, L, 1, T(0),
              out + grp * K * ld, ld);
  };
  Tensor hold;
  if (g.N >= thread_slots(g.N * chunks)) {
    const int slots = thread_slots(g.N);
    const int64_t colsize = pw ? 0 : CR * OW * GK;
    T* cols = scratch<T>(hold, slots * colsize);
    parallel_items(g.N, slots, [&](int64_t n, int slot) {
      T* gxn = gx + n * g.Cin * inP;
      if (!pw) std::fill(gxn, gxn + g.Cin * inP, T(0));
      for (int64_t r0 = 0; r0 < rows; r0 += CR) {
        const int64_t r1 = std::min(rows, r0 + CR);
        if (pw) {
          columns(n, r0, r1, gxn + r0 * OW, L);  // the columns are the input gradient itself
        } else {
          columns(n, r0, r1, cols + slot * colsize, (r1 - r0) * OW);
          col2im_rows(g, cols + slot * colsize, gxn, r0, r1, false);
        }
      }
    });
    return;
  }
  T* col = pw ? nullptr : scratch<T>(hold, GK * L);
  for (int64_t n = 0; n < g.N; ++n) {
    T* gxn = gx + n * g.Cin * inP;
    parallel_items(chunks, thread_slots(chunks), [&](int64_t c, int) {
      const int64_t r0 = c * CR, r1 = std::min(rows, r0 + CR);
      columns(n, r0, r1, (pw ? gxn : col) + r0 * OW, L);
    });
    if (!pw) col2im(g, col, gxn, true);
  }
}

// gw^T (K x cog per group) += columns (K x positions) @ gy^T (positions x cog): the tall-skinny
// orientation, as in forward. Parallel over (sample, chunk) items, each thread accumulating into
// its own gw^T buffer; their sum is transposed into gw.
template <typename T>
void backward_weight(const Geom& g, const T* gy, const T* x, T* gw) {
  if (g.depthwise()) return dw_backward_weight(g, gy, x, gw);
  const int64_t L = g.out_plane(), K = g.K(), cog = g.cout_g(), inP = g.in_plane(), OW = g.out[2];
  const int64_t rows = g.out[0] * g.out[1], CR = chunk_rows(g, sizeof(T)), chunks = (rows + CR - 1) / CR;
  const int64_t wsize = g.Cout * K;
  const bool pw = g.pointwise();
  const int slots = thread_slots(g.N * chunks);
  const int64_t colsize = pw ? 0 : CR * OW * g.G * K;
  Tensor hold;
  T* buf = scratch<T>(hold, slots * (colsize + wsize));
  T* partial = buf + slots * colsize;  // per slot: gw^T of each group, (K x cog)
  std::fill(partial, partial + slots * wsize, T(0));
  parallel_items(g.N * chunks, slots, [&](int64_t item, int slot) {
    const int64_t n = item / chunks, r0 = (item % chunks) * CR, r1 = std::min(rows, r0 + CR), np = (r1 - r0) * OW;
    const T* xn = x + n * g.Cin * inP;
    const T* col = pw ? xn + r0 * OW : buf + slot * colsize;
    const int64_t ld = pw ? L : np;
    if (!pw) im2col_rows(g, xn, buf + slot * colsize, r0, r1, false);
    T* acc = partial + slot * wsize;
    for (int64_t grp = 0; grp < g.G; ++grp)
      gemm<T>(K, cog, np, col + grp * K * ld, ld, 1, gy + (n * g.Cout + grp * cog) * L + r0 * OW, 1, L, T(1),
              acc + grp * K * cog, cog);
  });
  for (int s = 1; s < slots; ++s)
    for (int64_t i = 0; i < wsize; ++i) partial[i] += partial[s * wsize + i];
  for (int64_t grp = 0; grp < g.G; ++grp) transpose(partial + grp * K * cog, K, cog, gw + grp * cog * K);
}

#define FL_CONV_INSTANTIATE(T)                                                                    \
  template void im2col<T>(const Geom&, const T*, T*, bool);                                       \
  template void col2im<T>(const Geom&, const T*, T*, bool);                                       \
  template void forward<T>(const Geom&, const T*, const T*, const T*, T*, const blas::Epilogue&); \
  template void backward_data<T>(const Geom&, const T*, const T*, T*);                            \
  template void backward_weight<T>(const Geom&, const T*, const T*, T*);
FL_CONV_INSTANTIATE(float)
FL_CONV_INSTANTIATE(double)
#undef FL_CONV_INSTANTIATE

}  // namespace fl::conv
