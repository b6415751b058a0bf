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

// ---- vectorizable math for the loss kernels -----------------------------------------------------
namespace fl::loss_math {

// Cephes' expf polynomial with the exponent scaled through the float bits, written without
// branches or libm calls so that GCC vectorizes the loops that use it. Error ~1 ulp; x below -87
// (including -inf, e.g. masked logits) gives exactly 0; NaN propagates.
inline float exp_f32(float x) {
  const float xc = std::min(std::max(x, -87.0f), 88.0f);
  const float k = xc * 1.44269504088896341f + 12582912.0f;  // round(x / ln2) through the float mantissa
  int32_t ki;
  std::memcpy(&ki, &k, 4);
  const float n = k - 12582912.0f;
  float r = xc - n * 0.693359375f;
  r = r + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r + 1.0f;
  const int32_t bits = (ki - 0x4B400000 + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, 4);
  return x < -87.0f ? 0.0f : p * scale;
}

// log1p(e) for e in [0, 1] as 2 atanh(e / (2 + e)) (a series in s^2 <= 1/9, float accurate, exact
// for tiny e): the softplus tail log1p(exp(-|x|)) without a libm call.
inline float log1p_unit_f32(float e) {
  const float s = e / (2.0f + e), s2 = s * s;
  float p = 1.0f / 15;
  p = p * s2 + 1.0f / 13;
  p = p * s2 + 1.0f / 11;
  p = p * s2 + 1.0f / 9;
  p = p * s2 + 1.0f / 7;
  p = p * s2 + 1.0f / 5;
  p = p * s2 + 1.0f / 3;
  p = p * s2 + 1.0f;
  return 2.0f * s * p;
}

template <typename T> inline T vexp(T x) { return std::exp(x); }
template <> inline float vexp<float>(float x) { return exp_f32(x); }

}  // namespace fl::loss_math

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
