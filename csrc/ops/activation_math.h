// The activation list (torch.nn.functional activations with parameters), each row declared once: only macros
// and scalar templates, so that the eager kernels (activation.cpp) and the fused kernels generated at run time
// (codegen/cpp.py) expand the same expressions.
// Columns: name, forward over `x` and the parameters `a`, `b`, `c` (opmath values), then g * f'(x)
// and g * f''(x) over the incoming gradient `g`, `x` and the parameters (the second derivative
// makes the backward differentiable once more: double backward). relu6, selu and celu are parameterizations
// of hardtanh and elu (Python side); glu, prelu and rrelu are Python composites. Where PyTorch's
// kernels differ from the textbook formula (hardswish's gradient at x == 3, hardsigmoid's float
// constant 1/6), the list follows PyTorch's vectorized CPU kernels.
#pragma once
#include <algorithm>
#include <cmath>

#include "../kernels/vec_math.h"

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

// Derivatives the list uses.
template <typename T> inline T sigmoid_of(T x) { return T(1) / (T(1) + vmath::vexp(-x)); }
template <typename T> inline T gelu_grad(T x) {
  return T(0.5) * vmath::verfc(-x * T(M_SQRT1_2)) + x * vmath::vexp(T(-0.5) * x * x) * T(0.3989422804014327);
}
template <typename T> inline T gelu_tanh_grad(T x) {
  const T k = T(0.7978845608028654), c = T(0.044715);
  const T t = vmath::vtanh(k * (x + c * x * x * x));
  return T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * k * (T(1) + T(3) * c * x * x);
}
template <typename T> inline T silu_grad(T x) { const T s = sigmoid_of(x); return s * (T(1) + x * (T(1) - s)); }
template <typename T> inline T mish_grad(T x) {
  const T t = std::tanh(std::log1p(std::exp(x)));
  return t + x * sigmoid_of(x) * (T(1) - t * t);
}
template <typename T> inline T softplus_grad(T bx) { const T z = std::exp(bx); return z / (z + T(1)); }
template <typename T> inline T sign_of(T x) { return x > 0 ? T(1) : (x < 0 ? T(-1) : T(0)); }
// Second derivatives (double backward).
template <typename T> inline T gelu_tanh_grad2(T x) {
  const T k = T(0.7978845608028654), c = T(0.044715);
  const T t = vmath::vtanh(k * (x + c * x * x * x)), du = k * (T(1) + T(3) * c * x * x);
  return (T(1) - t * t) * (du - x * t * du * du + T(3) * k * c * x * x);
}
template <typename T> inline T silu_grad2(T x) { const T s = sigmoid_of(x); return s * (T(1) - s) * (T(2) + x * (T(1) - T(2) * s)); }
template <typename T> inline T mish_grad2(T x) {
  const T t = std::tanh(std::log1p(std::exp(x))), s = sigmoid_of(x);
  return s * (T(1) - t * t) * (T(2) + x * (T(1) - s) - T(2) * x * t * s);
}

}  // namespace fl
