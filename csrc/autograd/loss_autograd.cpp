// Backward formulas of the losses (loss.yaml). nll_loss, cross_entropy and the BCE with logits use
// their fused backward kernels when the gradient needs no graph, and formulas of dispatcher ops under
// create_graph=True, so double backward (e.g. second-order meta-learning) works.
#include "../ops/index.h"
#include "../ops/loss.h"
#include "../ops/reduce.h"
#include "../ops/views.h"
#include "autograd.h"
#include "formulas.h"

namespace fl::formulas {
namespace {

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

}  // namespace

// create_graph: a differentiable gradient
Tensor nll_loss_grad(const Tensor& g, const Tensor& self, const Tensor& target, const Tensor& weight, int64_t reduction,
                     int64_t ignore_index, const Tensor& total_weight) {
  if (thread_state().grad_enabled)
    return class_loss_grad(g, self, target, weight, reduction, ignore_index, 0.0, total_weight, false);
  return ops::nll_loss_backward(g, self, target, weight, reduction, ignore_index, total_weight);
}

Tensor cross_entropy_loss_grad(const Tensor& g, const Tensor& self, const Tensor& target, const Tensor& weight,
                               int64_t reduction, int64_t ignore_index, double label_smoothing, const Tensor& stats,
                               const Tensor& total_weight) {
  if (thread_state().grad_enabled)
    return class_loss_grad(g, self, target, weight, reduction, ignore_index, label_smoothing, total_weight, true);
  return ops::cross_entropy_loss_backward(g, self, target, weight, reduction, ignore_index, label_smoothing, stats,
                                          total_weight);
}

Tensor softplus_neg(const Tensor& x) { return bin(BinaryOp::maximum, -x, num(0.0)) + log1p(exp(-abs(x))); }

Tensor bce_with_logits_grad_self(const Tensor& g, const Tensor& x, const Tensor& y, const Tensor& pw) {
  if (!pw && !thread_state().grad_enabled)
    return ops::binary_cross_entropy_with_logits_backward(g, x, y);  // no graph needed: one pass
  Tensor sig = un(UnaryOp::sigmoid, x);
  Tensor d = pw ? (((pw - 1.0) * y + 1.0) * sig - pw * y) : sig - y;
  return autograd::cast_grad(autograd::sum_to(g * d, x->sizes), x->dtype);
}

}  // namespace fl::formulas
