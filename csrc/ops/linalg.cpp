// CPU kernels of the torch.linalg primitives (linalg.h) on LAPACK. Each matrix of the batch is copied
// once into a column-major buffer (LAPACK's layout, which the results keep) and factored by one
// LAPACK call; small matrices run in parallel over the batch with single-threaded OpenBLAS.
// One templated path serves float, double and their complex types (LAPACK's s/d/c/z routines).
#include "linalg.h"

// LAPACK's complex numbers are (re, im) pairs, fl::complex's layout: LAPACKE takes our pointers as they are.
#define lapack_complex_float ::fl::complex<float>
#define lapack_complex_double ::fl::complex<double>
#include <cblas.h>
#include <lapacke.h>
#include <omp.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

namespace fl {
namespace {

// LAPACKE's NaN scan of every input doubles the cost of small problems; NaNs propagate as in torch.
[[maybe_unused]] const bool g_nancheck_off = (scipy_LAPACKE_set_nancheck(0), true);

// FL_LAPACK2(T, orgqr, ungqr, args...) calls scipy_LAPACKE_sorgqr, _dorgqr, _cungqr or _zungqr
// (column-major) by T: the real routine's name, then the complex one's (they differ for the orthogonal /
// unitary and symmetric / Hermitian ones). FL_LAPACK(T, getrf, args...) is the common case of one name.
#define FL_LAPACK2(T, rfn, cfn, ...)                                                                          \
  [&]() {                                                                                                     \
    if constexpr (std::is_same_v<T, float>) return scipy_LAPACKE_s##rfn(LAPACK_COL_MAJOR, __VA_ARGS__);       \
    else if constexpr (std::is_same_v<T, double>) return scipy_LAPACKE_d##rfn(LAPACK_COL_MAJOR, __VA_ARGS__); \
    else if constexpr (std::is_same_v<T, complex<float>>) return scipy_LAPACKE_c##cfn(LAPACK_COL_MAJOR, __VA_ARGS__); \
    else return scipy_LAPACKE_z##cfn(LAPACK_COL_MAJOR, __VA_ARGS__);                                          \
  }()
#define FL_LAPACK(T, fn, ...) FL_LAPACK2(T, fn, fn, __VA_ARGS__)

// The real type of T (float for complex<float>): singular values, eigenvalues of Hermitian matrices.
template <typename T> struct RealOf { using type = T; };
template <typename T> struct RealOf<complex<T>> { using type = T; };
template <typename T> using real_of = typename RealOf<T>::type;

template <typename T> real_of<T> abs_of(T v) {
  if constexpr (is_complex_v<T>) return std::hypot(v.re, v.im);
  else return std::abs(v);
}
template <typename T> bool finite(T v) {
  if constexpr (is_complex_v<T>) return std::isfinite(v.re) && std::isfinite(v.im);
  else return std::isfinite(v);
}

bool lapack_type(ScalarType dt) { return dt == ScalarType::Float32 || dt == ScalarType::Float64 || is_complex(dt); }
template <typename F>
void dispatch_lapack(ScalarType dt, F&& f) {
  switch (dt) {
    case ScalarType::Float32: f(float()); break;
    case ScalarType::Float64: f(double()); break;
    case ScalarType::ComplexFloat: f(complex<float>()); break;
    default: f(complex<double>());
  }
}

// Runs fn(i) for every matrix of the batch. Matrices up to 512 use single-threaded LAPACK: OpenBLAS's
// threaded factorizations gain little there and lose badly (10x and more) when the cores are shared;
// they run in parallel over the batch when there is enough work to pay for waking the threads. Larger
// matrices run in order with OpenBLAS's own threads.
template <typename F>
void for_each_matrix(int64_t batch, int64_t n, F&& fn) {
  if (n > 512) {
    for (int64_t i = 0; i < batch; ++i) fn(i);
    return;
  }
  const int prev = scipy_openblas_get_num_threads();
  if (prev > 1) scipy_openblas_set_num_threads(1);
  const bool parallel = batch > 1 && double(batch) * double(n) * double(n) * double(n) >= double(1 << 25);
#pragma omp parallel for schedule(dynamic) if (parallel)
  for (int64_t i = 0; i < batch; ++i) fn(i);
  if (prev > 1) scipy_openblas_set_num_threads(prev);
}

IntList batch_of(const Tensor& t) { return IntList(t->sizes.begin(), t->sizes.end() - 2); }
IntList with(IntList s, std::initializer_list<int64_t> tail) {
  s.insert(s.end(), tail);
  return s;
}
int64_t count(const IntList& s) {
  int64_t n = 1;
  for (int64_t v : s) n *= v;
  return n;
}
int64_t rows(const Tensor& t) { return t->sizes[t->dim() - 2]; }
int64_t cols(const Tensor& t) { return t->sizes[t->dim() - 1]; }
int ld(int64_t r) { return static_cast<int>(std::max<int64_t>(1, r)); }

// (batch..., r, c) with every matrix column-major and the matrices one after another.
Tensor empty_fortran(const IntList& batch, int64_t r, int64_t c, ScalarType dt) {
  IntList sizes = with(batch, {r, c});
  IntList strides(sizes.size());
  strides[sizes.size() - 2] = 1;
  strides[sizes.size() - 1] = std::max<int64_t>(1, r);
  int64_t s = r * c;
  for (int64_t d = static_cast<int64_t>(batch.size()) - 1; d >= 0; --d) {
    strides[d] = std::max<int64_t>(1, s);
    s *= batch[d];
  }
  return empty_strided(sizes, strides, dt);
}
// Blocked transpose of `batch` row-major (r x c) matrices into column-major ones (the common case of
// fortran_copy: a generic strided copy walks the output with a large stride and is ~20x slower).
template <typename T>
void transpose_batch(const T* src, T* dst, int64_t batch, int64_t r, int64_t c) {
  constexpr int64_t B = 16;
  const int64_t rb = (r + B - 1) / B;  // row blocks per matrix: the parallel unit, so one big matrix splits too
#pragma omp parallel for schedule(static) if (batch * r * c > (1 << 18))
  for (int64_t w = 0; w < batch * rb; ++w) {
    const int64_t i = w / rb, i0 = (w % rb) * B;
    const T* s = src + i * r * c;
    T* d = dst + i * r * c;
    for (int64_t j0 = 0; j0 < c; j0 += B)
      for (int64_t ii = i0; ii < std::min(r, i0 + B); ++ii)
        for (int64_t jj = j0; jj < std::min(c, j0 + B); ++jj) d[jj * r + ii] = s[ii * c + jj];
  }
}

Tensor fortran_copy(const Tensor& t) {
  Tensor out = empty_fortran(batch_of(t), rows(t), cols(t), t->dtype);
  if (t->numel > 0 && t->dtype == out->dtype && t->strides == out->strides) {  // already LAPACK's layout
    std::memcpy(out->data_ptr(), t->data_ptr(), t->numel * t->itemsize());
  } else if (t->contiguous && t->numel > 0 && lapack_type(t->dtype)) {
    dispatch_lapack(t->dtype, [&](auto tag) {
      using T = decltype(tag);
      transpose_batch<T>(t->data<T>(), out->data<T>(), count(batch_of(t)), rows(t), cols(t));
    });
  } else {
    copy_into(out, t);
  }
  return out;
}

// torch's dtype errors. Some of its kernels reject the 16-bit floats (and some also integers) with a
// NotImplementedError naming the kernel: `low_kernel` / `int_kernel` name it where torch does.
void check_dtype(const char* op, ScalarType dt, const char* low_kernel = nullptr, const char* int_kernel = nullptr) {
  const bool low = dt == ScalarType::Float16 || dt == ScalarType::BFloat16;
  const char* kernel = low ? low_kernel : lapack_type(dt) ? nullptr : int_kernel;
  if (kernel) throw NotImplementedError(str_cat("\"", kernel, "\" not implemented for '", c10_type_name(dt), "'"));
  FL_CHECK(!low, Error, op, ": Low precision dtypes not supported. Got ", c10_type_name(dt));
  FL_CHECK(lapack_type(dt), Error, op, ": Expected a floating point or complex tensor as input. Got ", c10_type_name(dt));
}
void check_input(const char* op, const Tensor& A, bool square, const char* low_kernel = nullptr,
                 const char* int_kernel = nullptr) {
  FL_CHECK(A->dim() >= 2, Error, op, ": The input tensor A must have at least 2 dimensions.");
  check_dtype(op, A->dtype, low_kernel, int_kernel);
  FL_CHECK(!square || rows(A) == cols(A), Error, op, ": A must be batches of square matrices, but they are ", rows(A),
           " by ", cols(A), " matrices");
}
void check_pair(const char* op, const Tensor& A, const Tensor& B) {
  FL_CHECK(B->dim() >= 2, Error, op, ": The input tensor B must have at least 2 dimensions.");
  FL_CHECK(A->dtype == B->dtype, Error, op, ": Expected A and B to have the same dtype, but found A of type ",
           c10_type_name(A->dtype), " and B of type ", c10_type_name(B->dtype), " instead");
  FL_CHECK(batch_of(A) == batch_of(B), Error, op, ": A and B must have the same batch dimensions, got ",
           shape_str(A->sizes), " and ", shape_str(B->sizes));
}

// Raises Err (LinAlgError unless torch raises a plain RuntimeError) for the first matrix whose LAPACK info is
// not 0; `what(info)` is the message.
template <typename Err = LinAlgError, typename F>
void raise_for_info(const char* op, const Tensor& info, bool batched, F what) {
  const int32_t* p = info->data<int32_t>();
  for (int64_t i = 0; i < info->numel; ++i) {
    if (p[i] == 0) continue;
    throw Err(str_cat(op, ": ", batched ? str_cat("(Batch element ", i, "): ") : std::string(), what(p[i])));
  }
}
std::string not_converged(int info, const char* what) {
  return str_cat("The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated ",
                 what, " (error code: ", info, ").");
}

}  // namespace

// ---- LU: inv, solve, det, slogdet -----------------------------------------------------------------

Tensor2 inv_ex_cpu(const Tensor& A, bool check_errors) {
  check_input("linalg.inv", A, true);
  const int64_t n = cols(A), nb = count(batch_of(A));
  Tensor out = fortran_copy(A), info = zeros(batch_of(A), ScalarType::Int32);
  int32_t* inf = info->data<int32_t>();
  if (n > 0) dispatch_lapack(A->dtype, [&](auto tag) {
    using T = decltype(tag);
    T* a = out->data<T>();
    for_each_matrix(nb, n, [&](int64_t i) {
      std::vector<lapack_int> piv(n);
      T* m = a + i * n * n;
      lapack_int r = FL_LAPACK(T, getrf, n, n, m, n, piv.data());
      if (r == 0) r = FL_LAPACK(T, getri, n, m, n, piv.data());
      inf[i] = r;
    });
  });
  if (check_errors)
    raise_for_info("linalg.inv", info, A->dim() > 2, [](int i) {
      return str_cat("The diagonal element ", i, " is zero, the inversion could not be completed because the input matrix is singular.");
    });
  return {out, info};
}

Tensor2 solve_ex_cpu(const Tensor& A, const Tensor& B, bool check_errors) {
  check_input("linalg.solve", A, true, "lu_cpu");
  check_pair("linalg.solve", A, B);
  const int64_t n = cols(A), k = cols(B), nb = count(batch_of(A));
  FL_CHECK(rows(B) == n, Error, "linalg.solve: Incompatible shapes of A and B for the equation AX = B (", n, "x", n, " and ",
           rows(B), "x", k, ")");
  // A row-major A is factored as it lies, as A^T, and solved with the transposed LU (no transposing copy).
  const bool as_transpose = A->contiguous;
  Tensor lu = as_transpose ? clone(A) : fortran_copy(A), X = fortran_copy(B), info = zeros(batch_of(A), ScalarType::Int32);
  int32_t* inf = info->data<int32_t>();
  if (n > 0 && k > 0) dispatch_lapack(A->dtype, [&](auto tag) {
    using T = decltype(tag);
    T *a = lu->data<T>(), *x = X->data<T>();
    for_each_matrix(nb, n, [&](int64_t i) {
      std::vector<lapack_int> piv(n);
      T *ai = a + i * n * n, *xi = x + i * n * k;
      inf[i] = FL_LAPACK(T, getrf, n, n, ai, n, piv.data());
      if (inf[i] == 0) FL_LAPACK(T, getrs, as_transpose ? 'T' : 'N', n, k, ai, n, piv.data(), xi, n);
    });
  });
  if (check_errors) {
    for (int64_t i = 0; i < info->numel; ++i)
      if (inf[i] != 0) throw LinAlgError("torch.linalg.solve: The solver failed because the input matrix is singular.");
  }
  return {X, info};
}

Tensor3 lu_factor_ex_cpu(const Tensor& A, bool pivot, bool check_errors) {
  FL_CHECK(A->dim() >= 2, Error, "torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: ", shape_str(A->sizes), " instead");
  check_dtype("linalg.lu_factor", A->dtype, "lu_cpu", "lu_cpu");
  FL_CHECK(pivot, Error, "linalg.lu_factor: LU without pivoting is not implemented on the CPU");
  const int64_t m = rows(A), n = cols(A), k = std::min(m, n), nb = count(batch_of(A));
  Tensor LU = fortran_copy(A), piv = empty(with(batch_of(A), {k}), ScalarType::Int32), info = zeros(batch_of(A), ScalarType::Int32);
  int32_t *inf = info->data<int32_t>(), *pv = piv->data<int32_t>();
  if (k > 0) dispatch_lapack(A->dtype, [&](auto tag) {
    using T = decltype(tag);
    T* a = LU->data<T>();
    for_each_matrix(nb, std::max(m, n), [&](int64_t i) { inf[i] = FL_LAPACK(T, getrf, m, n, a + i * m * n, ld(m), pv + i * k); });
  });
  if (check_errors)
    raise_for_info<Error>("torch.linalg.lu_factor", info, A->dim() > 2, [](int i) {
      return str_cat("U[", i, ",", i, "] is zero and using it on lu_solve would result in a division by zero. If you still want "
                     "to perform the factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)");
    });
  return {LU, piv, info};
}

namespace {

// LAPACK's row interchanges (row i swapped with piv[i] - 1, in order) as the permutation P of A = P L U.
}  // namespace

Tensor pivots_to_permutation_cpu(const Tensor& pivots, int64_t m, ScalarType dt) {
  FL_CHECK(pivots->dtype == ScalarType::Int32 && pivots->dim() >= 1, Error, "lu_unpack: LU_pivots is expected to be a 1-D or "
           "batched int32 tensor, got ", c10_type_name(pivots->dtype), " of shape ", shape_str(pivots->sizes));
  Tensor pv = contiguous(pivots);
  const int64_t k = pv->sizes.back(), nb = pv->numel / std::max<int64_t>(1, k);
  FL_CHECK(k <= m, Error, "lu_unpack: more pivots (", k, ") than rows (", m, ")");
  IntList batch(pv->sizes.begin(), pv->sizes.end() - 1);
  check_dtype("lu_unpack", dt);
  Tensor P = zeros(with(batch, {m, m}), dt);
  const int32_t* p = pv->data<int32_t>();
  std::vector<int64_t> perm(m);
  dispatch_lapack(dt, [&](auto tag) {
    using T = decltype(tag);
    T* out = P->data<T>();
    for (int64_t b = 0; b < nb; ++b) {
      for (int64_t j = 0; j < m; ++j) perm[j] = j;
      for (int64_t i = 0; i < k; ++i) {
        int64_t t = p[b * k + i] - 1;
        FL_CHECK(t >= i && t < m, Error, "lu_unpack: pivot ", t + 1, " out of range at index ", i);
        std::swap(perm[i], perm[t]);
      }
      for (int64_t j = 0; j < m; ++j) out[b * m * m + perm[j] * m + j] = T(1);
    }
  });
  return P;
}

namespace {

// LU-factors every matrix of A (of type T) and passes (i, factor, pivots, n) to fn, which reads its diagonal.
// det(A^T) = det(A), so a row-major A is factored as it lies (LAPACK sees A^T), without a transposing copy.
template <typename T, typename F>
void lu_each(const Tensor& A, F fn) {
  const int64_t n = cols(A), nb = count(batch_of(A));
  Tensor lu = A->contiguous ? clone(A) : fortran_copy(A);
  T* a = lu->data<T>();
  for_each_matrix(nb, n, [&](int64_t i) {
    std::vector<lapack_int> piv(n);
    T* m = a + i * n * n;
    if (n > 0) FL_LAPACK(T, getrf, n, n, m, n, piv.data());
    fn(i, m, piv.data(), n);
  });
}

}  // namespace

Tensor det_cpu(const Tensor& A) {
  check_input("linalg.det", A, true, "lu_cpu");
  Tensor out = empty(batch_of(A), A->dtype);
  dispatch_lapack(A->dtype, [&](auto tag) {
    using T = decltype(tag);
    T* o = out->data<T>();
    lu_each<T>(A, [o](int64_t i, const T* m, const lapack_int* piv, int64_t n) {
      T d = 1;
      for (int64_t j = 0; j < n; ++j) d *= piv[j] != j + 1 ? -m[j * n + j] : m[j * n + j];
      o[i] = d;
    });
  });
  return out;
}

Tensor2 slogdet_cpu(const Tensor& A) {
  check_input("linalg.slogdet", A, true);
  // The sign is det / |det| (a unit complex number for complex A), logabsdet is real.
  Tensor sign = empty(batch_of(A), A->dtype), logabs = empty(batch_of(A), to_real_type(A->dtype));
  dispatch_lapack(A->dtype, [&](auto tag) {
    using T = decltype(tag);
    using R = real_of<T>;
    T* s = sign->data<T>();
    R* l = logabs->data<R>();
    lu_each<T>(A, [s, l](int64_t i, const T* m, const lapack_int* piv, int64_t n) {
      T sg = T(1);
      R acc = 0;
      for (int64_t j = 0; j < n; ++j) {
        const T u = m[j * n + j];
        const R a = abs_of(u);
        if (piv[j] != j + 1) sg = -sg;
        if constexpr (is_complex_v<T>) sg = a == R(0) ? T(0) : sg * T(u.re / a, u.im / a);
        else sg = u < 0 ? -sg : u == 0 ? T(0) : sg;
        acc += std::log(a);
      }
      s[i] = sg;
      l[i] = acc;
    });
  });
  return {sign, logabs};
}

namespace {

}  // namespace

// ---- triangular: cholesky, solve_triangular ------------------------------------------------------

Tensor2 cholesky_ex_cpu(const Tensor& A, bool upper, bool check_errors) {
  check_input("linalg.cholesky", A, true, "cholesky_cpu");
  const int64_t n = cols(A), nb = count(batch_of(A));
  Tensor L = fortran_copy(A), info = zeros(batch_of(A), ScalarType::Int32);
  int32_t* inf = info->data<int32_t>();
  dispatch_lapack(A->dtype, [&](auto tag) {
    using T = decltype(tag);
    T* a = L->data<T>();
    for_each_matrix(nb, n, [&](int64_t i) {
      T* m = a + i * n * n;
      if (n > 0) inf[i] = FL_LAPACK(T, potrf, upper ? 'U' : 'L', n, m, n);
      for (int64_t c = 0; c < n; ++c)  // clear the other triangle, which LAPACK leaves as it was
        for (int64_t r = 0; r < n; ++r)
          if (upper ? r > c : r < c) m[c * n + r] = T(0);
    });
  });
  if (check_errors)
    raise_for_info("linalg.cholesky", info, A->dim() > 2, [](int i) {
      return str_cat("The factorization could not be completed because the input is not positive-definite (the leading minor of order ",
                     i, " is not positive-definite).");
    });
  return {L, info};
}

Tensor solve_triangular_cpu(const Tensor& A, const Tensor& B, bool upper, bool left, bool unit) {
  check_input("linalg.solve_triangular", A, true, "triangular_solve_cpu", "triangular_solve_cpu");
  check_pair("linalg.solve_triangular", A, B);
  const int64_t n = cols(A), r = rows(B), c = cols(B), nb = count(batch_of(A));
  FL_CHECK((left ? r : c) == n, Error, "linalg.solve_triangular: Incompatible shapes of A and B for the equation ",
           left ? "AX = B" : "XA = B", " (", n, "x", n, " and ", r, "x", c, ")");
  Tensor Af = fortran_copy(A), X = fortran_copy(B);
  if (r == 0 || c == 0) return X;
  dispatch_lapack(A->dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* a = Af->data<T>();
    T* x = X->data<T>();
    for_each_matrix(nb, n, [&](int64_t i) {
      auto side = left ? CblasLeft : CblasRight;
      auto uplo = upper ? CblasUpper : CblasLower;
      auto diag = unit ? CblasUnit : CblasNonUnit;
      const T one = T(1);
      if constexpr (std::is_same_v<T, float>)
        scipy_cblas_strsm(CblasColMajor, side, uplo, CblasNoTrans, diag, r, c, one, a + i * n * n, ld(n), x + i * r * c, ld(r));
      else if constexpr (std::is_same_v<T, double>)
        scipy_cblas_dtrsm(CblasColMajor, side, uplo, CblasNoTrans, diag, r, c, one, a + i * n * n, ld(n), x + i * r * c, ld(r));
      else if constexpr (std::is_same_v<T, complex<float>>)  // (CBLAS passes complex scalars by pointer)
        scipy_cblas_ctrsm(CblasColMajor, side, uplo, CblasNoTrans, diag, r, c, &one, a + i * n * n, ld(n), x + i * r * c, ld(r));
      else
        scipy_cblas_ztrsm(CblasColMajor, side, uplo, CblasNoTrans, diag, r, c, &one, a + i * n * n, ld(n), x + i * r * c, ld(r));
    });
  });
  return X;
}

