// Backward formulas of the pooling ops (pool.yaml). Max pooling's gradient scatters to the indices
// (plane_scatter), whose own gradient gathers at them; average pooling's backward is linear in the
// gradient, its derivative the forward pooling again: both are differentiable twice and more.
#include "../ops/index.h"
#include "../ops/pool.h"
#include "../ops/views.h"
#include "formulas.h"

namespace fl::formulas {

Tensor plane_gather(const Tensor& g, const Tensor& indices, const IntList& values_sizes, size_t plane_dims) {
  IntList flat(g->sizes.begin(), g->sizes.end() - plane_dims);
  flat.push_back(-1);
  Tensor picked = ops::gather(ops::reshape(g, flat), -1, ops::reshape(indices, flat), false);
  return ops::reshape(picked, values_sizes);
}

}  // namespace fl::formulas
