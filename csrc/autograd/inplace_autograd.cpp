// In-place ops without a derivative yet: their autograd kernels refuse instead of silently
// writing into a tensor whose history would then be wrong.
#include "../ops/index.h"
#include "../ops/random.h"
#include "autograd.h"

namespace fl::autograd {

void check_not_leaf_requiring_grad(const Tensor& self) {
  FL_CHECK(!(self->requires_grad && !self->meta().grad_fn), Error,
           "a leaf Variable that requires grad is being used in an in-place operation.");
}

void check_untracked_inplace(const char* op, const Tensor& self, const Tensor& src) {
  if (!thread_state().grad_enabled || !(self->requires_grad || (src && src->requires_grad))) return;
  check_not_leaf_requiring_grad(self);
  throw NotImplementedError(str_cat(op, ": in-place writes into tensors that take part in autograd are not supported by "
                                    "flowlike yet; use the out-of-place form, or write under flowlike.no_grad()"));
}

#define FL_REFUSE_INPLACE(opname)                                                              \
  FL_REGISTER_KERNEL(opname, Autograd, [](DispatchKeySet, const Tensor& self, auto...) -> Tensor { \
    check_untracked_inplace(#opname, self, nullptr);                                           \
    throw NotImplementedError(#opname ": in-place autograd is not supported by flowlike yet");  \
  })
FL_REFUSE_INPLACE(index_put_)
FL_REFUSE_INPLACE(masked_fill_)
FL_REFUSE_INPLACE(masked_scatter_)
FL_REFUSE_INPLACE(scatter_)
FL_REFUSE_INPLACE(scatter_add_)
FL_REFUSE_INPLACE(scatter_reduce_)
FL_REFUSE_INPLACE(index_add_)
FL_REFUSE_INPLACE(index_copy_)
FL_REFUSE_INPLACE(index_fill_)
FL_REFUSE_INPLACE(uniform_)
FL_REFUSE_INPLACE(normal_)
FL_REFUSE_INPLACE(random_)
FL_REFUSE_INPLACE(bernoulli_)

}  // namespace fl::autograd
