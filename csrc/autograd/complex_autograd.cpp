// Autograd kernels of the complex-number ops (ops/complex.h), with PyTorch's convention for complex
// gradients: a gradient is the conjugate Wirtinger derivative dL/dRe + i dL/dIm of a real loss, so a real
// input receives the real part of what flows into it and conj's gradient is the conjugate.
#include "../ops/complex.h"
#include "../ops/pointwise.h"
#include "../ops/tensor_ops.h"
#include "autograd.h"
#include "formulas.h"

namespace fl::autograd {
namespace {

Tensor zeros_as(const Tensor& g) { return formulas::zeros_like(g); }

}  // namespace
}  // namespace fl::autograd

using namespace fl;
using namespace fl::autograd;

FL_REGISTER_KERNEL(conj, Autograd, [](DispatchKeySet ks, const Tensor& a) {
  Tensor r = redispatch_no_grad(ops::conj, ks, a);
  if (r == a) return r;
  return record_lambda("ConjBackward0", r, {gradient_edge(a)}, [](const Tensor& g) { return TensorList{ops::conj(g)}; });
})
FL_REGISTER_KERNEL(resolve_conj, Autograd, [](DispatchKeySet ks, const Tensor& a) {
  Tensor r = redispatch_no_grad(ops::resolve_conj, ks, a);
  if (r == a) return r;
  return record_lambda("ResolveConjBackward0", r, {gradient_edge(a)}, [](const Tensor& g) { return TensorList{g}; });
})
FL_REGISTER_KERNEL(conj_physical, Autograd, [](DispatchKeySet ks, const Tensor& a) {
  Tensor r = redispatch_no_grad(ops::conj_physical, ks, a);
  return record_lambda("ConjPhysicalBackward0", r, {gradient_edge(a)},
                       [](const Tensor& g) { return TensorList{ops::conj_physical(g)}; });
})
FL_REGISTER_KERNEL(view_as_real, Autograd, [](DispatchKeySet ks, const Tensor& a) {
  Tensor r = redispatch_no_grad(ops::view_as_real, ks, a);
  return record_lambda("ViewAsRealBackward0", r, {gradient_edge(a)},
                       [](const Tensor& g) { return TensorList{ops::view_as_complex(ops::contiguous(g))}; });
})
FL_REGISTER_KERNEL(view_as_complex, Autograd, [](DispatchKeySet ks, const Tensor& a) {
  Tensor r = redispatch_no_grad(ops::view_as_complex, ks, a);
  return record_lambda("ViewAsComplexBackward0", r, {gradient_edge(a)},
                       [](const Tensor& g) { return TensorList{ops::view_as_real(ops::resolve_conj(g))}; });
})
FL_REGISTER_KERNEL(real, Autograd, [](DispatchKeySet ks, const Tensor& a) {
  Tensor r = redispatch_no_grad(ops::real, ks, a);
  if (r == a) return r;
  return record_lambda("RealBackward0", r, {gradient_edge(a)},
                       [](const Tensor& g) { return TensorList{ops::complex(g, zeros_as(g))}; });
})
FL_REGISTER_KERNEL(imag, Autograd, [](DispatchKeySet ks, const Tensor& a) {
  Tensor r = redispatch_no_grad(ops::imag, ks, a);
  return record_lambda("ImagBackward0", r, {gradient_edge(a)},
                       [](const Tensor& g) { return TensorList{ops::complex(zeros_as(g), g)}; });
})
FL_REGISTER_KERNEL(complex, Autograd, [](DispatchKeySet ks, const Tensor& re, const Tensor& im) {
  Tensor r = redispatch_no_grad(ops::complex, ks, re, im);
  return record_lambda("ComplexBackward0", r, {gradient_edge(re), gradient_edge(im)},
                       [rs = re->sizes, is = im->sizes](const Tensor& g) {
                         return TensorList{sum_to(ops::real(g), rs), sum_to(ops::imag(g), is)};
                       });
})
