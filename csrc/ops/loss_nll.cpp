// CPU kernels of nll_loss and the fused cross_entropy (see Note [Class-dim geometry] in loss.h).
//
// cross_entropy never materializes log_softmax: the forward keeps, per position, the row maximum
// and log(sum(exp(x - max))) (saved for backward; the loss is formed from (x_t - max) - logsum so
// large logits lose no precision), and the backward recomputes softmax from them and writes the
// gradient of log_softmax + nll + label smoothing in one pass.
#include <omp.h>

#include <cmath>
#include <limits>

#include "../kernels/loops.h"
#include "loss.h"
#include "reduce.h"

namespace fl {
namespace {

using loss_math::exp_f32;
using loss_math::vexp;

// sum(exp(x[j] - m)) with 16 independent lanes so the loop vectorizes.
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) float exp_sum_f32(const float* x, float m, int64_t n) {
  float lane[16] = {};
  int64_t j = 0;
  for (; j + 16 <= n; j += 16)
    for (int k = 0; k < 16; ++k) lane[k] += exp_f32(x[j + k] - m);
  float s = 0;
  for (; j < n; ++j) s += exp_f32(x[j] - m);
  for (int k = 0; k < 16; ++k) s += lane[k];
  return s;
}

// out[j] = a * exp((x[j] - m) - logsum) - b * (w ? w[j] : 1): one row of the cross_entropy gradient.
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) void ce_grad_row_f32(const float* x, float m, float logsum,
                                                                                   float a, float b, const float* w,
                                                                                   float* out, int64_t n) {
  if (w) {
    for (int64_t j = 0; j < n; ++j) out[j] = a * exp_f32((x[j] - m) - logsum) - b * w[j];
  } else {
    for (int64_t j = 0; j < n; ++j) out[j] = a * exp_f32((x[j] - m) - logsum) - b;
  }
}

template <typename T>
T exp_sum(const T* x, T m, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    return exp_sum_f32(x, m, n);
  } else {
    T s = 0;
    for (int64_t j = 0; j < n; ++j) s += std::exp(x[j] - m);
    return s;
  }
}

template <typename T>
void ce_grad_row(const T* x, T m, T logsum, T a, T b, const T* w, T* out, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    ce_grad_row_f32(x, m, logsum, a, b, w, out, n);
  } else {
    for (int64_t j = 0; j < n; ++j) out[j] = a * std::exp((x[j] - m) - logsum) - b * (w ? w[j] : T(1));
  }
}

// The row maximum; NaN when the row holds one (so the loss is NaN, as PyTorch's). Short rows take a
// plain loop: the wide-lane reduction costs more to set up and combine than it saves there.
template <typename T>
T row_max(const T* x, int64_t n) {
  if (n >= 256) return extreme(x, n, true);
  T m = -std::numeric_limits<T>::infinity();
  for (int64_t j = 0; j < n; ++j) m = (x[j] > m || x[j] != x[j]) ? x[j] : m;
  return m;
}

template <typename F>
double parallel_sum(int64_t n, int64_t work_per_item, F&& f) {
  double acc = 0;
  if (n * work_per_item < kParallelGrain || omp_in_parallel()) {
    for (int64_t i = 0; i < n; ++i) acc += f(i);
    return acc;
  }
#pragma omp parallel for schedule(static) reduction(+ : acc)
  for (int64_t i = 0; i < n; ++i) acc += f(i);
  return acc;
}

template <typename F>
void parallel_for(int64_t n, int64_t work_per_item, F&& f) {
  if (n * work_per_item < kParallelGrain || omp_in_parallel()) {
    for (int64_t i = 0; i < n; ++i) f(i);
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) f(i);
}

// ---- argument checks and geometry ------------------------------------------------------------

struct ClassGeometry {
  int64_t N = 1, C = 0, S = 1;
  IntList out_sizes;  // the shape of reduction='none'
  Tensor target;      // int64, contiguous, N * S
};

