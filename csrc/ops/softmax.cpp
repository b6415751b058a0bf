// CPU kernels of softmax, log_softmax and their backward ops. Work runs on contiguous rows along
// `dim` (reduce.h's rows_along), rows split across OpenMP threads; float rows use the vector
// helpers of softmax.h in functions cloned for AVX-512, AVX2 and the baseline; float16/bfloat16
// rows are widened to float32 and computed there; float64 rows use scalar loops.
#include "softmax.h"

#include <cmath>
#include <vector>

#include "reduce.h"

namespace fl {
namespace {

using namespace nnvec;

FL_NN_CLONES void fwd_rows_f32(const float* x, float* y, int64_t rows, int64_t n, bool log, bool stream) {
  std::vector<float> e(log ? 0 : static_cast<size_t>(n));  // exp(x - max) of one row, kept in L1
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    const float m = row_max(xr, n);
    if (log) {
      // (x - max) - log(sum): subtracting max first keeps the precision of large logits
      const float c = std::log(exp_shift_sum(xr, nullptr, n, 1.0f, m));
      write_row(yr, n, stream, FL_NN_LAMBDA((load(xr + i) - m) - c), FL_NN_LAMBDA((xr[i] - m) - c));
    } else {
      const float inv = 1.0f / exp_shift_sum(xr, e.data(), n, 1.0f, m);
      const float* er = e.data();
      write_row(yr, n, stream, FL_NN_LAMBDA(load(er + i) * inv), FL_NN_LAMBDA(er[i] * inv));
    }
  }
  if (stream) sfence();
}

FL_NN_CLONES void bwd_rows_f32(const float* g, const float* y, float* gi, int64_t rows, int64_t n, bool log,
                               bool stream) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* gr = g + r * n;
    const float* yr = y + r * n;
    float* out = gi + r * n;
    VF acc = VF{};
    int64_t i = 0;
    if (log) {  // gi = g - exp(y) * sum(g)
      for (; i + kLanes <= n; i += kLanes) acc += load(gr + i);
      float s = hsum(acc);
      for (; i < n; ++i) s += gr[i];
      write_row(out, n, stream, FL_NN_LAMBDA(load(gr + i) - exp_nonpos(load(yr + i)) * s),
                FL_NN_LAMBDA(gr[i] - std::exp(yr[i]) * s));
    } else {  // gi = y * (g - sum(g * y))
      for (; i + kLanes <= n; i += kLanes) acc += load(gr + i) * load(yr + i);
      float s = hsum(acc);
      for (; i < n; ++i) s += gr[i] * yr[i];
      write_row(out, n, stream, FL_NN_LAMBDA(load(yr + i) * (load(gr + i) - s)), FL_NN_LAMBDA(yr[i] * (gr[i] - s)));
    }
  }
  if (stream) sfence();
}

void fwd_rows_f64(const double* x, double* y, int64_t rows, int64_t n, bool log) {
  for (int64_t r = 0; r < rows; ++r) {
    const double* xr = x + r * n;
    double* yr = y + r * n;
    double m = -std::numeric_limits<double>::infinity(), s = 0;
    for (int64_t i = 0; i < n; ++i) m = xr[i] > m ? xr[i] : m;
    if (log) {
      for (int64_t i = 0; i < n; ++i) s += std::exp(xr[i] - m);
      const double c = std::log(s);
      for (int64_t i = 0; i < n; ++i) yr[i] = (xr[i] - m) - c;
    } else {
      for (int64_t i = 0; i < n; ++i) s += (yr[i] = std::exp(xr[i] - m));
      const double inv = 1.0 / s;
      for (int64_t i = 0; i < n; ++i) yr[i] *= inv;
    }
  }
}

void bwd_rows_f64(const double* g, const double* y, double* gi, int64_t rows, int64_t n, bool log) {
  for (int64_t r = 0; r < rows; ++r) {
    const double* gr = g + r * n;
    const double* yr = y + r * n;
    double* out = gi + r * n;
    double s = 0;
    if (log) {
      for (int64_t i = 0; i < n; ++i) s += gr[i];
      for (int64_t i = 0; i < n; ++i) out[i] = gr[i] - std::exp(yr[i]) * s;
    } else {
      for (int64_t i = 0; i < n; ++i) s += gr[i] * yr[i];
      for (int64_t i = 0; i < n; ++i) out[i] = yr[i] * (gr[i] - s);
    }
  }
}