namespace {

}  // namespace

// ---- orthogonal factorizations: qr, eigh, svd, lstsq --------------------------------------------

Tensor2 qr_cpu(const Tensor& A, const std::string& mode) {
  FL_CHECK(mode == "reduced" || mode == "complete" || mode == "r", Error, "qr received unrecognized mode '", mode,
           "' but expected one of 'reduced' (default), 'r', or 'complete'");
  check_input("linalg.qr", A, false, "geqrf_cpu");
  const int64_t m = rows(A), n = cols(A), k = std::min(m, n), nb = count(batch_of(A));
  const bool complete = mode == "complete", want_q = mode != "r";
  const int64_t qc = complete ? m : k, rr = complete ? m : k, wc = std::max(n, qc);
  Tensor Af = fortran_copy(A);
  Tensor Q = want_q ? empty_fortran(batch_of(A), m, qc, A->dtype) : empty({0}, A->dtype);
  Tensor R = empty_fortran(batch_of(A), rr, n, A->dtype);
  dispatch_lapack(A->dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* a = Af->data<T>();
    T *q = want_q ? Q->data<T>() : nullptr, *rp = R->data<T>();
    for_each_matrix(nb, std::max(m, n), [&](int64_t i) {
      std::vector<T> w(static_cast<size_t>(m * wc)), tau(static_cast<size_t>(std::max<int64_t>(1, k)));
      std::copy(a + i * m * n, a + (i + 1) * m * n, w.begin());
      if (k > 0) FL_LAPACK(T, geqrf, m, n, w.data(), ld(m), tau.data());
      T* ri = rp + i * rr * n;
      for (int64_t c = 0; c < n; ++c)
        for (int64_t r = 0; r < rr; ++r) ri[c * rr + r] = r <= c && r < k ? w[c * m + r] : T(0);
      if (want_q && m > 0 && qc > 0) {
        FL_LAPACK2(T, orgqr, ungqr, m, qc, k, w.data(), ld(m), tau.data());
        std::copy(w.begin(), w.begin() + m * qc, q + i * m * qc);
      }
    });
  });
  return {Q, R};
}

