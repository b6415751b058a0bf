// The autograd kernels of tensor_ops.yaml's geometry writes, written by hand (the other ops' are generated):
// resize_ of a tensor that requires grad is an error, and set_ only checks the write.
#include "../ops/tensor_ops.h"
#include "autograd.h"

namespace fl::autograd {

FL_REGISTER_KERNEL(resize_, Autograd, [](DispatchKeySet, const Tensor&, const IntList&) -> Tensor {
  throw Error("cannot resize variables that require grad");
})
FL_REGISTER_KERNEL(set_, Autograd, [](DispatchKeySet ks, const Tensor& self, const Tensor& source, int64_t offset,
                                      const IntList& sizes, const IntList& strides) {
  check_inplace(self, nullptr);
  return redispatch_no_grad(ops::set_, ks, self, source, offset, sizes, strides);
})

}  // namespace fl::autograd
