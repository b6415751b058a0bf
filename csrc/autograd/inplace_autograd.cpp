// In-place writes under autograd: the rebase of a view's base (CopySlices), the regeneration of
// views whose base was written, copy_/fill/setitem, index_put_, masked_fill_, the scatters and
// index_* writes, and the random fills.
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
#include "../ops/index.h"
#include "../ops/pointwise.h"
#include "../ops/random.h"
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

namespace {
// The gradient of a source operand read at `index` positions, zero-padded when the source is larger
// than the index (scatter reads only index's extent of it).
Tensor padded(const Tensor& g, const IntList& sizes, ScalarType dt) {
  Tensor r = cast_grad(g, dt);
  if (r->sizes == sizes) return r;
  Tensor out = empty(sizes, dt);
  fill(out, Scalar(int64_t(0)));
  Tensor region = ops::as_strided(out, r->sizes, out->strides, 0);
  copy_into(region, r);
  record_overwrite("torch::autograd::CopyBackwards", region, r);  // create_graph: differentiable again (a no-op otherwise)
  return out;
}
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
    return formulas::operator*(g, keep);
  }
  Tensor z = clone(g);
  GradModeGuard off(false);
  write(z);
  return z;
}
Tensor zero_scalar(ScalarType dt) { return scalar_tensor(Scalar(int64_t(0)), dt); }

// Registers the autograd kernel of an in-place write `self.op_(..., src)`; grads(g) returns
// {grad of self's old value, grad of src}.
template <typename OpT, typename... Args>
Tensor record_inplace(const char* name, const OpT& op, DispatchKeySet ks, const Tensor& self, const Tensor& src,
                      std::function<TensorList(const Tensor&)> grads, Args&&... args) {
  check_inplace(self, src);
  Edge self_old = gradient_edge(self);
  redispatch_no_grad(op, ks, self, std::forward<Args>(args)...);
  record_lambda(name, self, {self_old, gradient_edge(src)}, std::move(grads));
  rebase_view_history(self);
  return self;
}
}  // namespace

