// Autograd kernels of the activations, and the backward formulas of the softmax family, native_layer_norm,
// native_batch_norm and the fused attention (softmax.yaml, nn_norm.yaml, attention.yaml name them). Their gradients come from dedicated backward ops (like PyTorch's *_backward
// ops); softmax and log_softmax switch to the same formula written with dispatcher ops under
// create_graph (so do layer_norm, rms_norm and batch_norm), and the activations' backward op is differentiable
// once more (second-derivative column of the list), so double backward works for all of these.
// The attention backward op is not differentiable: under create_graph the attention gradients are
// written with dispatcher ops instead (PyTorch's math path), so they are. A float attn_mask that
// requires grad gets dS (the one case that materializes the attention matrix, as the math path does).
#include <cctype>
#include <cmath>
#include <limits>

#include "../ops/activation.h"
#include "../ops/attention.h"
#include "../ops/index.h"
#include "../ops/matmul.h"
#include "../ops/views.h"
#include "../ops/nn_norm.h"
#include "../ops/reduce.h"
#include "../ops/softmax.h"
#include "../ops/views.h"
#include "autograd.h"
#include "formulas.h"

namespace fl::formulas {

// softmax/log_softmax (softmax.yaml): the fused backward kernel, or under create_graph the same written with
// differentiable ops.
Tensor softmax_grad(const Tensor& g, const Tensor& y, int64_t dim, bool log, ScalarType input_dtype) {
  Tensor gi;
  if (thread_state().grad_enabled && (g->requires_grad || y->requires_grad)) {
    const IntList dims{dim};
    const ScalarType none = ScalarType::NumTypes;
    gi = log ? g - exp(y) * ops::sum(g, dims, true, none) : y * (g - ops::sum(g * y, dims, true, none));
  } else {
    gi = log ? ops::log_softmax_backward(g, y, dim) : ops::softmax_backward(g, y, dim);
  }
  return autograd::cast_grad(gi, input_dtype);
}

}  // namespace fl::formulas

