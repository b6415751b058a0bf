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

// The ops declared in linalg.yaml (generated: csrc/ops/gen_ops.py).
#include "fl_generated/linalg.h"
