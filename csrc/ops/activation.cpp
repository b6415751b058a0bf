// CPU kernels of the activation list (activation.h). Kernels exist for float32 and float64;
// float16/bfloat16 inputs are computed in float32 and rounded once at the end.
#include "activation.h"

#include <omp.h>

#include <algorithm>

#include "../kernels/loops.h"

namespace fl {
namespace {

constexpr const char* kNames[] = {
#define FL_X(name, ...) #name,
    FL_ACTIVATIONS(FL_X)
#undef FL_X
};

template <typename T>
void forward_loop(Activation k, const ElementwiseIter& it, T a, T b, T c) {
  switch (k) {
#define FL_X(name, fwd, bwd, bwd2) \
  case Activation::name: unary_loop<T, T>(it, [=](T x) { return fwd; }); break;
    FL_ACTIVATIONS(FL_X)
#undef FL_X
    default: break;
  }
}

template <typename T>
void backward_loop(Activation k, const ElementwiseIter& it, T a, T b, T c, bool second) {
  switch (k) {
#define FL_X(name, fwd, bwd, bwd2)                                                     \
  case Activation::name:                                                             \
    if (second) binary_loop<T, T>(it, [=](T g, T x) { return bwd2; });              \
    else binary_loop<T, T>(it, [=](T g, T x) { return bwd; });                      \
    break;
    FL_ACTIVATIONS(FL_X)
#undef FL_X
    default: break;
  }
}

// Dense float32 tensors (the common case) run these, compiled for AVX-512, AVX2 and the baseline and
// picked at load time; other layouts and dtypes take the generic element loops above. This file is compiled
// without floating-point contraction (CMakeLists.txt), so the main loop, its shorter-vector remainder and the
// scalar tail compute alike on every ISA: an element's value does not depend on its position, the fused GEMM
// epilogues (activation_inplace_f32 on tile rows) match the op bit for bit, and so do the generated kernels.
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) void forward_dense_f32(Activation k, float* out,
                                                                                      const float* in, int64_t n,
                                                                                      float a, float b, float c) {
  using T = float;
  switch (k) {
#define FL_X(name, fwd, bwd, bwd2) \
  case Activation::name:           \
    for (int64_t i = 0; i < n; ++i) { const T x = in[i]; out[i] = fwd; } \
    break;
    FL_ACTIVATIONS(FL_X)
#undef FL_X
    default: break;
  }
}
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) void backward_dense_f32(Activation k, float* out,
                                                                                       const float* gin,
                                                                                       const float* in, int64_t n,
                                                                                       float a, float b, float c) {
  using T = float;
  switch (k) {
#define FL_X(name, fwd, bwd, bwd2) \
  case Activation::name:           \
    for (int64_t i = 0; i < n; ++i) { const T g = gin[i], x = in[i]; out[i] = bwd; } \
    break;
    FL_ACTIVATIONS(FL_X)
#undef FL_X
    default: break;
  }
}
// Splits [0, n) into chunks over the OpenMP threads (as the element loops do).
template <typename F>
void parallel_chunks(int64_t n, F f) {
  const int64_t grain = 32768;
  const int nt = n >= 2 * grain ? omp_get_max_threads() : 1;
  if (nt <= 1 || omp_in_parallel()) { f(0, n); return; }
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int t = 0; t < nt; ++t) {
    const int64_t lo = n * t / nt, hi = n * (t + 1) / nt;
    f(lo, hi);
  }
}

void check_floating(const char* name, ScalarType t) {
  FL_CHECK(is_floating(t), NotImplementedError, "\"", name, "_cpu\" not implemented for '", c10_type_name(t), "'");
}

// The dtype the kernel runs in: float32 for the 16-bit floats.
ScalarType compute_dtype(ScalarType t) { return t == ScalarType::Float64 ? t : ScalarType::Float32; }

Tensor activation_cpu(Activation k, const Tensor& x, double a, double b, double c, const Tensor& out) {
  const char* name = kNames[static_cast<int>(k)];
  check_floating(name, x->dtype);
  const ScalarType ct = compute_dtype(x->dtype);
  Tensor xin = x->dtype == ct ? x : to_dtype(x, ct);
  Tensor result = out && out->dtype == ct ? out : empty_like(x, ct);
  if (ct == ScalarType::Float32) {
    // the dense kernel walks memory: operands that are not laid out alike and dense (a transposed matrix is)
    // are copied first, rather than run through vec_math element by element (its Note [explicit FMA])
    if (!dense_in_memory(*xin)) xin = contiguous(xin);
    Tensor dst = flat_alike(*result, *xin) ? result : empty_like(xin, ct);
    const float* in = xin->data<float>();
    float* o = dst->data<float>();
    parallel_chunks(x->numel, [&](int64_t lo, int64_t hi) {
      forward_dense_f32(k, o + lo, in + lo, hi - lo, float(a), float(b), float(c));
    });
    if (dst != result) copy_into(result, dst);
  } else {
    ElementwiseIter it({result.get(), xin.get()}, name);
    forward_loop<double>(k, it, a, b, c);
  }
  if (out) {
    if (result != out) copy_into(out, result);
    out->bump_version();
    return out;
  }
  return result->dtype == x->dtype ? result : to_dtype(result, x->dtype);
}

