// Activation functions with parameters (torch.nn.functional), each declared once in activation_math.h, whose list
// makes two ops per row, named as the row (a recorded program reads `gelu(x, ...)`): `name` runs the forward
// expression, `name_backward` the gradient.
#pragma once
#include <optional>
#include <string>

#include "../core/dispatch.h"
#include "activation_math.h"

namespace fl {

enum class Activation : int8_t {
#define FL_X(name, ...) name,
  FL_ACTIVATIONS(FL_X)
#undef FL_X
  NumActivations
};
const char* activation_name(Activation k);
// The kind with this index (ValueError when there is none: a bad index from Python).
Activation activation_kind(int64_t index);

using ActivationSig = Tensor(const Tensor&, double, double, double, const Tensor&);
using ActivationBackwardSig = Tensor(const Tensor&, const Tensor&, double, double, double, int64_t);
using ActivationOp = Op<ActivationSig>;
using ActivationBackwardOp = Op<ActivationBackwardSig>;

}  // namespace fl

// name(input, a, b, c, out): out is null (new tensor) or input itself (the in-place form).
// name_backward(grad_output, input, a, b, c, order) -> grad_output * f'(input) (order 1) or * f''(input) (order 2).
#define FL_X(name, ...)                   \
  FL_DECLARE_OP(name, ::fl::ActivationSig) \
  FL_DECLARE_OP(name##_backward, ::fl::ActivationBackwardSig)
FL_ACTIVATIONS(FL_X)
#undef FL_X

namespace fl {
// The activation of a fused product's epilogue (_conv2d_bias_act, _addmm_activation): "none" (nullopt),
// "relu", "gelu", "gelu_tanh" or "silu", the parameterless kinds; ValueError naming `op` otherwise.
std::optional<Activation> epilogue_activation(const std::string& name, const char* op);
// The activation of kind *static_cast<const Activation*>(kind) in place on n contiguous float32 values
// with the op's own dense kernel, so a fused product's values are the op's bit for bit: the function
// of a GEMM Epilogue (blas.h) whose context is the kind.
void activation_inplace_f32(float* x, int64_t n, const void* kind);

// The ops of an activation kind.
const ActivationOp& activation_op(Activation k);
const ActivationBackwardOp& activation_backward_op(Activation k);
}  // namespace fl
