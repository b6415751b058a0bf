// The FFT engine's batch drivers (fft.h): groups of lanes gathered from strided sequences into split buffers, run
// through their plan (fft_plan.h) and scattered back, one group per OpenMP thread.
#include "fft.h"

#include <omp.h>

#include <algorithm>

#include "fft_plan.h"
#include "fft_transpose.h"

namespace fl::fft {
namespace {

using namespace detail;

// Below this many T elements of work a call runs on one thread.
constexpr int64_t kParallelGrain = 32768;
// The most lanes a group carries: one 64-byte vector of floats.
constexpr int64_t kMaxLanes = 16;
// Points per lane that the scalar gathers and scatters move at once (one cache line of complex floats).
constexpr int64_t kBlock = 8;

// Lanes per group: one 64-byte vector of real parts, fewer for long transforms so that a thread's four buffers stay
// within 512 KiB (half the L2 of current server cores: the sequences being gathered need the rest).
template <typename T>
int64_t lanes_for(int64_t work_len, int64_t count) {
  int64_t nl = 64 / sizeof(T);
  while (nl > 2 && work_len * nl * static_cast<int64_t>(sizeof(T)) * 4 > (int64_t(1) << 19)) nl /= 2;
  return std::max<int64_t>(1, std::min(nl, count));
}

// Whether a full group's complex sequences start at consecutive elements (columns of a row-major array).
bool adjacent(const std::vector<int64_t>& off, int64_t first, int64_t cnt, int64_t nl) {
  if (cnt != nl) return false;
  for (int64_t l = 1; l < nl; ++l)
    if (off[first + l] != off[first] + 2 * l) return false;
  return true;
}

// Bytes between the starts of a thread's work buffers beyond their length (17 cache lines).
constexpr int64_t kSkew = 17 * 64;

// Runs body(group, nl_in_group, re, im) for each group of `count` items (nl lanes each), each thread with its own
// four work buffers of work_len * nl elements; body gathers into buffer 0, runs the plan and scatters.
template <typename T, typename Body>
void for_groups(int64_t count, int64_t work_len, int64_t n, Body body) {
  if (count <= 0) return;
  const int64_t nl = lanes_for<T>(work_len, count);
  const int64_t groups = (count + nl - 1) / nl;
  const bool par = groups > 1 && n * count >= kParallelGrain && !omp_in_parallel() && omp_get_max_threads() > 1;
  const int nt = par ? omp_get_max_threads() : 1;
  // The four buffers are skewed by a few cache lines each: at power-of-two lengths they would otherwise share
  // their L1 sets (so would every stream of a pass), evicting each other. All threads' buffers are taken here:
  // an allocation failing inside the parallel region could not be reported.
  const int64_t len = work_len * nl + kSkew / static_cast<int64_t>(sizeof(T));
  std::vector<T> bufs(4 * len * nt);
#pragma omp parallel num_threads(nt)
  {
    T* const buf = bufs.data() + 4 * len * omp_get_thread_num();
    T* const re[2] = {buf, buf + 2 * len};
    T* const im[2] = {buf + len, buf + 3 * len};
#pragma omp for schedule(static)
    for (int64_t g = 0; g < groups; ++g) body(g * nl, std::min(nl, count - g * nl), nl, re, im);
  }
}

}  // namespace

template <typename T>
void c2c(const T* in, T* out, int64_t n, int64_t in_stride, int64_t out_stride, const std::vector<int64_t>& in_off,
         const std::vector<int64_t>& out_off, bool inverse, T scale) {
  if (n <= 0) return;
  auto plan = get_plan<T>(n);
  const T sign = inverse ? T(-1) : T(1);  // the inverse is conj(forward(conj(x)))
  for_groups<T>(static_cast<int64_t>(in_off.size()), plan->work_len(), n,
                [&](int64_t first, int64_t cnt, int64_t nl, T* const* re, T* const* im) {
    // In blocks of kBlock points: each lane's block is a whole cache line of a row, read (written) at once, while
    // the buffer rows of the block stay in L1. Lanes past cnt repeat the last sequence (their results are dropped).
    const T* src[kMaxLanes];
    for (int64_t l = 0; l < nl; ++l) src[l] = in + in_off[first + std::min(l, cnt - 1)];
    T* __restrict r0 = re[0];
    T* __restrict i0 = im[0];
    if (tiled_lanes<T>(nl) && adjacent(in_off, first, cnt, nl)) {
      gather_cols(src[0], in_stride, n, nl, r0, i0, sign);
    } else if (in_stride == 2 && cnt == nl && tiled_lanes<T>(nl)) {
      gather_rows(src, n, nl, r0, i0, sign);
    } else {
      for (int64_t kb = 0; kb < n; kb += kBlock)
        for (int64_t l = 0; l < nl; ++l) {
          const T* s = src[l] + kb * in_stride;
          for (int64_t k = kb; k < std::min(n, kb + kBlock); ++k, s += in_stride) {
            r0[k * nl + l] = s[0];
            i0[k * nl + l] = sign * s[1];
          }
        }
    }
    const int r = run_plan(*plan, nl, re, im);
    const T* __restrict rr = re[r];
    const T* __restrict ri = im[r];
    const T iscale = sign * scale;
    T* dst[kMaxLanes];
    for (int64_t l = 0; l < cnt; ++l) dst[l] = out + out_off[first + l];
    if (tiled_lanes<T>(nl) && adjacent(out_off, first, cnt, nl)) {
      scatter_cols(dst[0], out_stride, n, nl, rr, ri, scale, iscale);
    } else if (out_stride == 2 && cnt == nl && tiled_lanes<T>(nl)) {
      scatter_rows(dst, n, nl, rr, ri, scale, iscale);
    } else {
      for (int64_t kb = 0; kb < n; kb += kBlock)
        for (int64_t l = 0; l < cnt; ++l) {
          T* d = dst[l] + kb * out_stride;
          for (int64_t k = kb; k < std::min(n, kb + kBlock); ++k, d += out_stride) {
            d[0] = rr[k * nl + l] * scale;
            d[1] = ri[k * nl + l] * iscale;
          }
        }
    }
  });
}

// Rows 2 (first + l) and 2 (first + l) + 1 for each lane l of a pair group; a missing second row (odd batch) and the
// lanes past cnt repeat an existing row: their results are dropped.
void pair_rows(const std::vector<int64_t>& off, int64_t first, int64_t cnt, int64_t nl, int64_t* a, int64_t* b) {
  const int64_t batch = static_cast<int64_t>(off.size());
  for (int64_t l = 0; l < nl; ++l) {
    const int64_t row = 2 * (first + std::min(l, cnt - 1));
    a[l] = off[row];
    b[l] = off[row + 1 < batch ? row + 1 : row];
  }
}

template <typename T>
void r2c(const T* in, T* out, int64_t n, int64_t in_stride, int64_t out_stride, const std::vector<int64_t>& in_off,
         const std::vector<int64_t>& out_off, bool onesided, T scale) {
  if (n <= 0) return;
  auto plan = get_plan<T>(n);
  const int64_t batch = static_cast<int64_t>(in_off.size());
  const int64_t nout = onesided ? n / 2 + 1 : n;
  const T half = scale / 2;
  // Two real rows ride as the real and imaginary parts of one lane: with Z = A + iB, A_k = (Z_k + conj Z_{n-k}) / 2
  // and B_k = (Z_k - conj Z_{n-k}) / 2i.
  for_groups<T>((batch + 1) / 2, plan->work_len(), 2 * n, [&](int64_t first, int64_t cnt, int64_t nl, T* const* re,
                                                                 T* const* im) {
    int64_t ia[kMaxLanes], ib[kMaxLanes], oa[kMaxLanes], ob[kMaxLanes];
    pair_rows(in_off, first, cnt, nl, ia, ib);
    pair_rows(out_off, first, cnt, nl, oa, ob);
    T* __restrict r0 = re[0];
    T* __restrict i0 = im[0];
    const bool tiled = tiled_lanes<T>(nl) && cnt == nl;
    if (tiled && in_stride == 1) {
      const T *sa[kMaxLanes], *sb[kMaxLanes];
      for (int64_t l = 0; l < nl; ++l) { sa[l] = in + ia[l]; sb[l] = in + ib[l]; }
      gather_real(sa, sb, n, nl, r0, i0);
    } else {
      for (int64_t kb = 0; kb < n; kb += kBlock)
        for (int64_t l = 0; l < nl; ++l) {
          const T *sa = in + ia[l] + kb * in_stride, *sb = in + ib[l] + kb * in_stride;
          for (int64_t k = kb; k < std::min(n, kb + kBlock); ++k, sa += in_stride, sb += in_stride) {
            r0[k * nl + l] = *sa;
            i0[k * nl + l] = *sb;
          }
        }
    }
    const int r = run_plan(*plan, nl, re, im);
    const T* __restrict zr = re[r];
    const T* __restrict zi = im[r];
    const int64_t last_pair = 2 * (first + cnt - 1) + 1;  // the second row of the group's last lane
    if (tiled && out_stride == 2 && last_pair < batch) {
      T *da[kMaxLanes], *db[kMaxLanes];
      for (int64_t l = 0; l < nl; ++l) { da[l] = out + oa[l]; db[l] = out + ob[l]; }
      scatter_real(da, db, n, nout, nl, zr, zi, half);
      return;
    }
    for (int64_t kb = 0; kb < nout; kb += kBlock)
      for (int64_t l = 0; l < cnt; ++l) {
        T* da = out + oa[l] + kb * out_stride;
        T* db = out + ob[l] + kb * out_stride;
        const bool has_b = l + 1 < cnt || last_pair < batch;
        for (int64_t k = kb; k < std::min(nout, kb + kBlock); ++k, da += out_stride, db += out_stride) {
          const int64_t c = (k == 0 ? 0 : n - k) * nl + l;
          const T pr = zr[k * nl + l], pi = zi[k * nl + l], cr = zr[c], ci = zi[c];
          da[0] = (pr + cr) * half;
          da[1] = (pi - ci) * half;
          if (has_b) {
            db[0] = (pi + ci) * half;
            db[1] = (cr - pr) * half;
          }
        }
      }
  });
}

template <typename T>
void c2r(const T* in, T* out, int64_t n, int64_t in_stride, int64_t out_stride, const std::vector<int64_t>& in_off,
         const std::vector<int64_t>& out_off, T scale) {
  if (n <= 0) return;
  auto plan = get_plan<T>(n);
  const int64_t batch = static_cast<int64_t>(in_off.size());
  const int64_t h = n / 2;
  // The Hermitian extensions A, B of two rows ride as Z = A + iB in one lane, conjugated (inverse = conj(forward(
  // conj))): the real and imaginary parts of the result are the two real rows.
  for_groups<T>((batch + 1) / 2, plan->work_len(), 2 * n, [&](int64_t first, int64_t cnt, int64_t nl, T* const* re,
                                                                 T* const* im) {
    int64_t ia[kMaxLanes], ib[kMaxLanes], oa[kMaxLanes], ob[kMaxLanes];
    pair_rows(in_off, first, cnt, nl, ia, ib);
    pair_rows(out_off, first, cnt, nl, oa, ob);
    T* __restrict r0 = re[0];
    T* __restrict i0 = im[0];
    for (int64_t kb = 0; kb < n; kb += kBlock)
      for (int64_t l = 0; l < nl; ++l)
        for (int64_t k = kb; k < std::min(n, kb + kBlock); ++k) {
          const bool upper = k > h;
          const int64_t kk = upper ? n - k : k;
          const T* sa = in + ia[l] + kk * in_stride;
          const T* sb = in + ib[l] + kk * in_stride;
          // the zero and Nyquist frequencies contribute their real parts only
          const T isign = kk == 0 || (n % 2 == 0 && kk == h) ? T(0) : upper ? T(-1) : T(1);
          r0[k * nl + l] = sa[0] - isign * sb[1];
          i0[k * nl + l] = -(isign * sa[1] + sb[0]);
        }
    const int r = run_plan(*plan, nl, re, im);
    const T* __restrict zr = re[r];
    const T* __restrict zi = im[r];
    const int64_t last_pair = 2 * (first + cnt - 1) + 1;
    for (int64_t kb = 0; kb < n; kb += kBlock)
      for (int64_t l = 0; l < cnt; ++l) {
        T* da = out + oa[l] + kb * out_stride;
        T* db = out + ob[l] + kb * out_stride;
        const bool has_b = l + 1 < cnt || last_pair < batch;
        for (int64_t k = kb; k < std::min(n, kb + kBlock); ++k, da += out_stride, db += out_stride) {
          da[0] = zr[k * nl + l] * scale;
          if (has_b) db[0] = -zi[k * nl + l] * scale;
        }
      }
  });
}

#define FL_FFT_INSTANTIATE(T)                                                                                       \
  template void c2c<T>(const T*, T*, int64_t, int64_t, int64_t, const std::vector<int64_t>&,                        \
                       const std::vector<int64_t>&, bool, T);                                                       \
  template void r2c<T>(const T*, T*, int64_t, int64_t, int64_t, const std::vector<int64_t>&,                        \
                       const std::vector<int64_t>&, bool, T);                                                       \
  template void c2r<T>(const T*, T*, int64_t, int64_t, int64_t, const std::vector<int64_t>&,                        \
                       const std::vector<int64_t>&, T);
FL_FFT_INSTANTIATE(float)
FL_FFT_INSTANTIATE(double)
#undef FL_FFT_INSTANTIATE

}  // namespace fl::fft
