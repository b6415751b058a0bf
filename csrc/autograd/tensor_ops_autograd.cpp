// set_'s autograd kernel, written by hand (tensor_ops.yaml's other ops' are generated): it only checks the write.
// (Its geometry is replaced, so a view's rebase onto its base, as the generated in-place kernels do, cannot apply.)
#include "../ops/tensor_ops.h"
#include "autograd.h"

namespace fl::autograd {

FL_REGISTER_KERNEL(set_, Autograd, [](DispatchKeySet ks, const Tensor& self, const Tensor& source, int64_t offset,
                                      const IntList& sizes, const IntList& strides) {
  check_inplace(self, nullptr);
  return redispatch_no_grad(ops::set_, ks, self, source, offset, sizes, strides);
})

}  // namespace fl::autograd
