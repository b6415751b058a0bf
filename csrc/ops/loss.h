// Loss functions with C++ kernels: the fused cross_entropy / nll_loss family, the two binary cross
// entropies and CTC. The other losses of torch.nn.functional are Python composites of
// differentiable ops (flowlike/nn/_functional_loss.py). Kernels: loss_nll.cpp, loss_binary.cpp,
// loss_ctc.cpp; autograd: autograd/loss_autograd.cpp; bindings: python/bind_loss.cpp.
//
// Note [Class-dim geometry]
// nll_loss and cross_entropy take input (C), (N, C) or (N, C, d1, ..., dk) and a target of class
// indices shaped like the input without its class dim. Both view the input as (N, C, S) with
// S = d1 * ... * dk and the target as (N, S), so one kernel covers every rank: for S == 1 a row of C
// classes is contiguous; for S > 1 the kernel walks a C x S slab with the S positions innermost.
#pragma once
#include "../kernels/vec_math.h"
#include <algorithm>
#include <cmath>
#include <cstring>
#include <tuple>

#include "../core/dispatch.h"

namespace fl {

// PyTorch's reduction enum (ATen's Reduction.h).
enum class LossReduction : int64_t { None = 0, Mean = 1, Sum = 2 };

}  // namespace fl

// The loss kernels are built for float and double only; float16/bfloat16 inputs compute in float.
#define FL_DISPATCH_FLOAT_DOUBLE(TYPE, NAME, ...)                                           \
  switch (TYPE) {                                                                          \
    FL_DTYPE_CASE(Float32, float, __VA_ARGS__) FL_DTYPE_CASE(Float64, double, __VA_ARGS__) \
    default: ::fl::throw_unsupported_dtype(NAME, TYPE);                                    \
  }

// ---- vectorizable math for the loss kernels (csrc/kernels/vec_math.h) ----------------------------
namespace fl { namespace loss_math = vmath; }

// (self, target, weight or null, reduction, ignore_index) -> (loss, total_weight)
FL_DECLARE_OP(nll_loss, std::tuple<::fl::Tensor, ::fl::Tensor>(const ::fl::Tensor&, const ::fl::Tensor&,
                                                                const ::fl::Tensor&, int64_t, int64_t))
// (grad, self, target, weight, reduction, ignore_index, total_weight) -> grad_self
FL_DECLARE_OP(nll_loss_backward, ::fl::Tensor(const ::fl::Tensor&, const ::fl::Tensor&, const ::fl::Tensor&,
                                              const ::fl::Tensor&, int64_t, int64_t, const ::fl::Tensor&))
// cross_entropy with class indices: log_softmax over the class dim, nll_loss and label smoothing in
// one pass. (self, target, weight, reduction, ignore_index, label_smoothing) ->
// (loss, logsumexp per position (N, S), total_weight); backward recomputes softmax from the logsumexp.
FL_DECLARE_OP(cross_entropy_loss, std::tuple<::fl::Tensor, ::fl::Tensor, ::fl::Tensor>(
                                      const ::fl::Tensor&, const ::fl::Tensor&, const ::fl::Tensor&, int64_t,
                                      int64_t, double))
// (grad, self, target, weight, reduction, ignore_index, label_smoothing, lse, total_weight) -> grad_self
FL_DECLARE_OP(cross_entropy_loss_backward,
              ::fl::Tensor(const ::fl::Tensor&, const ::fl::Tensor&, const ::fl::Tensor&, const ::fl::Tensor&, int64_t,
                           int64_t, double, const ::fl::Tensor&, const ::fl::Tensor&))
// Unreduced binary cross entropy on probabilities, log clamped at -100 (weight is applied outside).
FL_DECLARE_OP(binary_cross_entropy, ::fl::Tensor(const ::fl::Tensor&, const ::fl::Tensor&))
// Unreduced binary cross entropy on logits: (self, target, pos_weight or null), computed stably.
FL_DECLARE_OP(binary_cross_entropy_with_logits,
              ::fl::Tensor(const ::fl::Tensor&, const ::fl::Tensor&, const ::fl::Tensor&))
// d/dself of the unreduced loss without pos_weight, one fused pass: (grad, self, target) -> grad_self.
FL_DECLARE_OP(binary_cross_entropy_with_logits_backward,
              ::fl::Tensor(const ::fl::Tensor&, const ::fl::Tensor&, const ::fl::Tensor&))
// CTC: (log_probs (T, N, C), targets (N, S) or concatenated, input_lengths, target_lengths, blank,
// zero_infinity) -> (neg_log_likelihood (N), log_alpha (N, T, 2 * max_target_length + 1)).
FL_DECLARE_OP(ctc_loss, std::tuple<::fl::Tensor, ::fl::Tensor>(const ::fl::Tensor&, const ::fl::Tensor&,
                                                                const ::fl::IntList&, const ::fl::IntList&, int64_t,
                                                                bool))
// (grad (N), log_probs, targets, input_lengths, target_lengths, nll, log_alpha, blank, zero_infinity)
FL_DECLARE_OP(ctc_loss_backward,
              ::fl::Tensor(const ::fl::Tensor&, const ::fl::Tensor&, const ::fl::Tensor&, const ::fl::IntList&,
                           const ::fl::IntList&, const ::fl::Tensor&, const ::fl::Tensor&, int64_t, bool))
