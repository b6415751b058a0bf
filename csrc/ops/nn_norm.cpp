// CPU kernels of native_layer_norm (layer_norm and rms_norm), native_batch_norm and their backward. One pass per row
// over an L1-resident row computes the statistics (mean, then the centered sum of squares, for
// accuracy), a second writes the output; mean and rstd are kept for backward.
#include "nn_norm.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "reduce.h"
#include "softmax.h"

namespace fl {
namespace {

using nnvec::parallel_rows;

template <typename A, typename F>
FL_NN_INLINE A lane_sum(int64_t n, F f) {
  constexpr int L = 64 / sizeof(A);
  A lane[L] = {};
  int64_t i = 0;
  for (; i + L <= n; i += L)
    for (int j = 0; j < L; ++j) lane[j] += f(i + j);
  A tail = 0;
  for (; i < n; ++i) tail += f(i);
  for (int w = L / 2; w > 0; w /= 2)
    for (int j = 0; j < w; ++j) lane[j] += lane[j + w];
  return lane[0] + tail;
}

// Two sums in one pass: f(i, u, v) adds its terms to the lane accumulators u and v.
template <typename A, typename F>
FL_NN_INLINE std::pair<A, A> lane_sum2(int64_t n, F f) {
  constexpr int L = 64 / sizeof(A);
  A u[L] = {}, v[L] = {};
  int64_t i = 0;
  for (; i + L <= n; i += L)
    for (int j = 0; j < L; ++j) f(i + j, u[j], v[j]);
  A tu = 0, tv = 0;
  for (; i < n; ++i) f(i, tu, tv);
  for (int w = L / 2; w > 0; w /= 2)
    for (int j = 0; j < w; ++j) {
      u[j] += u[j + w];
      v[j] += v[j + w];
    }
  return {u[0] + tu, v[0] + tv};
}

// mean (0 for rms) and 1 / sqrt(var + eps) of one row.
template <typename T, typename A = opmath_t<T>>
FL_NN_INLINE std::pair<A, A> row_stats(const T* xr, int64_t n, double eps, bool rms) {
  const A mu = rms ? A(0) : lane_sum<A>(n, [&](int64_t i) { return A(xr[i]); }) / A(n);
  const A var = lane_sum<A>(n, [&](int64_t i) { A d = A(xr[i]) - mu; return d * d; }) / A(n);
  return {mu, A(1) / std::sqrt(var + A(eps))};
}

template <typename T, typename A = opmath_t<T>>
void fwd_rows(const T* x, const T* w, const T* b, T* y, A* mean, A* rstd, int64_t r0, int64_t rows, int64_t n,
              double eps, bool rms) {
  for (int64_t r = r0; r < r0 + rows; ++r) {
    const T* xr = x + r * n;
    T* yr = y + r * n;
    const auto [mu, rs] = row_stats<T>(xr, n, eps, rms);
    mean[r] = mu;
    rstd[r] = rs;
    for (int64_t i = 0; i < n; ++i) yr[i] = T((A(xr[i]) - mu) * rs * (w ? A(w[i]) : A(1)) + (b ? A(b[i]) : A(0)));
  }
}

// grad_input rows, and per-thread partial sums of g * xhat (dw) and g (db) when those are non-null.
template <typename T, typename A = opmath_t<T>>
FL_NN_INLINE void bwd_rows(const T* g, const T* x, const A* mean, const A* rstd, const T* w, T* gx, A* dw, A* db,
                           int64_t r0, int64_t rows, int64_t n, bool rms) {
  for (int64_t r = r0; r < r0 + rows; ++r) {
    const T* gr = g + r * n;
    const T* xr = x + r * n;
    T* out = gx + r * n;
    const A mu = mean[r], rs = rstd[r];
    auto gw = [&](int64_t i) { return w ? A(gr[i]) * A(w[i]) : A(gr[i]); };
    // both row sums in one pass, then grad_input, then the parameter gradients in one pass
    const std::pair<A, A> sums = lane_sum2<A>(n, [&](int64_t i, A& u, A& v) {
      const A t = gw(i);
      u += t * (A(xr[i]) - mu);
      v += t;
    });
    const A c = sums.first * rs / A(n), a = rms ? A(0) : sums.second / A(n);
    for (int64_t i = 0; i < n; ++i) out[i] = T(rs * (gw(i) - a - (A(xr[i]) - mu) * rs * c));
    if (dw && db) {
      for (int64_t i = 0; i < n; ++i) {
        dw[i] += A(gr[i]) * (A(xr[i]) - mu) * rs;
        db[i] += A(gr[i]);
      }
    } else {
      if (dw) for (int64_t i = 0; i < n; ++i) dw[i] += A(gr[i]) * (A(xr[i]) - mu) * rs;
      if (db) for (int64_t i = 0; i < n; ++i) db[i] += A(gr[i]);
    }
  }
}

// w and b are never null here (the caller passes ones / zeros), so the output is one FMA chain.
FL_NN_CLONES void fwd_rows_f32(const float* x, const float* w, const float* b, float* y, float* mean, float* rstd,
                               int64_t r0, int64_t rows, int64_t n, double eps, bool rms, bool stream) {
  using namespace nnvec;
  for (int64_t r = r0; r < r0 + rows; ++r) {
    const float* xr = x + r * n;
    const std::pair<float, float> st = row_stats<float>(xr, n, eps, rms);
    const float mu = st.first, rs = st.second;  // plain variables: lambdas capture them below
    mean[r] = mu;
    rstd[r] = rs;
    write_row(y + r * n, n, stream, FL_NN_LAMBDA((load(xr + i) - mu) * rs * load(w + i) + load(b + i)),
              FL_NN_LAMBDA((xr[i] - mu) * rs * w[i] + b[i]));
  }
  if (stream) sfence();
}
FL_NN_CLONES void bwd_rows_f32(const float* g, const float* x, const float* mean, const float* rstd, const float* w,
                               float* gx, float* dw, float* db, int64_t r0, int64_t rows, int64_t n, bool rms) {
  bwd_rows<float>(g, x, mean, rstd, w, gx, dw, db, r0, rows, n, rms);
}

// The float rows take the cloned kernels; other dtypes the portable template.
template <typename T, typename A>
void fwd_any(const T* x, const T* w, const T* b, T* y, A* mean, A* rstd, int64_t r0, int64_t rows, int64_t n,
             double eps, bool rms, bool /*stream*/) {
  fwd_rows<T>(x, w, b, y, mean, rstd, r0, rows, n, eps, rms);
}
void fwd_any(const float* x, const float* w, const float* b, float* y, float* mean, float* rstd, int64_t r0,
             int64_t rows, int64_t n, double eps, bool rms, bool stream) {
  std::vector<float> ones, zeros;
  if (!w) ones.assign(static_cast<size_t>(n), 1.0f);
  if (!b) zeros.assign(static_cast<size_t>(n), 0.0f);
  fwd_rows_f32(x, w ? w : ones.data(), b ? b : zeros.data(), y, mean, rstd, r0, rows, n, eps, rms, stream);
}
template <typename T, typename A>
void bwd_any(const T* g, const T* x, const A* mean, const A* rstd, const T* w, T* gx, A* dw, A* db, int64_t r0,
             int64_t rows, int64_t n, bool rms) {
  bwd_rows<T>(g, x, mean, rstd, w, gx, dw, db, r0, rows, n, rms);
}
void bwd_any(const float* g, const float* x, const float* mean, const float* rstd, const float* w, float* gx, float* dw,
             float* db, int64_t r0, int64_t rows, int64_t n, bool rms) {
  bwd_rows_f32(g, x, mean, rstd, w, gx, dw, db, r0, rows, n, rms);
}

template <typename T>
const T* ptr_or_null(const Tensor& t) { return t ? t->data<const T>() : nullptr; }

// Splits input into (rows, n) with n = prod(normalized_shape), checking shapes as PyTorch does.
int64_t normalized_numel(const char* op, const Tensor& x, const IntList& shape, const Tensor& w, const Tensor& b) {
  const int64_t k = static_cast<int64_t>(shape.size());
  FL_CHECK(k >= 1, Error, op, ": Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one element, but got normalized_shape = ", shape_str(shape));
  for (const Tensor* p : {&w, &b})
    FL_CHECK(!*p || (*p)->sizes == shape, Error, op, ": Expected ", p == &w ? "weight" : "bias",
             " to be of same shape as normalized_shape, but got ", p == &w ? "weight" : "bias", " of shape ",
             shape_str((*p)->sizes), " and normalized_shape = ", shape_str(shape));
  bool ok = x->dim() >= k;
  for (int64_t i = 0; ok && i < k; ++i) ok = x->sizes[x->dim() - k + i] == shape[i];
  if (!ok) {
    std::string expected = "[*";
    for (int64_t s : shape) expected += ", " + std::to_string(s);
    throw Error(str_cat(op, ": Given normalized_shape=", shape_str(shape), ", expected input with shape ", expected,
                        "], but got input of size", shape_str(x->sizes)));
  }
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

Tensor as_dtype(const Tensor& t, ScalarType dt) { return !t ? t : row_major(t->dtype == dt ? t : to_dtype(t, dt)); }
ScalarType stats_dtype(ScalarType t) { return t == ScalarType::Float64 ? t : ScalarType::Float32; }

}  // namespace

std::tuple<Tensor, Tensor, Tensor> native_layer_norm_cpu(const Tensor& input, const IntList& shape,
                                                         const Tensor& weight, const Tensor& bias, double eps, bool rms) {
  const char* op = rms ? "rms_norm" : "layer_norm";
  const int64_t n = normalized_numel(op, input, shape, weight, bias);
  FL_CHECK(is_floating(input->dtype), NotImplementedError, "\"LayerNormKernelImpl\" not implemented for '", c10_type_name(input->dtype), "'");
  Tensor x = row_major(input), w = as_dtype(weight, x->dtype), b = as_dtype(bias, x->dtype);
  const int64_t rows = n ? x->numel / n : 0;
  Tensor y = empty(x->sizes, x->dtype);
  Tensor mean = empty({rows}, stats_dtype(x->dtype)), rstd = empty({rows}, stats_dtype(x->dtype));
  if (n == 0) return {y, mean, rstd};
  FL_DISPATCH_FLOATING(x->dtype, op, {
    using A = opmath_t<scalar_t>;
    const bool stream = nnvec::stream_output(y->numel * static_cast<int64_t>(y->itemsize()));
    parallel_rows(rows, n, [&](int64_t r0, int64_t cnt) {
      fwd_any(x->data<scalar_t>(), ptr_or_null<scalar_t>(w), ptr_or_null<scalar_t>(b), y->data<scalar_t>(),
              mean->data<A>(), rstd->data<A>(), r0, cnt, n, eps, rms, stream);
    });
  });
  return {y, mean, rstd};
}

std::tuple<Tensor, Tensor, Tensor> native_layer_norm_backward_cpu(const Tensor& grad, const Tensor& input,
                                                                  const Tensor& mean, const Tensor& rstd, const Tensor& weight,
                                                                  const IntList& shape, bool rms, bool param_grads) {
  const char* op = rms ? "rms_norm_backward" : "layer_norm_backward";
  const int64_t n = normalized_numel(op, input, shape, weight, nullptr);
  FL_CHECK(grad->sizes == input->sizes, Error, op, ": grad_output of shape ", shape_str(grad->sizes),
           " does not match input of shape ", shape_str(input->sizes));
  Tensor x = row_major(input), g = as_dtype(grad, x->dtype), w = as_dtype(weight, x->dtype);
  const int64_t rows = n ? x->numel / n : 0;
  Tensor gx = empty(x->sizes, x->dtype), gw, gb;
  FL_DISPATCH_FLOATING(x->dtype, op, {
    using A = opmath_t<scalar_t>;
    const int nt = omp_in_parallel() ? 1 : omp_get_max_threads();
    // one (dw, db) accumulator pair per thread, summed in thread order (deterministic)
    std::vector<A> part(param_grads ? static_cast<size_t>(nt) * 2 * n : 0, A(0));
    Tensor m = as_dtype(mean, stats_dtype(x->dtype)), s = as_dtype(rstd, stats_dtype(x->dtype));
    parallel_rows(rows, n, [&](int64_t r0, int64_t cnt) {
      const int tid = nt == 1 ? 0 : omp_get_thread_num();
      A* dw = param_grads ? part.data() + static_cast<size_t>(tid) * 2 * n : nullptr;
      A* db = dw ? dw + n : nullptr;
      bwd_any(g->data<scalar_t>(), x->data<scalar_t>(), m->data<A>(), s->data<A>(), ptr_or_null<scalar_t>(w),
              gx->data<scalar_t>(), dw, db, r0, cnt, n, rms);
    });
    if (param_grads) {
      gw = empty(shape, x->dtype);
      gb = empty(shape, x->dtype);
      for (int64_t i = 0; i < n; ++i) {
        A sw = 0, sb = 0;
        for (int t = 0; t < nt; ++t) { sw += part[t * 2 * n + i]; sb += part[t * 2 * n + n + i]; }
        gw->data<scalar_t>()[i] = scalar_t(sw);
        gb->data<scalar_t>()[i] = scalar_t(sb);
      }
    }
  });
  return {gx, gw, gb};
}

namespace {

// ---- batch_norm: statistics per channel of an (N, C, S) input -------------------------------------
// Note [batch_norm passes] Forward reads x twice in training (mean, then the centered sum of squares,
// for accuracy) and writes y = x * scale + shift once (PyTorch's alpha/beta form); backward reads
// (g, x) once for the two channel sums and once more to write grad_input. Sums use float lanes
// (vectorized) over blocks of 4096 elements, accumulated in double.

struct Channels {
  int64_t N, C, S;
};
Channels channels_of(const Tensor& x) {
  const int64_t N = x->sizes[0], C = x->sizes[1];
  return {N, C, N * C ? x->numel / (N * C) : 0};
}

// f(c) for every channel, over the OpenMP threads when the input is large.
template <typename F>
void for_channels(const Channels& l, F f) {
  const bool par = l.N * l.C * l.S >= kParallelGrain && l.C > 1 && !omp_in_parallel();
#pragma omp parallel for schedule(static) if (par)
  for (int64_t c = 0; c < l.C; ++c) f(c);
}

// sum over the batch of f(plane, i) for i < S, where plane is sample n's pointer offset of channel c.
template <typename A, typename F>
double channel_sum(const Channels& l, int64_t c, F f) {
  constexpr int64_t kBlock = 4096;  // float lanes within a block, double across blocks (large planes stay exact)
  double total = 0;
  for (int64_t n = 0; n < l.N; ++n)
    for (int64_t b = 0; b < l.S; b += kBlock) {
      const int64_t base = (n * l.C + c) * l.S + b;
      total += lane_sum<A>(std::min(kBlock, l.S - b), [&](int64_t i) { return f(base + i); });
    }
  return total;
}

// running = (1 - momentum) * running + momentum * value, in the running tensor's dtype.
void update_running(const Tensor& running, const std::vector<double>& value, double momentum) {
  if (!running) return;
  // C elements in any one-dimensional layout (a strided view updates in place, as in PyTorch)
  FL_CHECK(running->contiguous || running->dim() == 1, Error, "batch_norm: running statistics of shape ",
           shape_str(running->sizes), " must be one-dimensional or contiguous");
  const int64_t stride = running->contiguous ? 1 : running->strides[0];
  FL_DISPATCH_FLOATING(running->dtype, "batch_norm", {
    scalar_t* r = running->data<scalar_t>();
    for (size_t c = 0; c < value.size(); ++c) {
      scalar_t& v = r[static_cast<int64_t>(c) * stride];
      v = scalar_t((1 - momentum) * double(v) + momentum * value[c]);
    }
  });
  running->bump_version();
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> native_batch_norm_cpu(const Tensor& input, const Tensor& weight,
                                                         const Tensor& bias, const Tensor& running_mean,
                                                         const Tensor& running_var, bool training, double momentum,
                                                         double eps) {
  FL_CHECK(input->dim() >= 2, Error, "batch_norm: expected 2D or more input (got ", input->dim(), "D input)");
  FL_CHECK(is_floating(input->dtype), NotImplementedError, "\"batch_norm\" not implemented for '",
           c10_type_name(input->dtype), "'");
  const Channels l = channels_of(input);
  for (const auto& [name, t] : {std::pair<const char*, const Tensor*>{"weight", &weight}, {"bias", &bias},
                                {"running_mean", &running_mean}, {"running_var", &running_var}})
    FL_CHECK(!*t || (*t)->numel == l.C, Error, "batch_norm: ", name, " should contain ", l.C, " elements not ",
             (*t)->numel, " (input of shape ", shape_str(input->sizes), ")");
  FL_CHECK(training || (running_mean && running_var), Error,
           "batch_norm: running_mean and running_var are required in evaluation mode");
  const int64_t M = l.N * l.S;
  FL_CHECK(!training || M != 1, ValueError, "Expected more than 1 value per channel when training, got input size ",
           shape_str(input->sizes));
  Tensor x = row_major(input), w = as_dtype(weight, x->dtype), b = as_dtype(bias, x->dtype);
  Tensor y = empty(x->sizes, x->dtype);
  const ScalarType sdt = stats_dtype(x->dtype);
  Tensor mean = empty({l.C}, sdt), invstd = empty({l.C}, sdt);
  Tensor rm = training ? Tensor() : as_dtype(running_mean, ScalarType::Float64);
  Tensor rv = training ? Tensor() : as_dtype(running_var, ScalarType::Float64);
  std::vector<double> batch_mean(l.C), batch_var(l.C);
  FL_DISPATCH_FLOATING(x->dtype, "batch_norm", {
    using A = opmath_t<scalar_t>;
    const scalar_t *xp = x->data<scalar_t>(), *wp = ptr_or_null<scalar_t>(w), *bp = ptr_or_null<scalar_t>(b);
    scalar_t* yp = y->data<scalar_t>();
    A *mp = mean->data<A>(), *ip = invstd->data<A>();
    for_channels(l, [&](int64_t c) {
      double mu, var;
      if (training) {
        mu = M ? channel_sum<A>(l, c, [&](int64_t i) { return A(xp[i]); }) / double(M) : 0.0;
        const A muA = A(mu);
        var = M ? channel_sum<A>(l, c, [&](int64_t i) { const A d = A(xp[i]) - muA; return d * d; }) / double(M) : 0.0;
        batch_mean[c] = mu;
        batch_var[c] = M > 1 ? var * double(M) / double(M - 1) : var;
      } else {
        mu = rm->data<double>()[c];
        var = rv->data<double>()[c];
      }
      const double is = 1.0 / std::sqrt(var + eps);
      mp[c] = A(mu);
      ip[c] = A(is);
      const A scale = A(is * (wp ? double(wp[c]) : 1.0)), shift = A((bp ? double(bp[c]) : 0.0) - mu * double(scale));
      for (int64_t n = 0; n < l.N; ++n) {
        const int64_t base = (n * l.C + c) * l.S;
        for (int64_t i = 0; i < l.S; ++i) yp[base + i] = scalar_t(A(xp[base + i]) * scale + shift);
      }
    });
  });
  if (training && x->numel > 0) {  // an empty batch leaves the running statistics alone, as in PyTorch
    update_running(running_mean, batch_mean, momentum);
    update_running(running_var, batch_var, momentum);
  }
  return {y, mean, invstd};
}

std::tuple<Tensor, Tensor, Tensor> native_batch_norm_backward_cpu(const Tensor& grad_out, const Tensor& input,
                                                                  const Tensor& weight, const Tensor& save_mean,
                                                                  const Tensor& save_invstd, bool training, bool param_grads) {
  FL_CHECK(grad_out->sizes == input->sizes, Error, "batch_norm_backward: grad_output of shape ",
           shape_str(grad_out->sizes), " does not match input of shape ", shape_str(input->sizes));
  const Channels l = channels_of(input);
  const int64_t M = l.N * l.S;
  Tensor x = row_major(input), g = as_dtype(grad_out, x->dtype), w = as_dtype(weight, x->dtype);
  Tensor gx = empty(x->sizes, x->dtype), gw, gb;
  if (param_grads) {
    gw = empty({l.C}, x->dtype);
    gb = empty({l.C}, x->dtype);
  }
  FL_DISPATCH_FLOATING(x->dtype, "batch_norm_backward", {
    using A = opmath_t<scalar_t>;
    Tensor m = as_dtype(save_mean, stats_dtype(x->dtype)), is = as_dtype(save_invstd, stats_dtype(x->dtype));
    const scalar_t *xp = x->data<scalar_t>(), *gp = g->data<scalar_t>(), *wp = ptr_or_null<scalar_t>(w);
    scalar_t* gxp = gx->data<scalar_t>();
    for_channels(l, [&](int64_t c) {
      const A mu = m->data<A>()[c], inv = is->data<A>()[c];
      const double sum_g = channel_sum<A>(l, c, [&](int64_t i) { return A(gp[i]); });
      const double sum_gxc = channel_sum<A>(l, c, [&](int64_t i) { return A(gp[i]) * (A(xp[i]) - mu); });
      if (param_grads) {
        gw->data<scalar_t>()[c] = scalar_t(sum_gxc * double(inv));
        gb->data<scalar_t>()[c] = scalar_t(sum_g);
      }
      const A ws = inv * (wp ? A(wp[c]) : A(1));
      // training: the batch statistics depend on x, which adds the two mean terms
      const A gmean = training && M ? A(sum_g / double(M)) : A(0);
      const A k = training && M ? A(sum_gxc / double(M)) * inv * inv : A(0);
      for (int64_t n = 0; n < l.N; ++n) {
        const int64_t base = (n * l.C + c) * l.S;
        for (int64_t i = 0; i < l.S; ++i)
          gxp[base + i] = scalar_t((A(gp[base + i]) - gmean - (A(xp[base + i]) - mu) * k) * ws);
      }
    });
  });
  return {gx, gw, gb};
}

}  // namespace fl
