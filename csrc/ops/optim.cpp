// CPU kernels of the fused SGD and Adam/AdamW steps over lists of dense float32/float64 tensors.
// Scalars are rounded to the tensor type where PyTorch's ops round them, and each element goes through
// the roundings of torch.optim's _single_tensor_sgd / _single_tensor_adam on an FMA CPU: torch's
// add(alpha), lerp and addcmul kernels are fused multiply-adds, its mul, div and addcdiv are not.
// Every fused multiply-add is an explicit fma, and no plain `a * b + c` is left for the compiler to
// contract (a product torch rounds on its own is stored by a pass of its own).
#include "optim.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

namespace fl {
namespace {

void check_list(const char* op, const char* name, const std::vector<Tensor>& ts, const std::vector<Tensor>& params) {
  FL_CHECK(ts.size() == params.size(), ValueError, op, ": expected ", params.size(), " tensors in ", name, ", got ",
           ts.size());
  for (size_t i = 0; i < ts.size(); ++i) {
    const Tensor& t = ts[i];
    const Tensor& p = params[i];
    FL_CHECK(t && p, ValueError, op, ": ", name, "[", i, "] is None");
    FL_CHECK(t->dtype == p->dtype, TypeError, op, ": ", name, "[", i, "] has dtype ", dtype_name(t->dtype),
             " but the parameter has ", dtype_name(p->dtype));
    FL_CHECK(t->dtype == ScalarType::Float32 || t->dtype == ScalarType::Float64, TypeError, op,
             ": only float32 and float64 tensors are supported, got ", dtype_name(t->dtype));
    FL_CHECK(t->contiguous && p->contiguous && t->sizes == p->sizes, ValueError, op, ": ", name, "[", i,
             "] must be contiguous with the parameter's shape");
  }
}

__attribute__((always_inline)) inline float madd(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
__attribute__((always_inline)) inline double madd(double a, double b, double c) { return __builtin_fma(a, b, c); }
__attribute__((always_inline)) inline float root(float x) { return __builtin_sqrtf(x); }
__attribute__((always_inline)) inline double root(double x) { return __builtin_sqrt(x); }

struct SgdArgs {
  double lr, momentum, dampening, weight_decay;
  bool nesterov, maximize, first;
};

// The element loop, compiled per ISA below; the state tensors never alias (as torch assumes). Loop-invariant
// flags are plain branches the compiler unswitches; maximize is a multiplication by -1, which is exact.
template <typename T>
__attribute__((always_inline)) inline void sgd_loop(T* __restrict__ pd, const T* __restrict__ gd, T* __restrict__ bd,
                                                    int64_t lo, int64_t hi, const SgdArgs& a) {
  const T sign = a.maximize ? T(-1) : T(1), wd = static_cast<T>(a.weight_decay), mom = static_cast<T>(a.momentum);
  const T damp = static_cast<T>(1.0 - a.dampening), neg_lr = static_cast<T>(-a.lr);
  const bool decay = a.weight_decay != 0, first = a.first, nesterov = a.nesterov;
  if (bd == nullptr) {
    for (int64_t i = lo; i < hi; ++i) {
      T grad = gd[i] * sign;
      if (decay) grad = madd(wd, pd[i], grad);
      pd[i] = madd(neg_lr, grad, pd[i]);
    }
    return;
  }
  for (int64_t i = lo; i < hi; ++i) {
    T grad = gd[i] * sign;
    if (decay) grad = madd(wd, pd[i], grad);
    const T b = first ? grad : madd(damp, grad, bd[i] * mom);
    bd[i] = b;
    pd[i] = madd(neg_lr, nesterov ? madd(mom, b, grad) : b, pd[i]);
  }
}

// Each loop is compiled three times: AVX-512, AVX2 with FMA, and the baseline; the first the CPU supports
// runs (chosen by feature, so any vendor's CPU with the instructions gets the fast path).
enum class Isa { Base, Avx2, Avx512 };
Isa cpu_isa() {
  static const Isa isa = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma") ? Isa::Avx512
                         : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? Isa::Avx2
                                                                                          : Isa::Base;
  return isa;
}

#define FL_ISA_VARIANTS(name, loop, params, args)                                   \
  __attribute__((target("avx512f,fma"))) void name##_avx512 params { loop args; } \
  __attribute__((target("avx2,fma"))) void name##_avx2 params { loop args; }      \
  void name##_base params { loop args; }                                         \
  void name params {                                                             \
    switch (cpu_isa()) {                                                         \
      case Isa::Avx512: name##_avx512 args; break;                               \
      case Isa::Avx2: name##_avx2 args; break;                                   \
      default: name##_base args;                                                 \
    }                                                                            \
  }

FL_ISA_VARIANTS(sgd_f32, sgd_loop, (float* p, const float* g, float* b, int64_t lo, int64_t hi, const SgdArgs& a),
                (p, g, b, lo, hi, a))
FL_ISA_VARIANTS(sgd_f64, sgd_loop, (double* p, const double* g, double* b, int64_t lo, int64_t hi, const SgdArgs& a),
                (p, g, b, lo, hi, a))

// Splits [0, n) into per-thread chunks for large tensors.
template <typename F>
void parallel_chunks(int64_t n, F f) {
  constexpr int64_t kGrain = 1 << 16;
  if (n < 2 * kGrain) { f(0, n); return; }
  const int64_t chunks = (n + kGrain - 1) / kGrain;
#pragma omp parallel for
  for (int64_t c = 0; c < chunks; ++c) f(c * kGrain, std::min(n, (c + 1) * kGrain));
}

void fused_sgd_cpu(DispatchKeySet, const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                   const std::vector<Tensor>& bufs, double lr, double momentum, double dampening, double weight_decay,
                   bool nesterov, bool maximize, bool is_first_step) {
  check_list("_fused_sgd_", "grads", grads, params);
  const bool use_buf = momentum != 0;
  if (use_buf) check_list("_fused_sgd_", "momentum_buffers", bufs, params);
  const SgdArgs args{lr, momentum, dampening, weight_decay, nesterov, maximize, is_first_step};
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor* buf = use_buf ? &bufs[i] : nullptr;
    const Tensor& p = params[i];
    const Tensor& g = grads[i];
    if (p->dtype == ScalarType::Float32) {
      float* bd = buf ? (*buf)->data<float>() : nullptr;
      parallel_chunks(p->numel,
                      [&](int64_t lo, int64_t hi) { sgd_f32(p->data<float>(), g->data<float>(), bd, lo, hi, args); });
    } else {
      double* bd = buf ? (*buf)->data<double>() : nullptr;
      parallel_chunks(p->numel,
                      [&](int64_t lo, int64_t hi) { sgd_f64(p->data<double>(), g->data<double>(), bd, lo, hi, args); });
    }
    p->bump_version();
    if (buf) (*buf)->bump_version();
  }
}

struct AdamArgs {
  double step, lr, beta1, beta2, weight_decay, eps;
  bool maximize, decoupled;
};

// amsgrad changes which tensors are stored, so it is a template flag; the other options are selects
// between values, which keep the loop free of branches (vectorizable).
template <typename T, bool AMSGRAD>
__attribute__((always_inline)) inline void adam_loop_impl(T* __restrict__ pd, const T* __restrict__ gd,
                                                          T* __restrict__ md, T* __restrict__ vd, T* __restrict__ xd,
                                                          int64_t lo, int64_t hi, const AdamArgs& a) {
  const double bias_correction1 = 1 - std::pow(a.beta1, a.step);
  const double bias_correction2 = 1 - std::pow(a.beta2, a.step);
  const T neg_step_size = static_cast<T>(-(a.lr / bias_correction1));
  const T bc2_sqrt = static_cast<T>(std::pow(bias_correction2, 0.5));
  const T w = static_cast<T>(1 - a.beta1), b2 = static_cast<T>(a.beta2), one_minus_b2 = static_cast<T>(1 - a.beta2);
  const T e = static_cast<T>(a.eps), sign = a.maximize ? T(-1) : T(1);
  // torch: decoupled decay is its own pass, param *= 1 - lr * wd (rounded before the update is added);
  // L2 decay adds wd * param to the gradient.
  if (a.decoupled && a.weight_decay != 0) {
    const T decay = static_cast<T>(1 - a.lr * a.weight_decay);
    for (int64_t i = lo; i < hi; ++i) pd[i] = pd[i] * decay;
  }
  const bool l2 = !a.decoupled && a.weight_decay != 0;
  const T wd = static_cast<T>(a.weight_decay);
  // torch's lerp runs from the nearer end (so weight 1 reproduces `end`): start + w * diff or end + (w - 1) * diff.
  const bool lerp_low = std::abs(w) < T(0.5);
  const T lerp_coeff = lerp_low ? w : w - T(1);
  for (int64_t i = lo; i < hi; ++i) {
    const T g0 = gd[i] * sign;
    const T grad = l2 ? madd(wd, pd[i], g0) : g0;
    const T m0 = md[i];
    const T mi = madd(lerp_coeff, grad - m0, lerp_low ? m0 : grad);
    md[i] = mi;
    const T vi = madd(one_minus_b2 * grad, grad, vd[i] * b2);
    vd[i] = vi;
    T s = vi;
    if constexpr (AMSGRAD) {
      s = xd[i] > vi ? xd[i] : vi;
      xd[i] = s;
    }
    pd[i] = pd[i] + (neg_step_size * mi) / (root(s) / bc2_sqrt + e);
  }
}

template <typename T>
__attribute__((always_inline)) inline void adam_loop(T* pd, const T* gd, T* md, T* vd, T* xd, int64_t lo, int64_t hi,
                                                     const AdamArgs& a) {
  if (xd) adam_loop_impl<T, true>(pd, gd, md, vd, xd, lo, hi, a);
  else adam_loop_impl<T, false>(pd, gd, md, vd, xd, lo, hi, a);
}

FL_ISA_VARIANTS(adam_f32, adam_loop,
                (float* p, const float* g, float* m, float* v, float* x, int64_t lo, int64_t hi, const AdamArgs& a),
                (p, g, m, v, x, lo, hi, a))
FL_ISA_VARIANTS(adam_f64, adam_loop,
                (double* p, const double* g, double* m, double* v, double* x, int64_t lo, int64_t hi,
                 const AdamArgs& a),
                (p, g, m, v, x, lo, hi, a))

template <typename T>
void adam_one(const Tensor& p, const Tensor& g, const Tensor& m, const Tensor& v, const Tensor* vmax,
              const AdamArgs& a) {
  T* pd = p->data<T>();
  const T* gd = g->data<T>();
  T* md = m->data<T>();
  T* vd = v->data<T>();
  T* xd = vmax ? (*vmax)->data<T>() : nullptr;
  parallel_chunks(p->numel, [&](int64_t lo, int64_t hi) {
    if constexpr (std::is_same_v<T, float>) adam_f32(pd, gd, md, vd, xd, lo, hi, a);
    else adam_f64(pd, gd, md, vd, xd, lo, hi, a);
  });
}

void fused_adam_cpu(DispatchKeySet, const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                    const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                    const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<Tensor>& steps, double lr,
                    double beta1, double beta2, double weight_decay, double eps, bool amsgrad, bool maximize,
                    bool decoupled_weight_decay) {
  const char* op = "_fused_adam_";
  check_list(op, "grads", grads, params);
  check_list(op, "exp_avgs", exp_avgs, params);
  check_list(op, "exp_avg_sqs", exp_avg_sqs, params);
  if (amsgrad) check_list(op, "max_exp_avg_sqs", max_exp_avg_sqs, params);
  FL_CHECK(steps.size() == params.size(), ValueError, op, ": expected ", params.size(), " step tensors, got ",
           steps.size());
  for (const Tensor& s : steps)
    FL_CHECK(s && s->numel == 1 && s->dtype == ScalarType::Float32, TypeError, op,
             ": each step must be a one-element float32 tensor");
  for (size_t i = 0; i < params.size(); ++i) {
    // The step count is a float32 tensor, incremented in place as torch's `step_t += 1`.
    float* step_ptr = steps[i]->data<float>();
    *step_ptr += 1.0f;
    steps[i]->bump_version();
    const double step = *step_ptr;
    const Tensor* vmax = amsgrad ? &max_exp_avg_sqs[i] : nullptr;
    const AdamArgs args{step, lr, beta1, beta2, weight_decay, eps, maximize, decoupled_weight_decay};
    if (params[i]->dtype == ScalarType::Float32)
      adam_one<float>(params[i], grads[i], exp_avgs[i], exp_avg_sqs[i], vmax, args);
    else
      adam_one<double>(params[i], grads[i], exp_avgs[i], exp_avg_sqs[i], vmax, args);
    for (const Tensor* t : {&params[i], &exp_avgs[i], &exp_avg_sqs[i]}) (*t)->bump_version();
    if (vmax) (*vmax)->bump_version();
  }
}

}  // namespace
}  // namespace fl