// Runs `rows_f32(inputs..., output, count, n)` on rows of any floating dtype T: float directly,
// float16/bfloat16 through float32 buffers, one row at a time.
template <typename T, typename F32, typename F64>
void run_typed(int nin, const Tensor* ins, const Tensor& out, int64_t rows, int64_t n, F32 f32, F64 f64) {
  if constexpr (std::is_same_v<T, float>) {
    parallel_rows(rows, n, [&](int64_t r0, int64_t cnt) {
      f32(ins[0]->data<float>() + r0 * n, nin > 1 ? ins[1]->data<float>() + r0 * n : nullptr,
          out->data<float>() + r0 * n, cnt, n);
    });
  } else if constexpr (std::is_same_v<T, double>) {
    parallel_rows(rows, n, [&](int64_t r0, int64_t cnt) {
      f64(ins[0]->data<double>() + r0 * n, nin > 1 ? ins[1]->data<double>() + r0 * n : nullptr,
          out->data<double>() + r0 * n, cnt, n);
    });
  } else {
    parallel_rows(rows, n, [&](int64_t r0, int64_t cnt) {
      std::vector<float> buf(static_cast<size_t>(3 * n));
      for (int64_t r = r0; r < r0 + cnt; ++r) {
        for (int k = 0; k < nin; ++k) {
          const T* src = ins[k]->data<T>() + r * n;
          for (int64_t i = 0; i < n; ++i) buf[k * n + i] = static_cast<float>(src[i]);
        }
        f32(buf.data(), nin > 1 ? buf.data() + n : nullptr, buf.data() + 2 * n, 1, n);
        T* dst = out->data<T>() + r * n;
        for (int64_t i = 0; i < n; ++i) dst[i] = T(buf[2 * n + i]);
      }
    });
  }
}

// A 0-dim tensor as a 1-element vector, so that it has a dim to work along.
Tensor at_least_1d(const Tensor& t) { return t->dim() ? t : make_view(t, {1}, {1}, t->offset); }
Tensor like_input(const Tensor& r, const Tensor& input) { return input->dim() ? r : make_view(r, {}, {}, r->offset); }

void check_float(const char* op, ScalarType t) {
  FL_CHECK(is_floating(t), NotImplementedError, "\"", op, "\" not implemented for '", c10_type_name(t), "'");
}

}  // namespace

Tensor softmax_forward(const Tensor& self, int64_t dim, ScalarType dtype, bool log) {
  const char* name = log ? "log_softmax" : "softmax";
  Tensor x = dtype == ScalarType::NumTypes || dtype == self->dtype ? self : to_dtype(self, dtype);
  check_float(log ? "log_softmax_kernel_impl" : "softmax_kernel_impl", x->dtype);
  RowView rv = rows_along(at_least_1d(x), dim, name);
  Tensor out = empty(rv.rows->sizes, x->dtype);
  FL_DISPATCH_FLOATING(x->dtype, name, {
    const bool stream = std::is_same_v<scalar_t, float> && nnvec::stream_output(out->numel * 4);
    run_typed<scalar_t>(1, &rv.rows, out, rv.outer, rv.inner,
        [log, stream](const float* a, const float*, float* o, int64_t c, int64_t n) { fwd_rows_f32(a, o, c, n, log, stream); },
        [log](const double* a, const double*, double* o, int64_t c, int64_t n) { fwd_rows_f64(a, o, c, n, log); });
  });
  return like_input(from_rows(out, rv), x);
}

Tensor softmax_backward_impl(const Tensor& grad, const Tensor& output, int64_t dim, bool log) {
  const char* name = log ? "log_softmax_backward" : "softmax_backward";
  FL_CHECK(grad->sizes == output->sizes, Error, name, ": grad_output of shape ", shape_str(grad->sizes),
           " does not match output of shape ", shape_str(output->sizes));
  check_float(name, output->dtype);
  Tensor g = grad->dtype == output->dtype ? grad : to_dtype(grad, output->dtype);
  Tensor ins[2] = {rows_along(at_least_1d(g), dim, name).rows, Tensor()};
  RowView rv = rows_along(at_least_1d(output), dim, name);
  ins[1] = rv.rows;
  Tensor out = empty(rv.rows->sizes, output->dtype);
  FL_DISPATCH_FLOATING(output->dtype, name, {
    const bool stream = std::is_same_v<scalar_t, float> && nnvec::stream_output(out->numel * 4);
    run_typed<scalar_t>(2, ins, out, rv.outer, rv.inner,
        [log, stream](const float* a, const float* b, float* o, int64_t c, int64_t n) { bwd_rows_f32(a, b, o, c, n, log, stream); },
        [log](const double* a, const double* b, double* o, int64_t c, int64_t n) { bwd_rows_f64(a, b, o, c, n, log); });
  });
  return like_input(from_rows(out, rv), output);
}

}  // namespace fl