// PyTorch's checks of nll_loss_nd (and of nll_loss / nll_loss2d below it), with their messages.
ClassGeometry class_geometry(const Tensor& self, const Tensor& target, const Tensor& weight) {
  ClassGeometry g;
  const int64_t d = self->dim();
  FL_CHECK(d >= 1, ValueError, "Expected 1 or more dimensions (got ", d, ")");
  if (d == 1 && target->dim() == 1) {
    FL_CHECK(target->sizes[0] == 1, ValueError, "For 1D input, 1D target must have size 1, but got target size: ",
             target->sizes[0]);
  }
  if (d != 1) {
    const int64_t tb = target->dim() ? target->sizes[0] : 0;
    FL_CHECK(self->sizes[0] == tb, ValueError, "Expected input batch_size (", self->sizes[0],
             ") to match target batch_size (", tb, ").");
  }
  if (d <= 2) {
    FL_CHECK(target->dim() <= 1, Error, "0D or 1D target tensor expected, multi-target not supported");
    const bool no_batch = d == 1;
    FL_CHECK(no_batch || self->sizes[0] == target->sizes[0], Error, "size mismatch (got input: ", shape_str(self->sizes),
             ", target: ", shape_str(target->sizes), ")");
    g.C = self->sizes.back();
    FL_CHECK(!weight || (weight->dim() == 1 && weight->numel == g.C), Error, "weight tensor should be defined either for all ",
             g.C, " classes or no classes but got weight tensor of shape: ", shape_str(weight->sizes));
    g.N = d == 1 ? 1 : self->sizes[0];
    if (d == 2) g.out_sizes = {g.N};
  } else {
    g.N = self->sizes[0];
    g.C = self->sizes[1];
    IntList spatial(self->sizes.begin() + 2, self->sizes.end());
    if (d == 4) {
      FL_CHECK(target->dim() == 3, Error, "only batches of spatial targets supported (3D tensors) but got targets of dimension: ",
               target->dim());
      FL_CHECK(!weight || weight->numel == g.C, Error, "weight tensor should be defined either for all or no classes");
      FL_CHECK(IntList(target->sizes.begin() + 1, target->sizes.end()) == spatial, Error, "size mismatch (got input: ",
               shape_str(self->sizes), " , target: ", shape_str(target->sizes));
    } else {
      IntList expected{g.N};
      expected.insert(expected.end(), spatial.begin(), spatial.end());
      FL_CHECK(IntList(target->sizes.begin() + 1, target->sizes.end()) == spatial, Error, "Expected target size ",
               shape_str(expected), ", got ", shape_str(target->sizes));
      FL_CHECK(!weight || weight->numel == g.C, Error, "weight tensor should be defined either for all or no classes");
    }
    for (int64_t s : spatial) g.S *= s;
    g.out_sizes = target->sizes;
  }
  FL_CHECK(target->dtype == ScalarType::Int64 || target->dtype == ScalarType::UInt8, Error,
           "expected target dtype to be Long or Byte, but got ", c10_type_name(target->dtype));
  FL_CHECK(!weight || weight->dtype == self->dtype, Error, "expected scalar type ", c10_type_name(self->dtype),
           " but found ", c10_type_name(weight->dtype));
  g.target = contiguous(to_dtype(target, ScalarType::Int64));
  return g;
}

// IndexError for the first target outside [0, C) that is not ignore_index (before any work).
void check_targets(const ClassGeometry& g, int64_t ignore_index) {
  const int64_t* t = g.target->data<int64_t>();
  for (int64_t i = 0; i < g.N * g.S; ++i)
    FL_CHECK(t[i] == ignore_index || (t[i] >= 0 && t[i] < g.C), IndexError, "Target ", t[i], " is out of bounds.");
}

LossReduction reduction_of(int64_t r) {
  FL_CHECK(r >= 0 && r <= 2, ValueError, r, " is not a valid value for reduction");
  return static_cast<LossReduction>(r);
}

bool is_reduced_float(ScalarType t) { return t == ScalarType::Float16 || t == ScalarType::BFloat16; }

// The sum of the target weights of the positions that are not ignored.
template <typename T>
double target_weight_sum(const ClassGeometry& g, const T* w, int64_t ignore_index) {
  const int64_t* t = g.target->data<int64_t>();
  double total = 0;
  for (int64_t i = 0; i < g.N * g.S; ++i)
    if (t[i] != ignore_index) total += w ? static_cast<double>(w[t[i]]) : 1.0;
  return total;
}

// ---- nll_loss --------------------------------------------------------------------------------

