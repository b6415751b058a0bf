// Autograd kernels of the pooling ops. Max pooling's gradient scatters to the saved indices
// (plane_scatter, whose own gradient gathers at them); average pooling's backward is linear in
// the gradient, its derivative the forward pooling again: both are differentiable twice and more.
#include "../ops/index.h"
#include "../ops/pool.h"
#include "../ops/views.h"
#include "autograd.h"

namespace fl::autograd {
namespace {

TensorPair record_max(const char* name, const TensorPair& r, const Tensor& input, size_t nd) {
  IntList plane(input->sizes.end() - nd, input->sizes.end());
  record_saved(
      name, std::get<0>(r), {gradient_edge(input)}, {std::get<1>(r)}, false,
      [plane](const Tensor& g, const TensorList& s) { return TensorList{ops::plane_scatter(g, s[0], plane, true)}; });
  return r;
}

TensorPair max_pool_autograd(DispatchKeySet ks, const Tensor& input, const IntList& kernel, const IntList& stride,
                             const IntList& padding, const IntList& dilation, bool ceil_mode) {
  TensorPair r = redispatch_no_grad(ops::max_pool, ks, input, kernel, stride, padding, dilation, ceil_mode);
  return record_max("MaxPoolWithIndicesBackward0", r, input, kernel.size());
}

TensorPair adaptive_max_pool_autograd(DispatchKeySet ks, const Tensor& input, const IntList& output_size) {
  TensorPair r = redispatch_no_grad(ops::adaptive_max_pool, ks, input, output_size);
  return record_max("AdaptiveMaxPoolBackward0", r, input, output_size.size());
}

Tensor plane_scatter_autograd(DispatchKeySet ks, const Tensor& values, const Tensor& indices,
                              const IntList& plane_sizes, bool accumulate) {
  Tensor r = redispatch_no_grad(ops::plane_scatter, ks, values, indices, plane_sizes, accumulate);
  const size_t nd = plane_sizes.size();
  IntList vsizes = values->sizes;
  return record_saved("PlaneScatterBackward0", r, {gradient_edge(values)}, {indices}, false,
                      [vsizes, nd](const Tensor& g, const TensorList& s) {
                        // each value's gradient, gathered back from its plane position
                        IntList flat(g->sizes.begin(), g->sizes.end() - nd);
                        flat.push_back(-1);
                        Tensor picked = ops::gather(ops::reshape(g, flat), -1, ops::reshape(s[0], flat));
                        return TensorList{ops::reshape(picked, vsizes)};
                      });
}

Tensor avg_pool_autograd(DispatchKeySet ks, const Tensor& input, const IntList& kernel, const IntList& stride,
                         const IntList& padding, bool ceil_mode, bool include_pad, int64_t divisor) {
  Tensor r = redispatch_no_grad(ops::avg_pool, ks, input, kernel, stride, padding, ceil_mode, include_pad, divisor);
  return record_saved(
      "AvgPoolBackward0", r, {gradient_edge(input)}, {input}, false, [=](const Tensor& g, const TensorList& s) {
        return TensorList{ops::avg_pool_backward(g, s[0], kernel, stride, padding, ceil_mode, include_pad, divisor)};
      });
}

Tensor avg_pool_backward_autograd(DispatchKeySet ks, const Tensor& grad, const Tensor& input, const IntList& kernel,
                                  const IntList& stride, const IntList& padding, bool ceil_mode, bool include_pad,
                                  int64_t divisor) {
  Tensor r = redispatch_no_grad(ops::avg_pool_backward, ks, grad, input, kernel, stride, padding, ceil_mode,
                                include_pad, divisor);
  return record_lambda("AvgPoolBackwardBackward0", r, {gradient_edge(grad), Edge{}}, [=](const Tensor& gg) {
    return TensorList{ops::avg_pool(gg, kernel, stride, padding, ceil_mode, include_pad, divisor), nullptr};
  });
}

Tensor adaptive_avg_pool_autograd(DispatchKeySet ks, const Tensor& input, const IntList& output_size) {
  Tensor r = redispatch_no_grad(ops::adaptive_avg_pool, ks, input, output_size);
  return record_saved("AdaptiveAvgPoolBackward0", r, {gradient_edge(input)}, {input}, false,
                      [output_size](const Tensor& g, const TensorList& s) {
                        return TensorList{ops::adaptive_avg_pool_backward(g, s[0], output_size)};
                      });
}

Tensor adaptive_avg_pool_backward_autograd(DispatchKeySet ks, const Tensor& grad, const Tensor& input,
                                           const IntList& output_size) {
  Tensor r = redispatch_no_grad(ops::adaptive_avg_pool_backward, ks, grad, input, output_size);
  return record_lambda(
      "AdaptiveAvgPoolBackwardBackward0", r, {gradient_edge(grad), Edge{}},
      [output_size](const Tensor& gg) { return TensorList{ops::adaptive_avg_pool(gg, output_size), nullptr}; });
}

}  // namespace

FL_REGISTER_KERNEL(max_pool, Autograd, max_pool_autograd)
FL_REGISTER_KERNEL(adaptive_max_pool, Autograd, adaptive_max_pool_autograd)
FL_REGISTER_KERNEL(plane_scatter, Autograd, plane_scatter_autograd)
FL_REGISTER_KERNEL(avg_pool, Autograd, avg_pool_autograd)
FL_REGISTER_KERNEL(avg_pool_backward, Autograd, avg_pool_backward_autograd)
FL_REGISTER_KERNEL(adaptive_avg_pool, Autograd, adaptive_avg_pool_autograd)
FL_REGISTER_KERNEL(adaptive_avg_pool_backward, Autograd, adaptive_avg_pool_backward_autograd)

}  // namespace fl::autograd
