// Autograd kernels of mm, bmm, addmm and baddbmm. Each saves only the operand the other one's
// gradient needs, and the gradients are themselves products through the dispatcher, so they are
// differentiable again (double backward).
#include "../ops/matmul.h"
#include "../ops/views.h"
#include "autograd.h"
#include "formulas.h"

namespace fl::autograd {
namespace {

using namespace fl::formulas;

Tensor mT(const Tensor& t) { return ops::transpose(t, -2, -1); }
Tensor scaled(const Tensor& t, Scalar s) { return s.to_double() == 1.0 ? t : t * s; }

// Records the product node: result = beta * self + alpha * a @ b, with `product` mm or bmm.
template <typename ProductOp>
Tensor record_product(const char* name, const ProductOp& product, const Tensor& result, const Tensor& self,
                      const Tensor& a, const Tensor& b, Scalar beta, Scalar alpha) {
  const bool ga = requires_grad(a), gb = requires_grad(b);
  std::vector<Edge> edges{gradient_edge(a), gradient_edge(b)};
  if (self) edges.push_back(gradient_edge(self));
  const bool has_self = self != nullptr;
  IntList self_sizes = has_self ? self->sizes : IntList{};
  return record_saved(name, result, std::move(edges), {gb ? a : nullptr, ga ? b : nullptr}, false,
                      [ga, gb, has_self, self_sizes, beta, alpha, &product](const Tensor& g, const TensorList& s) {
                        TensorList grads{ga ? scaled(product(g, mT(s[1])), alpha) : nullptr,
                                         gb ? scaled(product(mT(s[0]), g), alpha) : nullptr};
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
FL_REGISTER_KERNEL(baddbmm, Autograd, [](DispatchKeySet ks, const Tensor& self, const Tensor& a, const Tensor& b,
                                         Scalar beta, Scalar alpha) {
  Tensor r = redispatch_no_grad(ops::baddbmm, ks, self, a, b, beta, alpha);
  return record_product("BaddbmmBackward0", ops::bmm, r, self, a, b, beta, alpha);
})

}  // namespace fl::autograd
