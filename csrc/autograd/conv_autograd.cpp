// Autograd kernels of convolution (gradients by the convolution_backward op, which has no
// derivative of its own, as in PyTorch's CPU kernels) and of im2col/col2im (each the other's
// adjoint, so they are differentiable any number of times).
#include "../ops/conv.h"
#include "autograd.h"

namespace fl::autograd {
namespace {

Tensor convolution_autograd(DispatchKeySet ks, const Tensor& input, const Tensor& weight, const Tensor& bias,
                            const IntList& stride, const IntList& padding, const IntList& dilation, bool transposed,
                            const IntList& output_padding, int64_t groups) {
  Tensor r = redispatch_no_grad(ops::convolution, ks, input, weight, bias, stride, padding, dilation, transposed,
                                output_padding, groups);
  const bool gi = requires_grad(input), gw = requires_grad(weight), gb = requires_grad(bias);
  return record_saved("ConvolutionBackward0", r, {gradient_edge(input), gradient_edge(weight), gradient_edge(bias)},
                      {input, weight}, false, [=](const Tensor& g, const TensorList& s) {
                        auto [dx, dw, db] = ops::convolution_backward(g, s[0], s[1], stride, padding, dilation,
                                                                      transposed, output_padding, groups, gi, gw, gb);
                        return TensorList{dx, dw, db};
                      });
}

Tensor im2col_autograd(DispatchKeySet ks, const Tensor& input, const IntList& kernel, const IntList& dilation,
                       const IntList& padding, const IntList& stride) {
  Tensor r = redispatch_no_grad(ops::im2col, ks, input, kernel, dilation, padding, stride);
  IntList plane{input->sizes[2], input->sizes[3]};
  return record_lambda("Im2ColBackward0", r, {gradient_edge(input)}, [=](const Tensor& g) {
    return TensorList{ops::col2im(g, plane, kernel, dilation, padding, stride)};
  });
}

Tensor col2im_autograd(DispatchKeySet ks, const Tensor& input, const IntList& output_size, const IntList& kernel,
                       const IntList& dilation, const IntList& padding, const IntList& stride) {
  Tensor r = redispatch_no_grad(ops::col2im, ks, input, output_size, kernel, dilation, padding, stride);
  return record_lambda("Col2ImBackward0", r, {gradient_edge(input)}, [=](const Tensor& g) {
    return TensorList{ops::im2col(g, kernel, dilation, padding, stride)};
  });
}

}  // namespace

FL_REGISTER_KERNEL(convolution, Autograd, convolution_autograd)
FL_REGISTER_KERNEL(im2col, Autograd, im2col_autograd)
FL_REGISTER_KERNEL(col2im, Autograd, col2im_autograd)

}  // namespace fl::autograd
