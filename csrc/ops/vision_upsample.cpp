// upsample and upsample_backward for every mode of F.interpolate.
//
// Every mode is separable: the result is a chain of 1-D resampling passes, one per spatial dim
// (last dim first), each output position reading a few taps (index, weight) of its input line:
// nearest 1 tap, linear 2, cubic 4, area (adaptive average pooling) one per element of its window.
// Taking the passes last dim first evaluates exactly PyTorch's expression
// h0 * (w0 * x00 + w1 * x01) + h1 * (...), so results match bit for bit where PyTorch's CPU kernel
// does the same. The backward runs the transposed passes in reverse order.
#include <omp.h>

#include <cmath>

#include "../core/dispatch.h"
#include "../kernels/loops.h"
#include "vision.h"

namespace fl {
namespace {

template <typename T>
struct Taps {
  int64_t width = 1;
  std::vector<int64_t> idx;  // [out, width]
  std::vector<T> w;          // [out, width]
  bool identity = false;
};

template <typename T>
T compute_scale(int64_t in, int64_t out, bool align_corners, double scale) {
  if (align_corners) return out > 1 ? static_cast<T>(in - 1) / static_cast<T>(out - 1) : T(0);
  return scale > 0 ? static_cast<T>(1.0 / scale) : static_cast<T>(in) / static_cast<T>(out);
}

template <typename T>
Taps<T> make_taps(int64_t in, int64_t out, UpsampleMode mode, bool align_corners, double scale) {
  Taps<T> tp;
  switch (mode) {
    case UpsampleMode::Nearest:
    case UpsampleMode::NearestExact: {
      tp.idx.resize(out);
      tp.w.assign(out, T(1));
      const float s = scale > 0 ? static_cast<float>(1.0 / scale) : static_cast<float>(in) / static_cast<float>(out);
      for (int64_t o = 0; o < out; ++o) {
        int64_t i;
        if (mode == UpsampleMode::NearestExact) i = static_cast<int64_t>(std::floor(static_cast<float>((o + 0.5) * s)));
        else if (out == in) i = o;
        else if (out == 2 * in) i = o >> 1;
        else i = static_cast<int64_t>(std::floor(o * s));
        tp.idx[o] = std::min(i, in - 1);
      }
      break;
    }
    case UpsampleMode::Linear:
    case UpsampleMode::Cubic: {
      const bool cubic = mode == UpsampleMode::Cubic;
      tp.width = cubic ? 4 : 2;
      tp.idx.resize(out * tp.width);
      tp.w.resize(out * tp.width);
      const T s = compute_scale<T>(in, out, align_corners, scale);
      for (int64_t o = 0; o < out; ++o) {
        T real = align_corners ? s * static_cast<T>(o) : s * (static_cast<T>(o) + T(0.5)) - T(0.5);
        if (!cubic && real < 0) real = 0;
        const int64_t i0 = std::min(static_cast<int64_t>(std::floor(real)), in - 1);
        const T lambda = std::min(std::max(real - static_cast<T>(i0), T(0)), T(1));
        int64_t* ix = &tp.idx[o * tp.width];
        T* wt = &tp.w[o * tp.width];
        if (cubic) {
          cubic_coefficients(wt, lambda);
          for (int j = 0; j < 4; ++j) ix[j] = std::max<int64_t>(std::min<int64_t>(i0 - 1 + j, in - 1), 0);
        } else {
          ix[0] = i0;
          ix[1] = i0 + (i0 < in - 1 ? 1 : 0);
          wt[0] = 1 - lambda;
          wt[1] = lambda;
        }
      }
      break;
    }
    case UpsampleMode::Area: {
      auto start = [&](int64_t o) { return static_cast<int64_t>(std::floor(static_cast<float>(o * in) / out)); };
      auto end = [&](int64_t o) { return static_cast<int64_t>(std::ceil(static_cast<float>((o + 1) * in) / out)); };
      for (int64_t o = 0; o < out; ++o) tp.width = std::max(tp.width, end(o) - start(o));
      tp.idx.resize(out * tp.width);
      tp.w.assign(out * tp.width, T(0));
      for (int64_t o = 0; o < out; ++o) {
        const int64_t b = start(o), e = end(o);
        for (int64_t j = 0; j < tp.width; ++j) {
          tp.idx[o * tp.width + j] = j < e - b ? b + j : b;
          if (j < e - b) tp.w[o * tp.width + j] = T(1) / static_cast<T>(e - b);
        }
      }
      break;
    }
  }
  tp.identity = in == out;
  for (int64_t o = 0; o < out && tp.identity; ++o)
    for (int64_t j = 0; j < tp.width && tp.identity; ++j)
      tp.identity = j == 0 ? (tp.idx[o * tp.width] == o && tp.w[o * tp.width] == T(1)) : tp.w[o * tp.width + j] == T(0);
  return tp;
}

constexpr int64_t kInnerBlock = 1024;

// dst[b, o, k] = sum_t w[o, t] * src[b, idx[o, t], k] over [outer, L, inner] lines.
// Lines along the innermost dim (inner == 1): one gather per output, the width fixed at compile
// time for the common cases.
template <typename T, int W>
void resample_last_dim(const T* src, T* dst, int64_t outer, int64_t lin, int64_t lout, const Taps<T>& tp) {
  const int64_t width = W > 0 ? W : tp.width;
  const int64_t* ix = tp.idx.data();
  const T* wt = tp.w.data();
#pragma omp parallel for if (outer * lout * width >= kParallelGrain) schedule(static)
  for (int64_t b = 0; b < outer; ++b) {
    const T* s = src + b * lin;
    T* d = dst + b * lout;
    for (int64_t o = 0; o < lout; ++o) {
      const int64_t* io = ix + o * width;
      const T* wo = wt + o * width;
      T acc = wo[0] * s[io[0]];
      for (int64_t j = 1; j < width; ++j) acc += wo[j] * s[io[j]];
      d[o] = acc;
    }
  }
}

template <typename T>
void resample_forward(const T* src, T* dst, int64_t outer, int64_t lin, int64_t lout, int64_t inner, const Taps<T>& tp) {
  if (inner == 1) {
    switch (tp.width) {
      case 1: return resample_last_dim<T, 1>(src, dst, outer, lin, lout, tp);
      case 2: return resample_last_dim<T, 2>(src, dst, outer, lin, lout, tp);
      case 4: return resample_last_dim<T, 4>(src, dst, outer, lin, lout, tp);
      default: return resample_last_dim<T, 0>(src, dst, outer, lin, lout, tp);
    }
  }
  const int64_t W = tp.width, items = outer * lout;
#pragma omp parallel for if (items * inner * W >= kParallelGrain) schedule(static)
  for (int64_t it = 0; it < items; ++it) {
    const int64_t b = it / lout, o = it % lout;
    const int64_t* ix = &tp.idx[o * W];
    const T* wt = &tp.w[o * W];
    const T* s = src + b * lin * inner;
    T* d = dst + it * inner;
    const T* s0 = s + ix[0] * inner;
    for (int64_t k = 0; k < inner; ++k) d[k] = wt[0] * s0[k];
    for (int64_t j = 1; j < W; ++j) {
      const T* sj = s + ix[j] * inner;
      const T wj = wt[j];
      for (int64_t k = 0; k < inner; ++k) d[k] += wj * sj[k];
    }
  }
}

// The transpose: gsrc[b, idx[o, t], k] += w[o, t] * gdst[b, o, k]; gsrc starts at zero. Parallel
// over (line, block of the inner dim), the pieces that never write the same element.
template <typename T>
void resample_backward(T* gsrc, const T* gdst, int64_t outer, int64_t lin, int64_t lout, int64_t inner,
                       const Taps<T>& tp) {
  const int64_t W = tp.width, nkb = (inner + kInnerBlock - 1) / kInnerBlock, items = outer * nkb;
#pragma omp parallel for if (outer * lout * inner * W >= kParallelGrain) schedule(static)
  for (int64_t it = 0; it < items; ++it) {
    const int64_t b = it / nkb, k0 = (it % nkb) * kInnerBlock, k1 = std::min(inner, k0 + kInnerBlock);
    T* gs = gsrc + b * lin * inner;
    const T* gd = gdst + b * lout * inner;
    for (int64_t o = 0; o < lout; ++o) {
      const T* g = gd + o * inner;
      for (int64_t j = 0; j < W; ++j) {
        const T wj = tp.w[o * W + j];
        if (wj == T(0)) continue;
        T* t = gs + tp.idx[o * W + j] * inner;
        for (int64_t k = k0; k < k1; ++k) t[k] += wj * g[k];
      }
    }
  }
}

struct Plan {
  IntList in_sizes, out_sizes;  // full shapes
  UpsampleMode mode;
  bool align_corners;
  std::vector<double> scales;
};

Plan make_plan(const char* op, const IntList& in_sizes, const IntList& output_size, int64_t mode, bool align_corners,
               const std::vector<double>& scales) {
  const int64_t nd = static_cast<int64_t>(output_size.size());
  FL_CHECK(nd >= 1 && nd <= 3 && static_cast<int64_t>(in_sizes.size()) == nd + 2, Error, op,
           ": expected a ", nd + 2, "-D input for ", nd, " output sizes, but got input of size ", shape_str(in_sizes));
  FL_CHECK(scales.empty() || static_cast<int64_t>(scales.size()) == nd, Error, op, ": expected ", nd,
           " scales, got ", scales.size());
  FL_CHECK(mode >= 0 && mode <= 4, ValueError, op, ": unknown mode ", mode);
  bool ok = true;
  for (int64_t d = 0; d < nd; ++d) ok = ok && in_sizes[d + 2] > 0 && output_size[d] > 0;
  if (!ok) {
    std::string msg = "Input and output sizes should be greater than 0, but got input (";
    const char* names[] = {"D", "H", "W"};
    for (int64_t d = 0; d < nd; ++d) msg += str_cat(d ? ", " : "", names[3 - nd + d], ": ", in_sizes[d + 2]);
    msg += ") output (";
    for (int64_t d = 0; d < nd; ++d) msg += str_cat(d ? ", " : "", names[3 - nd + d], ": ", output_size[d]);
    throw Error(msg + ")");
  }
  Plan p{in_sizes, in_sizes, static_cast<UpsampleMode>(mode), align_corners, scales};
  for (int64_t d = 0; d < nd; ++d) p.out_sizes[d + 2] = output_size[d];
  return p;
}

double scale_of(const Plan& p, int64_t d) { return p.scales.empty() ? -1.0 : p.scales[d - 2]; }

template <typename T>
Tensor upsample_impl(const Tensor& x, const Plan& p, bool saturate_uint8 = false) {
  Tensor cur = x;
  IntList sizes = p.in_sizes;
  const int64_t ndim = static_cast<int64_t>(sizes.size());
  for (int64_t d = ndim - 1; d >= 2; --d) {
    Taps<T> tp = make_taps<T>(sizes[d], p.out_sizes[d], p.mode, p.align_corners, scale_of(p, d));
    if (tp.identity) continue;
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < d; ++i) outer *= sizes[i];
    for (int64_t i = d + 1; i < ndim; ++i) inner *= sizes[i];
    const int64_t lin = sizes[d];
    sizes[d] = p.out_sizes[d];
    Tensor next = empty(sizes, x->dtype);
    resample_forward<T>(cur->data<const T>(), next->data<T>(), outer, lin, sizes[d], inner, tp);
    if (saturate_uint8) {
      T* v = next->data<T>();
      for (int64_t i = 0; i < next->numel; ++i) v[i] = std::min(std::max(std::nearbyint(v[i]), T(0)), T(255));
    }
    cur = next;
  }
  return cur == x ? clone(x) : cur;
}

template <typename T>
Tensor upsample_backward_impl(const Tensor& g, const Plan& p) {
  Tensor cur = g;
  IntList sizes = p.out_sizes;
  const int64_t ndim = static_cast<int64_t>(sizes.size());
  for (int64_t d = 2; d < ndim; ++d) {
    Taps<T> tp = make_taps<T>(p.in_sizes[d], p.out_sizes[d], p.mode, p.align_corners, scale_of(p, d));
    if (tp.identity) continue;
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < d; ++i) outer *= sizes[i];
    for (int64_t i = d + 1; i < ndim; ++i) inner *= sizes[i];
    const int64_t lout = sizes[d];
    sizes[d] = p.in_sizes[d];
    Tensor next = empty(sizes, g->dtype);
    fill(next, Scalar(int64_t(0)));
    resample_backward<T>(next->data<T>(), cur->data<const T>(), outer, sizes[d], lout, inner, tp);
    cur = next;
  }
  return cur == g ? clone(g) : cur;
}

