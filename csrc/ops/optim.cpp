// CPU kernels of the fused optimizer steps over lists of dense float32/float64 tensors.
//
// Note [Fused optimizer rules]
// Every optimizer is a *rule*: a small struct holding one tensor's coefficients for this step, already rounded
// to the tensor type where PyTorch's ops round them, whose operator()(param&, grad, state&...) updates one
// element. One driver (apply_rule) runs any rule over a tensor: chunked over OpenMP threads for large tensors,
// compiled for AVX-512, AVX2+FMA and the baseline and chosen by CPU feature. Options that change which state
// tensors exist (amsgrad, centered, momentum) are compile-time flags of the rule; the other options pick between
// values computed unconditionally (Choice), so each loop is branch-free and vectorizes.
//
// Each element goes through the roundings of torch.optim's _single_tensor_* functions on an FMA CPU: torch's
// add(alpha), lerp and addcmul kernels are fused multiply-adds, its mul, div and addcdiv are not (addcdiv is
// (value * t1) / t2). Every fused multiply-add is an explicit madd; a product torch rounds by an op of its own
// and then adds to is written mul_alone, so that the compiler (GNU mode contracts `a * b + c`) cannot fuse it.
#include "optim.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <type_traits>

namespace fl {
namespace {

#define FL_OPTIM_INLINE __attribute__((always_inline)) inline

// ---- argument checks ------------------------------------------------------------------------------------------

void check_list(const char* op, const char* name, const TensorList& ts, const TensorList& params) {
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

// Step counts and NAdam's mu_product: one-element float tensors, one per parameter (float32 as torch creates them;
// float64 after torch's load_state_dict casts a float64 model's mu_product to the param dtype).
void check_scalars(const char* op, const char* name, const TensorList& ts, const TensorList& params) {
  FL_CHECK(ts.size() == params.size(), ValueError, op, ": expected ", params.size(), " tensors in ", name, ", got ",
           ts.size());
  for (size_t i = 0; i < ts.size(); ++i)
    FL_CHECK(ts[i] && ts[i]->numel == 1 && (ts[i]->dtype == ScalarType::Float32 || ts[i]->dtype == ScalarType::Float64),
             TypeError, op, ": ", name, "[", i, "] must be a one-element float32 or float64 tensor");
}

// `value = f(value)` on a one-element state tensor, in its own precision as torch's in-place op on it computes;
// returns the new value.
template <typename F>
double update_scalar(const Tensor& t, F f) {
  double out;
  if (t->dtype == ScalarType::Float32) {
    float* v = t->data<float>();
    out = *v = f(*v);
  } else {
    double* v = t->data<double>();
    out = *v = f(*v);
  }
  t->bump_version();
  return out;
}

// torch's `step_t += 1`; returns the new count.
double advance_step(const Tensor& step) {
  return update_scalar(step, [](auto v) { return v + 1; });
}

// ---- element arithmetic ---------------------------------------------------------------------------------------

FL_OPTIM_INLINE float madd(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
FL_OPTIM_INLINE double madd(double a, double b, double c) { return __builtin_fma(a, b, c); }
FL_OPTIM_INLINE float root(float x) { return __builtin_sqrtf(x); }
FL_OPTIM_INLINE double root(double x) { return __builtin_sqrt(x); }
// a * b rounded on its own (the result of a separate torch mul), so it is never contracted into a later add.
template <typename T>
FL_OPTIM_INLINE T mul_alone(T a, T b) { return madd(a, b, T(0)); }

// An option's choice between two computed values, made with a bit mask rather than `cond ? a : b`: GCC sinks the
// arithmetic of a value only one side of a ?: uses into a branch, which keeps the loop scalar (it does not
// if-convert a conditional fma, nor unswitch more than a few such branches).
template <typename T>
struct Choice {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  Bits mask;
  explicit Choice(bool first) : mask(first ? ~Bits(0) : Bits(0)) {}
  FL_OPTIM_INLINE T operator()(T a, T b) const {
    Bits x, y;
    std::memcpy(&x, &a, sizeof x);
    std::memcpy(&y, &b, sizeof y);
    const Bits r = (x & mask) | (y & ~mask);
    T out;
    std::memcpy(&out, &r, sizeof out);
    return out;
  }
};

// torch's `grad = -grad if maximize`, then L2 decay `grad = grad.add(param, alpha=weight_decay)` when `l2`.
// maximize is a multiplication by -1, which is exact.
template <typename T>
struct GradIn {
  T sign, wd;
  Choice<T> l2;
  GradIn(bool maximize, double weight_decay, bool l2)
      : sign(maximize ? T(-1) : T(1)), wd(static_cast<T>(weight_decay)), l2(l2 && weight_decay != 0) {}
  FL_OPTIM_INLINE T operator()(T g, T p) const {
    const T g0 = g * sign;
    return l2(madd(wd, p, g0), g0);
  }
};

// torch's decoupled decay `param.mul_(1 - lr * weight_decay)` (AdamW, NAdam/RAdam decoupled_weight_decay).
template <typename T>
struct Decay {
  T factor;
  Choice<T> on;
  Decay(bool decoupled, double lr, double weight_decay)
      : factor(static_cast<T>(1 - lr * weight_decay)), on(decoupled && weight_decay != 0) {}
  FL_OPTIM_INLINE T operator()(T p) const { return on(mul_alone(p, factor), p); }
};

// torch's `start.lerp_(end, weight)`: from the nearer end (so weight 1 reproduces `end`), start + w * diff or
// end + (w - 1) * diff.
template <typename T>
struct Lerp {
  T coeff;
  Choice<T> low;
  explicit Lerp(double weight) : Lerp(static_cast<T>(weight), std::abs(static_cast<T>(weight)) < T(0.5)) {}
  Lerp(T w, bool low) : coeff(low ? w : w - T(1)), low(low) {}
  FL_OPTIM_INLINE T operator()(T start, T end) const { return madd(coeff, end - start, low(start, end)); }
};

// The I-th of the optional state elements a rule was given.
template <size_t I, typename... S>
FL_OPTIM_INLINE auto& optional_state(S&... s) { return std::get<I>(std::tie(s...)); }

// ---- the driver -----------------------------------------------------------------------------------------------

// The element loop; the tensors never alias (as torch assumes), which __restrict__ tells the vectorizer.
template <typename Rule, typename T, typename... S>
FL_OPTIM_INLINE void rule_loop(const Rule& rule, int64_t lo, int64_t hi, T* __restrict__ p, const T* __restrict__ g,
                               S* __restrict__... s) {
  const Rule r = rule;
  for (int64_t i = lo; i < hi; ++i) r(p[i], g[i], s[i]...);
}

#define FL_RULE_LOOP_FOR_ISA(isa, attr)                                                             \
  template <typename Rule, typename T, typename... S>                                              \
  attr void rule_loop_##isa(const Rule& rule, int64_t lo, int64_t hi, T* p, const T* g, S*... s) { \
    rule_loop(rule, lo, hi, p, g, s...);                                                           \
  }
FL_RULE_LOOP_FOR_ISA(avx512, __attribute__((target("avx512f,fma"))))
FL_RULE_LOOP_FOR_ISA(avx2, __attribute__((target("avx2,fma"))))
FL_RULE_LOOP_FOR_ISA(base, )

// Chosen by feature, so any vendor's CPU with the instructions gets the fast path.
enum class Isa { Base, Avx2, Avx512 };
Isa cpu_isa() {
  static const Isa isa = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma") ? Isa::Avx512
                         : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? Isa::Avx2
                                                                                          : Isa::Base;
  return isa;
}

// Splits [0, n) into per-thread chunks for large tensors.
template <typename F>
void parallel_chunks(int64_t n, F f) {
  constexpr int64_t kGrain = 1 << 16;
  if (n < 2 * kGrain) { f(0, n); return; }
  const int64_t chunks = (n + kGrain - 1) / kGrain;
#pragma omp parallel for
  for (int64_t c = 0; c < chunks; ++c) f(c * kGrain, std::min(n, (c + 1) * kGrain));
}

// Element i of a state list the rule keeps (a tuple of it), or nothing (an empty tuple; the list may be empty).
template <bool KEEP>
auto keep(const TensorList& list, size_t i) {
  if constexpr (KEEP) return std::tie(list[i]);
  else return std::tuple<>();
}

// Runs rule over every element of param p with grad g and the state tensors in `states` (tuples of tensors,
// in the order of the rule's arguments), then bumps the version of everything written.
template <typename T, typename Rule, typename... Tuples>
void apply_rule(const Rule& rule, const Tensor& p, const Tensor& g, const Tuples&... states) {
  std::apply(
      [&](const auto&... s) {
        T* pd = p->data<T>();
        const T* gd = g->data<T>();
        parallel_chunks(p->numel, [&](int64_t lo, int64_t hi) {
          switch (cpu_isa()) {
            case Isa::Avx512: rule_loop_avx512(rule, lo, hi, pd, gd, s->template data<T>()...); break;
            case Isa::Avx2: rule_loop_avx2(rule, lo, hi, pd, gd, s->template data<T>()...); break;
            default: rule_loop_base(rule, lo, hi, pd, gd, s->template data<T>()...);
          }
        });
        p->bump_version();
        (s->bump_version(), ...);
      },
      std::tuple_cat(states...));
}

// Calls f(T{}, std::bool_constant<flag>{}...) with T the C++ type of dtype (float32 or float64, checked before).
template <typename F>
void dispatch(ScalarType dtype, F&& f) {
  if (dtype == ScalarType::Float32) f(float{});
  else f(double{});
}
template <typename F, typename... Flags>
void dispatch(ScalarType dtype, F&& f, bool flag, Flags... rest) {
  dispatch(dtype, [&](auto t, auto... later) {
    if (flag) f(t, std::true_type{}, later...);
    else f(t, std::false_type{}, later...);
  }, rest...);
}

// ---- the rules ------------------------------------------------------------------------------------------------

// _single_tensor_sgd; states: (momentum_buffer) with MOMENTUM. On the first step the buffer is the gradient.
template <typename T, bool MOMENTUM>
struct SgdRule {
  GradIn<T> grad_in;
  T momentum, damp, neg_lr;
  Choice<T> nesterov, first;
  SgdRule(double lr, double momentum, double dampening, double weight_decay, bool nesterov, bool maximize,
          bool first)
      : grad_in(maximize, weight_decay, true), momentum(static_cast<T>(momentum)),
        damp(static_cast<T>(1.0 - dampening)), neg_lr(static_cast<T>(-lr)), nesterov(nesterov), first(first) {}
  template <typename... S>
  FL_OPTIM_INLINE void operator()(T& p, T g0, S&... opt) const {
    const T g = grad_in(g0, p);
    if constexpr (MOMENTUM) {
      T& buf = optional_state<0>(opt...);
      const T b = first(g, madd(damp, g, buf * momentum));
      buf = b;
      p = madd(neg_lr, nesterov(madd(momentum, b, g), b), p);
    } else {
      p = madd(neg_lr, g, p);
    }
  }
};

// _single_tensor_adam (AdamW: decoupled decay); states: exp_avg, exp_avg_sq, (max_exp_avg_sq) with AMSGRAD.
template <typename T, bool AMSGRAD>
struct AdamRule {
  Decay<T> decay;
  GradIn<T> grad_in;
  Lerp<T> lerp;
  T beta2, one_minus_beta2, neg_step_size, bias_correction2_sqrt, eps;
  AdamRule(double step, double lr, double beta1, double beta2, double weight_decay, double eps, bool maximize,
           bool decoupled)
      : decay(decoupled, lr, weight_decay), grad_in(maximize, weight_decay, !decoupled), lerp(1 - beta1),
        beta2(static_cast<T>(beta2)), one_minus_beta2(static_cast<T>(1 - beta2)),
        neg_step_size(static_cast<T>(-(lr / (1 - std::pow(beta1, step))))),
        bias_correction2_sqrt(static_cast<T>(std::pow(1 - std::pow(beta2, step), 0.5))), eps(static_cast<T>(eps)) {}
  template <typename... S>
  FL_OPTIM_INLINE void operator()(T& p, T g0, T& exp_avg, T& exp_avg_sq, S&... opt) const {
    const T p0 = decay(p);
    const T g = grad_in(g0, p0);
    const T m = lerp(exp_avg, g);
    exp_avg = m;
    const T v = madd(one_minus_beta2 * g, g, exp_avg_sq * beta2);
    exp_avg_sq = v;
    T s = v;
    if constexpr (AMSGRAD) {
      T& max_sq = optional_state<0>(opt...);
      s = max_sq > v ? max_sq : v;
      max_sq = s;
    }
    p = p0 + (neg_step_size * m) / (root(s) / bias_correction2_sqrt + eps);
  }
};

// _single_tensor_rmsprop; states: square_avg, (grad_avg) with CENTERED, (momentum_buffer) with MOMENTUM.
template <typename T, bool CENTERED, bool MOMENTUM>
struct RmspropRule {
  GradIn<T> grad_in;
  Lerp<T> lerp;
  T alpha, one_minus_alpha, eps, momentum, neg_lr;
  RmspropRule(double lr, double alpha, double eps, double weight_decay, double momentum, bool maximize)
      : grad_in(maximize, weight_decay, true), lerp(1 - alpha), alpha(static_cast<T>(alpha)),
        one_minus_alpha(static_cast<T>(1 - alpha)), eps(static_cast<T>(eps)), momentum(static_cast<T>(momentum)),
        neg_lr(static_cast<T>(-lr)) {}
  template <typename... S>
  FL_OPTIM_INLINE void operator()(T& p, T g0, T& square_avg, S&... opt) const {
    const T g = grad_in(g0, p);
    const T sq = madd(one_minus_alpha * g, g, square_avg * alpha);
    square_avg = sq;
    T avg;
    if constexpr (CENTERED) {
      T& grad_avg = optional_state<0>(opt...);
      const T ga = lerp(grad_avg, g);
      grad_avg = ga;
      avg = root(madd(-ga, ga, sq));  // square_avg.addcmul(grad_avg, grad_avg, value=-1)
    } else {
      avg = root(sq);
    }
    avg = avg + eps;
    if constexpr (MOMENTUM) {
      T& buf = optional_state<CENTERED ? 1 : 0>(opt...);
      const T b = mul_alone(buf, momentum) + g / avg;
      buf = b;
      p = madd(neg_lr, b, p);
    } else {
      p = p + (neg_lr * g) / avg;
    }
  }
};

// _single_tensor_adagrad (dense); states: sum.
template <typename T>
struct AdagradRule {
  GradIn<T> grad_in;
  T eps, neg_clr;
  AdagradRule(double step, double lr, double lr_decay, double weight_decay, double eps, bool maximize)
      : grad_in(maximize, weight_decay, true), eps(static_cast<T>(eps)),
        neg_clr(static_cast<T>(-(lr / (1 + (step - 1) * lr_decay)))) {}
  FL_OPTIM_INLINE void operator()(T& p, T g0, T& sum) const {
    const T g = grad_in(g0, p);
    const T s = madd(g, g, sum);
    sum = s;
    p = p + (neg_clr * g) / (root(s) + eps);
  }
};

// _single_tensor_adadelta; states: square_avg, acc_delta.
template <typename T>
struct AdadeltaRule {
  GradIn<T> grad_in;
  T rho, one_minus_rho, eps, neg_lr;
  AdadeltaRule(double lr, double rho, double eps, double weight_decay, bool maximize)
      : grad_in(maximize, weight_decay, true), rho(static_cast<T>(rho)), one_minus_rho(static_cast<T>(1 - rho)),
        eps(static_cast<T>(eps)), neg_lr(static_cast<T>(-lr)) {}
  FL_OPTIM_INLINE void operator()(T& p, T g0, T& square_avg, T& acc_delta) const {
    const T g = grad_in(g0, p);
    const T sq = madd(one_minus_rho * g, g, square_avg * rho);
    square_avg = sq;
    const T delta = (root(acc_delta + eps) / root(sq + eps)) * g;
    acc_delta = madd(one_minus_rho * delta, delta, acc_delta * rho);
    p = madd(neg_lr, delta, p);
  }
};

// _single_tensor_adamax; states: exp_avg, exp_inf.
template <typename T>
struct AdamaxRule {
  GradIn<T> grad_in;
  Lerp<T> lerp;
  T beta2, eps, neg_clr;
  AdamaxRule(double step, double lr, double beta1, double beta2, double eps, double weight_decay, bool maximize)
      : grad_in(maximize, weight_decay, true), lerp(1 - beta1), beta2(static_cast<T>(beta2)),
        eps(static_cast<T>(eps)), neg_clr(static_cast<T>(-(lr / (1 - std::pow(beta1, step))))) {}
  FL_OPTIM_INLINE void operator()(T& p, T g0, T& exp_avg, T& exp_inf) const {
    const T g = grad_in(g0, p);
    const T m = lerp(exp_avg, g);
    exp_avg = m;
    const T a = exp_inf * beta2, b = std::abs(g) + eps;
    const T u = (a != a || a > b) ? a : b;  // torch.maximum propagates NaN
    exp_inf = u;
    p = p + (neg_clr * m) / u;
  }
};

// _single_tensor_nadam; states: exp_avg, exp_avg_sq (mu_product is advanced per tensor before the rule).
template <typename T>
struct NadamRule {
  Decay<T> decay;
  GradIn<T> grad_in;
  Lerp<T> lerp;
  T beta2, one_minus_beta2, bias_correction2, eps, grad_coeff, avg_coeff;
  NadamRule(double step, double mu, double mu_next, double mu_product, double lr, double beta1, double beta2,
            double eps, double weight_decay, bool decoupled, bool maximize)
      : decay(decoupled, lr, weight_decay), grad_in(maximize, weight_decay, !decoupled), lerp(1 - beta1),
        beta2(static_cast<T>(beta2)), one_minus_beta2(static_cast<T>(1 - beta2)),
        bias_correction2(static_cast<T>(1 - std::pow(beta2, step))), eps(static_cast<T>(eps)),
        grad_coeff(static_cast<T>(-lr * (1.0 - mu) / (1.0 - mu_product))),
        avg_coeff(static_cast<T>((-lr * mu_next) / (1.0 - mu_product * mu_next))) {}
  FL_OPTIM_INLINE void operator()(T& p, T g0, T& exp_avg, T& exp_avg_sq) const {
    const T p0 = decay(p);
    const T g = grad_in(g0, p0);
    const T m = lerp(exp_avg, g);
    exp_avg = m;
    const T v = madd(one_minus_beta2 * g, g, exp_avg_sq * beta2);
    exp_avg_sq = v;
    const T denom = root(v / bias_correction2) + eps;
    const T p1 = p0 + (grad_coeff * g) / denom;
    p = p1 + (avg_coeff * m) / denom;
  }
};

// RAdam's variance rectification term at `step`; 0 while the variance is intractable (rho_t <= 5).
double radam_rect(double step, double beta2) {
  const double rho_inf = 2 / (1 - beta2) - 1;
  const double rho_t = rho_inf - 2 * step * std::pow(beta2, step) / (1 - std::pow(beta2, step));
  if (!(rho_t > 5.0)) return 0;
  return std::pow((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t), 0.5);
}

// _single_tensor_radam; states: exp_avg, exp_avg_sq. Until the variance is tractable the update is the
// bias-corrected momentum alone.
template <typename T>
struct RadamRule {
  Decay<T> decay;
  GradIn<T> grad_in;
  Lerp<T> lerp;
  T beta2, one_minus_beta2, bias_correction1, bias_correction2_sqrt, lr, eps, rect;
  Choice<T> rectified;
  RadamRule(double step, double lr, double beta1, double beta2, double eps, double weight_decay, bool decoupled,
            bool maximize)
      : decay(decoupled, lr, weight_decay), grad_in(maximize, weight_decay, !decoupled), lerp(1 - beta1),
        beta2(static_cast<T>(beta2)), one_minus_beta2(static_cast<T>(1 - beta2)),
        bias_correction1(static_cast<T>(1 - std::pow(beta1, step))),
        bias_correction2_sqrt(static_cast<T>(std::pow(1 - std::pow(beta2, step), 0.5))), lr(static_cast<T>(lr)),
        eps(static_cast<T>(eps)), rect(static_cast<T>(radam_rect(step, beta2))),
        rectified(radam_rect(step, beta2) > 0) {}
  FL_OPTIM_INLINE void operator()(T& p, T g0, T& exp_avg, T& exp_avg_sq) const {
    const T p0 = decay(p);
    const T g = grad_in(g0, p0);
    const T m = lerp(exp_avg, g);
    exp_avg = m;
    const T v = madd(one_minus_beta2 * g, g, exp_avg_sq * beta2);
    exp_avg_sq = v;
    const T scaled = mul_alone(m / bias_correction1, lr);
    // torch: bias_correction2 ** 0.5 / t is t.reciprocal() * bias_correction2 ** 0.5.
    const T adaptive_lr = (T(1) / (root(v) + eps)) * bias_correction2_sqrt;
    p = p0 - rectified(mul_alone(scaled * adaptive_lr, rect), scaled);
  }
};

// ---- the ops --------------------------------------------------------------------------------------------------

// A state list of a fused op: its name for errors, and the list (null: an optional list the options leave out).
using StateList = std::pair<const char*, const TensorList*>;

// Checks a fused op's lists (grads and the state lists shaped like the params; `steps`, when given, one-element
// floats) and runs body(i, step) for every parameter, its step count advanced first (0 without steps).
template <typename Body>
void for_each_param(const char* op, const TensorList& params, const TensorList& grads,
                    std::initializer_list<StateList> states, const TensorList* steps, Body body) {
  check_list(op, "grads", grads, params);
  for (const auto& [name, list] : states)
    if (list) check_list(op, name, *list, params);
  if (steps) check_scalars(op, "state_steps", *steps, params);
  for (size_t i = 0; i < params.size(); ++i) body(i, steps ? advance_step((*steps)[i]) : 0.0);
}

}  // namespace

void fused_sgd_cpu(const TensorList& params, const TensorList& grads, const TensorList& bufs,
                   double lr, double momentum, double dampening, double weight_decay, bool nesterov, bool maximize,
                   bool is_first_step) {
  const bool use_buf = momentum != 0;
  for_each_param("_fused_sgd_", params, grads, {{"momentum_buffers", use_buf ? &bufs : nullptr}}, nullptr,
                 [&](size_t i, double) {
    dispatch(params[i]->dtype, [&](auto t, auto with_buf) {
      using T = decltype(t);
      constexpr bool M = decltype(with_buf)::value;
      const SgdRule<T, M> rule(lr, momentum, dampening, weight_decay, nesterov, maximize, is_first_step);
      apply_rule<T>(rule, params[i], grads[i], keep<M>(bufs, i));
    }, use_buf);
  });
}

void fused_adam_cpu(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
                    const TensorList& exp_avg_sqs, const TensorList& max_exp_avg_sqs, const TensorList& steps,
                    double lr, double beta1, double beta2, double weight_decay, double eps, bool amsgrad,
                    bool maximize, bool decoupled_weight_decay) {
  for_each_param("_fused_adam_", params, grads,
                 {{"exp_avgs", &exp_avgs}, {"exp_avg_sqs", &exp_avg_sqs},
                  {"max_exp_avg_sqs", amsgrad ? &max_exp_avg_sqs : nullptr}},
                 &steps, [&](size_t i, double step) {
    dispatch(params[i]->dtype, [&](auto t, auto ams) {
      using T = decltype(t);
      constexpr bool A = decltype(ams)::value;
      const AdamRule<T, A> rule(step, lr, beta1, beta2, weight_decay, eps, maximize, decoupled_weight_decay);
      apply_rule<T>(rule, params[i], grads[i], std::tie(exp_avgs[i], exp_avg_sqs[i]), keep<A>(max_exp_avg_sqs, i));
    }, amsgrad);
  });
}

void fused_rmsprop_cpu(const TensorList& params, const TensorList& grads,
                       const TensorList& square_avgs, const TensorList& grad_avgs, const TensorList& bufs,
                       const TensorList& steps, double lr, double alpha, double eps, double weight_decay,
                       double momentum, bool centered, bool maximize) {
  const bool use_buf = momentum > 0;
  for_each_param("_fused_rmsprop_", params, grads,
                 {{"square_avgs", &square_avgs}, {"grad_avgs", centered ? &grad_avgs : nullptr},
                  {"momentum_buffers", use_buf ? &bufs : nullptr}},
                 &steps, [&](size_t i, double) {
    dispatch(params[i]->dtype, [&](auto t, auto c, auto m) {
      using T = decltype(t);
      constexpr bool C = decltype(c)::value, M = decltype(m)::value;
      const RmspropRule<T, C, M> rule(lr, alpha, eps, weight_decay, momentum, maximize);
      apply_rule<T>(rule, params[i], grads[i], std::tie(square_avgs[i]), keep<C>(grad_avgs, i), keep<M>(bufs, i));
    }, centered, use_buf);
  });
}

void fused_adagrad_cpu(const TensorList& params, const TensorList& grads, const TensorList& sums,
                       const TensorList& steps, double lr, double lr_decay, double weight_decay, double eps,
                       bool maximize) {
  for_each_param("_fused_adagrad_", params, grads, {{"state_sums", &sums}}, &steps, [&](size_t i, double step) {
    dispatch(params[i]->dtype, [&](auto t) {
      using T = decltype(t);
      apply_rule<T>(AdagradRule<T>(step, lr, lr_decay, weight_decay, eps, maximize), params[i], grads[i],
                    std::tie(sums[i]));
    });
  });
}

void fused_adadelta_cpu(const TensorList& params, const TensorList& grads,
                        const TensorList& square_avgs, const TensorList& acc_deltas, const TensorList& steps,
                        double lr, double rho, double eps, double weight_decay, bool maximize) {
  for_each_param("_fused_adadelta_", params, grads, {{"square_avgs", &square_avgs}, {"acc_deltas", &acc_deltas}},
                 &steps, [&](size_t i, double) {
    dispatch(params[i]->dtype, [&](auto t) {
      using T = decltype(t);
      apply_rule<T>(AdadeltaRule<T>(lr, rho, eps, weight_decay, maximize), params[i], grads[i],
                    std::tie(square_avgs[i], acc_deltas[i]));
    });
  });
}

void fused_adamax_cpu(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
                      const TensorList& exp_infs, const TensorList& steps, double lr, double beta1, double beta2,
                      double eps, double weight_decay, bool maximize) {
  for_each_param("_fused_adamax_", params, grads, {{"exp_avgs", &exp_avgs}, {"exp_infs", &exp_infs}}, &steps,
                 [&](size_t i, double step) {
    dispatch(params[i]->dtype, [&](auto t) {
      using T = decltype(t);
      apply_rule<T>(AdamaxRule<T>(step, lr, beta1, beta2, eps, weight_decay, maximize), params[i], grads[i],
                    std::tie(exp_avgs[i], exp_infs[i]));
    });
  });
}

void fused_nadam_cpu(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
                     const TensorList& exp_avg_sqs, const TensorList& mu_products, const TensorList& steps, double lr,
                     double beta1, double beta2, double eps, double weight_decay, double momentum_decay,
                     bool decoupled_weight_decay, bool maximize) {
  check_scalars("_fused_nadam_", "mu_products", mu_products, params);
  for_each_param("_fused_nadam_", params, grads, {{"exp_avgs", &exp_avgs}, {"exp_avg_sqs", &exp_avg_sqs}}, &steps,
                 [&](size_t i, double step) {
    const double mu = beta1 * (1.0 - 0.5 * std::pow(0.96, step * momentum_decay));
    const double mu_next = beta1 * (1.0 - 0.5 * std::pow(0.96, (step + 1) * momentum_decay));
    // torch's `mu_product *= mu`: a product in the tensor's type (float32 as torch creates it).
    const double mu_product = update_scalar(mu_products[i], [&](auto v) { return v * static_cast<decltype(v)>(mu); });
    dispatch(params[i]->dtype, [&](auto t) {
      using T = decltype(t);
      apply_rule<T>(NadamRule<T>(step, mu, mu_next, mu_product, lr, beta1, beta2, eps, weight_decay,
                                 decoupled_weight_decay, maximize),
                    params[i], grads[i], std::tie(exp_avgs[i], exp_avg_sqs[i]));
    });
  });
}

void fused_radam_cpu(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
                     const TensorList& exp_avg_sqs, const TensorList& steps, double lr, double beta1, double beta2,
                     double eps, double weight_decay, bool decoupled_weight_decay, bool maximize) {
  for_each_param("_fused_radam_", params, grads, {{"exp_avgs", &exp_avgs}, {"exp_avg_sqs", &exp_avg_sqs}}, &steps,
                 [&](size_t i, double step) {
    dispatch(params[i]->dtype, [&](auto t) {
      using T = decltype(t);
      apply_rule<T>(RadamRule<T>(step, lr, beta1, beta2, eps, weight_decay, decoupled_weight_decay, maximize),
                    params[i], grads[i], std::tie(exp_avgs[i], exp_avg_sqs[i]));
    });
  });
}

}  // namespace fl