// index_put_: the written positions take their gradient from `values` (gathered back with the same
// indices); with accumulate, self keeps its whole gradient.
FL_REGISTER_KERNEL(index_put_, Autograd, [](DispatchKeySet ks, const Tensor& self, const TensorList& indices,
                                            const Tensor& values, bool accumulate) {
  return record_inplace("IndexPutBackward0", ops::index_put_, ks, self, values,
                        [indices, accumulate, vs = values->sizes, vdt = values->dtype](const Tensor& g) {
                          Tensor gv = sum_to(ops::index(g, indices), vs);
                          Tensor gs = accumulate ? g : zeroed(g, [&](const Tensor& z) {
                            ops::index_put_(z, indices, zero_scalar(z->dtype), false);
                          });
                          return TensorList{gs, cast_grad(gv, vdt)};
                        }, indices, values, accumulate);
})
// masked_fill_: the filled positions take their gradient from `value` (a 0-dim tensor).
FL_REGISTER_KERNEL(masked_fill_, Autograd, [](DispatchKeySet ks, const Tensor& self, const Tensor& mask,
                                              const Tensor& value) {
  return record_inplace("MaskedFillBackward0", ops::masked_fill_, ks, self, value,
                        [mask, vdt = value->dtype](const Tensor& g) {
                          using namespace fl::formulas;
                          Tensor gv = ops::sum(where(mask, g, num(0.0)), {}, false, ScalarType::NumTypes);
                          return TensorList{where(mask, num(0.0), g), cast_grad(gv, vdt)};
                        }, mask, value);
})
FL_REGISTER_KERNEL(scatter_add_, Autograd, [](DispatchKeySet ks, const Tensor& self, int64_t dim, const Tensor& index,
                                              const Tensor& src) {
  return record_inplace("ScatterAddBackward0", ops::scatter_add_, ks, self, src,
                        [dim, index, ss = src->sizes, dt = src->dtype](const Tensor& g) {
                          return TensorList{g, padded(ops::gather(g, dim, index), ss, dt)};
                        }, dim, index, src);
})
FL_REGISTER_KERNEL(scatter_, Autograd, [](DispatchKeySet ks, const Tensor& self, int64_t dim, const Tensor& index,
                                          const Tensor& src, const std::string& reduce) {
  FL_CHECK(reduce.empty() || !inplace_needs_grad(self, src), NotImplementedError,
           "scatter_(reduce='", reduce, "') is not differentiable in flowlike yet; use scatter_reduce");
  return record_inplace("ScatterBackward0", ops::scatter_, ks, self, src,
                        [dim, index, ss = src->sizes, dt = src->dtype](const Tensor& g) {
                          Tensor gs = zeroed(g, [&](const Tensor& z) { ops::scatter_(z, dim, index, wrap_scalar(Scalar(0.0)), ""); });
                          Tensor gsrc = ss.empty() ? ops::sum(ops::gather(g, dim, index), {}, false, ScalarType::NumTypes)
                                                   : padded(ops::gather(g, dim, index), ss, dt);
                          return TensorList{gs, gsrc};
                        }, dim, index, src, reduce);
})
FL_REGISTER_KERNEL(index_add_, Autograd, [](DispatchKeySet ks, const Tensor& self, int64_t dim, const Tensor& index,
                                            const Tensor& source, Scalar alpha) {
  return record_inplace("IndexAddBackward0", ops::index_add_, ks, self, source,
                        [dim, index, alpha, ss = source->sizes, dt = source->dtype](const Tensor& g) {
                          using namespace fl::formulas;
                          Tensor gsrc = ops::index_select(g, ss.empty() ? 0 : dim, index);
                          if (alpha.to_double() != 1.0) gsrc = gsrc * alpha;
                          return TensorList{g, padded(ops::reshape(gsrc, ss), ss, dt)};
                        }, dim, index, source, alpha);
})
FL_REGISTER_KERNEL(index_copy_, Autograd, [](DispatchKeySet ks, const Tensor& self, int64_t dim, const Tensor& index,
                                             const Tensor& source) {
  return record_inplace("IndexCopyBackward0", ops::index_copy_, ks, self, source,
                        [dim, index, ss = source->sizes, dt = source->dtype](const Tensor& g) {
                          Tensor gs = zeroed(g, [&](const Tensor& z) { ops::index_fill_(z, dim, index, zero_scalar(z->dtype)); });
                          return TensorList{gs, padded(ops::reshape(ops::index_select(g, ss.empty() ? 0 : dim, index), ss), ss, dt)};
                        }, dim, index, source);
})
FL_REGISTER_KERNEL(index_fill_, Autograd, [](DispatchKeySet ks, const Tensor& self, int64_t dim, const Tensor& index,
                                             const Tensor& value) {
  return record_inplace("IndexFillBackward0", ops::index_fill_, ks, self, value,
                        [dim, index, dt = value->dtype](const Tensor& g) {
                          using namespace fl::formulas;
                          Tensor gs = zeroed(g, [&](const Tensor& z) { ops::index_fill_(z, dim, index, zero_scalar(z->dtype)); });
                          // g at the filled positions, each once however often index repeats it (as torch)
                          Tensor gv = ops::sum(g - gs, {}, false, ScalarType::NumTypes);
                          return TensorList{gs, cast_grad(gv, dt)};
                        }, dim, index, value);
})
FL_REGISTER_KERNEL(masked_scatter_, Autograd, [](DispatchKeySet ks, const Tensor& self, const Tensor& mask,
                                                 const Tensor& source) {
  return record_inplace("MaskedScatterBackward0", ops::masked_scatter_, ks, self, source,
                        [mask, ss = source->sizes, dt = source->dtype](const Tensor& g) {
                          using namespace fl::formulas;
                          Tensor picked = ops::masked_select(g, mask);  // the source's first elements, in order
                          Tensor flat = padded(picked, {numel_of(ss)}, dt);
                          return TensorList{where(mask, num(0.0), g), ops::reshape(flat, ss)};
                        }, mask, source);
})

