// flowlike's own float32 GEMM: packed panels and register-blocked micro-kernels for AVX-512 and
// AVX2+FMA, chosen at run time. It beats OpenBLAS's sgemm on the small and medium shapes of real
// models (MLP layers, attention heads, bmm batches), where packing overhead and threading decide.
#pragma once
#include <cstdint>
#include <functional>

#include "blas.h"

namespace fl::blas {

// C (m x n) = alpha * A (m x k) @ B (k x n) + beta * C for any strides of A and B (packing reads
// them) and C with unit column stride. With beta == 0, C is not read. Runs on the OpenMP threads
// unless called from inside a parallel region. Returns false (and does nothing) when the CPU has
// neither AVX-512 nor AVX2+FMA, C's layout is not supported, or a dimension is 0.
// True when this CPU runs the packed sgemm (AVX-512 or AVX2+FMA, within FLOWLIKE_SGEMM_ISA's cap).
bool sgemm_packed_supported();

// `ep`, when set, runs on each tile of C once its last depth block is stored (see Epilogue in blas.h).
bool sgemm_packed(int64_t m, int64_t n, int64_t k, float alpha, Mat<const float> a, Mat<const float> b, float beta,
                  Mat<float> c, const Epilogue& ep = {});

// Packs rows [p0, p0 + kc) of columns [j0, j0 + cols) of B into dst[(p - p0) * width + (j - j0)]; the columns
// from cols to width are zeroed by the caller first. Lets the GEMM read a B that exists only implicitly: a
// convolution's columns, gathered from its input while packing, with no im2col buffer in between.
using PackB = std::function<void(int64_t p0, int64_t kc, int64_t j0, int64_t cols, int width, float* dst)>;

// sgemm_packed with B given by its packing function.
bool sgemm_packed(int64_t m, int64_t n, int64_t k, float alpha, Mat<const float> a, const PackB& b, float beta,
                  Mat<float> c, const Epilogue& ep = {});

}  // namespace fl::blas
