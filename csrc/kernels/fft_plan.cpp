// The FFT engine's plans (fft_plan.h): factorization, twiddles, the radix passes (Stockham, over lane-blocked split
// buffers) and Bluestein's algorithm for lengths with large prime factors.
#include "fft_plan.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>

// The lane loops carry no dependences; without the pragma GCC gives up on the radix-4 one (too many pointers).
#define FL_FFT_SIMD _Pragma("omp simd")

namespace fl::fft::detail {
namespace {

// Lengths whose prime factors are all at most this run as mixed radix; others through Bluestein.
constexpr int64_t kMaxDirectFactor = 64;

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

}  // namespace

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

template std::shared_ptr<const Plan<float>> get_plan<float>(int64_t);
template std::shared_ptr<const Plan<double>> get_plan<double>(int64_t);

namespace {

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

}  // namespace

FL_FFT_CLONES int run_plan(const Plan<float>& pl, int64_t nl, float* const* re, float* const* im) {
  return run_plan_impl(pl, nl, re, im);
}
FL_FFT_CLONES int run_plan(const Plan<double>& pl, int64_t nl, double* const* re, double* const* im) {
  return run_plan_impl(pl, nl, re, im);
}

}  // namespace fl::fft::detail
