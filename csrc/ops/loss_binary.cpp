// CPU kernels of the two unreduced binary cross entropies (weights and the reduction are applied
// by the Python composites around them).
#include <atomic>
#include <cmath>

#include "../kernels/loops.h"
#include "loss.h"
#include "pointwise.h"

namespace fl {
namespace {

// PyTorch's CPU formula: the logs are clamped at -100 so that p = 0 or 1 gives a finite loss.
template <typename T>
void bce_kernel(const ElementwiseIter& it, std::atomic<int>& bad) {
  using M = opmath_t<T>;
  it.for_each([&](char** p, const int64_t* s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      const M x = static_cast<M>(*reinterpret_cast<const T*>(p[1] + i * s[1]));
      const M y = static_cast<M>(*reinterpret_cast<const T*>(p[2] + i * s[2]));
      if (!(x >= 0 && x <= 1)) { bad.store(1); return; }
      if (!(y >= 0 && y <= 1)) { bad.store(2); return; }
      *reinterpret_cast<T*>(p[0] + i * s[0]) =
          static_cast<T>((y - M(1)) * std::max(M(std::log1p(-x)), M(-100)) - y * std::max(M(std::log(x)), M(-100)));
    }
  });
}

}  // namespace

Tensor binary_cross_entropy_cpu(const Tensor& self, const Tensor& target) {
  FL_CHECK(is_floating(self->dtype), NotImplementedError, "\"binary_cross_entropy\" not implemented for '",
           c10_type_name(self->dtype), "'");
  FL_CHECK(target->dtype == self->dtype, Error, "Found dtype ", c10_type_name(target->dtype), " but expected ",
           c10_type_name(self->dtype));
  FL_CHECK(target->sizes == self->sizes, ValueError, "Using a target size (", shape_str(target->sizes),
           ") that is different to the input size (", shape_str(self->sizes), ") is deprecated. Please ensure they have the same size.");
  Tensor out = empty_like(self, self->dtype);
  ElementwiseIter it({out.get(), self.get(), target.get()}, "binary_cross_entropy");
  std::atomic<int> bad{0};
  FL_DISPATCH_FLOATING(self->dtype, "binary_cross_entropy", bce_kernel<scalar_t>(it, bad));
  FL_CHECK(bad.load() != 1, Error, "all elements of input should be between 0 and 1");
  FL_CHECK(bad.load() != 2, Error, "all elements of target should be between 0 and 1");
  return out;
}

namespace {

// loss = (1 - y) * x + (1 + (pw - 1) * y) * softplus(-x), softplus(-x) = max(-x, 0) + log1p(exp(-|x|)).
template <typename M>
inline M bce_logits_value(M x, M y, M lw) {
  return (M(1) - y) * x + lw * (std::max(-x, M(0)) + std::log1p(std::exp(-std::abs(x))));
}

// The float32 contiguous loop, vectorized (pw may be null).
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) void bce_logits_f32(float* out, const float* x,
                                                                                  const float* y, const float* pw,
                                                                                  int64_t n) {
  using loss_math::exp_f32;
  using loss_math::log1p_unit_f32;
  for (int64_t i = 0; i < n; ++i) {
    const float lw = pw ? 1.0f + (pw[i] - 1.0f) * y[i] : 1.0f;
    const float sp = std::max(-x[i], 0.0f) + log1p_unit_f32(exp_f32(-std::abs(x[i])));
    out[i] = (1.0f - y[i]) * x[i] + lw * sp;
  }
}

template <typename T>
void bce_logits_kernel(const ElementwiseIter& it, bool has_pw) {
  using M = opmath_t<T>;
  it.for_each([&](char** p, const int64_t* s, int64_t n) {
    if constexpr (std::is_same_v<T, float>) {
      if (s[0] == 4 && s[1] == 4 && s[2] == 4 && (!has_pw || s[3] == 4)) {
        bce_logits_f32(reinterpret_cast<float*>(p[0]), reinterpret_cast<const float*>(p[1]),
                       reinterpret_cast<const float*>(p[2]), has_pw ? reinterpret_cast<const float*>(p[3]) : nullptr, n);
        return;
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      const M x = static_cast<M>(*reinterpret_cast<const T*>(p[1] + i * s[1]));
      const M y = static_cast<M>(*reinterpret_cast<const T*>(p[2] + i * s[2]));
      const M lw = has_pw ? M(1) + (static_cast<M>(*reinterpret_cast<const T*>(p[3] + i * s[3])) - M(1)) * y : M(1);
      *reinterpret_cast<T*>(p[0] + i * s[0]) = static_cast<T>(bce_logits_value(x, y, lw));
    }
  });
}

// d loss / d x = g * (sigmoid(x) - y) in one pass (no pos_weight).
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) void bce_logits_grad_f32(float* out, const float* g,
                                                                                       int64_t gs, const float* x,
                                                                                       const float* y, int64_t n) {
  using loss_math::exp_f32;
  for (int64_t i = 0; i < n; ++i) out[i] = g[i * gs] * (1.0f / (1.0f + exp_f32(-x[i])) - y[i]);
}

