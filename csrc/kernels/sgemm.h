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
bool sgemm_packed(int64_t m, int64_t n, int64_t k, float alpha, Mat<const float> a, Mat<const float> b, float beta,
                  Mat<float> c, const Epilogue& ep = {});

}  // namespace fl::blas
