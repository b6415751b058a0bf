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

#include "fl_generated/conv.h"  // the ops, declared in conv.yaml

namespace fl {
// _conv2d_bias_act's own checks (a 4-D input, a known activation): the activation, nullopt for "none".
std::optional<Activation> conv2d_bias_act_kind(const Tensor& input, const std::string& activation);
}  // namespace fl