namespace fl::autograd {
namespace {

// layer_norm / rms_norm gradients written with dispatcher ops (statistics recomputed from x), used
// under create_graph so that they are differentiable again.
TensorList layer_norm_formula(const Tensor& g, const Tensor& x, const Tensor& w, const IntList& shape, double eps,
                              bool rms, bool has_b) {
  using namespace formulas;
  const int64_t nd = x->dim(), k = static_cast<int64_t>(shape.size());
  const ScalarType none = ScalarType::NumTypes;
  IntList norm_dims, lead_dims;
  for (int64_t d = 0; d < nd; ++d) (d < nd - k ? lead_dims : norm_dims).push_back(d);
  auto mean = [&](const Tensor& t) { return ops::mean(t, norm_dims, true, none); };
  auto lead_sum = [&](const Tensor& t) { return lead_dims.empty() ? t : ops::sum(t, lead_dims, false, none); };
  const Tensor xc = rms ? x : x - mean(x);
  const Tensor rstd = rsqrt(mean(xc * xc) + eps);
  const Tensor xhat = xc * rstd;
  const Tensor gw = w ? g * w : g;
  const Tensor c = mean(gw * xhat);
  const Tensor dx = rms ? rstd * (gw - xhat * c) : rstd * (gw - mean(gw) - xhat * c);
  return {dx, w ? lead_sum(g * xhat) : nullptr, has_b ? lead_sum(g) : nullptr};
}

// batch_norm gradients written with dispatcher ops, used under create_graph. Training recomputes the
// batch statistics from x (so that they are differentiated too); evaluation's are the constants saved.
std::tuple<Tensor, Tensor, Tensor> batch_norm_formula(const Tensor& g, const Tensor& x, const Tensor& w,
                                                      const Tensor& save_mean, const Tensor& save_invstd,
                                                      bool training, double eps, bool has_b) {
  using namespace formulas;
  const ScalarType none = ScalarType::NumTypes;
  IntList dims{0}, cshape(x->dim(), 1);
  for (int64_t d = 2; d < x->dim(); ++d) dims.push_back(d);
  cshape[1] = x->sizes[1];
  auto mean = [&](const Tensor& t) { return ops::mean(t, dims, true, none); };
  auto channel = [&](const Tensor& t) { return ops::reshape(to_dtype(t, x->dtype), cshape); };
  const Tensor xc = training ? x - mean(x) : x - channel(save_mean);
  const Tensor rstd = training ? rsqrt(mean(xc * xc) + eps) : channel(save_invstd);
  const Tensor xhat = xc * rstd;
  const Tensor gw = w ? g * channel(w) : g;
  const Tensor dx = training ? rstd * (gw - mean(gw) - xhat * mean(gw * xhat)) : gw * rstd;
  return {dx, w ? ops::sum(g * xhat, dims, false, none) : nullptr, has_b ? ops::sum(g, dims, false, none) : nullptr};
}

// The gradients of attention written with dispatcher ops (differentiable again): P = softmax(q k^T *
// scale + mask), dv = P^T g, dS = P * (g v^T - rowsum(P * g v^T)), dq = dS k * scale, dk = dS^T q * scale.
// Key and value heads are repeated for grouped-query attention and their gradients summed back.
TensorList attention_grads_composite(const Tensor& g, const Tensor& q, const Tensor& k, const Tensor& v,
                                     const Tensor& mask, bool is_causal, double scale, bool mask_grad,
                                     const Tensor& seed_offset = nullptr, double dropout_p = 0) {
  using namespace formulas;
  const int64_t nd = q->dim(), L = q->sizes[nd - 2], S = k->sizes[nd - 2];
  const double s = std::isnan(scale) ? 1.0 / std::sqrt(static_cast<double>(q->sizes[nd - 1])) : scale;
  const int64_t hq = nd >= 3 ? q->sizes[nd - 3] : 1, hk = nd >= 3 ? k->sizes[nd - 3] : 1;
  auto heads = [&](const Tensor& t) {  // (..., Hk, S, E) -> (..., Hq, S, E), head h reading h / (Hq / Hk)
    if (hq == hk) return t;
    IntList grouped = t->sizes, full = t->sizes;
    grouped.insert(grouped.end() - 2, hq / hk);
    full[nd - 3] = hq;
    return ops::reshape(ops::expand(ops::unsqueeze(t, nd - 2), grouped), full);
  };
  auto unheads = [&](const Tensor& t, const IntList& sizes) {  // the sum over each group
    if (hq == hk) return t;
    IntList grouped = t->sizes;
    grouped[nd - 3] = hk;
    grouped.insert(grouped.end() - 2, hq / hk);
    return ops::reshape(ops::sum(ops::reshape(t, grouped), {nd - 2}, false, ScalarType::NumTypes), sizes);
  };
  Tensor kr = heads(k), vr = heads(v);
  Tensor scores = ops::matmul(q, ops::transpose(kr, -1, -2)) * s;
  Tensor ninf = wrap_scalar(Scalar(-std::numeric_limits<double>::infinity()));
  if (mask) scores = mask->dtype == ScalarType::Bool ? where(mask, scores, ninf) : scores + mask;
  if (is_causal) {
    Tensor keep = empty({L, S}, ScalarType::Bool);
    fill(keep, Scalar(true));
    keep = ops::tril(keep, 0);  // j <= i
    scores = where(keep, scores, ninf);
  }
  Tensor P = ops::softmax(scores, -1, ScalarType::NumTypes);
  // with dropout the output is (P * D) V, D the forward's dropout factors (0 or 1 / (1 - p)), replayed
  Tensor D = dropout_p > 0 ? ops::sdpa_dropout_factors(seed_offset, dropout_p, P->sizes, P->dtype) : nullptr;
  Tensor dv = ops::matmul(ops::transpose(D ? P * D : P, -1, -2), g);
  Tensor dP = ops::matmul(g, ops::transpose(vr, -1, -2));
  if (D) dP = dP * D;
  Tensor dS = P * (dP - ops::sum(dP * P, {-1}, true, ScalarType::NumTypes));
  Tensor dq = ops::matmul(dS, kr) * s;
  Tensor dk = ops::matmul(ops::transpose(dS, -1, -2), q) * s;
  IntList kb = dk->sizes, vb = dv->sizes;  // broadcast batch dims, Hk heads
  if (nd >= 3) kb[kb.size() - 3] = vb[vb.size() - 3] = hk;
  return {dq, unheads(dk, kb), unheads(dv, vb), mask_grad ? dS : nullptr};
}

}  // namespace

namespace {

template <Activation K>
Tensor activation_autograd(DispatchKeySet ks, const Tensor& x, double a, double b, double c, const Tensor& out) {
  const char* name = activation_name(K);
  const bool in_place = out != nullptr;
  if (in_place) {
    FL_CHECK(out == x, Error, name, "(): functions with out=... arguments don't support automatic differentiation, but one of the arguments requires grad.");
    check_inplace(x, nullptr);
  }
  Edge edge = gradient_edge(x);
  Tensor before = in_place ? copy_before_write(x) : x;  // keeps x's history
  Tensor r = redispatch_no_grad(activation_op(K), ks, x, a, b, c, out);
  record_saved(backward_node_name(name).c_str(), r, {edge}, {before}, false, [a, b, c](const Tensor& g, const TensorList& s) {
    return TensorList{activation_backward_op(K)(g, s[0], a, b, c, 1)};
  });
  if (in_place) rebase_view_history(r);
  return r;
}

// g * f'(x) is linear in g and has derivative g * f''(x) in x: the activations' double backward.
// (The order-2 op has no autograd kernel: third derivatives are not supported.)
template <Activation K>
Tensor activation_backward_autograd(DispatchKeySet ks, const Tensor& g, const Tensor& x, double a, double b, double c,
                                    int64_t order) {
  Tensor r = redispatch_no_grad(activation_backward_op(K), ks, g, x, a, b, c, order);
  if (order != 1) return r;
  return record_saved((backward_node_name(activation_name(K), "BackwardBackward0")).c_str(), r, {gradient_edge(g), gradient_edge(x)},
                      {g, x}, false, [a, b, c](const Tensor& gg, const TensorList& s) {
                        using namespace formulas;
                        return TensorList{activation_backward_op(K)(gg, s[1], a, b, c, 1),
                                          activation_backward_op(K)(gg * s[0], s[1], a, b, c, 2)};
                      });
}

}  // namespace

#define FL_X(name, ...)                                                                                \
  FL_REGISTER_KERNEL(name, Autograd, ::fl::autograd::activation_autograd<::fl::Activation::name>) \
  FL_REGISTER_KERNEL(name##_backward, Autograd, ::fl::autograd::activation_backward_autograd<::fl::Activation::name>)
FL_ACTIVATIONS(FL_X)
#undef FL_X

}  // namespace fl::autograd

namespace fl::formulas {

// native_layer_norm (nn_norm.yaml): the gradients the mask asks for from one call of the backward kernel, or under
// create_graph from the formula of differentiable ops.
TensorList layer_norm_grads(const Tensor& g, const Tensor& x, const Tensor& w, const Tensor& mean, const Tensor& rstd,
                            const IntList& shape, double eps, bool rms, ScalarType bias_dtype,
                            const std::array<bool, 3>& mask) {
  if (thread_state().grad_enabled && (g->requires_grad || x->requires_grad || autograd::requires_grad(w)))
    return autograd::layer_norm_formula(g, x, w, shape, eps, rms, mask[2]);
  auto [gx, gw, gb] = ops::native_layer_norm_backward(g, x, mean, rstd, w, shape, rms, mask[1] || mask[2]);
  return {gx, w ? autograd::cast_grad(gw, w->dtype) : nullptr, mask[2] ? autograd::cast_grad(gb, bias_dtype) : nullptr};
}

// native_batch_norm (nn_norm.yaml): as layer_norm_grads.
TensorList batch_norm_grads(const Tensor& g, const Tensor& x, const Tensor& w, const Tensor& save_mean,
                            const Tensor& save_invstd, bool training, double eps, ScalarType bias_dtype,
                            const std::array<bool, 3>& mask) {
  auto [gx, gw, gb] =
      thread_state().grad_enabled && (g->requires_grad || x->requires_grad || autograd::requires_grad(w))
          ? autograd::batch_norm_formula(g, x, w, save_mean, save_invstd, training, eps, mask[2])
          : ops::native_batch_norm_backward(g, x, w, save_mean, save_invstd, training, mask[1] || mask[2]);
  return {gx, w ? autograd::cast_grad(gw, w->dtype) : nullptr, mask[2] ? autograd::cast_grad(gb, bias_dtype) : nullptr};
}

// scaled_dot_product_attention (attention.yaml): the fused backward kernel, or under create_graph the composite of
// differentiable ops; batch dims that were broadcast sum back to each input's shape.
TensorList attention_backward(const Tensor& g, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                              const Tensor& out, const Tensor& lse, const Tensor& seed_offset, double dropout_p,
                              bool is_causal, double scale, bool gqa, const std::array<bool, 4>& mask_) {
  const bool mask_grad = mask_[3];
  Tensor gq, gk, gv, gm;
  if (thread_state().grad_enabled) {  // create_graph
    TensorList r = autograd::attention_grads_composite(g, q, k, v, mask, is_causal, scale, mask_grad, seed_offset,
                                                       dropout_p);
    gq = r[0], gk = r[1], gv = r[2], gm = r[3];
  } else {
    std::tie(gq, gk, gv, gm) = ops::scaled_dot_product_attention_backward(g, q, k, v, mask, out, lse, seed_offset,
                                                                          dropout_p, is_causal, scale, gqa, mask_grad);
  }
  return {autograd::sum_to(gq, q->sizes), autograd::sum_to(gk, k->sizes), autograd::sum_to(gv, v->sizes),
          mask_grad ? autograd::sum_to(gm, mask->sizes) : nullptr};
}

}  // namespace fl::formulas

