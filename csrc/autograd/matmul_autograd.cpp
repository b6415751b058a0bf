// The matrix products' backward formulas (matmul.yaml names them). The gradients are themselves products through
// the dispatcher, so they are differentiable again (double backward).
#include "../ops/complex.h"
#include "../ops/matmul.h"
#include "../ops/views.h"
#include "autograd.h"
#include "formulas.h"

namespace fl::formulas {
namespace {

Tensor mT(const Tensor& t) { return ops::transpose(t, -2, -1); }
// The conjugate transpose (mT for real tensors): the products' gradients use it, so complex gradients follow
// torch's convention (grad_a = g @ b^H).
Tensor mH(const Tensor& t) { return ops::conj(mT(t)); }
// t * conj(s): a gradient takes the conjugate of the factor its output was scaled by
Tensor scaled(const Tensor& t, Scalar s) {
  if (s.to_complex() == complex<double>(1.0)) return t;
  return t * (s.is_complex() ? Scalar(conj(s.to_complex())) : s);
}
// mm for matrices, bmm for batches of them
Tensor product(const Tensor& a, const Tensor& b) { return a->dim() == 2 ? ops::mm(a, b) : ops::bmm(a, b); }

// True for a matrix (or batch of matrices) laid out column-major, like the `w.t()` that Linear multiplies by.
bool column_major(const IntList& sizes, const IntList& strides) {
  const size_t d = sizes.size();
  return strides[d - 2] == 1 && strides[d - 1] != 1 && sizes[d - 1] > 1;
}

}  // namespace

// Each operand's gradient is produced in that operand's layout, as PyTorch does: for b = w.t() the product computes
// (a^T g)^T = (g^T a)^T, so w.grad comes out contiguous with no transposing copy.
Tensor product_grad_self(const Tensor& g, const Tensor& other, const IntList& self_sizes, const IntList& self_strides,
                         Scalar alpha) {
  return scaled(column_major(self_sizes, self_strides) ? mH(product(other, mH(g))) : product(g, mH(other)), alpha);
}

Tensor product_grad_other(const Tensor& g, const Tensor& self, const IntList& other_sizes, const IntList& other_strides,
                          Scalar alpha) {
  return scaled(column_major(other_sizes, other_strides) ? mH(product(mH(g), self)) : product(mH(self), g), alpha);
}

Tensor addend_grad(const Tensor& g, const IntList& self_sizes, Scalar beta) {
  return autograd::sum_to(scaled(g, beta), self_sizes);
}

}  // namespace fl::formulas