Tensor2 eigh_cpu(const Tensor& A, const std::string& uplo, bool compute_v) {
  FL_CHECK(uplo == "L" || uplo == "U" || uplo == "l" || uplo == "u", Error,
           "Expected UPLO argument to be 'L' or 'U', but got ", uplo);
  check_input("linalg.eigh", A, true, "linalg_eigh_cpu", "linalg_eigh_cpu");
  const int64_t n = cols(A), nb = count(batch_of(A));
  Tensor V = fortran_copy(A), L = empty(with(batch_of(A), {n}), to_real_type(A->dtype)), info = zeros(batch_of(A), ScalarType::Int32);
  int32_t* inf = info->data<int32_t>();
  const char up = static_cast<char>(std::toupper(uplo[0]));
  if (n > 0) dispatch_lapack(A->dtype, [&](auto tag) {
    using T = decltype(tag);
    T* v = V->data<T>();
    real_of<T>* l = L->data<real_of<T>>();
    for_each_matrix(nb, n, [&](int64_t i) {
      inf[i] = FL_LAPACK2(T, syevd, heevd, compute_v ? 'V' : 'N', up, n, v + i * n * n, n, l + i * n);
    });
  });
  raise_for_info("linalg.eigh", info, A->dim() > 2, [](int i) { return not_converged(i, "eigenvalues"); });
  return {L, compute_v ? V : empty({0}, A->dtype)};
}