const char* kernel_name(UpsampleMode m, size_t nd) {
  switch (m) {
    case UpsampleMode::Linear: return nd == 1 ? "upsample_linear1d" : nd == 2 ? "upsample_bilinear2d" : "upsample_trilinear3d";
    case UpsampleMode::Cubic: return "upsample_bicubic2d";
    case UpsampleMode::Area: return "adaptive_avg_pool2d";
    default: return nd == 1 ? "upsample_nearest1d" : nd == 2 ? "upsample_nearest2d" : "upsample_nearest3d";
  }
}

// 16-bit floats compute in float32; the result goes back to the input's dtype.
template <typename F>
Tensor run_floating(const Tensor& t, const char* name, F f) {
  const ScalarType dt = t->dtype;
  if (dt == ScalarType::Float16 || dt == ScalarType::BFloat16)
    return to_dtype(f(contiguous(to_dtype(t, ScalarType::Float32)), float()), dt);
  if (dt == ScalarType::Float32) return f(contiguous(t), float());
  if (dt == ScalarType::Float64) return f(contiguous(t), double());
  throw_unsupported_dtype(name, dt);
}

}  // namespace

Tensor upsample_cpu(const Tensor& self, const IntList& output_size, int64_t mode, bool align_corners,
                    const std::vector<double>& scales) {
  Plan p = make_plan("upsample", self->sizes, output_size, mode, align_corners, scales);
  if (numel_of(p.out_sizes) == 0) return empty(p.out_sizes, self->dtype);
  const bool nearest = p.mode == UpsampleMode::Nearest || p.mode == UpsampleMode::NearestExact;
  if (self->dtype == ScalarType::UInt8 && (nearest || (p.mode != UpsampleMode::Area && output_size.size() == 2))) {
    // uint8 images (as PyTorch: nearest, bilinear, bicubic): float32 passes, each rounded and
    // saturated to uint8 as PyTorch's separable uint8 kernel stores its intermediate
    return to_dtype(upsample_impl<float>(contiguous(to_dtype(self, ScalarType::Float32)), p, true), ScalarType::UInt8);
  }
  return run_floating(self, kernel_name(p.mode, output_size.size()), [&](const Tensor& x, auto tag) {
    return upsample_impl<decltype(tag)>(x, p);
  });
}

Tensor upsample_backward_cpu(const Tensor& grad, const IntList& input_size, const IntList& output_size,
                             int64_t mode, bool align_corners, const std::vector<double>& scales) {
  Plan p = make_plan("upsample_backward", input_size, output_size, mode, align_corners, scales);
  FL_CHECK(grad->sizes == p.out_sizes, Error, "upsample_backward: expected grad of size ", shape_str(p.out_sizes),
           " but got ", shape_str(grad->sizes));
  if (numel_of(p.in_sizes) == 0 || grad->numel == 0) {
    Tensor z = empty(p.in_sizes, grad->dtype);
    fill(z, Scalar(int64_t(0)));
    return z;
  }
  return run_floating(grad, kernel_name(p.mode, output_size.size()), [&](const Tensor& g, auto tag) {
    return upsample_backward_impl<decltype(tag)>(g, p);
  });
}

}  // namespace fl
