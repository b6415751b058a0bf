// In-place writes under autograd: the checks before a write, the rebase of a view's base (CopySlices) and the
// regeneration of views whose base was written. The in-place ops' kernels are generated from their declarations
// (csrc/ops/gen_ops.py: check_inplace_write, the write, the node, rebase_view_history).
//
// Note [In-place writes into views]
// An in-place op on `v`, a view of `base`, changes base too. The op's own node F (recorded as if
// out-of-place, its first edge going to v's old history) becomes v's grad_fn; then base's history
// is rebased onto a CopySlices node with two edges: base's old history, which receives the
// gradient with v's region zeroed, and F, which receives the gradient of v's region. Finally v
// becomes a view (AsStrided) of the new base, so later uses of v and of base both see the write.
// The region is mapped through the storage layout, so it works for any view geometry.
//
// Note [Views of a base written in place]
// Other views of base, made before the write, still have a grad_fn over base's old history. As in
// PyTorch, each tensor records its version counter's value when its grad_fn is set (attr_version);
// a view whose counter has moved since gets, on its next use (current_grad_fn), a fresh
// AsStridedBackward0 over base's current history, so its gradient goes through the write. A view
// made while its base needed no grad does the same once a differentiable write gave the base a
// history (view_gained_grad, asked by the dispatcher and by Tensor.requires_grad).
#include "../ops/pointwise.h"
#include "../ops/reduce.h"
#include "../ops/views.h"
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
  if (thread_state().grad_enabled && g->requires_grad) {
    // create_graph: g times a 0/1 mask of the outside, and the region read through a recorded view of a
    // copy of g in base's layout, so this backward is differentiable again
    fill(buf, Scalar(int64_t(1)));
    fill(ops::as_strided(buf, vs, vst, voff - boff), Scalar(int64_t(0)));
    Tensor laid_out = ops::as_strided(buf, bs, bst, 0);
    Tensor g_base = empty_strided(bs, bst, g->dtype);
    copy_into(g_base, g);
    g_base = record_copy("torch::autograd::CopyBackwards", g, g_base);
    return {formulas::operator*(g, laid_out), ops::as_strided(g_base, vs, vst, voff - boff)};
  }
  fill(buf, Scalar(int64_t(0)));
  copy_into(ops::as_strided(buf, bs, bst, 0), g);
  Tensor region = ops::as_strided(buf, vs, vst, voff - boff);
  Tensor g_region = clone(region);
  fill(region, Scalar(int64_t(0)));
  return {contiguous(ops::as_strided(buf, bs, bst, 0)), g_region};
}

// Makes the view `self` an AsStridedBackward0 of base's current history.
void view_of_history(const Tensor& self, const Tensor& base) {
  record_lambda("AsStridedBackward0", self, {gradient_edge(base)},
                [bs = base->sizes, bst = base->strides, boff = base->offset, vs = self->sizes, vst = self->strides,
                 voff = self->offset](const Tensor& g) {
                  return TensorList{strided_view_backward(g, bs, bst, boff, vs, vst, voff)};
                });
}
}  // namespace

bool inplace_needs_grad(const Tensor& self, bool others) {
  if (!thread_state().grad_enabled) return false;
  if (self->requires_grad || others) return true;
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
  record_lambda("torch::autograd::CopySlices", base, {base_old, written}, [=](const Tensor& g) {
    return split_region(g, bs, bst, boff, vs, vst, voff);
  });
  view_of_history(self, base);
}

bool view_gained_grad(const Tensor& t) {
  if (t->requires_grad || t->version->version.load(std::memory_order_relaxed) == t->view_version) return false;
  Tensor base = live_base(t);
  if (!base || !base->requires_grad || !base->autograd || !base->autograd->grad_fn) return false;
  view_of_history(t, base);
  return true;
}

const std::shared_ptr<Node>& current_grad_fn(const Tensor& t) {
  static const std::shared_ptr<Node> none;
  if (t->is_view) view_gained_grad(t);
  if (!t->autograd) return none;
  AutogradMeta& meta = *t->autograd;
  if (meta.grad_fn && t->is_view && meta.attr_version != t->version->version.load()) {
    Tensor base = live_base(t);
    if (base && base->requires_grad) {
      view_of_history(t, base);
      if (meta.retains_grad) meta.grad_fn->retained_grads.emplace_back(meta.output_nr, t);
    }
  }
  return meta.grad_fn;
}

void check_inplace(const Tensor& self, const Tensor& src) {
  if (inplace_needs_grad(self, src)) check_inplace_write(self);
}

void check_inplace_write(const Tensor& self) {
  check_not_leaf_requiring_grad(self);
  Tensor base = live_base(self);
  FL_CHECK(!(base && base->requires_grad && !base->meta().grad_fn), Error,
           "a view of a leaf Variable that requires grad is being used in an in-place operation.");
}

Tensor record_copy(const char* name, const Tensor& src, const Tensor& result) {
  if (result == src || !src->requires_grad || !thread_state().grad_enabled || !is_differentiable(result->dtype)) return result;
  return record_lambda(name, result, {gradient_edge(src)}, [dt = src->dtype](const Tensor& g) {
    return TensorList{cast_grad(g, dt)};
  });
}

Tensor copy_before_write(const Tensor& x) {
  TraceAsCaller traced;
  return clone(x);
}

Tensor cast_grad(const Tensor& g, ScalarType dt) {
  if (!g || g->dtype == dt) return g;
  // a real input takes the real part of a complex gradient (torch's handle_r_to_c), without the cast's warning
  if (is_complex(g->dtype) && !is_complex(dt)) return cast_grad(ops::real(g), dt);
  return to_dtype(g, dt);  // recorded by _to_copy's autograd kernel
}

void record_overwrite(const char* name, const Tensor& self, const Tensor& src) {
  if (!inplace_needs_grad(self, src)) return;
  // self's old value gets a zero gradient, as in PyTorch (for a view, the rebase of its base carries it)
  Edge old = live_base(self) ? Edge{} : gradient_edge(self);
  const bool from_src = src && src->requires_grad;
  record_lambda(name, self, {old, from_src ? gradient_edge(src) : Edge{}},
                [to_old = old.valid(), from_src, src_sizes = src ? src->sizes : IntList{},
                 dt = src ? src->dtype : self->dtype](const Tensor& g) {
                  return TensorList{to_old ? formulas::zeros_like(g) : nullptr,
                                    from_src ? cast_grad(sum_to(g, src_sizes), dt) : nullptr};
                });
  rebase_view_history(self);
}

void check_not_leaf_requiring_grad(const Tensor& self) {
  FL_CHECK(!(self->requires_grad && !self->meta().grad_fn), Error,
           "a leaf Variable that requires grad is being used in an in-place operation.");
}

}  // namespace fl::autograd
