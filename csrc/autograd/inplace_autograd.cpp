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

namespace {
// The gradient of a source operand read at `index` positions, zero-padded when the source is larger
// than the index (scatter reads only index's extent of it).
Tensor padded(const Tensor& g, const IntList& sizes, ScalarType dt) {
  Tensor r = g->dtype != dt ? to_dtype(g, dt) : g;
  if (r->sizes == sizes) return r;
  Tensor out = empty(sizes, dt);
  fill(out, Scalar(int64_t(0)));
  copy_into(make_view(out, r->sizes, out->strides, 0), r);
  return out;
}
// `g` with the positions `write` touches set to zero (they were overwritten).
template <typename Write>
Tensor zeroed(const Tensor& g, Write write) {
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
                          return TensorList{gs, gv->dtype != vdt ? to_dtype(gv, vdt) : gv};
                        }, indices, values, accumulate);
})
// masked_fill_: the filled positions take their gradient from `value` (a 0-dim tensor).
FL_REGISTER_KERNEL(masked_fill_, Autograd, [](DispatchKeySet ks, const Tensor& self, const Tensor& mask,
                                              const Tensor& value) {
  return record_inplace("MaskedFillBackward0", ops::masked_fill_, ks, self, value,
                        [mask, vdt = value->dtype](const Tensor& g) {
                          using namespace fl::formulas;
                          Tensor gv = ops::sum(where(mask, g, num(0.0)), {}, false, ScalarType::NumTypes);
                          return TensorList{where(mask, num(0.0), g), gv->dtype != vdt ? to_dtype(gv, vdt) : gv};
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
                          Tensor gs = zeroed(g, [&](const Tensor& z) { ops::index_fill_(z, dim, index, zero_scalar(z->dtype)); });
                          Tensor gv = ops::sum(ops::index_select(g, g->dim() ? dim : 0, index), {}, false, ScalarType::NumTypes);
                          return TensorList{gs, gv->dtype != dt ? to_dtype(gv, dt) : gv};
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

#define FL_REFUSE_INPLACE(opname)                                                              \
  FL_REGISTER_KERNEL(opname, Autograd, [](DispatchKeySet, const Tensor& self, auto...) -> Tensor { \
    check_untracked_inplace(#opname, self, nullptr);                                           \
    throw NotImplementedError(#opname ": in-place autograd is not supported by flowlike yet");  \
  })
FL_REFUSE_INPLACE(scatter_reduce_)
#undef FL_REFUSE_INPLACE

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
