// In-place writes under autograd: the rebase of a view's base (CopySlices), copy_/fill/setitem,
// index_put_ and masked_fill_. In-place ops without a derivative yet refuse instead of silently
// writing into a tensor whose history would then be wrong.
//
// Note [In-place writes into views]
// An in-place op on `v`, a view of `base`, changes base too. The op's own node F (recorded as if
// out-of-place, its first edge going to v's old history) becomes v's grad_fn; then base's history
// is rebased onto a CopySlices node with two edges: base's old history, which receives the
// gradient with v's region zeroed, and F, which receives the gradient of v's region. Finally v
// becomes a view (AsStrided) of the new base, so later uses of v and of base both see the write.
// The region is mapped through the storage layout, so it works for any view geometry. Other
// views of base made before the write keep their old history (PyTorch regenerates them).
#include "../ops/index.h"
#include "../ops/pointwise.h"
#include "../ops/random.h"
#include "../ops/reduce.h"
#include "autograd.h"
#include "formulas.h"

namespace fl::autograd {

namespace {
Tensor live_base(const Tensor& self) { return self->is_view ? self->view_base.lock() : nullptr; }

// The gradient of `base` (geometry bs/bst/boff) split into the part outside the view region and
// the region itself (geometry vs/vst/voff), both laid out through base's memory layout.
TensorList split_region(const Tensor& g, const IntList& bs, const IntList& bst, int64_t boff, const IntList& vs,
                        const IntList& vst, int64_t voff) {
  int64_t extent = 1;
  for (size_t d = 0; d < bs.size(); ++d) {
    if (bs[d] == 0) { extent = 0; break; }
    extent += (bs[d] - 1) * bst[d];
  }
  Tensor buf = empty({std::max<int64_t>(extent, 1)}, g->dtype);
  fill(buf, Scalar(int64_t(0)));
  copy_into(make_view(buf, bs, bst, 0), g);
  Tensor region = make_view(buf, vs, vst, voff - boff);
  Tensor g_region = clone(region);
  fill(region, Scalar(int64_t(0)));
  return {contiguous(make_view(buf, bs, bst, 0)), g_region};
}
}  // namespace

bool inplace_needs_grad(const Tensor& self, const Tensor& src) {
  if (!thread_state().grad_enabled) return false;
  if (self->requires_grad || (src && src->requires_grad)) return true;
  Tensor base = live_base(self);
  return base && base->requires_grad;
}

void rebase_view_history(const Tensor& self) {
  Tensor base = live_base(self);
  if (!base || !self->requires_grad) return;
  FL_CHECK(!(base->requires_grad && !base->meta().grad_fn), Error,
           "a view of a leaf Variable that requires grad is being used in an in-place operation.");
  Edge base_old = gradient_edge(base), written = gradient_edge(self);
  IntList bs = base->sizes, bst = base->strides, vs = self->sizes, vst = self->strides;
  int64_t boff = base->offset, voff = self->offset;
  record_lambda("CopySlices", base, {base_old, written}, [=](const Tensor& g) {
    return split_region(g, bs, bst, boff, vs, vst, voff);
  });
  record_lambda("AsStridedBackward0", self, {gradient_edge(base)}, [=](const Tensor& g) {
    return TensorList{strided_view_backward(g, bs, bst, boff, vs, vst, voff)};
  });
}

void check_inplace(const Tensor& self, const Tensor& src) {
  if (!inplace_needs_grad(self, src)) return;
  check_not_leaf_requiring_grad(self);
  Tensor base = live_base(self);
  FL_CHECK(!(base && base->requires_grad && !base->meta().grad_fn), Error,
           "a view of a leaf Variable that requires grad is being used in an in-place operation.");
}

Tensor record_copy(const char* name, const Tensor& src, const Tensor& result) {
  if (result == src || !src->requires_grad || !thread_state().grad_enabled || !is_floating(result->dtype)) return result;
  return record_lambda(name, result, {gradient_edge(src)}, [dt = src->dtype](const Tensor& g) {
    return TensorList{g->dtype != dt ? to_dtype(g, dt) : g};
  });
}

void record_overwrite(const char* name, const Tensor& self, const Tensor& src) {
  if (!inplace_needs_grad(self, src)) return;
  if (src && src->requires_grad) {
    record_lambda(name, self, {gradient_edge(src)}, [src_sizes = src->sizes, dt = src->dtype](const Tensor& g) {
      Tensor s = sum_to(g, src_sizes);
      return TensorList{s->dtype != dt ? to_dtype(s, dt) : s};
    });
  } else {
    record_lambda(name, self, {}, [](const Tensor&) { return TensorList{}; });  // a constant now
  }
  rebase_view_history(self);
}

void check_not_leaf_requiring_grad(const Tensor& self) {
  FL_CHECK(!(self->requires_grad && !self->meta().grad_fn), Error,
           "a leaf Variable that requires grad is being used in an in-place operation.");
}

void check_untracked_inplace(const char* op, const Tensor& self, const Tensor& src) {
  if (!thread_state().grad_enabled || !(self->requires_grad || (src && src->requires_grad))) return;
  check_not_leaf_requiring_grad(self);
  throw NotImplementedError(str_cat(op, ": in-place writes into tensors that take part in autograd are not supported by "
                                    "flowlike yet; use the out-of-place form, or write under flowlike.no_grad()"));
}

#define FL_REFUSE_INPLACE(opname)                                                              \
  FL_REGISTER_KERNEL(opname, Autograd, [](DispatchKeySet, const Tensor& self, auto...) -> Tensor { \
    check_untracked_inplace(#opname, self, nullptr);                                           \
    throw NotImplementedError(#opname ": in-place autograd is not supported by flowlike yet");  \
  })

// index_put_: the written positions take their gradient from `values` (gathered back with the same
// indices); with accumulate, self keeps its whole gradient.
FL_REGISTER_KERNEL(index_put_, Autograd, [](DispatchKeySet ks, const Tensor& self, const TensorList& indices,
                                            const Tensor& values, bool accumulate) {
  check_inplace(self, values);
  Edge self_old = gradient_edge(self);
  redispatch_no_grad(ops::index_put_, ks, self, indices, values, accumulate);
  record_lambda("IndexPutBackward0", self, {self_old, gradient_edge(values)},
                [indices, accumulate, vs = values->sizes, vdt = values->dtype](const Tensor& g) {
                  Tensor gv = sum_to(ops::index(g, indices), vs);
                  Tensor gs = g;
                  if (!accumulate) {
                    gs = clone(g);
                    GradModeGuard off(false);
                    ops::index_put_(gs, indices, scalar_tensor(Scalar(int64_t(0)), g->dtype), false);
                  }
                  return TensorList{gs, gv->dtype != vdt ? to_dtype(gv, vdt) : gv};
                });
  rebase_view_history(self);
  return self;
})
// masked_fill_: the filled positions take their gradient from `value` (a 0-dim tensor).
FL_REGISTER_KERNEL(masked_fill_, Autograd, [](DispatchKeySet ks, const Tensor& self, const Tensor& mask,
                                              const Tensor& value) {
  check_inplace(self, value);
  Edge self_old = gradient_edge(self);
  redispatch_no_grad(ops::masked_fill_, ks, self, mask, value);
  record_lambda("MaskedFillBackward0", self, {self_old, gradient_edge(value)}, [mask, vdt = value->dtype](const Tensor& g) {
    using namespace fl::formulas;
    Tensor gv = ops::sum(where(mask, g, num(0.0)), {}, false, ScalarType::NumTypes);
    return TensorList{where(mask, num(0.0), g), gv->dtype != vdt ? to_dtype(gv, vdt) : gv};
  });
  rebase_view_history(self);
  return self;
})
FL_REFUSE_INPLACE(masked_scatter_)
FL_REFUSE_INPLACE(scatter_)
FL_REFUSE_INPLACE(scatter_add_)
FL_REFUSE_INPLACE(scatter_reduce_)
FL_REFUSE_INPLACE(index_add_)
FL_REFUSE_INPLACE(index_copy_)
FL_REFUSE_INPLACE(index_fill_)
FL_REFUSE_INPLACE(uniform_)
FL_REFUSE_INPLACE(normal_)
FL_REFUSE_INPLACE(random_)
FL_REFUSE_INPLACE(bernoulli_)

}  // namespace fl::autograd
