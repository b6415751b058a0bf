// Normalization primitives: one fused row kernel for layer_norm and rms_norm, one per-channel kernel
// for batch_norm (group_norm and instance_norm are Python composites over them and the reductions).
#pragma once
#include <tuple>

#include "../core/dispatch.h"

// (input, normalized_shape, weight?, bias?, eps, rms) -> (output, mean, rstd). mean and rstd hold
// one value per normalized row (float32 for 16-bit inputs); rms=true skips the centering (mean is 0).
FL_DECLARE_OP(native_layer_norm, std::tuple<::fl::Tensor, ::fl::Tensor, ::fl::Tensor>(
    const ::fl::Tensor&, const ::fl::IntList&, const ::fl::Tensor&, const ::fl::Tensor&, double, bool))
// (grad_out, input, mean, rstd, weight?, normalized_shape, rms, need_weight_and_bias_grads)
//   -> (grad_input, grad_weight, grad_bias); the last two are null when not asked for.
FL_DECLARE_OP(native_layer_norm_backward, std::tuple<::fl::Tensor, ::fl::Tensor, ::fl::Tensor>(
    const ::fl::Tensor&, const ::fl::Tensor&, const ::fl::Tensor&, const ::fl::Tensor&, const ::fl::Tensor&,
    const ::fl::IntList&, bool, bool))
// (input (N, C, *), weight?, bias?, running_mean?, running_var?, training, momentum, eps)
//   -> (output, save_mean, save_invstd), the statistics per channel (float32 for 16-bit inputs).
// Training normalizes with the batch statistics and updates the running ones in place (variance
// unbiased); evaluation normalizes with the running ones, which save_mean/save_invstd then hold.
FL_DECLARE_OP(native_batch_norm, std::tuple<::fl::Tensor, ::fl::Tensor, ::fl::Tensor>(
    const ::fl::Tensor&, const ::fl::Tensor&, const ::fl::Tensor&, const ::fl::Tensor&, const ::fl::Tensor&, bool,
    double, double))
// (grad_out, input, weight?, save_mean, save_invstd, training, need_weight_and_bias_grads)
//   -> (grad_input, grad_weight, grad_bias); the last two are null when not asked for.
FL_DECLARE_OP(native_batch_norm_backward, std::tuple<::fl::Tensor, ::fl::Tensor, ::fl::Tensor>(
    const ::fl::Tensor&, const ::fl::Tensor&, const ::fl::Tensor&, const ::fl::Tensor&, const ::fl::Tensor&, bool,
    bool))
