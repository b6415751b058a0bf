// Backward formulas of the indexing ops (declared in csrc/ops/index.yaml) longer than one line.
#include "../ops/index.h"
#include "../ops/views.h"
#include "autograd.h"
#include "formulas.h"

namespace fl::formulas {

Tensor take_backward(const Tensor& g, const IntList& in_sizes, const Tensor& index) {
  Tensor flat = zeros({numel_of(in_sizes)}, g->dtype);
  Tensor fi = contiguous(index);
  ops::index_put_(flat, {ops::as_strided(fi, {fi->numel}, {1}, fi->offset)}, ops::reshape(g, {g->numel}), true);
  return ops::reshape(flat, in_sizes);  // through ops: differentiable again
}

Tensor masked_select_backward(const Tensor& g, const IntList& in_sizes, const Tensor& mask) {
  const IntList full = broadcast_shapes(in_sizes, mask->sizes, "masked_select");
  Tensor z = zeros(full, g->dtype);
  ops::masked_scatter_(z, index_detail::expand_to(mask, full, "masked_select"), g);
  return autograd::sum_to(z, in_sizes);
}

}  // namespace fl::formulas
