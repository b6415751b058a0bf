// Backward formulas of the indexing ops (declared in csrc/ops/index.yaml) longer than one line, the in-place
// writes' among them (`self` there is self's value before the write).
#include "../ops/index.h"
#include "../ops/reduce.h"
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

namespace {
// `g` with the positions `write` touches set to zero (they were overwritten).
template <typename Write>
Tensor zeroed(const Tensor& g, Write write) {
  if (thread_state().grad_enabled && g->requires_grad) {  // create_graph: g times a 0/1 mask, differentiable
    Tensor keep = empty(g->sizes, g->dtype);
    fill(keep, Scalar(int64_t(1)));
    {
      GradModeGuard off(false);
      write(keep);
    }
    return g * keep;
  }
  Tensor z = clone(g);
  GradModeGuard off(false);
  write(z);
  return z;
}
Tensor zero_scalar(ScalarType dt) { return scalar_tensor(Scalar(int64_t(0)), dt); }
}  // namespace

Tensor padded(const Tensor& g, const IntList& sizes, ScalarType dt) {
  Tensor r = autograd::cast_grad(g, dt);
  if (r->sizes == sizes) return r;
  Tensor out = zeros(sizes, dt);
  Tensor region = ops::as_strided(out, r->sizes, out->strides, 0);
  copy_into(region, r);
  autograd::record_overwrite("torch::autograd::CopyBackwards", region, r);  // create_graph: differentiable again (a no-op otherwise)
  return out;
}

Tensor index_put_zeroed(const Tensor& g, const TensorList& indices) {
  return zeroed(g, [&](const Tensor& z) { ops::index_put_(z, indices, zero_scalar(z->dtype), false); });
}

Tensor scatter_zeroed(const Tensor& g, int64_t dim, const Tensor& index) {
  return zeroed(g, [&](const Tensor& z) { ops::scatter_(z, dim, index, wrap_scalar(Scalar(0.0)), ""); });
}

Tensor scatter_src_backward(const Tensor& g, int64_t dim, const Tensor& index, const IntList& src_sizes, ScalarType dt) {
  Tensor picked = ops::gather(g, dim, index, false);
  // a 0-dim src (a number) was written at every indexed position
  return src_sizes.empty() ? ops::sum(picked, {}, false, ScalarType::NumTypes) : padded(picked, src_sizes, dt);
}

Tensor index_fill_zeroed(const Tensor& g, int64_t dim, const Tensor& index) {
  return zeroed(g, [&](const Tensor& z) { ops::index_fill_(z, dim, index, zero_scalar(z->dtype)); });
}

TensorList index_fill_backward(const Tensor& g, int64_t dim, const Tensor& index, ScalarType value_dtype,
                               const std::array<bool, 2>& mask) {
  Tensor gs = index_fill_zeroed(g, dim, index);
  // g at the filled positions, each once however often index repeats it (as torch)
  Tensor gv = mask[1] ? autograd::cast_grad(ops::sum(g - gs, {}, false, ScalarType::NumTypes), value_dtype) : Tensor();
  return {mask[0] ? gs : Tensor(), gv};
}

Tensor index_source_backward(const Tensor& g, int64_t dim, const Tensor& index, Scalar alpha, const IntList& src_sizes,
                             ScalarType dt) {
  Tensor picked = ops::index_select(g, src_sizes.empty() ? 0 : dim, index);
  if (alpha.to_double() != 1.0) picked = picked * alpha;
  return padded(ops::reshape(picked, src_sizes), src_sizes, dt);
}

Tensor masked_scatter_source_backward(const Tensor& g, const Tensor& mask, const IntList& src_sizes, ScalarType dt) {
  Tensor picked = ops::masked_select(g, mask);  // the source's first elements, in order
  return ops::reshape(padded(picked, {numel_of(src_sizes)}, dt), src_sizes);
}

// PyTorch's scatter_reduce_backward. The rules read self's old value, src and the result; with include_self=False
// the positions written get no gradient for self. amax/amin share the gradient evenly among the elements equal to
// the result; prod divides the result by each factor, computing the products without it directly where a factor
// is zero.
TensorList scatter_reduce_backward(const Tensor& g, const Tensor& self, int64_t dim, const Tensor& index,
                                   const Tensor& src_all, const std::string& reduce, bool include_self,
                                   const Tensor& result, const std::array<bool, 2>&) {
  const int64_t d = g->dim() ? dim : 0;
  // src is read only over index's extent
  Tensor src = src_all;
  for (int64_t k = 0; k < index->dim(); ++k)
    if (src->sizes[k] != index->sizes[k]) src = ops::slice(src, k, 0, index->sizes[k], 1);
  Tensor gs, gsrc;
  if (reduce == "sum") {
    gs = g;
    gsrc = ops::gather(g, d, index, false);
  } else if (reduce == "mean") {
    Tensor n = empty(g->sizes, g->dtype);
    fill(n, Scalar(int64_t(include_self ? 1 : 0)));
    Tensor ones = empty(index->sizes, g->dtype);
    fill(ones, Scalar(int64_t(1)));
    ops::scatter_add_(n, d, index, ones);
    n = where(bin(BinaryOp::eq, n, num(0.0)), num(1.0), n);
    gs = g / n;
    gsrc = ops::gather(g, d, index, false) / ops::gather(n, d, index, false);
  } else if (reduce == "amax" || reduce == "amin") {
    Tensor value = ops::gather(result, d, index, false);
    Tensor self_is = to_dtype(bin(BinaryOp::eq, self, result), g->dtype);
    Tensor src_is = to_dtype(bin(BinaryOp::eq, src, value), g->dtype);
    Tensor spread = g / ops::scatter_add_(clone(self_is), d, index, src_is);
    gs = self_is * spread;
    gsrc = src_is * ops::gather(spread, d, index, false);
  } else {  // prod
    Tensor masked_self = where(bin(BinaryOp::eq, self, num(0.0)), num(1.0), self);
    gs = g * ops::scatter_reduce_(clone(masked_self), d, index, src, "prod", include_self) / masked_self;
    Tensor src_zero = bin(BinaryOp::eq, src, num(0.0));
    Tensor zeros_at = ops::gather(ops::scatter_add_(zeros(g->sizes, g->dtype), d, index, to_dtype(src_zero, g->dtype)), d, index, false);
    Tensor single = bin(BinaryOp::logical_and, src_zero, bin(BinaryOp::eq, zeros_at, num(1.0)));
    Tensor without = ops::scatter_reduce_(clone(self), d, index, where(single, num(1.0), src), "prod", include_self);
    gsrc = where(single, ops::gather(g * without, d, index, false), ops::gather(g * result, d, index, false) / where(src_zero, num(1.0), src));
  }
  if (!include_self) gs = scatter_zeroed(gs, d, index);
  return {gs, padded(gsrc, src_all->sizes, src_all->dtype)};
}

}  // namespace fl::formulas
