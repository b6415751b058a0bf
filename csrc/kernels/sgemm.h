// flowlike's own float32 GEMM: packed panels and register-blocked micro-kernels for AVX-512 and
// AVX2+FMA, chosen at run time. It beats OpenBLAS's sgemm on the small and medium shapes of real
// models (MLP layers, attention heads, bmm batches), where packing overhead and threading decide.
#pragma once
#include <cstdint>

#include "blas.h"

namespace fl::blas {

// C (m x n) = alpha * A (m x k) @ B (k x n) + beta * C for any strides of A and B (packing reads
// them) and C with unit column stride. With beta == 0, C is not read. Runs on the OpenMP threads
// unless called from inside a parallel region. Returns false (and does nothing) when the CPU has
// neither AVX-512 nor AVX2+FMA, C's layout is not supported, or a dimension is 0.
// `ep`, when set, runs on each tile of C once its last depth block is stored (see Epilogue in blas.h).
// `row`, when set, is the n floats that beta scales in place of C's old values, the same for every row (a
// Linear layer's bias, without first copying it into every row of C); C is then not read.
bool sgemm_packed(int64_t m, int64_t n, int64_t k, float alpha, Mat<const float> a, Mat<const float> b, float beta,
                  Mat<float> c, const Epilogue& ep = {}, const float* row = nullptr);

// The panel width of sgemm_rows (32 with AVX-512, 16 with AVX2), 0 when the packed kernels do not run here.
int sgemm_rows_width();

// C (m x n) = A (m x k) @ B + beta * C on the calling thread, where row p of B is the n floats at b + boff[p]:
// B is read in place, never packed (a stride-1 convolution's input rows, shifted per kernel tap). n must be a
// multiple of sgemm_rows_width(); C has unit column stride. False when the kernels do not run here.
bool sgemm_rows(int64_t m, int64_t n, int64_t k, Mat<const float> a, const float* b, const int64_t* boff, float beta,
                Mat<float> c);
}  // namespace fl::blas
