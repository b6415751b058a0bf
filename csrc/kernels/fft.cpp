// The FFT engine (fft.h): plans, radix passes over lane-blocked split buffers, Bluestein, and the batch drivers.
#include "fft.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#define FL_FFT_INLINE static inline __attribute__((always_inline))
// The tile transposes pass 32- and 64-byte vectors between always-inline functions only; no ABI is involved.
#pragma GCC diagnostic ignored "-Wpsabi"
// The passes are built for AVX-512, AVX2+FMA and the baseline, picked at load time (DESIGN.md: portable binaries).
// The lane loops carry no dependences; without the pragma GCC gives up on the radix-4 one (too many pointers).
#define FL_FFT_SIMD _Pragma("omp simd")
#define FL_FFT_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))

namespace fl::fft {
namespace {

// Lengths whose prime factors are all at most this run as mixed radix; others through Bluestein.
constexpr int64_t kMaxDirectFactor = 64;
// Below this many T elements of work a call runs on one thread.
constexpr int64_t kParallelGrain = 32768;
// The most lanes a group carries: one 64-byte vector of floats.
constexpr int64_t kMaxLanes = 16;
// Points per lane that the gathers and scatters move at once.
constexpr int64_t kBlock = 8;

template <typename T>
struct Pass {
  int64_t radix, m;          // this pass splits a length radix * m into radix interleaved length-m transforms
  std::vector<T> wr, wi;     // twiddles exp(-2 pi i p j / (radix m)), [p][j - 1], p < m, 1 <= j < radix
  std::vector<T> cr, ci;     // odd radices above 3: cos / sin(2 pi t / radix), t < radix
};

template <typename T>
struct Plan {
  int64_t n = 0;
  std::vector<Pass<T>> passes;
  // Bluestein: a length-M convolution, M 5-smooth (M = 0 for a mixed-radix plan)
  int64_t M = 0;
  std::shared_ptr<const Plan<T>> sub;
  std::vector<T> chirp_r, chirp_i;  // exp(-i pi j^2 / n), j < n
  std::vector<T> kern_r, kern_i;    // forward FFT of the wrapped conjugate chirp, divided by M
  int64_t work_len() const { return M ? M : n; }
};

template <typename T>
std::shared_ptr<const Plan<T>> get_plan(int64_t n);

std::vector<int64_t> factorize(int64_t n) {
  std::vector<int64_t> f;
  while (n % 4 == 0) { f.push_back(4); n /= 4; }
  while (n % 2 == 0) { f.push_back(2); n /= 2; }
  for (int64_t p = 3; p * p <= n; p += 2)
    while (n % p == 0) { f.push_back(p); n /= p; }
  if (n > 1) f.push_back(n);
  return f;
}

// The least length >= n whose prime factors are 2, 3 and 5 (a Bluestein convolution then costs about n, not up to
// 2 n as with powers of two).
int64_t smooth_length(int64_t n) {
  int64_t best = 1;
  while (best < n) best *= 2;
  for (int64_t p5 = 1; p5 < best; p5 *= 5)
    for (int64_t p35 = p5; p35 < best; p35 *= 3) {
      int64_t m = p35;
      while (m < n) m *= 2;
      best = std::min(best, m);
    }
  return best;
}

// exp(-2 pi i num / den), the angle reduced exactly first so that large lengths keep full accuracy.
void unit_root(int64_t num, int64_t den, double& re, double& im) {
  const double a = -2.0 * M_PI * static_cast<double>(num % den) / static_cast<double>(den);
  re = std::cos(a);
  im = std::sin(a);
}

template <typename T>
void fill_pass(Pass<T>& ps, int64_t radix, int64_t m) {
  ps.radix = radix;
  ps.m = m;
  ps.wr.resize(m * (radix - 1));
  ps.wi.resize(m * (radix - 1));
  for (int64_t p = 0; p < m; ++p)
    for (int64_t j = 1; j < radix; ++j) {
      double re, im;
      unit_root(p * j, radix * m, re, im);
      ps.wr[p * (radix - 1) + j - 1] = static_cast<T>(re);
      ps.wi[p * (radix - 1) + j - 1] = static_cast<T>(im);
    }
  if (radix > 3 && radix % 2 == 1) {
    ps.cr.resize(radix);
    ps.ci.resize(radix);
    for (int64_t t = 0; t < radix; ++t) {
      ps.cr[t] = static_cast<T>(std::cos(2.0 * M_PI * t / radix));
      ps.ci[t] = static_cast<T>(std::sin(2.0 * M_PI * t / radix));
    }
  }
}

template <typename T>
int run_plan(const Plan<T>& pl, int64_t nl, T* const* re, T* const* im);

template <typename T>
std::shared_ptr<const Plan<T>> make_plan(int64_t n) {
  auto pl = std::make_shared<Plan<T>>();
  pl->n = n;
  const std::vector<int64_t> f = factorize(n);
  if (f.empty() || *std::max_element(f.begin(), f.end()) <= kMaxDirectFactor) {
    int64_t len = n;
    for (int64_t r : f) {
      pl->passes.emplace_back();
      fill_pass(pl->passes.back(), r, len / r);
      len /= r;
    }
    return pl;
  }
  const int64_t M = smooth_length(2 * n - 1);
  pl->M = M;
  pl->sub = get_plan<T>(M);
  pl->chirp_r.resize(n);
  pl->chirp_i.resize(n);
  // The convolution kernel is transformed in double whatever T is: its rounding would otherwise add to T's.
  std::vector<double> br(M, 0.0), bi(M, 0.0), wr(M), wi(M);
  for (int64_t j = 0; j < n; ++j) {
    double c, s;
    unit_root(j * j, 2 * n, c, s);  // exp(-i pi j^2 / n)
    pl->chirp_r[j] = static_cast<T>(c);
    pl->chirp_i[j] = static_cast<T>(s);
    br[j] = c;
    bi[j] = -s;
    if (j) { br[M - j] = c; bi[M - j] = -s; }
  }
  double* bre[2] = {br.data(), wr.data()};
  double* bim[2] = {bi.data(), wi.data()};
  const int r = run_plan(*get_plan<double>(M), 1, bre, bim);
  pl->kern_r.resize(M);
  pl->kern_i.resize(M);
  for (int64_t k = 0; k < M; ++k) {
    pl->kern_r[k] = static_cast<T>(bre[r][k] / M);
    pl->kern_i[k] = static_cast<T>(bim[r][k] / M);
  }
  return pl;
}

// One plan per length and type, shared by every thread; built outside the lock (Bluestein builds its sub-plans).
template <typename T>
std::shared_ptr<const Plan<T>> get_plan(int64_t n) {
  static std::mutex mu;
  static std::map<int64_t, std::shared_ptr<const Plan<T>>> cache;
  {
    std::lock_guard<std::mutex> g(mu);
    auto it = cache.find(n);
    if (it != cache.end()) return it->second;
  }
  auto pl = make_plan<T>(n);
  std::lock_guard<std::mutex> g(mu);
  return cache.emplace(n, pl).first->second;
}

// ---- radix passes (Stockham, decimation in frequency) ------------------------------------------------------------
// A pass reads x as [radix][m][sl] and writes y as [m][radix][sl], where sl = (product of the radices before it) *
// lanes: y[p][j] = w^(p j) * sum_k x[k][p] exp(-2 pi i j k / radix). The sl loop is contiguous and vectorizes.

template <typename T>
FL_FFT_INLINE void cmul(T ar, T ai, T br, T bi, T& r, T& i) {
  r = ar * br - ai * bi;
  i = ar * bi + ai * br;
}

template <typename T>
FL_FFT_INLINE void radix2(const Pass<T>& ps, int64_t sl, const T* __restrict xr, const T* __restrict xi,
                          T* __restrict yr, T* __restrict yi) {
  const int64_t m = ps.m;
  for (int64_t p = 0; p < m; ++p) {
    const T w1r = ps.wr[p], w1i = ps.wi[p];
    const T *a0r = xr + sl * p, *a0i = xi + sl * p, *a1r = xr + sl * (p + m), *a1i = xi + sl * (p + m);
    T *y0r = yr + sl * 2 * p, *y0i = yi + sl * 2 * p, *y1r = y0r + sl, *y1i = y0i + sl;
    FL_FFT_SIMD
    for (int64_t q = 0; q < sl; ++q) {
      const T dr = a0r[q] - a1r[q], di = a0i[q] - a1i[q];
      y0r[q] = a0r[q] + a1r[q];
      y0i[q] = a0i[q] + a1i[q];
      cmul(dr, di, w1r, w1i, y1r[q], y1i[q]);
    }
  }
}

template <typename T>
FL_FFT_INLINE void radix4(const Pass<T>& ps, int64_t sl, const T* __restrict xr, const T* __restrict xi,
                          T* __restrict yr, T* __restrict yi) {
  const int64_t m = ps.m;
  for (int64_t p = 0; p < m; ++p) {
    const T* w = ps.wr.data() + 3 * p;
    const T* v = ps.wi.data() + 3 * p;
    const T w1r = w[0], w1i = v[0], w2r = w[1], w2i = v[1], w3r = w[2], w3i = v[2];
    const T *a0r = xr + sl * p, *a0i = xi + sl * p;
    const T *a1r = a0r + sl * m, *a1i = a0i + sl * m, *a2r = a1r + sl * m, *a2i = a1i + sl * m;
    const T *a3r = a2r + sl * m, *a3i = a2i + sl * m;
    T *y0r = yr + sl * 4 * p, *y0i = yi + sl * 4 * p, *y1r = y0r + sl, *y1i = y0i + sl;
    T *y2r = y1r + sl, *y2i = y1i + sl, *y3r = y2r + sl, *y3i = y2i + sl;
    FL_FFT_SIMD
    for (int64_t q = 0; q < sl; ++q) {
      const T t0r = a0r[q] + a2r[q], t0i = a0i[q] + a2i[q], t1r = a0r[q] - a2r[q], t1i = a0i[q] - a2i[q];
      const T t2r = a1r[q] + a3r[q], t2i = a1i[q] + a3i[q];
      const T t3r = a1i[q] - a3i[q], t3i = a3r[q] - a1r[q];  // -i (a1 - a3)
      y0r[q] = t0r + t2r;
      y0i[q] = t0i + t2i;
      cmul(t1r + t3r, t1i + t3i, w1r, w1i, y1r[q], y1i[q]);
      cmul(t0r - t2r, t0i - t2i, w2r, w2i, y2r[q], y2i[q]);
      cmul(t1r - t3r, t1i - t3i, w3r, w3i, y3r[q], y3i[q]);
    }
  }
}

template <typename T>
FL_FFT_INLINE void radix3(const Pass<T>& ps, int64_t sl, const T* __restrict xr, const T* __restrict xi,
                          T* __restrict yr, T* __restrict yi) {
  const int64_t m = ps.m;
  const T h = static_cast<T>(0.86602540378443864676);  // sin(2 pi / 3)
  for (int64_t p = 0; p < m; ++p) {
    const T w1r = ps.wr[2 * p], w1i = ps.wi[2 * p], w2r = ps.wr[2 * p + 1], w2i = ps.wi[2 * p + 1];
    const T *a0r = xr + sl * p, *a0i = xi + sl * p;
    const T *a1r = a0r + sl * m, *a1i = a0i + sl * m, *a2r = a1r + sl * m, *a2i = a1i + sl * m;
    T *y0r = yr + sl * 3 * p, *y0i = yi + sl * 3 * p, *y1r = y0r + sl, *y1i = y0i + sl;
    T *y2r = y1r + sl, *y2i = y1i + sl;
    FL_FFT_SIMD
    for (int64_t q = 0; q < sl; ++q) {
      const T sr = a1r[q] + a2r[q], si = a1i[q] + a2i[q], dr = a1r[q] - a2r[q], di = a1i[q] - a2i[q];
      const T mr = a0r[q] - T(0.5) * sr, mi = a0i[q] - T(0.5) * si;
      y0r[q] = a0r[q] + sr;
      y0i[q] = a0i[q] + si;
      cmul(mr + h * di, mi - h * dr, w1r, w1i, y1r[q], y1i[q]);
      cmul(mr - h * di, mi + h * dr, w2r, w2i, y2r[q], y2i[q]);
    }
  }
}

// Any odd radix: pairs k, radix - k share one sum and one difference.
template <typename T>
FL_FFT_INLINE void radix_odd(const Pass<T>& ps, int64_t sl, const T* __restrict xr, const T* __restrict xi,
                             T* __restrict yr, T* __restrict yi) {
  const int64_t m = ps.m, r = ps.radix, half = (r - 1) / 2;
  for (int64_t p = 0; p < m; ++p) {
    const T *a0r = xr + sl * p, *a0i = xi + sl * p;
    for (int64_t j = 0; j < r; ++j) {
      T *o_r = yr + sl * (r * p + j), *o_i = yi + sl * (r * p + j);
      FL_FFT_SIMD
      for (int64_t q = 0; q < sl; ++q) { o_r[q] = a0r[q]; o_i[q] = a0i[q]; }
      for (int64_t k = 1; k <= half; ++k) {
        const T c = ps.cr[(j * k) % r], s = ps.ci[(j * k) % r];
        const T *akr = a0r + sl * m * k, *aki = a0i + sl * m * k;
        const T *bkr = a0r + sl * m * (r - k), *bki = a0i + sl * m * (r - k);
        FL_FFT_SIMD
        for (int64_t q = 0; q < sl; ++q) {
          o_r[q] += c * (akr[q] + bkr[q]) + s * (aki[q] - bki[q]);
          o_i[q] += c * (aki[q] + bki[q]) - s * (akr[q] - bkr[q]);
        }
      }
      if (j) {
        const T w_r = ps.wr[p * (r - 1) + j - 1], w_i = ps.wi[p * (r - 1) + j - 1];
        FL_FFT_SIMD
        for (int64_t q = 0; q < sl; ++q) {
          const T tr = o_r[q], ti = o_i[q];
          cmul(tr, ti, w_r, w_i, o_r[q], o_i[q]);
        }
      }
    }
  }
}

// Runs a mixed-radix plan on buffer 0 (re[0], im[0]) with buffer 1 as the other half of each pass; returns the
// buffer holding the result.
template <typename T>
FL_FFT_INLINE int run_direct(const Plan<T>& pl, int64_t nl, T* const* re, T* const* im) {
  int cur = 0;
  int64_t s = 1;
  for (const Pass<T>& ps : pl.passes) {
    const int64_t sl = s * nl;
    const T *xr = re[cur], *xi = im[cur];
    T *yr = re[1 - cur], *yi = im[1 - cur];
    switch (ps.radix) {
      case 4: radix4(ps, sl, xr, xi, yr, yi); break;
      case 2: radix2(ps, sl, xr, xi, yr, yi); break;
      case 3: radix3(ps, sl, xr, xi, yr, yi); break;
      default: radix_odd(ps, sl, xr, xi, yr, yi); break;
    }
    cur = 1 - cur;
    s *= ps.radix;
  }
  return cur;
}

// Bluestein: X_k = c_k sum_j (x_j c_j) conj(c_{k-j}) with the chirp c_j = exp(-i pi j^2 / n), the convolution done
// as a forward transform, a product with the kernel's spectrum and an inverse (forward on the conjugate).
template <typename T>
FL_FFT_INLINE int run_bluestein(const Plan<T>& pl, int64_t nl, T* const* re, T* const* im) {
  const int64_t n = pl.n, M = pl.M;
  T *xr = re[0], *xi = im[0];
  for (int64_t j = 0; j < n; ++j) {
    const T cr = pl.chirp_r[j], ci = pl.chirp_i[j];
    for (int64_t l = 0; l < nl; ++l) {
      const T ar = xr[j * nl + l], ai = xi[j * nl + l];
      cmul(ar, ai, cr, ci, xr[j * nl + l], xi[j * nl + l]);
    }
  }
  std::fill(xr + n * nl, xr + M * nl, T(0));
  std::fill(xi + n * nl, xi + M * nl, T(0));
  int cur = run_direct(*pl.sub, nl, re, im);
  T *fr = re[cur], *fi = im[cur];
  for (int64_t k = 0; k < M; ++k) {
    const T kr = pl.kern_r[k], ki = pl.kern_i[k];
    for (int64_t l = 0; l < nl; ++l) {
      T r, i;
      cmul(fr[k * nl + l], fi[k * nl + l], kr, ki, r, i);
      fr[k * nl + l] = r;
      fi[k * nl + l] = -i;
    }
  }
  T* const re2[2] = {re[cur], re[1 - cur]};
  T* const im2[2] = {im[cur], im[1 - cur]};
  const int cur2 = run_direct(*pl.sub, nl, re2, im2);
  T *gr = re2[cur2], *gi = im2[cur2];
  for (int64_t k = 0; k < n; ++k) {
    const T cr = pl.chirp_r[k], ci = pl.chirp_i[k];
    for (int64_t l = 0; l < nl; ++l) cmul(gr[k * nl + l], -gi[k * nl + l], cr, ci, gr[k * nl + l], gi[k * nl + l]);
  }
  return gr == re[0] ? 0 : 1;
}

template <typename T>
FL_FFT_INLINE int run_plan_impl(const Plan<T>& pl, int64_t nl, T* const* re, T* const* im) {
  return pl.M ? run_bluestein(pl, nl, re, im) : run_direct(pl, nl, re, im);
}

FL_FFT_CLONES int run_plan_f(const Plan<float>& pl, int64_t nl, float* const* re, float* const* im) {
  return run_plan_impl(pl, nl, re, im);
}
FL_FFT_CLONES int run_plan_d(const Plan<double>& pl, int64_t nl, double* const* re, double* const* im) {
  return run_plan_impl(pl, nl, re, im);
}
template <>
int run_plan<float>(const Plan<float>& pl, int64_t nl, float* const* re, float* const* im) {
  return run_plan_f(pl, nl, re, im);
}
template <>
int run_plan<double>(const Plan<double>& pl, int64_t nl, double* const* re, double* const* im) {
  return run_plan_d(pl, nl, re, im);
}

// ---- batch driver ----------------------------------------------------------------------------------------------

// Lanes per group: one 64-byte vector of real parts, fewer for long transforms so that a thread's four buffers stay
// within 512 KiB (half the L2 of current server cores: the sequences being gathered need the rest).
template <typename T>
int64_t lanes_for(int64_t work_len, int64_t count) {
  int64_t nl = 64 / sizeof(T);
  while (nl > 2 && work_len * nl * static_cast<int64_t>(sizeof(T)) * 4 > (int64_t(1) << 19)) nl /= 2;
  return std::max<int64_t>(1, std::min(nl, count));
}

// Column runs lie a row apart, too far for the hardware prefetchers: the gathers and scatters ask for the run
// kPrefetch points ahead themselves.
constexpr int64_t kPrefetch = 8;
// Bytes between the starts of a thread's work buffers beyond their length (17 cache lines).
constexpr int64_t kSkew = 17 * 64;
template <typename T>
inline void prefetch_run(const T* p, int64_t len, bool valid, bool write) {
  if (!valid) return;
  for (int64_t i = 0; i < len; i += 64 / static_cast<int64_t>(sizeof(T))) {
    if (write) __builtin_prefetch(p + i, 1);
    else __builtin_prefetch(p + i, 0);
  }
}

// Whether a full group's complex sequences start at consecutive elements (columns of a row-major array).
bool adjacent(const std::vector<int64_t>& off, int64_t first, int64_t cnt, int64_t nl) {
  if (cnt != nl) return false;
  for (int64_t l = 1; l < nl; ++l)
    if (off[first + l] != off[first] + 2 * l) return false;
  return true;
}

// Runs body(group, nl_in_group, re, im) for each group of `count` items (nl lanes each), each thread with its own
// four work buffers of work_len * nl elements; body gathers into buffer 0, runs the plan and scatters.
template <typename T, typename Body>
void for_groups(int64_t count, int64_t work_len, int64_t n, Body body) {
  if (count <= 0) return;
  const int64_t nl = lanes_for<T>(work_len, count);
  const int64_t groups = (count + nl - 1) / nl;
  const bool par = groups > 1 && n * count >= kParallelGrain && !omp_in_parallel() && omp_get_max_threads() > 1;
#pragma omp parallel num_threads(par ? omp_get_max_threads() : 1)
  {
    // The four buffers are skewed by a few cache lines each: at power-of-two lengths they would otherwise share
    // their L1 sets (so would every stream of a pass), evicting each other.
    const int64_t len = work_len * nl + kSkew / static_cast<int64_t>(sizeof(T));
    std::vector<T> buf(4 * len);
    T* const re[2] = {buf.data(), buf.data() + 2 * len};
    T* const im[2] = {buf.data() + len, buf.data() + 3 * len};
#pragma omp for schedule(static)
    for (int64_t g = 0; g < groups; ++g) body(g * nl, std::min(nl, count - g * nl), nl, re, im);
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

// Whether gather_rows / scatter_rows handle nl lanes of T (the lane counts lanes_for picks for long rows included).
template <typename T>
bool tiled_lanes(int64_t nl) { return nl == 64 / static_cast<int64_t>(sizeof(T)) || nl == 32 / static_cast<int64_t>(sizeof(T)); }

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
