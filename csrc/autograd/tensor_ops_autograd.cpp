// The autograd kernels of tensor_ops.yaml's in-place ops, written by hand: an overwrite gives self's old value a
// zero gradient and the source (if any) the summed-down gradient, and rebases a view's history on its base
// (record_overwrite). The copies and casts have generated kernels.
#include "../ops/tensor_ops.h"
#include "autograd.h"

namespace fl::autograd {

FL_REGISTER_KERNEL(copy_, Autograd, [](DispatchKeySet ks, const Tensor& self, const Tensor& src) {
  check_inplace(self, src);
  redispatch_no_grad(ops::copy_, ks, self, src);
  record_overwrite("torch::autograd::CopyBackwards", self, src);
  return self;
})
FL_REGISTER_KERNEL(fill_, Autograd, [](DispatchKeySet ks, const Tensor& self, Scalar v) {
  check_inplace(self, nullptr);
  redispatch_no_grad(ops::fill_, ks, self, v);
  record_overwrite("FillBackward2", self, nullptr);
  return self;
})
FL_REGISTER_KERNEL(fill_tensor_, Autograd, [](DispatchKeySet ks, const Tensor& self, const Tensor& v) {
  check_inplace(self, v);
  redispatch_no_grad(ops::fill_tensor_, ks, self, v);
  record_overwrite("FillBackward3", self, v);  // v's gradient is the sum of self's
  return self;
})
FL_REGISTER_KERNEL(zero_, Autograd, [](DispatchKeySet ks, const Tensor& self) {
  check_inplace(self, nullptr);
  redispatch_no_grad(ops::zero_, ks, self);
  record_overwrite("ZeroBackward0", self, nullptr);
  return self;
})

FL_REGISTER_KERNEL(resize_, Autograd, [](DispatchKeySet, const Tensor&, const IntList&) -> Tensor {
  throw Error("cannot resize variables that require grad");
})
FL_REGISTER_KERNEL(set_, Autograd, [](DispatchKeySet ks, const Tensor& self, const Tensor& source, int64_t offset,
                                      const IntList& sizes, const IntList& strides) {
  check_inplace(self, nullptr);
  return redispatch_no_grad(ops::set_, ks, self, source, offset, sizes, strides);
})

}  // namespace fl::autograd
