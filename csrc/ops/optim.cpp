// CPU kernels of the fused SGD and Adam/AdamW steps over lists of dense float32/float64 tensors.
// Scalars are rounded to the tensor type where PyTorch's ops round them, and the per-element
// operation order follows torch.optim's _single_tensor_sgd / _single_tensor_adam.
#include "optim.h"

#include <cmath>
#include <cstdint>

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

template <typename T>
void sgd_one(const Tensor& p, const Tensor& g, const Tensor* buf, double lr, double momentum, double dampening,
             double weight_decay, bool nesterov, bool maximize, bool first) {
  T* pd = p->data<T>();
  const T* gd = g->data<T>();
  T* bd = buf ? (*buf)->data<T>() : nullptr;
  const T wd = static_cast<T>(weight_decay), mom = static_cast<T>(momentum);
  const T damp = static_cast<T>(1.0 - dampening), neg_lr = static_cast<T>(-lr);
  const int64_t n = p->numel;
#pragma omp parallel for if (n >= 65536)
  for (int64_t i = 0; i < n; ++i) {
    T grad = maximize ? -gd[i] : gd[i];
    if (weight_decay != 0) grad = grad + wd * pd[i];
    if (bd) {
      T b = first ? grad : static_cast<T>(bd[i] * mom) + damp * grad;
      bd[i] = b;
      grad = nesterov ? grad + mom * b : b;
    }
    pd[i] = pd[i] + neg_lr * grad;
  }
}

void fused_sgd_cpu(DispatchKeySet, const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                   const std::vector<Tensor>& bufs, double lr, double momentum, double dampening, double weight_decay,
                   bool nesterov, bool maximize, bool is_first_step) {
  check_list("_fused_sgd_", "grads", grads, params);
  const bool use_buf = momentum != 0;
  if (use_buf) check_list("_fused_sgd_", "momentum_buffers", bufs, params);
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor* buf = use_buf ? &bufs[i] : nullptr;
    if (params[i]->dtype == ScalarType::Float32)
      sgd_one<float>(params[i], grads[i], buf, lr, momentum, dampening, weight_decay, nesterov, maximize, is_first_step);
    else
      sgd_one<double>(params[i], grads[i], buf, lr, momentum, dampening, weight_decay, nesterov, maximize,
                      is_first_step);
    params[i]->bump_version();
    if (buf) (*buf)->bump_version();
  }
}

template <typename T>
void adam_one(const Tensor& p, const Tensor& g, const Tensor& m, const Tensor& v, const Tensor* vmax, double step,
              double lr, double beta1, double beta2, double weight_decay, double eps, bool maximize,
              bool decoupled) {
  T* pd = p->data<T>();
  const T* gd = g->data<T>();
  T* md = m->data<T>();
  T* vd = v->data<T>();
  T* xd = vmax ? (*vmax)->data<T>() : nullptr;
  const double bias_correction1 = 1 - std::pow(beta1, step);
  const double bias_correction2 = 1 - std::pow(beta2, step);
  const T neg_step_size = static_cast<T>(-(lr / bias_correction1));
  const T bc2_sqrt = static_cast<T>(std::pow(bias_correction2, 0.5));
  const T w = static_cast<T>(1 - beta1), b2 = static_cast<T>(beta2), one_minus_b2 = static_cast<T>(1 - beta2);
  const T wd = static_cast<T>(weight_decay), decay = static_cast<T>(1 - lr * weight_decay), e = static_cast<T>(eps);
  const bool lerp_low = std::abs(1 - beta1) < 0.5;
  const int64_t n = p->numel;
#pragma omp parallel for if (n >= 65536)
  for (int64_t i = 0; i < n; ++i) {
    T grad = maximize ? -gd[i] : gd[i];
    T param = pd[i];
    if (weight_decay != 0) {
      if (decoupled) param = param * decay;
      else grad = grad + wd * param;
    }
    const T diff = grad - md[i];
    const T mi = lerp_low ? md[i] + w * diff : grad - diff * static_cast<T>(1 - w);
    md[i] = mi;
    T vi = static_cast<T>(vd[i] * b2);
    vi = vi + static_cast<T>(one_minus_b2 * grad) * grad;
    vd[i] = vi;
    T s = vi;
    if (xd) {
      s = xd[i] > vi ? xd[i] : vi;
      xd[i] = s;
    }
    const T denom = std::sqrt(s) / bc2_sqrt + e;
    pd[i] = param + neg_step_size * (mi / denom);
  }
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
    if (params[i]->dtype == ScalarType::Float32)
      adam_one<float>(params[i], grads[i], exp_avgs[i], exp_avg_sqs[i], vmax, step, lr, beta1, beta2, weight_decay,
                      eps, maximize, decoupled_weight_decay);
    else
      adam_one<double>(params[i], grads[i], exp_avgs[i], exp_avg_sqs[i], vmax, step, lr, beta1, beta2, weight_decay,
                       eps, maximize, decoupled_weight_decay);
    for (const Tensor* t : {&params[i], &exp_avgs[i], &exp_avg_sqs[i]}) (*t)->bump_version();
    if (vmax) (*vmax)->bump_version();
  }
}

}  // namespace
}  // namespace fl

FL_DEFINE_OP(_fused_sgd_,
             "_fused_sgd_(Tensor(a!)[] params, Tensor[] grads, Tensor(b!)[] momentum_buffers, *, float lr, "
             "float momentum, float dampening, float weight_decay, bool nesterov, bool maximize, bool is_first_step) -> ()",
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
