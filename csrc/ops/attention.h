// Fused scaled dot-product attention (flash-attention style, CPU): the attention matrix is never
// materialized beyond one (query block x key block) tile per thread.
#pragma once
#include <tuple>

#include "../core/dispatch.h"
#include "random.h"

// (query (..., Hq, L, E), key (..., Hk, S, E), value (..., Hk, S, Ev), attn_mask? (bool: True takes part,
// float: added; broadcastable to (..., Hq, L, S)), dropout_p, is_causal, scale (NaN: 1/sqrt(E)),
// enable_gqa, generator?) -> (output (..., Hq, L, Ev), logsumexp (float32/64, one per query row),
// the dropout (seed, offset) as an int64 tensor of 2).
FL_DECLARE_OP(scaled_dot_product_attention, std::tuple<::fl::Tensor, ::fl::Tensor, ::fl::Tensor>(
    const ::fl::Tensor&, const ::fl::Tensor&, const ::fl::Tensor&, const ::fl::Tensor&, double, bool, double, bool,
    ::fl::Generator*))
// (grad_out, query, key, value, attn_mask?, output, logsumexp, seed_offset, dropout_p, is_causal, scale,
// enable_gqa, mask_grad) -> (grad_query, grad_key, grad_value, grad_mask), each with the broadcast batch
// dims; grad_mask (dense (..., Hq, L, S): the one case that materializes the attention matrix) only
// when mask_grad, for a float mask.
FL_DECLARE_OP(scaled_dot_product_attention_backward, std::tuple<::fl::Tensor, ::fl::Tensor, ::fl::Tensor, ::fl::Tensor>(
    const ::fl::Tensor&, const ::fl::Tensor&, const ::fl::Tensor&, const ::fl::Tensor&, const ::fl::Tensor&,
    const ::fl::Tensor&, const ::fl::Tensor&, const ::fl::Tensor&, double, bool, double, bool, bool))
// (seed_offset, dropout_p, sizes, dtype): the dropout factors the attention kernels apply (0 or 1 / (1 - dropout_p))
// for the (seed, offset) of one call, materialized as a contiguous tensor of `sizes` (the broadcast (..., Hq, L, S)
// of the attention matrix): the differentiable backward (create_graph) replays exactly the forward's mask with it.
FL_DECLARE_OP(sdpa_dropout_factors, ::fl::Tensor(const ::fl::Tensor&, double, const ::fl::IntList&, ::fl::ScalarType))