Tensor activation_backward_cpu(Activation k, const Tensor& g, const Tensor& x, double a, double b, double c,
                               int64_t order) {
  const char* name = kNames[static_cast<int>(k)];
  FL_CHECK(order == 1 || order == 2, ValueError, name, "_backward: order must be 1 or 2, got ", order);
  check_floating(name, x->dtype);
  FL_CHECK(g->sizes == x->sizes, Error, name, "_backward: grad_output of shape ", shape_str(g->sizes),
           " does not match input of shape ", shape_str(x->sizes));
  const ScalarType ct = compute_dtype(x->dtype);
  Tensor gin = g->dtype == ct ? g : to_dtype(g, ct), xin = x->dtype == ct ? x : to_dtype(x, ct);
  Tensor result = empty_like(x, ct);
  if (ct == ScalarType::Float32 && order == 1) {
    // as in activation_cpu: operands laid out alike and dense in memory, else dense copies
    if (!dense_in_memory(*xin)) xin = contiguous(xin);
    if (!flat_alike(*gin, *xin)) gin = contiguous(gin);
    if (!flat_alike(*gin, *xin)) xin = contiguous(xin);
    Tensor dst = flat_alike(*result, *xin) ? result : empty_like(xin, ct);
    const float *gp = gin->data<float>(), *xp = xin->data<float>();
    float* o = dst->data<float>();
    parallel_chunks(x->numel, [&](int64_t lo, int64_t hi) {
      backward_dense_f32(k, o + lo, gp + lo, xp + lo, hi - lo, float(a), float(b), float(c));
    });
    if (dst != result) copy_into(result, dst);
  } else {
    ElementwiseIter it({result.get(), gin.get(), xin.get()}, name);
    if (ct == ScalarType::Float32) backward_loop<float>(k, it, float(a), float(b), float(c), order == 2);
    else backward_loop<double>(k, it, a, b, c, order == 2);
  }
  return result->dtype == x->dtype ? result : to_dtype(result, x->dtype);
}

template <Activation K>
Tensor forward_kernel(DispatchKeySet, const Tensor& x, double a, double b, double c, const Tensor& out) {
  return activation_cpu(K, x, a, b, c, out);
}
template <Activation K>
Tensor backward_kernel(DispatchKeySet, const Tensor& g, const Tensor& x, double a, double b, double c, int64_t order) {
  return activation_backward_cpu(K, g, x, a, b, c, order);
}

}  // namespace

const char* activation_name(Activation k) { return kNames[static_cast<int>(k)]; }

std::optional<Activation> epilogue_activation(const std::string& name, const char* op) {
  if (name == "none") return std::nullopt;
  for (Activation k : {Activation::relu, Activation::gelu, Activation::gelu_tanh, Activation::silu})
    if (name == activation_name(k)) return k;
  throw ValueError(str_cat(op, ": activation must be one of 'none', 'relu', 'gelu', 'gelu_tanh', 'silu', but got '",
                           name, "'"));
}

void activation_inplace_f32(float* x, int64_t n, const void* kind) {
  forward_dense_f32(*static_cast<const Activation*>(kind), x, x, n, 0.0f, 0.0f, 0.0f);
}

Activation activation_kind(int64_t index) {
  FL_CHECK(index >= 0 && index < static_cast<int64_t>(Activation::NumActivations), ValueError,
           "activation: unknown kind ", index);
  return static_cast<Activation>(index);
}

}  // namespace fl

#define FL_X(name, ...)                                                                                             \
  FL_DEFINE_OP(name, #name "(Tensor self, float a, float b, float c, Tensor(a!)? out) -> Tensor", ::fl::ActivationSig) \
  FL_DEFINE_OP(name##_backward,                                                                                     \
               #name "_backward(Tensor grad_output, Tensor self, float a, float b, float c, int order) -> Tensor",   \
               ::fl::ActivationBackwardSig)                                                                         \
  FL_REGISTER_KERNEL(name, CPU, ::fl::forward_kernel<::fl::Activation::name>)                                      \
  FL_REGISTER_KERNEL(name##_backward, CPU, ::fl::backward_kernel<::fl::Activation::name>)
FL_ACTIVATIONS(FL_X)
#undef FL_X

namespace fl {

const ActivationOp& activation_op(Activation k) {
  static const ActivationOp* const table[] = {
#define FL_X(name, ...) &ops::name,
      FL_ACTIVATIONS(FL_X)
#undef FL_X
  };
  return *table[static_cast<int>(k)];
}

const ActivationBackwardOp& activation_backward_op(Activation k) {
  static const ActivationBackwardOp* const table[] = {
#define FL_X(name, ...) &ops::name##_backward,
      FL_ACTIVATIONS(FL_X)
#undef FL_X
  };
  return *table[static_cast<int>(k)];
}

}  // namespace fl
