// Autograd kernels of mm, bmm, addmm and baddbmm. Each saves only the operand the other one's
// gradient needs, and the gradients are themselves products through the dispatcher, so they are
// differentiable again (double backward).
#include "../ops/activation.h"
#include "../ops/complex.h"
#include "../ops/matmul.h"
#include "../ops/views.h"
#include "autograd.h"
#include "formulas.h"

namespace fl::autograd {
namespace {

using namespace fl::formulas;

Tensor mT(const Tensor& t) { return ops::transpose(t, -2, -1); }
// The conjugate transpose (mT for real tensors): the products' gradients use it, so complex gradients follow
// torch's convention (grad_a = g @ b^H).
Tensor mH(const Tensor& t) { return ops::conj(mT(t)); }
// t * conj(s): a gradient takes the conjugate of the factor its output was scaled by
Tensor scaled(const Tensor& t, Scalar s) {
  if (s.to_complex() == complex<double>(1.0)) return t;
  return t * (s.is_complex() ? Scalar(conj(s.to_complex())) : s);
}

// True for a matrix (or batch of matrices) laid out column-major, like the `w.t()` that Linear
// multiplies by.
bool column_major(const Tensor& t) {
  const int64_t d = t->dim();
  return t->strides[d - 2] == 1 && t->strides[d - 1] != 1 && t->sizes[d - 1] > 1;
}

// Records the product node: result = beta * self + alpha * a @ b, with `product` mm or bmm. Each
// operand's gradient is produced in that operand's layout, as PyTorch does: for b = w.t() the
// product computes (a^T g)^T = (g^T a)^T, so w.grad comes out contiguous with no transposing copy.
template <typename ProductOp>
Tensor record_product(const char* name, const ProductOp& product, const Tensor& result, const Tensor& self,
                      const Tensor& a, const Tensor& b, Scalar beta, Scalar alpha) {
  const bool ga = requires_grad(a), gb = requires_grad(b);
  const bool a_cm = ga && column_major(a), b_cm = gb && column_major(b);
  std::vector<Edge> edges{gradient_edge(a), gradient_edge(b)};
  if (self) edges.push_back(gradient_edge(self));
  const bool has_self = self != nullptr;
  IntList self_sizes = has_self ? self->sizes : IntList{};
  return record_saved(name, result, std::move(edges), {gb ? a : nullptr, ga ? b : nullptr}, false,
                      [ga, gb, a_cm, b_cm, has_self, self_sizes, beta, alpha, &product](const Tensor& g,
                                                                                         const TensorList& s) {
                        Tensor grad_a, grad_b;
                        if (ga) grad_a = a_cm ? mH(product(s[1], mH(g))) : product(g, mH(s[1]));
                        if (gb) grad_b = b_cm ? mH(product(mH(g), s[0])) : product(mH(s[0]), g);
                        TensorList grads{ga ? scaled(grad_a, alpha) : nullptr, gb ? scaled(grad_b, alpha) : nullptr};
                        if (has_self) grads.push_back(sum_to(scaled(g, beta), self_sizes));
                        return grads;
                      });
}

}  // namespace

FL_REGISTER_KERNEL(mm, Autograd, [](DispatchKeySet ks, const Tensor& a, const Tensor& b) {
  Tensor r = redispatch_no_grad(ops::mm, ks, a, b);
  return record_product("MmBackward0", ops::mm, r, nullptr, a, b, Scalar(int64_t(0)), Scalar(int64_t(1)));
})
FL_REGISTER_KERNEL(bmm, Autograd, [](DispatchKeySet ks, const Tensor& a, const Tensor& b) {
  Tensor r = redispatch_no_grad(ops::bmm, ks, a, b);
  return record_product("BmmBackward0", ops::bmm, r, nullptr, a, b, Scalar(int64_t(0)), Scalar(int64_t(1)));
})
FL_REGISTER_KERNEL(addmm, Autograd, [](DispatchKeySet ks, const Tensor& self, const Tensor& a, const Tensor& b, Scalar beta,
                                       Scalar alpha) {
  Tensor r = redispatch_no_grad(ops::addmm, ks, self, a, b, beta, alpha);
  return record_product("AddmmBackward0", ops::mm, r, self, a, b, beta, alpha);
})
// With a gradient to compute: addmm, then the activation, each recording its own backward.
FL_REGISTER_KERNEL(_addmm_activation, Autograd, [](DispatchKeySet, const Tensor& self, const Tensor& a, const Tensor& b,
                                                   Scalar beta, Scalar alpha, bool use_gelu) {
  return activation_op(use_gelu ? Activation::gelu : Activation::relu)(ops::addmm(self, a, b, beta, alpha), 0.0, 0.0,
                                                                        0.0, nullptr);
})
FL_REGISTER_KERNEL(baddbmm, Autograd, [](DispatchKeySet ks, const Tensor& self, const Tensor& a, const Tensor& b,
                                         Scalar beta, Scalar alpha) {
  Tensor r = redispatch_no_grad(ops::baddbmm, ks, self, a, b, beta, alpha);
  return record_product("BaddbmmBackward0", ops::bmm, r, self, a, b, beta, alpha);
})

}  // namespace fl::autograd
