// embedding (a row gather) and embedding_dense_backward (the scatter-add of gradient rows into a
// zero [num_weights, D] matrix, skipping padding_idx, optionally divided by each index's count).
#include <omp.h>

#include <cstring>

#include "../core/dispatch.h"
#include "../kernels/loops.h"
#include "vision.h"

namespace fl {
namespace {

// The indices as a flat int64 vector, checked against [0, n).
std::vector<int64_t> flat_indices(const Tensor& indices, int64_t n, const char* op) {
  FL_CHECK(indices->dtype == ScalarType::Int64 || indices->dtype == ScalarType::Int32, Error,
           "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got torch.",
           c10_type_name(indices->dtype), "Tensor instead (while checking arguments for ", op, ")");
  Tensor idx = contiguous(to_dtype(indices, ScalarType::Int64));
  std::vector<int64_t> v(idx->data<const int64_t>(), idx->data<const int64_t>() + idx->numel);
  for (int64_t i : v) FL_CHECK(i >= 0 && i < n, IndexError, "index out of range in self");
  return v;
}

}  // namespace

Tensor embedding_cpu(const Tensor& weight, const Tensor& indices, int64_t, bool) {
  FL_CHECK(weight->dim() == 2, Error, "'weight' must be 2-D");
  const int64_t n = weight->sizes[0], d = weight->sizes[1];
  std::vector<int64_t> idx = flat_indices(indices, n, "embedding");
  IntList sizes = indices->sizes;
  sizes.push_back(d);
  Tensor out = empty(sizes, weight->dtype);
  if (out->numel == 0) return out;
  // Rows are copied as bytes straight from weight when its rows are dense (no copy of the table).
  Tensor w = weight->strides[1] == 1 ? weight : contiguous(weight);
  const size_t isz = w->itemsize(), row = static_cast<size_t>(d) * isz;
  const char* src = w->data_ptr();
  char* dst = out->data_ptr();
  const int64_t m = static_cast<int64_t>(idx.size()), rs = w->strides[0] * static_cast<int64_t>(isz);
#pragma omp parallel for if (m * d >= kParallelGrain) schedule(static)
  for (int64_t i = 0; i < m; ++i) std::memcpy(dst + i * row, src + idx[i] * rs, row);
  return out;
}

namespace {

template <typename T>
void accumulate_rows(T* out, const T* g, const std::vector<int64_t>& idx, int64_t d, int64_t padding_idx,
                     const std::vector<int64_t>& counts) {
  using OM = opmath_t<T>;
  const int64_t m = static_cast<int64_t>(idx.size());
  constexpr int64_t kBlock = 64;
  const int64_t nb = (d + kBlock - 1) / kBlock;
  // Each thread owns a block of columns of every row: no two threads write the same element, and
  // rows accumulate in index order (deterministic).
#pragma omp parallel for if (m * d >= kParallelGrain) schedule(static)
  for (int64_t b = 0; b < nb; ++b) {
    const int64_t c0 = b * kBlock, c1 = std::min(d, c0 + kBlock);
    for (int64_t i = 0; i < m; ++i) {
      const int64_t r = idx[i];
      if (r == padding_idx) continue;
      const OM scale = counts.empty() ? OM(1) : OM(1) / static_cast<OM>(counts[r]);
      T* o = out + r * d;
      const T* gi = g + i * d;
      for (int64_t c = c0; c < c1; ++c) o[c] = static_cast<T>(static_cast<OM>(o[c]) + static_cast<OM>(gi[c]) * scale);
    }
  }
}

}  // namespace

Tensor embedding_dense_backward_cpu(const Tensor& grad, const Tensor& indices, int64_t num_weights,
                                    int64_t padding_idx, bool scale_grad_by_freq) {
  std::vector<int64_t> idx = flat_indices(indices, num_weights, "embedding_backward");
  const int64_t m = static_cast<int64_t>(idx.size());
  FL_CHECK(grad->dim() >= 1 && grad->numel == m * grad->sizes.back(), Error,
           "embedding_dense_backward: grad of size ", shape_str(grad->sizes), " does not match indices of size ",
           shape_str(indices->sizes));
  const int64_t d = grad->sizes.back();
  Tensor out = empty({num_weights, d}, grad->dtype);
  fill(out, Scalar(int64_t(0)));
  if (m == 0 || d == 0) return out;
  std::vector<int64_t> counts;
  if (scale_grad_by_freq) {
    counts.assign(num_weights, 0);
    for (int64_t i : idx) ++counts[i];
  }
  Tensor g = contiguous(grad);
  FL_DISPATCH_FLOATING(grad->dtype, "embedding_dense_backward",
                       accumulate_rows<scalar_t>(out->data<scalar_t>(), g->data<const scalar_t>(), idx, d, padding_idx, counts));
  return out;
}

}  // namespace fl
