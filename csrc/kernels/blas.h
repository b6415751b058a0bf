// The BLAS layer: fp32/fp64/complex64/complex128 GEMM from OpenBLAS (scipy-openblas32, `scipy_`-prefixed symbols), and a
// portable blocked kernel for the dtypes BLAS lacks (integers; float16/bfloat16 go through float32).
//
// Matrices are described by their element strides, so transposed and sliced views reach BLAS without
// a copy whenever one of the two strides is 1 (BLAS's leading-dimension layout).
#pragma once
#include <cstdint>

#include "../core/dtype.h"  // fl::complex

namespace fl::blas {

// A strided matrix operand: element (i, j) is at data[i * rs + j * cs].
template <typename T>
struct Mat {
  T* data;
  int64_t rs, cs;
};

// A pointwise function a float32 GEMM applies in place to C as it stores each finished tile, while the
// tile is still in L1 (a layer's activation after its bias): fn(row, count, ctx) on `count` contiguous
// elements of one row of C. An empty one (fn null) does nothing.
struct Epilogue {
  void (*fn)(float* row, int64_t count, const void* ctx) = nullptr;
  const void* ctx = nullptr;
  explicit operator bool() const { return fn != nullptr; }
  void operator()(float* row, int64_t count) const { fn(row, count, ctx); }
};

// True when BLAS can read an (rows x cols) matrix with strides (rs, cs) without a copy.
bool blas_layout_ok(int64_t rows, int64_t cols, int64_t rs, int64_t cs);

// C (m x n) = alpha * A (m x k) @ B (k x n) + beta * C. With beta == 0, C is not read (NaNs in C
// do not propagate), and with alpha == 0 neither A nor B is, as BLAS specifies. float runs on
// flowlike's packed sgemm (sgemm.h: any strides of A and B, C with a unit stride in either
// dimension), matrix-vector shapes on OpenBLAS's sgemv; double on OpenBLAS when the layouts allow
// (see blas_layout_ok). Other cases and other T use the portable kernel, which accumulates in Acc.
// To call it from inside an OpenMP parallel region (a batch split over threads), hold a
// SingleThreaded guard around that region.
template <typename T>
void gemm(int64_t m, int64_t n, int64_t k, T alpha, Mat<const T> a, Mat<const T> b, T beta, Mat<T> c);

// gemm<float> followed by `ep` on every element of C: the same products and the same kernel choice (so the
// same values as gemm<float> then ep), with ep applied per tile inside the packed kernel where gemm<float>
// runs that, and over C afterwards otherwise.
void sgemm_epilogue(int64_t m, int64_t n, int64_t k, float alpha, Mat<const float> a, Mat<const float> b, float beta,
                    Mat<float> c, const Epilogue& ep);

// sgemm_epilogue with beta scaling `row` (n floats, the same for every row: a Linear layer's bias) in place of C's
// old values. The packed kernel reads the row where it would read C; the other kernels get it copied into every
// row of C first. Either way the values of copying it first and calling sgemm_epilogue.
void sgemm_row_addend(int64_t m, int64_t n, int64_t k, float alpha, Mat<const float> a, Mat<const float> b, float beta,
                      const float* row, Mat<float> c, const Epilogue& ep);

// `batch` independent GEMMs with constant strides between operands (bmm); parallel over the batch
// when the matrices are small, and over each GEMM otherwise.
template <typename T>
void gemm_batched(int64_t batch, int64_t m, int64_t n, int64_t k, T alpha, Mat<const T> a, int64_t a_bs,
                  Mat<const T> b, int64_t b_bs, T beta, Mat<T> c, int64_t c_bs);

// While alive, OpenBLAS runs every call on its calling thread (for GEMMs issued from parallel loops).
struct SingleThreaded {
  int prev;
  SingleThreaded();
  ~SingleThreaded();
  SingleThreaded(const SingleThreaded&) = delete;
  SingleThreaded& operator=(const SingleThreaded&) = delete;
};

// Thread count used inside OpenBLAS calls (kept equal to flowlike.get_num_threads()).
void set_num_threads(int n);

}  // namespace fl::blas
