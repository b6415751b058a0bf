// torch.linalg primitives on LAPACK (OpenBLAS from scipy-openblas32, float32/float64/complex64/complex128), batched over
// the leading dims. Each takes matrices with equal batch dims (flowlike/linalg.py broadcasts them
// first, so autograd sees the expansion) and returns results laid out column-major per matrix, as
// LAPACK writes them and as torch.linalg returns them. Everything else in torch.linalg (pinv,
// matrix_power, norms, matrix_rank, ...) is a Python composite of these in flowlike/linalg.py.
#pragma once
#include <string>
#include <tuple>

#include "../core/dispatch.h"

namespace fl {
// torch.linalg.LinAlgError (a RuntimeError): a matrix is singular, not positive-definite, or an
// iterative algorithm did not converge. Bound as flowlike._C._LinAlgError.
struct LinAlgError : Error { using Error::Error; };
using Tensor2 = std::tuple<Tensor, Tensor>;
using Tensor3 = std::tuple<Tensor, Tensor, Tensor>;
using Tensor4 = std::tuple<Tensor, Tensor, Tensor, Tensor>;
}  // namespace fl

// (inverse, info); check_errors raises LinAlgError for a singular matrix.
FL_DECLARE_OP(linalg_inv_ex, ::fl::Tensor2(const ::fl::Tensor&, bool))
// (LU packed, pivots (int32, 1-based as LAPACK's), info) of A (..., m, n) with partial pivoting.
FL_DECLARE_OP(linalg_lu_factor_ex, ::fl::Tensor3(const ::fl::Tensor&, bool, bool))
// The (..., m, m) permutation matrix P (dtype) with A = P L U, from lu_factor's pivots (..., k).
FL_DECLARE_OP(lu_pivots_to_permutation, ::fl::Tensor(const ::fl::Tensor&, int64_t, ::fl::ScalarType))
// A X = B for B (..., n, k): (X, info).
FL_DECLARE_OP(linalg_solve_ex, ::fl::Tensor2(const ::fl::Tensor&, const ::fl::Tensor&, bool))
FL_DECLARE_OP(linalg_det, ::fl::Tensor(const ::fl::Tensor&))
// (sign, logabsdet)
FL_DECLARE_OP(linalg_slogdet, ::fl::Tensor2(const ::fl::Tensor&))
// (L, info) with A = L L^T, or (U, info) with A = U^T U when upper.
FL_DECLARE_OP(linalg_cholesky_ex, ::fl::Tensor2(const ::fl::Tensor&, bool, bool))
// (A, B, upper, left, unitriangular): X with A X = B (left) or X A = B.
FL_DECLARE_OP(linalg_solve_triangular, ::fl::Tensor(const ::fl::Tensor&, const ::fl::Tensor&, bool, bool, bool))
// (Q, R) for mode "reduced", "complete" or "r" (Q empty).
FL_DECLARE_OP(linalg_qr, ::fl::Tensor2(const ::fl::Tensor&, const std::string&))
// (A, UPLO, compute_v) -> (eigenvalues ascending, eigenvectors or empty).
FL_DECLARE_OP(linalg_eigh, ::fl::Tensor2(const ::fl::Tensor&, const std::string&, bool))
// (A, compute_v) -> (eigenvalues, eigenvectors or empty), both complex (also for real A), the eigenvectors of
// norm 1 (LAPACK's geev).
FL_DECLARE_OP(linalg_eig, ::fl::Tensor2(const ::fl::Tensor&, bool))
// (A, full_matrices, compute_uv) -> (U, S, Vh); U and Vh empty without compute_uv.
FL_DECLARE_OP(linalg_svd, ::fl::Tensor3(const ::fl::Tensor&, bool, bool))
// (A, B (..., m, k), rcond (< 0: default), driver) -> (solution, residuals, rank, singular_values).
FL_DECLARE_OP(linalg_lstsq, ::fl::Tensor4(const ::fl::Tensor&, const ::fl::Tensor&, double, const std::string&))
