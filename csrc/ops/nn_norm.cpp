// CPU kernels of native_layer_norm (layer_norm and rms_norm) and its backward. One pass per row
// over an L1-resident row computes the statistics (mean, then the centered sum of squares, for
// accuracy), a second writes the output; mean and rstd are kept for backward.
#include "nn_norm.h"

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
    A c = lane_sum<A>(n, [&](int64_t i) { return gw(i) * (A(xr[i]) - mu); }) * rs / A(n);
    A a = rms ? A(0) : lane_sum<A>(n, gw) / A(n);
    for (int64_t i = 0; i < n; ++i) out[i] = T(rs * (gw(i) - a - (A(xr[i]) - mu) * rs * c));
    if (dw) for (int64_t i = 0; i < n; ++i) dw[i] += A(gr[i]) * (A(xr[i]) - mu) * rs;
    if (db) for (int64_t i = 0; i < n; ++i) db[i] += A(gr[i]);
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

std::tuple<Tensor, Tensor, Tensor> layer_norm_cpu(DispatchKeySet, const Tensor& input, const IntList& shape,
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

std::tuple<Tensor, Tensor, Tensor> layer_norm_backward_cpu(DispatchKeySet, const Tensor& grad, const Tensor& input,
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

}  // namespace
}  // namespace fl

FL_DEFINE_OP(native_layer_norm,
             "native_layer_norm(Tensor input, int[] normalized_shape, Tensor? weight, Tensor? bias, float eps, bool rms) -> (Tensor, Tensor, Tensor)",
             std::tuple<::fl::Tensor, ::fl::Tensor, ::fl::Tensor>(const ::fl::Tensor&, const ::fl::IntList&,
                                                                 const ::fl::Tensor&, const ::fl::Tensor&, double, bool))
FL_DEFINE_OP(native_layer_norm_backward,
             "native_layer_norm_backward(Tensor grad_out, Tensor input, Tensor mean, Tensor rstd, Tensor? weight, int[] normalized_shape, bool rms, bool param_grads) -> (Tensor, Tensor, Tensor)",
             std::tuple<::fl::Tensor, ::fl::Tensor, ::fl::Tensor>(const ::fl::Tensor&, const ::fl::Tensor&,
                                                                 const ::fl::Tensor&, const ::fl::Tensor&,
                                                                 const ::fl::Tensor&, const ::fl::IntList&, bool, bool))
FL_REGISTER_KERNEL(native_layer_norm, CPU, ::fl::layer_norm_cpu)
FL_REGISTER_KERNEL(native_layer_norm_backward, CPU, ::fl::layer_norm_backward_cpu)
