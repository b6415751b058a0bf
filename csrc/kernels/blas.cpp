#include "blas.h"

#include "sgemm.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <climits>
#include <type_traits>
#include <vector>


namespace fl::blas {
namespace {

bool fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

// BLAS reads a row-major (rows x cols) matrix with leading dimension ld >= max(1, cols); a matrix
// with unit row stride is the transpose of such a matrix.
struct BlasOperand {
  bool ok = false, trans = false;
  int64_t ld = 0;
};
BlasOperand blas_operand(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  BlasOperand o;
  if ((cs == 1 || cols <= 1) && rs >= std::max<int64_t>(1, cols)) o = {true, false, rs};
  else if ((rs == 1 || rows <= 1) && cs >= std::max<int64_t>(1, rows)) o = {true, true, cs};
  else if (rows <= 1 && cols <= 1) o = {true, false, 1};
  if (o.ok && !fits_int(o.ld)) o.ok = false;
  return o;
}

// The element types BLAS has: s, d, c (complex<float>) and z (complex<double>).
template <typename T>
constexpr bool blas_type = std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, complex<float>> ||
                           std::is_same_v<T, complex<double>>;

template <typename T>
void cblas_gemm(bool ta, bool tb, int m, int n, int k, T alpha, const T* a, int lda, const T* b, int ldb, T beta, T* c,
                int ldc) {
  auto TA = ta ? CblasTrans : CblasNoTrans, TB = tb ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>) scipy_cblas_sgemm(CblasRowMajor, TA, TB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  else if constexpr (std::is_same_v<T, double>) scipy_cblas_dgemm(CblasRowMajor, TA, TB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  else if constexpr (std::is_same_v<T, complex<float>>)
    scipy_cblas_cgemm(CblasRowMajor, TA, TB, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc);
  else scipy_cblas_zgemm(CblasRowMajor, TA, TB, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc);
}

// Portable kernel: i-p-j order over a row of C held in Acc, so the inner loop streams B's row and
// vectorizes when B has unit column stride.
template <typename T>
void portable_gemm(int64_t m, int64_t n, int64_t k, T alpha, Mat<const T> a, Mat<const T> b, T beta, Mat<T> c) {
  using Acc = std::conditional_t<std::is_integral_v<T>, int64_t, T>;
  std::vector<Acc> row(static_cast<size_t>(n));
  for (int64_t i = 0; i < m; ++i) {
    std::fill(row.begin(), row.end(), Acc(0));
    for (int64_t p = 0; p < k; ++p) {
      Acc av = static_cast<Acc>(a.data[i * a.rs + p * a.cs]);
      const T* brow = b.data + p * b.rs;
      for (int64_t j = 0; j < n; ++j) row[j] += av * static_cast<Acc>(brow[j * b.cs]);
    }
    for (int64_t j = 0; j < n; ++j) {
      T& out = c.data[i * c.rs + j * c.cs];
      Acc v = static_cast<Acc>(alpha) * row[j];
      if (beta != T(0)) v += static_cast<Acc>(beta) * static_cast<Acc>(out);
      out = static_cast<T>(v);
    }
  }
}

// Matrix-vector shapes (m == 1 or n == 1) as BLAS gemv: a GEMM would pack (and pad) the whole matrix
// for a single row or column of output.
template <typename T>
bool try_gemv(int64_t m, int64_t n, int64_t k, T alpha, Mat<const T> a, Mat<const T> b, T beta, Mat<T> c) {
  if constexpr (!blas_type<T>) {
    return false;
  } else {
    // y (len) = alpha * M @ x + beta * y with M given as a (rows x cols) operand, x and y strided vectors
    auto gemv = [&](int64_t rows, int64_t cols, const T* mat, int64_t rs, int64_t cs, const T* x, int64_t incx, T* y,
                    int64_t incy) {
      const BlasOperand o = blas_operand(rows, cols, rs, cs);
      if (!o.ok || incx <= 0 || incy <= 0 || !fits_int(rows) || !fits_int(cols) || !fits_int(incx) || !fits_int(incy))
        return false;
      // a transposed operand is the row-major (cols x rows) matrix, multiplied transposed
      const int r = int(o.trans ? cols : rows), q = int(o.trans ? rows : cols);
      const auto t = o.trans ? CblasTrans : CblasNoTrans;
      if constexpr (std::is_same_v<T, float>)
        scipy_cblas_sgemv(CblasRowMajor, t, r, q, alpha, mat, int(o.ld), x, int(incx), beta, y, int(incy));
      else if constexpr (std::is_same_v<T, double>)
        scipy_cblas_dgemv(CblasRowMajor, t, r, q, alpha, mat, int(o.ld), x, int(incx), beta, y, int(incy));
      else if constexpr (std::is_same_v<T, complex<float>>)
        scipy_cblas_cgemv(CblasRowMajor, t, r, q, &alpha, mat, int(o.ld), x, int(incx), &beta, y, int(incy));
      else
        scipy_cblas_zgemv(CblasRowMajor, t, r, q, &alpha, mat, int(o.ld), x, int(incx), &beta, y, int(incy));
      return true;
    };
    if (n == 1) return gemv(m, k, a.data, a.rs, a.cs, b.data, b.rs, c.data, c.rs);  // c = A @ b
    if (m == 1) return gemv(n, k, b.data, b.cs, b.rs, a.data, a.cs, c.data, c.cs);  // c^T = B^T @ a^T
    return false;
  }
}

template <typename T>
bool try_blas(int64_t m, int64_t n, int64_t k, T alpha, Mat<const T> a, Mat<const T> b, T beta, Mat<T> c) {
  if constexpr (!blas_type<T>) {
    return false;
  } else {
    if (!fits_int(m) || !fits_int(n) || !fits_int(k)) return false;
    BlasOperand oa = blas_operand(m, k, a.rs, a.cs), ob = blas_operand(k, n, b.rs, b.cs);
    BlasOperand oc = blas_operand(m, n, c.rs, c.cs);
    if (!oa.ok || !ob.ok || !oc.ok || oc.trans) return false;
    cblas_gemm<T>(oa.trans, ob.trans, int(m), int(n), int(k), alpha, a.data, int(oa.ld), b.data, int(ob.ld), beta, c.data,
                  int(oc.ld));
    return true;
  }
}

}  // namespace

bool blas_layout_ok(int64_t rows, int64_t cols, int64_t rs, int64_t cs) { return blas_operand(rows, cols, rs, cs).ok; }

template <typename T>
void gemm(int64_t m, int64_t n, int64_t k, T alpha, Mat<const T> a, Mat<const T> b, T beta, Mat<T> c) {
  if (m == 0 || n == 0) return;
  if (k == 0 || alpha == T(0)) {  // C = beta * C, reading neither A nor B (their NaNs stay out), as BLAS
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        T& out = c.data[i * c.rs + j * c.cs];
        out = beta == T(0) ? T(0) : static_cast<T>(beta * out);
      }
    return;
  }
  if ((m == 1 || n == 1) && try_gemv(m, n, k, alpha, a, b, beta, c)) return;
  if constexpr (std::is_same_v<T, float>) {
    // Our packed sgemm (sgemm.h) first; a C with unit row stride is computed as C^T = B^T A^T.
    if (c.cs == 1 || n == 1 ? sgemm_packed(m, n, k, alpha, a, b, beta, c)
                            : c.rs == 1 && sgemm_packed(n, m, k, alpha, {b.data, b.cs, b.rs}, {a.data, a.cs, a.rs}, beta,
                                                        {c.data, c.cs, c.rs}))
      return;
  }
  if (!try_blas(m, n, k, alpha, a, b, beta, c)) portable_gemm(m, n, k, alpha, a, b, beta, c);
}

void sgemm_epilogue(int64_t m, int64_t n, int64_t k, float alpha, Mat<const float> a, Mat<const float> b, float beta,
                    Mat<float> c, const Epilogue& ep) {
  // gemm<float>'s own order of choices, so that the products are the ones it computes
  if (m > 1 && n > 1 && k > 0 && alpha != 0.0f && c.cs == 1 && sgemm_packed(m, n, k, alpha, a, b, beta, c, ep)) return;
  gemm<float>(m, n, k, alpha, a, b, beta, c);
  if (!ep) return;
  for (int64_t i = 0; i < m; ++i) {
    if (c.cs == 1) {
      ep(c.data + i * c.rs, n);
      continue;
    }
    for (int64_t j = 0; j < n; ++j) ep(c.data + i * c.rs + j * c.cs, 1);
  }
}

void sgemm_row_addend(int64_t m, int64_t n, int64_t k, float alpha, Mat<const float> a, Mat<const float> b, float beta,
                      const float* row, Mat<float> c, const Epilogue& ep) {
  // sgemm_epilogue's (and so gemm<float>'s) choice of kernel
  if (m > 1 && n > 1 && k > 0 && alpha != 0.0f && c.cs == 1 && sgemm_packed(m, n, k, alpha, a, b, beta, c, ep, row))
    return;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) c.data[i * c.rs + j * c.cs] = row[j];
  sgemm_epilogue(m, n, k, alpha, a, b, beta, c, ep);
}