Tensor2 eig_cpu(const Tensor& A, bool compute_v) {
  check_input("linalg.eig", A, true, "linalg_eig_out_cpu");
  const int64_t n = cols(A), nb = count(batch_of(A));
  const ScalarType ct = to_complex_type(A->dtype);
  Tensor Af = fortran_copy(A), L = empty(with(batch_of(A), {n}), ct), info = zeros(batch_of(A), ScalarType::Int32);
  Tensor V = compute_v ? empty_fortran(batch_of(A), n, n, ct) : empty({0}, ct);
  int32_t* inf = info->data<int32_t>();
  if (n > 0) dispatch_lapack(A->dtype, [&](auto tag) {
    using T = decltype(tag);
    using R = real_of<T>;
    T* a = Af->data<T>();
    for (int64_t j = 0; j < Af->numel; ++j)  // (LAPACK's geev may not return on them)
      FL_CHECK(finite(a[j]), Error, "torch.linalg.eig: input tensor should not contain infs or NaNs.");
    complex<R>* l = L->data<complex<R>>();
    complex<R>* v = compute_v ? V->data<complex<R>>() : nullptr;
    const char jobv = compute_v ? 'V' : 'N';
    for_each_matrix(nb, n, [&](int64_t i) {
      T dummy[1];
      T* ai = a + i * n * n;
      if constexpr (is_complex_v<T>) {
        inf[i] = FL_LAPACK(T, geev, 'N', jobv, n, ai, n, l + i * n, dummy, 1, v ? v + i * n * n : dummy, n);
        return;
      } else {
        // Real geev returns (wr, wi) and packs a complex pair's vectors as (re, im) in two real columns.
        std::vector<T> wr(n), wi(n), vr(compute_v ? n * n : 1);
        inf[i] = FL_LAPACK(T, geev, 'N', jobv, n, ai, n, wr.data(), wi.data(), dummy, 1, vr.data(), n);
        for (int64_t j = 0; j < n; ++j) l[i * n + j] = complex<T>(wr[j], wi[j]);
        if (!v) return;
        complex<T>* vi = v + i * n * n;
        for (int64_t j = 0; j < n; ++j) {
          if (wi[j] == T(0) || j + 1 == n) {
            for (int64_t r = 0; r < n; ++r) vi[j * n + r] = complex<T>(vr[j * n + r]);
            continue;
          }
          for (int64_t r = 0; r < n; ++r) {
            vi[j * n + r] = complex<T>(vr[j * n + r], vr[(j + 1) * n + r]);
            vi[(j + 1) * n + r] = complex<T>(vr[j * n + r], -vr[(j + 1) * n + r]);
          }
          ++j;
        }
      }
    });
  });
  raise_for_info("linalg.eig", info, A->dim() > 2, [](int i) { return not_converged(i, "eigenvalues"); });
  return {L, V};
}