template <typename T>
std::tuple<Tensor, Tensor> nll_forward(const ClassGeometry& g, const Tensor& x, const Tensor& weight, LossReduction red,
                                       int64_t ignore_index) {
  const T* xp = x->data<T>();
  const T* w = weight ? weight->data<T>() : nullptr;
  const int64_t* t = g.target->data<int64_t>();
  const int64_t C = g.C, S = g.S;
  auto term = [&](int64_t i) -> T {  // position i = n * S + s
    const int64_t c = t[i];
    if (c == ignore_index) return T(0);
    const int64_t n = i / S, s = i % S;
    return -(w ? w[c] : T(1)) * xp[(n * C + c) * S + s];
  };
  const double total = target_weight_sum(g, w, ignore_index);
  Tensor total_weight = scalar_tensor(Scalar(total), x->dtype);
  if (red == LossReduction::None) {
    Tensor out = empty(g.out_sizes, x->dtype);
    T* o = out->data<T>();
    parallel_for(g.N * S, 1, [&](int64_t i) { o[i] = term(i); });
    return {out, total_weight};
  }
  double sum = parallel_sum(g.N * S, 1, [&](int64_t i) { return static_cast<double>(term(i)); });
  if (red == LossReduction::Mean) sum = sum / total;
  return {scalar_tensor(Scalar(sum), x->dtype), total_weight};
}

// The multiplier of position i's gradient: grad[i] (none), grad (sum) or grad / total_weight (mean).
template <typename T>
struct GradCoef {
  const T* g;
  bool per_position;
  T scale;
  T operator()(int64_t i) const { return per_position ? g[i] : scale; }
};

template <typename T>
GradCoef<T> grad_coef(const Tensor& grad, LossReduction red, const Tensor& total_weight) {
  if (red == LossReduction::None) return {grad->data<T>(), true, T(0)};
  T g = grad->data<T>()[0];
  if (red == LossReduction::Mean) g = g / total_weight->data<T>()[0];
  return {nullptr, false, g};
}

template <typename T>
Tensor nll_backward(const ClassGeometry& g, const Tensor& grad, const Tensor& self, const Tensor& weight, LossReduction red,
                    int64_t ignore_index, const Tensor& total_weight) {
  Tensor gi = empty(self->sizes, self->dtype);
  fill(gi, Scalar(0.0));
  T* o = gi->data<T>();
  const T* w = weight ? weight->data<T>() : nullptr;
  const int64_t* t = g.target->data<int64_t>();
  GradCoef<T> coef = grad_coef<T>(grad, red, total_weight);
  parallel_for(g.N * g.S, 1, [&](int64_t i) {
    const int64_t c = t[i];
    if (c == ignore_index) return;
    const int64_t n = i / g.S, s = i % g.S;
    o[(n * g.C + c) * g.S + s] = -(w ? w[c] : T(1)) * coef(i);
  });
  return gi;
}

// Runs `f` on float/double tensors; float16/bfloat16 compute in float32 and the result is cast back.
template <typename F>
Tensor on_opmath(ScalarType dtype, const char* kernel, F&& f) {
  FL_CHECK(is_floating(dtype), NotImplementedError, "\"", kernel, "\" not implemented for '", c10_type_name(dtype), "'");
  if (is_reduced_float(dtype)) return to_dtype(f(ScalarType::Float32), dtype);
  return f(dtype);
}

Tensor as_opmath(const Tensor& t, ScalarType dt) { return t ? contiguous(to_dtype(t, dt)) : t; }

}  // namespace

std::tuple<Tensor, Tensor> nll_loss_cpu(const Tensor& self, const Tensor& target, const Tensor& weight,
                                        int64_t reduction, int64_t ignore_index) {
  const LossReduction red = reduction_of(reduction);
  ClassGeometry g = class_geometry(self, target, weight);
  FL_CHECK(is_floating(self->dtype), NotImplementedError, "\"", self->dim() == 4 ? "nll_loss2d_forward_out_frame" : "nll_loss_out_frame",
           "\" not implemented for '", c10_type_name(self->dtype), "'");
  check_targets(g, ignore_index);
  Tensor total_weight;
  Tensor loss = on_opmath(self->dtype, "nll_loss", [&](ScalarType dt) {
    Tensor x = as_opmath(self, dt), w = as_opmath(weight, dt), out;
    FL_DISPATCH_FLOAT_DOUBLE(dt, "nll_loss", std::tie(out, total_weight) = nll_forward<scalar_t>(g, x, w, red, ignore_index));
    return out;
  });
  return {loss, to_dtype(total_weight, self->dtype)};
}