template <typename T>
void gemm_batched(int64_t batch, int64_t m, int64_t n, int64_t k, T alpha, Mat<const T> a, int64_t a_bs, Mat<const T> b,
                  int64_t b_bs, T beta, Mat<T> c, int64_t c_bs) {
  auto one = [&](int64_t i) {
    gemm<T>(m, n, k, alpha, {a.data + i * a_bs, a.rs, a.cs}, {b.data + i * b_bs, b.rs, b.cs}, beta,
            {c.data + i * c_bs, c.rs, c.cs});
  };
  // Small matrices: one single-threaded GEMM per OpenMP thread beats OpenBLAS's own threading,
  // which cannot split a tiny GEMM usefully.
  const bool small = m * n * k <= 256 * 256 * 256;
  if (batch > 1 && small && omp_get_max_threads() > 1) {
    SingleThreaded guard;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < batch; ++i) one(i);
  } else {
    for (int64_t i = 0; i < batch; ++i) one(i);
  }
}

void set_num_threads(int n) { scipy_openblas_set_num_threads(n); }

SingleThreaded::SingleThreaded() : prev(scipy_openblas_get_num_threads()) { scipy_openblas_set_num_threads(1); }
SingleThreaded::~SingleThreaded() { scipy_openblas_set_num_threads(prev); }