namespace {

// Fills every matrix of a Fortran-layout (batch, r, c) tensor with the identity's first columns.
void set_identity(const Tensor& t) {
  fill(t, Scalar(int64_t(0)));
  const int64_t r = rows(t), c = cols(t), nb = count(batch_of(t));
  dispatch_lapack(t->dtype, [&](auto tag) {
    using T = decltype(tag);
    T* p = t->data<T>();
    for (int64_t i = 0; i < nb; ++i)
      for (int64_t j = 0; j < std::min(r, c); ++j) p[i * r * c + j * r + j] = T(1);
  });
}

}  // namespace

Tensor3 svd_cpu(const Tensor& A, bool full, bool compute_uv) {
  check_input("linalg.svd", A, false, "linalg_svd_cpu");
  const int64_t m = rows(A), n = cols(A), k = std::min(m, n), nb = count(batch_of(A));
  const int64_t uc = full ? m : k, vr = full ? n : k;
  const char jobz = compute_uv ? (full ? 'A' : 'S') : 'N';
  Tensor Af = fortran_copy(A), S = empty(with(batch_of(A), {k}), to_real_type(A->dtype));
  Tensor info = zeros(batch_of(A), ScalarType::Int32);
  Tensor U = compute_uv ? empty_fortran(batch_of(A), m, uc, A->dtype) : empty({0}, A->dtype);
  Tensor Vh = compute_uv ? empty_fortran(batch_of(A), vr, n, A->dtype) : empty({0}, A->dtype);
  if (k == 0) {  // nothing to factor; the full bases are identities
    if (compute_uv) { set_identity(U); set_identity(Vh); }
    return {U, S, Vh};
  }
  int32_t* inf = info->data<int32_t>();
  dispatch_lapack(A->dtype, [&](auto tag) {
    using T = decltype(tag);
    T* a = Af->data<T>();
    real_of<T>* s = S->data<real_of<T>>();
    T *u = compute_uv ? U->data<T>() : nullptr, *vt = compute_uv ? Vh->data<T>() : nullptr;
    for_each_matrix(nb, std::max(m, n), [&](int64_t i) {
      T dummy[1];
      // gesdd can loop for ever on an inf or nan (OpenBLAS): such a matrix fails up front (info > 0 names it)
      const T* mat = a + i * m * n;
      for (int64_t j = 0; j < m * n; ++j)
        if (!finite(mat[j])) { inf[i] = 1; return; }
      inf[i] = FL_LAPACK(T, gesdd, jobz, m, n, a + i * m * n, ld(m), s + i * k, u ? u + i * m * uc : dummy, ld(m),
                         vt ? vt + i * vr * n : dummy, ld(vr));
    });
  });
  raise_for_info("linalg.svd", info, A->dim() > 2, [&](int i) {
    // only on failure: say why, as torch does
    Tensor a = contiguous(to_dtype(A, is_complex(A->dtype) ? ScalarType::ComplexDouble : ScalarType::Float64));
    const double* p = reinterpret_cast<const double*>(a->data_ptr());
    for (int64_t j = 0; j < a->numel * (is_complex(A->dtype) ? 2 : 1); ++j)
      if (!std::isfinite(p[j])) return std::string("The algorithm failed to converge because the input matrix contained non-finite values.");
    return not_converged(i, "singular values");
  });
  return {U, S, Vh};
}