Tensor nll_loss_backward_cpu(const Tensor& grad, const Tensor& self, const Tensor& target,
                             const Tensor& weight, int64_t reduction, int64_t ignore_index, const Tensor& total_weight) {
  const LossReduction red = reduction_of(reduction);
  ClassGeometry g = class_geometry(self, target, weight);
  return on_opmath(self->dtype, "nll_loss_backward", [&](ScalarType dt) {
    Tensor out;
    FL_DISPATCH_FLOAT_DOUBLE(dt, "nll_loss_backward",
                         out = nll_backward<scalar_t>(g, as_opmath(grad, dt), as_opmath(self, dt), as_opmath(weight, dt),
                                                      red, ignore_index, as_opmath(total_weight, dt)));
    return out;
  });
}

namespace {

// ---- cross_entropy ---------------------------------------------------------------------------

// Per position i: stats[2i] = max over classes, stats[2i + 1] = log(sum(exp(x - max))).
// For S == 1 a position is a contiguous row; otherwise a block of up to kBlock positions of one
// sample is walked class by class with the positions innermost.
constexpr int64_t kBlock = 64;

// One block of `len` positions (stride 1) of a C x S slab: the per-position max and sum(exp(x - max)).
template <typename T>
inline void slab_stats(const T* __restrict base, int64_t C, int64_t S, int64_t len, T* __restrict m,
                       T* __restrict sum) {
  for (int64_t s = 0; s < len; ++s) { m[s] = -std::numeric_limits<T>::infinity(); sum[s] = 0; }
  for (int64_t c = 0; c < C; ++c)
    for (int64_t s = 0; s < len; ++s) {
      const T v = base[c * S + s];
      m[s] = (v > m[s] || v != v) ? v : m[s];  // NaN wins, as in the row maximum
    }
  for (int64_t s = 0; s < len; ++s) m[s] = m[s] == -std::numeric_limits<T>::infinity() ? T(0) : m[s];
  for (int64_t c = 0; c < C; ++c)
    for (int64_t s = 0; s < len; ++s) sum[s] += vexp(base[c * S + s] - m[s]);
}

// One block of the slab's gradient: out[c, s] = a[s] * softmax[c, s] - b[s] * w[c].
template <typename T>
inline void slab_grad(const T* __restrict xs, T* __restrict os, int64_t C, int64_t S, int64_t len, const T* a,
                      const T* b, const T* m, const T* logsum, const T* w) {
  for (int64_t j = 0; j < C; ++j) {
    const T wj = w ? w[j] : T(1);
    for (int64_t s = 0; s < len; ++s) os[j * S + s] = a[s] * vexp((xs[j * S + s] - m[s]) - logsum[s]) - b[s] * wj;
  }
}

__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) void slab_stats_f32(const float* base, int64_t C,
                                                                                  int64_t S, int64_t len, float* m,
                                                                                  float* sum) {
  slab_stats(base, C, S, len, m, sum);
}

__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) void slab_grad_f32(
    const float* xs, float* os, int64_t C, int64_t S, int64_t len, const float* a, const float* b, const float* m,
    const float* logsum, const float* w) {
  slab_grad(xs, os, C, S, len, a, b, m, logsum, w);
}

template <typename T>
void slab_stats_any(const T* base, int64_t C, int64_t S, int64_t len, T* m, T* sum) {
  if constexpr (std::is_same_v<T, float>) slab_stats_f32(base, C, S, len, m, sum);
  else slab_stats(base, C, S, len, m, sum);
}

template <typename T>
void slab_grad_any(const T* xs, T* os, int64_t C, int64_t S, int64_t len, const T* a, const T* b, const T* m,
                   const T* logsum, const T* w) {
  if constexpr (std::is_same_v<T, float>) slab_grad_f32(xs, os, C, S, len, a, b, m, logsum, w);
  else slab_grad(xs, os, C, S, len, a, b, m, logsum, w);
}