namespace {
// OpenBLAS runs its parallel jobs on our OpenMP threads instead of its own pthread pool: two pools
// that both spin-wait after their parallel regions would fight over the cores (on 2 cores an
// OpenMP op right after a GEMM ran 10x slower).
void run_on_openmp(int, openblas_dojob_callback dojob, int numjobs, size_t elsize, void* jobdata, int dojob_data) {
#pragma omp parallel for schedule(static, 1) num_threads(numjobs)
  for (int i = 0; i < numjobs; ++i) dojob(i, static_cast<char*>(jobdata) + i * elsize, dojob_data);
}
struct UseOpenMP {
  UseOpenMP() {
    scipy_openblas_set_threads_callback_function(run_on_openmp);
    scipy_openblas_set_num_threads(omp_get_max_threads());
  }
} use_openmp;
}  // namespace

#define FL_GEMM_INSTANTIATE(T)                                                                               \
  template void gemm<T>(int64_t, int64_t, int64_t, T, Mat<const T>, Mat<const T>, T, Mat<T>);                   \
  template void gemm_batched<T>(int64_t, int64_t, int64_t, int64_t, T, Mat<const T>, int64_t, Mat<const T>, int64_t, \
                                T, Mat<T>, int64_t);
FL_GEMM_INSTANTIATE(float)
FL_GEMM_INSTANTIATE(double)
FL_GEMM_INSTANTIATE(int64_t)
FL_GEMM_INSTANTIATE(int32_t)
FL_GEMM_INSTANTIATE(int16_t)
FL_GEMM_INSTANTIATE(int8_t)
FL_GEMM_INSTANTIATE(uint8_t)
FL_GEMM_INSTANTIATE(complex<float>)
FL_GEMM_INSTANTIATE(complex<double>)
#undef FL_GEMM_INSTANTIATE

}  // namespace fl::blas