Tensor4 lstsq_cpu(const Tensor& A, const Tensor& B, double rcond, const std::string& driver) {
  FL_CHECK(driver == "gels" || driver == "gelsy" || driver == "gelsd" || driver == "gelss", Error,
           "torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)");
  FL_CHECK(lapack_type(A->dtype), Error, "This function doesn't handle types other than float and double");
  check_input("torch.linalg.lstsq", A, false);
  check_pair("torch.linalg.lstsq", A, B);
  const int64_t m = rows(A), n = cols(A), k = cols(B), mn = std::max(m, n), nb = count(batch_of(A));
  FL_CHECK(rows(B) == m, Error, "torch.linalg.lstsq: input.size(-2) should match other.size(-2)");
  const ScalarType dt = A->dtype, rdt = to_real_type(dt);
  const bool has_rank = driver != "gels", has_sv = driver == "gelsd" || driver == "gelss";
  if (rcond < 0) rcond = (rdt == ScalarType::Float32 ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon()) * double(mn);
  Tensor Af = fortran_copy(A), Bf = empty_fortran(batch_of(A), mn, k, dt);
  fill(Bf, Scalar(int64_t(0)));
  copy_into(make_view(Bf, B->sizes, Bf->strides, Bf->offset), B);
  Tensor rank = has_rank ? zeros(batch_of(A), ScalarType::Int64) : empty({0}, ScalarType::Int64);
  Tensor sv = has_sv ? empty(with(batch_of(A), {std::min(m, n)}), rdt) : empty({0}, rdt);
  Tensor info = zeros(batch_of(A), ScalarType::Int32);
  int32_t* inf = info->data<int32_t>();
  if (std::min(m, n) > 0 && k > 0) dispatch_lapack(dt, [&](auto tag) {
    using T = decltype(tag);
    using R = real_of<T>;
    T *a = Af->data<T>(), *b = Bf->data<T>();
    R* s = has_sv ? sv->data<R>() : nullptr;
    int64_t* rk = has_rank ? rank->data<int64_t>() : nullptr;
    const R rc = static_cast<R>(rcond);
    for_each_matrix(nb, mn, [&](int64_t i) {
      T *ai = a + i * m * n, *bi = b + i * mn * k;
      lapack_int r = 0;
      if (driver == "gels") {
        inf[i] = FL_LAPACK(T, gels, 'N', m, n, k, ai, ld(m), bi, ld(mn));
      } else if (driver == "gelsy") {
        std::vector<lapack_int> jpvt(n, 0);
        inf[i] = FL_LAPACK(T, gelsy, m, n, k, ai, ld(m), bi, ld(mn), jpvt.data(), rc, &r);
      } else if (driver == "gelsd") {
        inf[i] = FL_LAPACK(T, gelsd, m, n, k, ai, ld(m), bi, ld(mn), s + i * std::min(m, n), rc, &r);
      } else {
        inf[i] = FL_LAPACK(T, gelss, m, n, k, ai, ld(m), bi, ld(mn), s + i * std::min(m, n), rc, &r);
      }
      if (rk) rk[i] = r;
    });
  });
  raise_for_info("torch.linalg.lstsq", info, A->dim() > 2, [&](int i) {
    return driver == "gels" ? str_cat("The least squares solution could not be computed because the input matrix does not have full rank (error code: ", i, ").")
                            : not_converged(i, "singular values");
  });
  Tensor solution = empty_fortran(batch_of(A), n, k, dt);
  copy_into(solution, make_view(Bf, solution->sizes, Bf->strides, Bf->offset));
  // Residuals: the squared norm of the rows past n, when they mean that (full rank, m > n).
  bool residuals = m > n && driver != "gelsy";
  if (residuals && has_rank) {
    const int64_t* rk = rank->data<int64_t>();
    for (int64_t i = 0; i < nb; ++i) residuals = residuals && rk[i] == n;
  }
  Tensor res = residuals ? empty(with(batch_of(A), {k}), rdt) : empty({0}, rdt);
  if (residuals) dispatch_lapack(dt, [&](auto tag) {
    using T = decltype(tag);
    using R = real_of<T>;
    const T* b = Bf->data<T>();
    R* o = res->data<R>();
    for (int64_t i = 0; i < nb; ++i)
      for (int64_t c = 0; c < k; ++c) {
        R acc = 0;
        for (int64_t r = n; r < m; ++r) acc += abs_of(b[i * mn * k + c * mn + r]) * abs_of(b[i * mn * k + c * mn + r]);
        o[i * k + c] = acc;
      }
  });
  return {solution, res, rank, sv};
}

}  // namespace fl
