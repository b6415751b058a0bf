// The backward formula of convolution and the composite of _conv2d_bias_act (conv.yaml names them).
//
// Convolution's gradients come from the convolution_backward op (no derivative of its own, as in
// PyTorch's CPU kernels). When the backward itself is recorded (create_graph=True), they are written
// as convolutions instead, so they are differentiable again: the input gradient is the transposed
// convolution (or, for a transposed one, the ordinary one), and the weight gradient a convolution
// in which the samples are the channels and the input channels the batch.
#include "../ops/conv.h"
#include "../ops/reduce.h"
#include "../ops/views.h"
#include "autograd.h"
#include "formulas.h"

namespace fl::formulas {
namespace {

// Narrows the spatial dims of t (from dim 2 on) to `sizes` where they are larger.
Tensor narrowed(Tensor t, const IntList& sizes) {
  for (size_t i = 0; i < sizes.size(); ++i)
    if (t->sizes[2 + i] != sizes[i]) t = ops::narrow(t, static_cast<int64_t>(2 + i), 0, sizes[i]);
  return t;
}

// The weight gradient of the ordinary convolution x (N, G*cig, sp) -> gout (N, Cout, osp) as a
// convolution: x as a batch of cig samples with G*N channels, gout as the weight (Cout, N, osp).
Tensor weight_grad(const Tensor& x, const Tensor& gout, const IntList& wsizes, const IntList& stride,
                   const IntList& padding, const IntList& dilation, int64_t groups) {
  const size_t nd = wsizes.size() - 2;
  const int64_t N = x->sizes[0], cig = x->sizes[1] / groups;
  IntList split{N, groups, cig}, perm{2, 1, 0}, merged{cig, groups * N}, back{1, 0};
  for (size_t i = 0; i < nd; ++i) {
    split.push_back(x->sizes[2 + i]);
    merged.push_back(x->sizes[2 + i]);
    perm.push_back(static_cast<int64_t>(3 + i));
    back.push_back(static_cast<int64_t>(2 + i));
  }
  Tensor xb = ops::reshape(ops::permute(ops::reshape(x, split), perm), merged);
  Tensor r = ops::convolution(xb, ops::transpose(gout, 0, 1), nullptr, dilation, padding, stride, false, IntList(nd, 0),
                              groups);
  return ops::permute(narrowed(r, IntList(wsizes.begin() + 2, wsizes.end())), back);
}

// The gradients of convolution as differentiable convolutions (create_graph=True).
TensorList differentiable_grads(const Tensor& g, const Tensor& input, const Tensor& weight, const IntList& stride,
                             const IntList& padding, const IntList& dilation, bool transposed,
                                const IntList& output_padding, int64_t groups, bool gi, bool gw, bool gb) {
  const size_t nd = stride.size();
  TensorList grads(3);
  IntList in_sp(input->sizes.begin() + 2, input->sizes.end());
  if (gi) {
    if (!transposed) {
      // output_padding restores the rows the forward's floor division dropped; with asymmetric
      // padding (low sides first) the transposed convolution pads by the low side and is narrowed
      IntList lo(padding.begin(), padding.begin() + nd), op(nd);
      for (size_t i = 0; i < nd; ++i)
        op[i] = std::max<int64_t>(0, in_sp[i] - ((g->sizes[2 + i] - 1) * stride[i] - 2 * lo[i] +
                                                 dilation[i] * (weight->sizes[2 + i] - 1) + 1));
      grads[0] = narrowed(ops::convolution(g, weight, nullptr, stride, lo, dilation, true, op, groups), in_sp);
    } else {
      grads[0] = narrowed(
          ops::convolution(g, weight, nullptr, stride, padding, dilation, false, IntList(nd, 0), groups), in_sp);
    }
  }
  if (gw)
    grads[1] = transposed ? weight_grad(g, input, weight->sizes, stride, padding, dilation, groups)
                          : weight_grad(input, g, weight->sizes, stride, padding, dilation, groups);
  if (gb) {
    IntList dims{0};
    for (size_t i = 0; i < nd; ++i) dims.push_back(static_cast<int64_t>(2 + i));
    grads[2] = ops::sum(g, dims, false, ScalarType::NumTypes);
  }
  return grads;
}

}  // namespace

// convolution (conv.yaml): the gradients the mask asks for in one convolution_backward call, or under create_graph
// as differentiable convolutions.
TensorList convolution_grads(const Tensor& g, const Tensor& input, const Tensor& weight, const IntList& stride,
                             const IntList& padding, const IntList& dilation, bool transposed,
                             const IntList& output_padding, int64_t groups, const std::array<bool, 3>& mask) {
  if (thread_state().grad_enabled)
    return differentiable_grads(g, input, weight, stride, padding, dilation, transposed, output_padding, groups,
                                mask[0], mask[1], mask[2]);
  auto [dx, dw, db] = ops::convolution_backward(g, input, weight, stride, padding, dilation, transposed,
                                                output_padding, groups, mask[0], mask[1], mask[2]);
  return TensorList{dx, dw, db};
}

// _conv2d_bias_act (conv.yaml) with a gradient to compute: the unfused pair, each op recording its own backward.
Tensor conv2d_bias_act_composite(const Tensor& input, const Tensor& weight, const Tensor& bias, const IntList& stride,
                                 const IntList& padding, const IntList& dilation, int64_t groups,
                                 const std::string& activation) {
  const std::optional<Activation> act = conv2d_bias_act_kind(input, activation);
  Tensor y = ops::convolution(input, weight, bias, stride, padding, dilation, false, {0, 0}, groups);
  return act ? activation_op(*act)(y, 0.0, 0.0, 0.0, nullptr) : y;
}

}  // namespace fl::formulas
