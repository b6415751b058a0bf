// Reductions, scans and sorting: the op declarations and the row engine they share.
//
// Note [Reductions as rows]
// Every reduction, scan and sort here works on "rows": the dims being reduced (or the one dim
// being scanned/sorted) are permuted innermost and the tensor is made contiguous (a no-op when
// they already are), so the work becomes `outer` independent contiguous rows of `inner`
// elements. Row o of the result is output element o in row-major order of the kept dims.
// Rows run in parallel over OpenMP threads; when there are fewer rows than threads (a full
// reduction), each row is split into chunks whose partial results are combined in order.
#pragma once
#include <omp.h>

#include <cmath>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "../core/dispatch.h"
#include "../kernels/loops.h"

namespace fl {

using TensorPair = std::tuple<Tensor, Tensor>;

// Reductions with one signature: (self, dims, keepdim, dtype). Empty dims reduce every dim;
// `dtype` is ScalarType::NumTypes when not given.
#define FL_REDUCE_OPS(X) \
  X(sum) X(nansum) X(mean) X(nanmean) X(prod) X(amax) X(amin) X(all) X(any) X(count_nonzero) X(logsumexp)

enum class ReduceKind : int8_t {
#define FL_X(name) name,
  FL_REDUCE_OPS(FL_X)
#undef FL_X
};

struct RowView {
  Tensor rows;         // contiguous; row o is rows->data + o * inner
  int64_t outer = 1, inner = 1;
  IntList out_sizes;   // the result shape, honoring keepdim
  IntList perm;        // rows' dims in terms of the input's dims (kept dims first)
  IntList perm_sizes;  // the input's sizes permuted by perm
};

// Sorted, de-duplicated, wrapped dims; empty input means every dim. RuntimeError on repeats.
std::vector<bool> reduce_mask(const IntList& dims, int64_t ndim, const char* op);
RowView to_rows(const Tensor& t, const std::vector<bool>& mask, bool keepdim);
// The RowView for work along one dim (scans and sorts): that dim innermost, keepdim shape.
RowView rows_along(const Tensor& t, int64_t dim, const char* op);
// Undoes rows_along's permutation on a tensor in row layout (same shape as the rows' input).
Tensor from_rows(const Tensor& rows_result, const RowView& rv);
// `t` itself when row-major contiguous, else a row-major copy (unlike contiguous(), which keeps
// the memory layout of dense permuted tensors).
Tensor row_major(const Tensor& t);
// Reshapes a row-major tensor (shares storage).
Tensor reshaped(const Tensor& t, const IntList& sizes);

// Runs leaf(o, b, e) -> Acc over each row o (range [b, e) of its inner elements) and
// store(o, Acc). Rows are split into chunks combined with combine(earlier, later) when there
// are too few rows to keep every thread busy.
template <typename Acc, typename Leaf, typename Combine, typename Store>
void run_rows(int64_t outer, int64_t inner, Leaf&& leaf, Combine&& combine, Store&& store) {
  const int nt = omp_in_parallel() ? 1 : omp_get_max_threads();
  const int64_t total = outer * inner;
  if (total < kParallelGrain || nt == 1) {
    for (int64_t o = 0; o < outer; ++o) store(o, leaf(o, int64_t(0), inner));
    return;
  }
  if (outer >= 4 * nt || inner < kParallelGrain) {
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int64_t o = 0; o < outer; ++o) store(o, leaf(o, int64_t(0), inner));
    return;
  }
  // Chunks are a multiple of 64 elements so vector loops start aligned to the row.
  const int64_t chunk = ((inner + nt - 1) / nt + 63) / 64 * 64;
  const int64_t nchunks = (inner + chunk - 1) / chunk;
  std::vector<Acc> part(nchunks);
  for (int64_t o = 0; o < outer; ++o) {
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int64_t c = 0; c < nchunks; ++c) part[c] = leaf(o, c * chunk, std::min(inner, (c + 1) * chunk));
    Acc acc = part[0];
    for (int64_t c = 1; c < nchunks; ++c) acc = combine(acc, part[c]);
    store(o, acc);
  }
}

// f(o) for every row, in parallel when the rows hold enough work.
template <typename F>
void for_each_row(int64_t outer, int64_t inner, F&& f) {
  if (outer * inner < kParallelGrain || outer == 1 || omp_in_parallel()) {
    for (int64_t o = 0; o < outer; ++o) f(o);
    return;
  }
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t o = 0; o < outer; ++o) f(o);
}

// The max (is_max) or min of x[0, n), n >= 1; NaN when any element is NaN. The float and double
// versions keep independent lanes so they vectorize (built for the baseline, AVX2 and AVX-512).
float extreme_f32(const float* x, int64_t n, bool is_max);
double extreme_f64(const double* x, int64_t n, bool is_max);
template <typename T>
opmath_t<T> extreme(const T* x, int64_t n, bool is_max) {
  if constexpr (std::is_same_v<T, float>) return extreme_f32(x, n, is_max);
  else if constexpr (std::is_same_v<T, double>) return extreme_f64(x, n, is_max);
  else {
    using M = opmath_t<T>;
    M m = static_cast<M>(x[0]);
    for (int64_t i = 0; i < n; ++i) {
      M v = static_cast<M>(x[i]);
      if constexpr (std::is_floating_point_v<M>) if (std::isnan(v)) return v;
      m = is_max ? (v > m ? v : m) : (v < m ? v : m);
    }
    return m;
  }
}

// Kernels that serve several declarations (reduce.yaml).
Tensor reduce_cpu(ReduceKind k, const Tensor& self, const IntList& dims, bool keepdim, ScalarType dtype);
TensorPair max_min_dim(const Tensor& self, int64_t dim, bool keepdim, bool is_max);
Tensor arg_max_min(const Tensor& self, std::optional<int64_t> dim, bool keepdim, bool is_max);
Tensor cum_arith(const Tensor& self, int64_t dim, ScalarType dtype, bool is_sum);  // cumsum or cumprod
TensorPair cum_extreme(const Tensor& self, int64_t dim, bool is_max);            // cummax or cummin
// The element of rank k of each row along dim (median: k = -1, the middle one; ignore_nan: among non-NaN).
TensorPair select_rank(const Tensor& self, int64_t dim, bool keepdim, const char* op, bool ignore_nan, int64_t k);

// NaN-aware ordering used by sort/topk/kthvalue/median: NaN sorts as the largest value.
template <typename T>
inline bool nan_last_less(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(b) ? !std::isnan(a) : a < b;
  else return a < b;
}

}  // namespace fl

// The ops declared in reduce.yaml (generated: csrc/ops/gen_ops.py).
#include "fl_generated/reduce.h"
