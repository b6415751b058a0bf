// Activation functions with parameters (torch.nn.functional), each declared once in the list
// below, which makes two ops per row, named as the row (a recorded program reads `gelu(x, ...)`):
// `name` runs the forward expression, `name_backward` the gradient.
// Columns: name, forward over `x` and the parameters `a`, `b`, `c` (opmath values), then g * f'(x)
// and g * f''(x) over the incoming gradient `g`, `x` and the parameters (the second derivative
// makes the backward differentiable once more: double backward). relu6, selu and celu are parameterizations
// of hardtanh and elu (Python side); glu, prelu and rrelu are Python composites. Where PyTorch's
// kernels differ from the textbook formula (hardswish's gradient at x == 3, hardsigmoid's float
// constant 1/6), the list follows PyTorch's vectorized CPU kernels.
#pragma once
#include "../kernels/vec_math.h"
#include <cmath>
#include <optional>
#include <string>

#include "../core/dispatch.h"

#define FL_ACTIVATIONS(X)                                                                                      \
  X(relu, x < 0 ? T(0) : x, x > 0 ? g : T(0), T(0))                                                            \
  X(hardtanh, x < a ? a : (x > b ? b : x), (x > a && x < b) ? g : T(0), T(0))                                  \
  X(leaky_relu, x > 0 ? x : x * a, x > 0 ? g : g * a, T(0))                                                    \
  X(elu, x > 0 ? x * b : std::expm1(x * c) * a * b, x > 0 ? g * b : g * c * a * b * std::exp(x * c),          \
    x > 0 ? T(0) : g * c * c * a * b * std::exp(x * c))                                                        \
  X(gelu, x * T(0.5) * vmath::verfc(-x * T(M_SQRT1_2)), g * gelu_grad(x),                                  \
    g * std::exp(T(-0.5) * x * x) * T(0.3989422804014327) * (T(2) - x * x))                                    \
  X(gelu_tanh, T(0.5) * x * (T(1) + vmath::vtanh(T(0.7978845608028654) * (x + T(0.044715) * x * x * x))),         \
    g * gelu_tanh_grad(x), g * gelu_tanh_grad2(x))                                                             \
  X(silu, x / (T(1) + vmath::vexp(-x)), g * silu_grad(x), g * silu_grad2(x))                                      \
  X(mish, x * std::tanh(std::log1p(std::exp(x))), g * mish_grad(x), g * mish_grad2(x))                         \
  X(hardswish, x < T(-3) ? T(0) : (x <= T(3) ? x * (x + T(3)) / T(6) : x),                                     \
    x < T(-3) ? T(0) : (x < T(3) ? g * (x / T(3) + T(0.5)) : g), (x > T(-3) && x < T(3)) ? g / T(3) : T(0))   \
  X(hardsigmoid, x <= T(-3) ? T(0) : (x >= T(3) ? T(1) : x / T(6) + T(0.5)),                                   \
    (x > T(-3) && x < T(3)) ? g * T(1.0f / 6.0f) : T(0), T(0))                                                 \
  X(hardshrink, (x >= -a && x <= a) ? T(0) : x, (x >= -a && x <= a) ? T(0) : g, T(0))                         \
  X(softshrink, x > a ? x - a : (x < -a ? x + a : x * T(0)), (x >= -a && x <= a) ? T(0) : g, T(0))            \
  X(softplus, x * a > b ? x : std::log1p(std::exp(x * a)) / a, x * a > b ? g : g * softplus_grad(x * a),      \
    x * a > b ? T(0) : g * a * softplus_grad(x * a) * (T(1) - softplus_grad(x * a)))                          \
  X(softsign, x / (T(1) + std::abs(x)), g / ((T(1) + std::abs(x)) * (T(1) + std::abs(x))),                     \
    T(-2) * g * sign_of(x) / ((T(1) + std::abs(x)) * (T(1) + std::abs(x)) * (T(1) + std::abs(x))))             \
  X(tanhshrink, x - std::tanh(x), g * std::tanh(x) * std::tanh(x),                                             \
    T(2) * g * std::tanh(x) * (T(1) - std::tanh(x) * std::tanh(x)))                                            \
  X(threshold, x <= a ? b : x, x <= a ? T(0) : g, T(0))                                                        \
  X(logsigmoid, std::min(x, T(0)) - std::log1p(std::exp(-std::abs(x))), g / (T(1) + std::exp(x)),              \
    -g / ((T(1) + std::exp(x)) * (T(1) + std::exp(-x))))

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