template <typename T>
void bce_logits_grad_kernel(const ElementwiseIter& it) {
  using M = opmath_t<T>;
  it.for_each([&](char** p, const int64_t* s, int64_t n) {
    if constexpr (std::is_same_v<T, float>) {
      if (s[0] == 4 && (s[1] == 4 || s[1] == 0) && s[2] == 4 && s[3] == 4) {
        bce_logits_grad_f32(reinterpret_cast<float*>(p[0]), reinterpret_cast<const float*>(p[1]), s[1] / 4,
                            reinterpret_cast<const float*>(p[2]), reinterpret_cast<const float*>(p[3]), n);
        return;
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      const M g = static_cast<M>(*reinterpret_cast<const T*>(p[1] + i * s[1]));
      const M x = static_cast<M>(*reinterpret_cast<const T*>(p[2] + i * s[2]));
      const M y = static_cast<M>(*reinterpret_cast<const T*>(p[3] + i * s[3]));
      *reinterpret_cast<T*>(p[0] + i * s[0]) = static_cast<T>(g * (M(1) / (M(1) + std::exp(-x)) - y));
    }
  });
}

}  // namespace

// grad wrt self of the unreduced loss without pos_weight, computed in target's dtype and returned
// in self's (the backward formula uses it when the gradient itself needs no graph).
Tensor binary_cross_entropy_with_logits_backward_cpu(const Tensor& grad, const Tensor& self, const Tensor& target) {
  const ScalarType dt = target->dtype;
  Tensor g = to_dtype(grad, dt), x = to_dtype(self, dt);
  Tensor out = empty_like(x, dt);
  ElementwiseIter it({out.get(), g.get(), x.get(), target.get()}, "binary_cross_entropy_with_logits_backward");
  FL_DISPATCH_FLOATING(dt, "binary_cross_entropy_with_logits_backward", bce_logits_grad_kernel<scalar_t>(it));
  return to_dtype(out, self->dtype);
}

Tensor binary_cross_entropy_with_logits_cpu(const Tensor& self, const Tensor& target, const Tensor& pos_weight) {
  FL_CHECK(is_floating(self->dtype), NotImplementedError, "\"log_sigmoid_cpu\" not implemented for '",
           c10_type_name(self->dtype), "'");
  FL_CHECK(target->sizes == self->sizes, ValueError, "Target size (", shape_str(target->sizes),
           ") must be the same as input size (", shape_str(self->sizes), ")");
  // PyTorch forms the loss in place in `1 - target`: the result has target's dtype.
  const ScalarType dt = target->dtype;
  FL_CHECK(is_floating(dt), Error, "result type ", c10_type_name(result_type(self, target)),
           " can't be cast to the desired output type ", c10_type_name(dt));
  if (pos_weight) {
    IntList b = broadcast_shapes(self->sizes, pos_weight->sizes, "binary_cross_entropy_with_logits");
    FL_CHECK(b == self->sizes, Error, "output with shape ", shape_str(self->sizes), " doesn't match the broadcast shape ",
             shape_str(b));
  }
  Tensor x = to_dtype(self, dt), y = to_dtype(target, dt), pw = pos_weight ? to_dtype(pos_weight, dt) : nullptr;
  Tensor out = empty_like(x, dt);
  if (pw) {
    ElementwiseIter it({out.get(), x.get(), y.get(), pw.get()}, "binary_cross_entropy_with_logits");
    FL_DISPATCH_FLOATING(dt, "binary_cross_entropy_with_logits", bce_logits_kernel<scalar_t>(it, true));
  } else {
    ElementwiseIter it({out.get(), x.get(), y.get()}, "binary_cross_entropy_with_logits");
    FL_DISPATCH_FLOATING(dt, "binary_cross_entropy_with_logits", bce_logits_kernel<scalar_t>(it, false));
  }
  return out;
}

}  // namespace fl
