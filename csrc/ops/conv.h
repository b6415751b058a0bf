// Convolution (conv1d/2d/3d and their transposes) and im2col/col2im (F.unfold / F.fold).
//
// Note [Convolution geometry]
// Every convolution is computed as a 3-d one: 1-d and 2-d inputs get leading spatial dims of size
// 1 (kernel 1, stride 1, padding 0), which changes no index and costs nothing. A transposed
// convolution is the adjoint of the ordinary convolution whose input has the transposed output's
// shape, with the same weight: its forward is that convolution's backward-data, its backward-data
// is that convolution's forward, so one set of kernels (forward, backward-data, backward-weight)
// serves both.
//
// The kernels (conv_kernels.cpp) are im2col + GEMM per sample, group and chunk of output rows
// (a chunk's columns stay in L2 between im2col and the GEMM), run in parallel over the batch with
// single-threaded GEMMs, or one sample at a time with threaded GEMMs when the batch is smaller
// than the thread count. Every product is arranged tall-and-skinny (output positions or weight
// rows as the long dimension, channels as the short one), the orientation OpenBLAS runs fastest:
// forward computes y^T from channels-last columns, backward-weight accumulates gw^T. Depthwise
// convolutions (one input channel per group) take direct loops instead of one-row GEMMs. The float32
// forward of a stride-1 1-d/2-d convolution skips im2col: its GEMM reads the zero-padded input rows in
// place, one row per (channel, kernel tap), over the padded width (see forward_rows).
#pragma once
#include <string>
#include <tuple>

#include "../core/dispatch.h"
#include "activation.h"

// convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
// `input` is batched (N, C, *spatial) with 1 to 3 spatial dims; `bias` may be undefined. `padding`
// holds one value per spatial dim, or 2 per dim (all the low sides, then all the high sides) for
// the asymmetric padding of padding='same' with even kernels (not transposed).
FL_DECLARE_OP(convolution,
              ::fl::Tensor(const ::fl::Tensor&, const ::fl::Tensor&, const ::fl::Tensor&, const ::fl::IntList&,
                           const ::fl::IntList&, const ::fl::IntList&, bool, const ::fl::IntList&, int64_t))
// (grad_input, grad_weight, grad_bias) of convolution; each computed only when its mask bit is set.
FL_DECLARE_OP(convolution_backward,
              std::tuple<::fl::Tensor, ::fl::Tensor, ::fl::Tensor>(const ::fl::Tensor&, const ::fl::Tensor&,
                                                                   const ::fl::Tensor&, const ::fl::IntList&,
                                                                   const ::fl::IntList&, const ::fl::IntList&, bool,
                                                                   const ::fl::IntList&, int64_t, bool, bool, bool))
// _conv2d_bias_act(input, weight, bias, stride, padding, dilation, groups, activation) =
// activation(conv2d(input, weight, bias)) as one op, the activation ("none", "relu", "gelu", "gelu_tanh",
// "silu") applied as float32 output is stored, in cache: what graph mode calls for a convolution followed by
// its activation. `input` is batched (N, C, H, W); padding as convolution's. Differentiable (the unfused
// pair's gradients).
FL_DECLARE_OP(_conv2d_bias_act,
              ::fl::Tensor(const ::fl::Tensor&, const ::fl::Tensor&, const ::fl::Tensor&, const ::fl::IntList&,
                           const ::fl::IntList&, const ::fl::IntList&, int64_t, const std::string&))
namespace fl {
// _conv2d_bias_act's own checks (a 4-D input, a known activation): the activation, nullopt for "none".
std::optional<Activation> conv2d_bias_act_kind(const Tensor& input, const std::string& activation);
}  // namespace fl
// im2col(input (N, C, H, W), kernel_size, dilation, padding, stride) -> (N, C*kH*kW, L): F.unfold.
FL_DECLARE_OP(im2col, ::fl::Tensor(const ::fl::Tensor&, const ::fl::IntList&, const ::fl::IntList&,
                                   const ::fl::IntList&, const ::fl::IntList&))
// col2im(input (N, C*kH*kW, L), output_size, kernel_size, dilation, padding, stride) -> (N, C, H, W):
// F.fold, the adjoint of im2col (overlapping patches add up).
FL_DECLARE_OP(col2im, ::fl::Tensor(const ::fl::Tensor&, const ::fl::IntList&, const ::fl::IntList&,
                                   const ::fl::IntList&, const ::fl::IntList&, const ::fl::IntList&))
