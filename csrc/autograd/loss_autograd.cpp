// Autograd kernels of the losses in ops/loss.h. nll_loss, cross_entropy and the BCE with logits use
// their fused backward kernels when the gradient needs no graph, and formulas of dispatcher ops under
// create_graph=True, so double backward (e.g. second-order meta-learning) works; binary_cross_entropy
// always uses formulas. ctc_loss's backward op is not differentiable again (as in PyTorch's CPU CTC).
#include "../ops/index.h"
#include "../ops/loss.h"
#include "../ops/reduce.h"
#include "../ops/views.h"
#include "autograd.h"
#include "formulas.h"

namespace fl::autograd {
namespace {

using namespace fl::formulas;

Tensor log1p(const Tensor& t) { return un(UnaryOp::log1p, t); }
// softplus(-x) = -log(sigmoid(x)), in the overflow-free form max(-x, 0) + log1p(exp(-|x|)).
Tensor softplus_neg(const Tensor& x) {
  return bin(BinaryOp::maximum, -x, num(0.0)) + log1p(exp(-un(UnaryOp::abs, x)));
}

// The gradient of nll_loss (ce = false) or cross_entropy (ce = true) over class indices, written with
// dispatcher ops so that it is differentiable in `self` and in `g` (see Note [Class-dim geometry]):
//   G = coef * ((1 - ls) * w_t * (softmax - onehot) + ls / C * (softmax * sum(w) - w))   (cross_entropy)
//   G = -coef * w_t * onehot                                                              (nll_loss)
// with coef the incoming gradient (per position, or / total_weight for mean), 0 where ignored.
Tensor class_loss_grad(const Tensor& g, const Tensor& self, const Tensor& target, const Tensor& weight,
                       int64_t reduction, int64_t ignore_index, double ls, const Tensor& total_weight, bool ce) {
  const int64_t cd = self->dim() == 1 ? 0 : 1;
  const int64_t C = self->sizes[cd];
  Tensor tu = ops::unsqueeze(to_dtype(target, ScalarType::Int64), cd);
  Tensor valid = bin(BinaryOp::ne, tu, wrap_scalar(Scalar(ignore_index)));
  Tensor tc = ops::where(valid, tu, wrap_scalar(Scalar(int64_t(0))));
  Tensor onehot = zeros(self->sizes, self->dtype);
  ops::scatter_(onehot, cd, tc, num(1.0), "");
  const auto red = static_cast<LossReduction>(reduction);
  Tensor coef = red == LossReduction::None ? ops::unsqueeze(g, cd) : (red == LossReduction::Mean ? g / total_weight : g);
  coef = ops::where(valid, coef, num(0.0));  // not a product: mean over no target divides by 0
  Tensor nll_coef = weight ? coef * ops::index(weight, {tc}) : coef;
  if (!ce) return -(onehot * nll_coef);
  Tensor p = exp(self - ops::logsumexp(self, {cd}, true, ScalarType::NumTypes));
  Tensor G = (p - onehot) * nll_coef;
  if (ls <= 0) return G;
  G = G * (1.0 - ls);
  IntList wshape(self->dim(), 1);
  wshape[cd] = C;
  Tensor wsum = weight ? ops::sum(weight, {}, false, ScalarType::NumTypes) : num(static_cast<double>(C));
  Tensor smooth = weight ? p * wsum - ops::reshape(weight, wshape) : p * wsum - 1.0;
  return G + coef * smooth * (ls / static_cast<double>(C));
}

std::tuple<Tensor, Tensor> nll_loss_autograd(DispatchKeySet ks, const Tensor& self, const Tensor& target, const Tensor& weight,
                                          int64_t reduction, int64_t ignore_index) {
  auto [loss, total_weight] = redispatch_no_grad(ops::nll_loss, ks, self, target, weight, reduction, ignore_index);
  if (requires_grad(self)) {
    record_saved("NllLossBackward0", loss, {gradient_edge(self)}, {self, target, weight, total_weight}, false,
                 [reduction, ignore_index](const Tensor& g, const TensorList& s) {
                   if (thread_state().grad_enabled)  // create_graph: a differentiable gradient
                     return TensorList{class_loss_grad(g, s[0], s[1], s[2], reduction, ignore_index, 0.0, s[3], false)};
                   return TensorList{ops::nll_loss_backward(g, s[0], s[1], s[2], reduction, ignore_index, s[3])};
                 });
  }
  return std::make_tuple(loss, total_weight);
}

std::tuple<Tensor, Tensor, Tensor> cross_entropy_loss_autograd(DispatchKeySet ks, const Tensor& self, const Tensor& target,
                                                    const Tensor& weight, int64_t reduction, int64_t ignore_index,
                                                    double label_smoothing) {
  auto [loss, stats, total_weight] =
      redispatch_no_grad(ops::cross_entropy_loss, ks, self, target, weight, reduction, ignore_index, label_smoothing);
  if (requires_grad(self)) {
    record_saved("CrossEntropyLossBackward0", loss, {gradient_edge(self)}, {self, target, weight, stats, total_weight},
                 false, [reduction, ignore_index, label_smoothing](const Tensor& g, const TensorList& s) {
                   if (thread_state().grad_enabled)  // create_graph: a differentiable gradient
                     return TensorList{class_loss_grad(g, s[0], s[1], s[2], reduction, ignore_index, label_smoothing,
                                                       s[4], true)};
                   return TensorList{ops::cross_entropy_loss_backward(g, s[0], s[1], s[2], reduction, ignore_index,
                                                                      label_smoothing, s[3], s[4])};
                 });
  }
  return std::make_tuple(loss, stats, total_weight);
}

// d/dx = (x - y) / max(x (1 - x), 1e-12) and d/dy = log(1 - x) - log(x), as PyTorch's backward.
Tensor binary_cross_entropy_autograd(DispatchKeySet ks, const Tensor& self, const Tensor& target) {
  Tensor r = redispatch_no_grad(ops::binary_cross_entropy, ks, self, target);
  const bool gx = requires_grad(self), gy = requires_grad(target);
  return record_saved("BinaryCrossEntropyBackward0", r, {gradient_edge(self), gradient_edge(target)}, {self, target},
                      false, [gx, gy](const Tensor& g, const TensorList& s) {
                        const Tensor& x = s[0];
                        const Tensor& y = s[1];
                        Tensor dx = gx ? g * (x - y) / bin(BinaryOp::maximum, (-x + 1.0) * x, num(1e-12)) : nullptr;
                        Tensor dy = gy ? g * (log1p(-x) - log(x)) : nullptr;
                        return TensorList{dx, dy};
                      });
}

// With lw = 1 + (pw - 1) y and sp = softplus(-x): d/dx = lw sigmoid(x) - pw y, d/dy = (pw - 1) sp - x,
// d/dpw = y sp (pw = 1 without pos_weight).
Tensor binary_cross_entropy_with_logits_autograd(DispatchKeySet ks, const Tensor& self,
                                                                  const Tensor& target, const Tensor& pos_weight) {
  Tensor r = redispatch_no_grad(ops::binary_cross_entropy_with_logits, ks, self, target, pos_weight);
  const bool gx = requires_grad(self), gy = requires_grad(target), gp = requires_grad(pos_weight);
  std::vector<Edge> edges{gradient_edge(self), gradient_edge(target)};
  if (pos_weight) edges.push_back(gradient_edge(pos_weight));
  return record_saved(
      "BinaryCrossEntropyWithLogitsBackward0", r, std::move(edges), {self, target, pos_weight}, false,
      [gx, gy, gp](const Tensor& g, const TensorList& s) {
        const Tensor& x = s[0];
        const Tensor& y = s[1];
        const Tensor& pw = s[2];
        TensorList grads;
        if (gx && !pw && !thread_state().grad_enabled) {
          grads.push_back(ops::binary_cross_entropy_with_logits_backward(g, x, y));  // no graph needed: one pass
        } else if (gx) {
          Tensor sig = un(UnaryOp::sigmoid, x);
          Tensor d = pw ? (((pw - 1.0) * y + 1.0) * sig - pw * y) : sig - y;
          grads.push_back(cast_grad(sum_to(g * d, x->sizes), x->dtype));
        } else {
          grads.push_back(nullptr);
        }
        Tensor sp = (gy && pw) || gp ? softplus_neg(x) : nullptr;
        grads.push_back(gy ? cast_grad(g * (pw ? (pw - 1.0) * sp - x : -x), y->dtype) : nullptr);
        if (pw) grads.push_back(gp ? cast_grad(sum_to(g * y * sp, pw->sizes), pw->dtype) : nullptr);
        return grads;
      });
}

std::tuple<Tensor, Tensor> ctc_loss_autograd(DispatchKeySet ks, const Tensor& log_probs, const Tensor& targets,
                                          const IntList& il, const IntList& tl, int64_t blank, bool zero_infinity) {
  auto [nll, alpha] = redispatch_no_grad(ops::ctc_loss, ks, log_probs, targets, il, tl, blank, zero_infinity);
  if (requires_grad(log_probs)) {
    record_saved("CtcLossBackward0", nll, {gradient_edge(log_probs)}, {log_probs, targets, alpha}, true,
                 [il, tl, blank, zero_infinity](const Tensor& g, const TensorList& s) {
                   return TensorList{ops::ctc_loss_backward(g, s[0], s[1], il, tl, s[3], s[2], blank, zero_infinity)};
                 });
  }
  return std::make_tuple(nll, alpha);
}

}  // namespace

FL_REGISTER_KERNEL(nll_loss, Autograd, nll_loss_autograd)
FL_REGISTER_KERNEL(cross_entropy_loss, Autograd, cross_entropy_loss_autograd)
FL_REGISTER_KERNEL(binary_cross_entropy, Autograd, binary_cross_entropy_autograd)
FL_REGISTER_KERNEL(binary_cross_entropy_with_logits, Autograd, binary_cross_entropy_with_logits_autograd)
FL_REGISTER_KERNEL(ctc_loss, Autograd, ctc_loss_autograd)

}  // namespace fl::autograd