template <typename T>
void softmax_stats(const ClassGeometry& g, const T* x, T* stats) {
  const int64_t C = g.C, S = g.S;
  if (S == 1) {
    parallel_for(g.N, C, [&](int64_t n) {
      const T* row = x + n * C;
      const T m = row_max(row, C);
      const T mm = m == -std::numeric_limits<T>::infinity() ? T(0) : m;  // all -inf rows: logsum = -inf, loss NaN
      stats[2 * n] = mm;
      stats[2 * n + 1] = std::log(exp_sum(row, mm, C));
    });
    return;
  }
  const int64_t blocks = (S + kBlock - 1) / kBlock;
  parallel_for(g.N * blocks, C * kBlock, [&](int64_t task) {
    const int64_t n = task / blocks, s0 = (task % blocks) * kBlock, len = std::min(kBlock, S - s0);
    T m[kBlock] = {}, sum[kBlock] = {};
    slab_stats_any(x + n * C * S + s0, C, S, len, m, sum);
    for (int64_t s = 0; s < len; ++s) {
      stats[2 * (n * S + s0 + s)] = m[s];
      stats[2 * (n * S + s0 + s) + 1] = std::log(sum[s]);
    }
  });
}

template <typename T>
std::tuple<Tensor, Tensor, Tensor> ce_forward(const ClassGeometry& g, const Tensor& x, const Tensor& weight,
                                              LossReduction red, int64_t ignore_index, double ls) {
  const T* xp = x->data<T>();
  const T* w = weight ? weight->data<T>() : nullptr;
  const int64_t* t = g.target->data<int64_t>();
  const int64_t C = g.C, S = g.S;
  Tensor stats = empty({g.N * S, 2}, x->dtype);
  T* st = stats->data<T>();
  softmax_stats(g, xp, st);
  double wsum = 0;
  for (int64_t c = 0; c < C; ++c) wsum += w ? static_cast<double>(w[c]) : 1.0;
  // The loss at position i, in double: -log_softmax taken as logsum - (x - max).
  auto term = [&](int64_t i) -> double {
    const int64_t c = t[i];
    if (c == ignore_index) return 0.0;
    const int64_t n = i / S, s = i % S;
    const double m = st[2 * i], logsum = st[2 * i + 1];
    const T* xs = xp + n * C * S + s;
    const double nll = (w ? static_cast<double>(w[c]) : 1.0) * (logsum - (static_cast<double>(xs[c * S]) - m));
    if (ls <= 0) return nll;
    double wx = 0;  // sum_c w_c * (x_c - max)
    for (int64_t k = 0; k < C; ++k) wx += (w ? static_cast<double>(w[k]) : 1.0) * (static_cast<double>(xs[k * S]) - m);
    const double smooth = logsum * wsum - wx;
    return (1.0 - ls) * nll + ls / static_cast<double>(C) * smooth;
  };
  const double total = target_weight_sum(g, w, ignore_index);
  Tensor total_weight = scalar_tensor(Scalar(total), x->dtype);
  if (red == LossReduction::None) {
    Tensor out = empty(g.out_sizes, x->dtype);
    T* o = out->data<T>();
    parallel_for(g.N * S, ls > 0 ? C : 1, [&](int64_t i) { o[i] = static_cast<T>(term(i)); });
    return {out, stats, total_weight};
  }
  double sum = parallel_sum(g.N * S, ls > 0 ? C : 1, term);
  if (red == LossReduction::Mean) sum = sum / total;
  return {scalar_tensor(Scalar(sum), x->dtype), stats, total_weight};
}