// scatter_reduce_: PyTorch's scatter_reduce_backward. The rules read self's old value, src and the
// result; with include_self=False the positions written get no gradient for self. amax/amin share
// the gradient evenly among the elements equal to the result; prod divides the result by each
// factor, computing the products without it directly where a factor is zero.
FL_REGISTER_KERNEL(scatter_reduce_, Autograd, ([](DispatchKeySet ks, const Tensor& self, int64_t dim, const Tensor& index,
                                                 const Tensor& src, const std::string& reduce, bool include_self) {
  check_inplace(self, src);
  Edge self_old = gradient_edge(self);
  const bool needs_before = reduce == "prod" || reduce == "amax" || reduce == "amin";
  Tensor before = needs_before ? copy_before_write(self) : nullptr;  // keeps self's history
  redispatch_no_grad(ops::scatter_reduce_, ks, self, dim, index, src, reduce, include_self);
  record_saved("ScatterReduceBackward0", self, {self_old, gradient_edge(src)}, {before, src}, true,
               [dim, index, reduce, include_self](const Tensor& g, const TensorList& s) {
                 using namespace fl::formulas;
                 const Tensor &self0 = s[0], &src_all = s[1], &result = s[2];
                 const int64_t d = g->dim() ? dim : 0;
                 // src is read only over index's extent
                 Tensor src = src_all;
                 for (int64_t k = 0; k < index->dim(); ++k)
                   if (src->sizes[k] != index->sizes[k]) src = ops::slice(src, k, 0, index->sizes[k], 1);
                 auto copy_of = [](const Tensor& t) { return clone(t); };
                 Tensor gs, gsrc;
                 if (reduce == "sum") {
                   gs = g;
                   gsrc = ops::gather(g, d, index);
                 } else if (reduce == "mean") {
                   Tensor n = empty(g->sizes, g->dtype);
                   fill(n, Scalar(int64_t(include_self ? 1 : 0)));
                   Tensor ones = empty(index->sizes, g->dtype);
                   fill(ones, Scalar(int64_t(1)));
                   ops::scatter_add_(n, d, index, ones);
                   n = where(bin(BinaryOp::eq, n, num(0.0)), num(1.0), n);
                   gs = g / n;
                   gsrc = ops::gather(g, d, index) / ops::gather(n, d, index);
                 } else if (reduce == "amax" || reduce == "amin") {
                   Tensor value = ops::gather(result, d, index);
                   Tensor self_is = to_dtype(bin(BinaryOp::eq, self0, result), g->dtype);
                   Tensor src_is = to_dtype(bin(BinaryOp::eq, src, value), g->dtype);
                   Tensor spread = g / ops::scatter_add_(clone(self_is), d, index, src_is);
                   gs = self_is * spread;
                   gsrc = src_is * ops::gather(spread, d, index);
                 } else {  // prod
                   Tensor masked_self = where(bin(BinaryOp::eq, self0, num(0.0)), num(1.0), self0);
                   gs = g * ops::scatter_reduce_(copy_of(masked_self), d, index, src, "prod", include_self) / masked_self;
                   Tensor src_zero = bin(BinaryOp::eq, src, num(0.0));
                   Tensor zeros = empty(g->sizes, g->dtype);
                   fill(zeros, Scalar(int64_t(0)));
                   Tensor zeros_at = ops::gather(ops::scatter_add_(zeros, d, index, to_dtype(src_zero, g->dtype)), d, index);
                   Tensor single = bin(BinaryOp::logical_and, src_zero, bin(BinaryOp::eq, zeros_at, num(1.0)));
                   Tensor without = ops::scatter_reduce_(copy_of(self0), d, index, where(single, num(1.0), src), "prod", include_self);
                   gsrc = where(single, ops::gather(g * without, d, index),
                                ops::gather(g * result, d, index) / where(src_zero, num(1.0), src));
                 }
                 if (!include_self) gs = zeroed(gs, [&](const Tensor& z) { ops::scatter_(z, d, index, wrap_scalar(Scalar(0.0)), ""); });
                 return TensorList{gs, padded(gsrc, src_all->sizes, src_all->dtype)};
               });
  rebase_view_history(self);
  return self;
}))

// Random fills overwrite self with values that carry no gradient.
#define FL_RANDOM_OVERWRITE(opname, Name)                                                        \
  FL_REGISTER_KERNEL(opname, Autograd, [](DispatchKeySet ks, const Tensor& self, auto... args) {   \
    check_inplace(self, nullptr);                                                                \
    redispatch_no_grad(ops::opname, ks, self, args...);                                          \
    record_overwrite(Name, self, nullptr);                                                       \
    return self;                                                                                 \
  })
FL_RANDOM_OVERWRITE(uniform_, "UniformBackward0")
FL_RANDOM_OVERWRITE(normal_, "NormalBackward0")
FL_RANDOM_OVERWRITE(random_, "RandomBackward0")
FL_RANDOM_OVERWRITE(bernoulli_, "BernoulliBackward0")
#undef FL_RANDOM_OVERWRITE

}  // namespace fl::autograd
