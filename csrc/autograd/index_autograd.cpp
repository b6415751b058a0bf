// Autograd kernels of the indexing ops (ops/index.h): gathers scatter their gradient back into
// zeros of the input's shape with the matching accumulate-scatter op.
#include "../ops/index.h"
#include "../ops/views.h"
#include "autograd.h"

namespace fl::autograd {

FL_REGISTER_KERNEL(index, Autograd, [](DispatchKeySet ks, const Tensor& self, const TensorList& indices) {
  Tensor r = redispatch_no_grad(ops::index, ks, self, indices);
  if (!is_differentiable(r->dtype)) return r;
  return record_lambda("IndexBackward0", r, {gradient_edge(self)}, [in = self->sizes, indices](const Tensor& g) {
    return TensorList{ops::index_put_(zeros(in, g->dtype), indices, g, true)};
  });
})
FL_REGISTER_KERNEL(index_select, Autograd, [](DispatchKeySet ks, const Tensor& self, int64_t dim, const Tensor& idx) {
  Tensor r = redispatch_no_grad(ops::index_select, ks, self, dim, idx);
  return record_lambda("IndexSelectBackward0", r, {gradient_edge(self)}, [in = self->sizes, dim, idx](const Tensor& g) {
    return TensorList{ops::index_add_(zeros(in, g->dtype), dim, idx, g, Scalar(int64_t(1)))};
  });
})
FL_REGISTER_KERNEL(gather, Autograd, [](DispatchKeySet ks, const Tensor& self, int64_t dim, const Tensor& idx) {
  Tensor r = redispatch_no_grad(ops::gather, ks, self, dim, idx);
  return record_lambda("GatherBackward0", r, {gradient_edge(self)}, [in = self->sizes, dim, idx](const Tensor& g) {
    return TensorList{ops::scatter_add_(zeros(in, g->dtype), dim, idx, g)};
  });
})
FL_REGISTER_KERNEL(take, Autograd, [](DispatchKeySet ks, const Tensor& self, const Tensor& idx) {
  Tensor r = redispatch_no_grad(ops::take, ks, self, idx);
  return record_lambda("TakeBackward0", r, {gradient_edge(self)}, [in = self->sizes, idx](const Tensor& g) {
    Tensor flat = zeros({numel_of(in)}, g->dtype);
    Tensor fi = contiguous(idx);
    ops::index_put_(flat, {ops::as_strided(fi, {fi->numel}, {1}, fi->offset)}, ops::reshape(g, {g->numel}), true);
    return TensorList{ops::reshape(flat, in)};  // through ops: differentiable again
  });
})
FL_REGISTER_KERNEL(masked_select, Autograd, [](DispatchKeySet ks, const Tensor& self, const Tensor& mask) {
  Tensor r = redispatch_no_grad(ops::masked_select, ks, self, mask);
  IntList full = broadcast_shapes(self->sizes, mask->sizes, "masked_select");
  return record_lambda("MaskedSelectBackward0", r, {gradient_edge(self)}, [in = self->sizes, full, mask](const Tensor& g) {
    Tensor z = zeros(full, g->dtype);
    ops::masked_scatter_(z, index_detail::expand_to(mask, full, "masked_select"), g);
    return TensorList{sum_to(z, in)};
  });
})
FL_REGISTER_KERNEL(where, Autograd, [](DispatchKeySet ks, const Tensor& cond, const Tensor& a, const Tensor& b) {
  Tensor r = redispatch_no_grad(ops::where, ks, cond, a, b);
  if (!is_differentiable(r->dtype)) return r;
  return record_lambda("WhereBackward0", r, {Edge{}, gradient_edge(a), gradient_edge(b)},
                       [cond, as = a->sizes, bs = b->sizes, adt = a->dtype, bdt = b->dtype](const Tensor& g) {
                         Tensor zero = wrap_scalar(Scalar(0.0));
                         Tensor ga = cast_grad(sum_to(ops::where(cond, g, zero), as), adt);
                         Tensor gb = cast_grad(sum_to(ops::where(cond, zero, g), bs), bdt);
                         return TensorList{nullptr, ga, gb};
                       });
})

}  // namespace fl::autograd