FL_DEFINE_OP(_fused_sgd_,
             "_fused_sgd_(Tensor(a!)[] params, Tensor[] grads, Tensor(b!)[] momentum_buffers, *, float lr, "
             "float momentum, float dampening, float weight_decay, bool nesterov, bool maximize, "
             "bool is_first_step) -> ()",
             void(const std::vector<::fl::Tensor>&, const std::vector<::fl::Tensor>&, const std::vector<::fl::Tensor>&,
                  double, double, double, double, bool, bool, bool))
FL_DEFINE_OP(_fused_adam_,
             "_fused_adam_(Tensor(a!)[] params, Tensor[] grads, Tensor(b!)[] exp_avgs, Tensor(c!)[] exp_avg_sqs, "
             "Tensor(d!)[] max_exp_avg_sqs, Tensor(e!)[] state_steps, *, float lr, float beta1, float beta2, "
             "float weight_decay, float eps, bool amsgrad, bool maximize, bool decoupled_weight_decay) -> ()",
             void(const std::vector<::fl::Tensor>&, const std::vector<::fl::Tensor>&, const std::vector<::fl::Tensor>&,
                  const std::vector<::fl::Tensor>&, const std::vector<::fl::Tensor>&, const std::vector<::fl::Tensor>&,
                  double, double, double, double, double, bool, bool, bool))
FL_REGISTER_KERNEL(_fused_sgd_, CPU, ::fl::fused_sgd_cpu)
FL_REGISTER_KERNEL(_fused_adam_, CPU, ::fl::fused_adam_cpu)