// grad_j = coef * ((1 - ls) * w_t * (p_j - [j == t]) + ls / C * (p_j * sum(w) - w_j)), 0 where ignored.
template <typename T>
Tensor ce_backward(const ClassGeometry& g, const Tensor& grad, const Tensor& x, const Tensor& weight, LossReduction red,
                   int64_t ignore_index, double ls, const Tensor& stats, const Tensor& total_weight) {
  const T* xp = x->data<T>();
  const T* w = weight ? weight->data<T>() : nullptr;
  const T* st = stats->data<T>();
  const int64_t* t = g.target->data<int64_t>();
  const int64_t C = g.C, S = g.S;
  ls = ls > 0 ? ls : 0;
  T wsum = 0;
  for (int64_t c = 0; c < C; ++c) wsum += w ? w[c] : T(1);
  const T lsc = static_cast<T>(ls / static_cast<double>(C));
  Tensor gi = empty(x->sizes, x->dtype);
  T* o = gi->data<T>();
  GradCoef<T> coef = grad_coef<T>(grad, red, total_weight);
  if (S == 1) {
    parallel_for(g.N, C, [&](int64_t n) {
      const int64_t c = t[n];
      T* orow = o + n * C;
      if (c == ignore_index) { std::fill(orow, orow + C, T(0)); return; }
      const T k = coef(n), wt = w ? w[c] : T(1);
      const T a = k * (static_cast<T>(1 - ls) * wt + lsc * wsum), b = k * lsc;
      ce_grad_row(xp + n * C, st[2 * n], st[2 * n + 1], a, b, w, orow, C);
      orow[c] -= k * static_cast<T>(1 - ls) * wt;
    });
    return gi;
  }
  // S > 1: blocks of positions of one sample, class by class with the positions innermost.
  const int64_t blocks = (S + kBlock - 1) / kBlock;
  parallel_for(g.N * blocks, C * kBlock, [&](int64_t task) {
    const int64_t n = task / blocks, s0 = (task % blocks) * kBlock, len = std::min(kBlock, S - s0);
    T a[kBlock] = {}, b[kBlock] = {}, m[kBlock] = {}, logsum[kBlock] = {};
    for (int64_t s = 0; s < len; ++s) {
      const int64_t i = n * S + s0 + s, c = t[i];
      m[s] = st[2 * i];
      logsum[s] = st[2 * i + 1];
      const T k = c == ignore_index ? T(0) : coef(i), wt = (w && c != ignore_index) ? w[c] : T(1);
      a[s] = k * (static_cast<T>(1 - ls) * wt + lsc * wsum);
      b[s] = k * lsc;
    }
    const T* xs = xp + n * C * S + s0;
    T* os = o + n * C * S + s0;
    slab_grad_any(xs, os, C, S, len, a, b, m, logsum, w);
    for (int64_t s = 0; s < len; ++s) {
      const int64_t i = n * S + s0 + s, c = t[i];
      if (c == ignore_index) {
        for (int64_t j = 0; j < C; ++j) os[j * S + s] = 0;  // exactly 0, as PyTorch (even next to inf logits)
      } else {
        os[c * S + s] -= coef(i) * static_cast<T>(1 - ls) * (w ? w[c] : T(1));
      }
    }
  });
  return gi;
}

const char* log_softmax_kernel_name(const Tensor& self) {
  return self->dim() <= 2 || self->numel == 0 ? "log_softmax_lastdim_kernel_impl" : "log_softmax_kernel_impl";
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> cross_entropy_loss_cpu(const Tensor& self, const Tensor& target,
                                                          const Tensor& weight, int64_t reduction, int64_t ignore_index,
                                                          double label_smoothing) {
  const LossReduction red = reduction_of(reduction);
  FL_CHECK(is_floating(self->dtype), NotImplementedError, "\"", log_softmax_kernel_name(self), "\" not implemented for '",
           c10_type_name(self->dtype), "'");
  if (label_smoothing > 0)
    FL_CHECK(label_smoothing <= 1.0, Error, "label_smoothing must be between 0.0 and 1.0. Got: ", label_smoothing);
  ClassGeometry g = class_geometry(self, target, weight);
  check_targets(g, ignore_index);
  Tensor stats, total_weight;
  Tensor loss = on_opmath(self->dtype, "cross_entropy", [&](ScalarType dt) {
    Tensor x = as_opmath(self, dt), w = as_opmath(weight, dt), out;
    FL_DISPATCH_FLOAT_DOUBLE(dt, "cross_entropy",
                         std::tie(out, stats, total_weight) = ce_forward<scalar_t>(g, x, w, red, ignore_index, label_smoothing));
    return out;
  });
  return {loss, stats, total_weight};
}

Tensor cross_entropy_loss_backward_cpu(const Tensor& grad, const Tensor& self, const Tensor& target,
                                       const Tensor& weight, int64_t reduction, int64_t ignore_index, double label_smoothing,
                                       const Tensor& stats, const Tensor& total_weight) {
  const LossReduction red = reduction_of(reduction);
  ClassGeometry g = class_geometry(self, target, weight);
  return on_opmath(self->dtype, "cross_entropy_backward", [&](ScalarType dt) {
    Tensor out;
    FL_DISPATCH_FLOAT_DOUBLE(dt, "cross_entropy_backward",
                         out = ce_backward<scalar_t>(g, as_opmath(grad, dt), as_opmath(self, dt), as_opmath(weight, dt),
                                                     red, ignore_index, label_smoothing, as_opmath(stats, dt),
                                                     as_opmath(total_weight, dt)));
    return out;
  });
}

}  // namespace fl
