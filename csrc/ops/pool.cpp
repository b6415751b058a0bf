// Pooling kernels. Every pooling is described per spatial dim by its windows (first input index,
// number of valid taps, step, and the padded extent average pooling may divide by), padded to 3
// spatial dims like the convolutions; one max kernel and one average kernel (+ its backward) then
// serve fixed and adaptive pooling over 1 to 3 dims. Planes run in parallel.
#include "pool.h"

#include <omp.h>

#include <cmath>
#include <limits>
#include <type_traits>

#include "conv_kernels.h"
#include "softmax.h"  // FL_NN_CLONES

namespace fl {
namespace {

using conv::kD;

struct DimWindows {
  int64_t in = 1, out = 1, step = 1;
  int64_t kernel = 1, stride = 1, pad = 0;  // fixed windows (a dim not pooled: 1, 1, 0; adaptive windows: kernel 0)
  IntList first{0}, count{1}, padded{1};  // per output index
};

struct PoolPlan {
  int64_t planes = 0;
  IntList lead;  // the plane dims of the input
  DimWindows w[kD];
  int64_t in_plane() const { return w[0].in * w[1].in * w[2].in; }
  int64_t out_plane() const { return w[0].out * w[1].out * w[2].out; }
  IntList out_sizes(size_t nd) const {
    IntList s = lead;
    for (size_t i = kD - nd; i < kD; ++i) s.push_back(w[i].out);
    return s;
  }
};

std::string dims_x(const IntList& v) {
  std::string r;
  for (size_t i = 0; i < v.size(); ++i) r += (i ? "x" : "") + std::to_string(v[i]);
  return r;
}

// Splits the input into planes and spatial dims, with PyTorch's checks on its rank and sizes.
// Adaptive pooling accepts empty channels (only the spatial dims must be non-empty).
PoolPlan plan_for(const char* op, const Tensor& input, size_t nd, bool empty_channels_ok = false) {
  const int64_t dim = input->dim(), n = static_cast<int64_t>(nd);
  FL_CHECK(dim == n + 1 || dim == n + 2, Error, op, ": Expected ", n + 1, "D or ", n + 2,
           "D (batch mode) tensor with optional 0 dim batch size for input, but got: ", input->sizes);
  for (int64_t i = empty_channels_ok ? dim - n : (dim == n + 2 ? 1 : 0); i < dim; ++i)
    FL_CHECK(input->sizes[i] > 0, Error, op,
             ": Expected input to have non-zero size for non-batch dimensions, but input has sizes ", input->sizes,
             " with dimension ", i, " being empty");
  PoolPlan p;
  p.lead.assign(input->sizes.begin(), input->sizes.end() - n);
  p.planes = 1;
  for (int64_t s : p.lead) p.planes *= s;
  for (size_t i = 0; i < nd; ++i) p.w[kD - nd + i].in = input->sizes[dim - n + i];
  return p;
}

// PyTorch's pooling_output_shape.
int64_t pooled_size(int64_t in, int64_t k, int64_t s, int64_t pad, int64_t dil, bool ceil_mode) {
  const int64_t num = in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
  int64_t out = (num >= 0 ? num / s : -((-num + s - 1) / s)) + 1;
  if (ceil_mode && (out - 1) * s >= in + pad) --out;
  return out;
}

// Fixed windows: kernel, stride (empty: the kernel), padding, dilation, checked as PyTorch does.
PoolPlan fixed_plan(const char* op, const Tensor& input, const IntList& kernel, const IntList& stride_in,
                    const IntList& padding, const IntList& dilation, bool ceil_mode, bool is_max) {
  const size_t nd = kernel.size();
  FL_CHECK(nd >= 1 && nd <= 3, Error, op, ": kernel_size must have 1 to 3 elements");
  const IntList stride = stride_in.empty() ? kernel : stride_in;
  FL_CHECK(stride.size() == nd && padding.size() == nd && dilation.size() == nd, Error, op,
           ": stride, padding and dilation must have ", nd, " elements, like kernel_size");
  for (int64_t k : kernel)
    FL_CHECK(k > 0, Error, op, ": kernel size should be greater than zero, but got kernel_size=", kernel);
  for (int64_t s : stride) FL_CHECK(s > 0, Error, op, ": stride should be greater than zero, but got stride=", stride);
  for (int64_t d : dilation)
    FL_CHECK(d > 0, Error, op, ": dilation should be greater than zero, but got dilation=", dilation);
  for (size_t i = 0; i < nd; ++i) {
    FL_CHECK(padding[i] >= 0, Error, op, ": pad must be non-negative, but got pad: ", padding[i]);
    if (is_max)
      FL_CHECK(padding[i] <= ((kernel[i] - 1) * dilation[i] + 1) / 2, Error,
               "pad should be at most half of effective kernel size, but got pad=", padding[i],
               ", kernel_size=", kernel[i], " and dilation=", dilation[i]);
    else
      FL_CHECK(padding[i] <= kernel[i] / 2, Error,
               "pad should be smaller than or equal to half of kernel size, but got padding=", padding,
               ", kernel_size=", kernel);
  }
  PoolPlan p = plan_for(op, input, nd);
  IntList in_sizes, out_sizes;
  bool ok = true;
  for (size_t i = 0; i < nd; ++i) {
    DimWindows& w = p.w[kD - nd + i];
    w.out = pooled_size(w.in, kernel[i], stride[i], padding[i], dilation[i], ceil_mode);
    in_sizes.push_back(w.in);
    out_sizes.push_back(w.out);
    ok = ok && w.out >= 1;
  }
  IntList in_desc = p.lead.empty() ? IntList{} : IntList{p.lead.back()}, out_desc = in_desc;
  in_desc.insert(in_desc.end(), in_sizes.begin(), in_sizes.end());
  out_desc.insert(out_desc.end(), out_sizes.begin(), out_sizes.end());
  FL_CHECK(ok, Error, "Given input size: (", dims_x(in_desc), "). Calculated output size: (", dims_x(out_desc),
           "). Output size is too small");
  for (size_t i = 0; i < nd; ++i) {
    DimWindows& w = p.w[kD - nd + i];
    const int64_t k = kernel[i], dl = dilation[i];
    w.step = dl;
    w.kernel = k;
    w.stride = stride[i];
    w.pad = padding[i];
    w.first.resize(w.out);
    w.count.resize(w.out);
    w.padded.resize(w.out);
    for (int64_t o = 0; o < w.out; ++o) {
      const int64_t start = o * stride[i] - padding[i];
      int64_t j0 = start < 0 ? (-start + dl - 1) / dl : 0;  // first tap inside the input
      int64_t j1 = 0;                                       // one past the last
      for (int64_t j = k; j > 0; --j)
        if (start + (j - 1) * dl < w.in) {
          j1 = j;
          break;
        }
      w.first[o] = start + j0 * dl;
      w.count[o] = std::max<int64_t>(0, j1 - j0);
      w.padded[o] = std::min(start + k, w.in + padding[i]) - start;  // avg pooling's count_include_pad extent
    }
  }
  return p;
}

// Adaptive windows: [floor(o * in / out), ceil((o + 1) * in / out)).
PoolPlan adaptive_plan(const char* op, const Tensor& input, const IntList& output_size) {
  const size_t nd = output_size.size();
  FL_CHECK(nd >= 1 && nd <= 3, Error, op, ": output_size must have 1 to 3 elements");
  for (int64_t o : output_size)
    FL_CHECK(o >= 0, Error, op, ": elements of output_size must be greater than or equal to 0 but received {",
             output_size, "}");
  PoolPlan p = plan_for(op, input, nd, true);
  for (size_t i = 0; i < nd; ++i) {
    DimWindows& w = p.w[kD - nd + i];
    w.out = output_size[i];
    w.kernel = 0;
    w.first.resize(w.out);
    w.count.resize(w.out);
    w.padded.resize(w.out);
    for (int64_t o = 0; o < w.out; ++o) {
      const int64_t a = (o * w.in) / w.out, b = ((o + 1) * w.in + w.out - 1) / w.out;
      w.first[o] = a;
      w.count[o] = w.padded[o] = b - a;
    }
  }
  return p;
}

using conv::compute_type;
using conv::finished;
using conv::prepared;
using conv::with_type;

// Calls f(out_index, window base offset, d-window, h-window, w-window) for every output of one plane.
template <typename F>
void for_outputs(const PoolPlan& p, F&& f) {
  const DimWindows &a = p.w[0], &b = p.w[1], &c = p.w[2];
  int64_t o = 0;
  for (int64_t od = 0; od < a.out; ++od)
    for (int64_t oh = 0; oh < b.out; ++oh)
      for (int64_t ow = 0; ow < c.out; ++ow, ++o) f(o, od, oh, ow);
}

template <typename F>
void parallel_planes(const PoolPlan& p, F&& f) {
#pragma omp parallel for schedule(static) if (p.planes > 1 && p.planes * p.out_plane() > 4096)
  for (int64_t b = 0; b < p.planes; ++b) f(b);
}

template <typename T>
bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
  else return false;
}

constexpr int64_t kMaxBlock = 16;  // outputs max_whole computes at once

// The outputs whose windows lie whole inside the input (not meeting the padding or the ceil-mode edge; none for
// adaptive windows), as their index and the offset of their first tap in a plane, and the offsets of the taps from
// it (d, then h, then w, the order max_one takes them in). max_kernel runs these in vectorized blocks: first
// `strided` outputs in blocks of kMaxBlock consecutive outputs of one row, then the rest (short rows, row ends).
struct WholeWindows {
  IntList out, base, taps;
  int64_t strided = 0;
  std::vector<char> covered;  // per output of a plane
};

WholeWindows whole_windows(const PoolPlan& p) {
  const DimWindows &a = p.w[0], &b = p.w[1], &c = p.w[2];
  const int64_t H = b.in, W = c.in;
  auto whole = [](const DimWindows& w, int64_t o) {
    return w.kernel > 0 && w.count[o] == w.kernel && w.first[o] == o * w.stride - w.pad;
  };
  WholeWindows r;
  r.covered.assign(p.out_plane(), 0);
  IntList rest_out, rest_base;
  for (int64_t od = 0; od < a.out; ++od)
    for (int64_t oh = 0; oh < b.out; ++oh) {
      if (!whole(a, od) || !whole(b, oh)) continue;
      IntList row;  // the row's outputs with whole windows (consecutive)
      for (int64_t ow = 0; ow < c.out; ++ow)
        if (whole(c, ow)) row.push_back(ow);
      const size_t blocked = row.size() / kMaxBlock * kMaxBlock;
      for (size_t i = 0; i < row.size(); ++i) {
        const int64_t o = (od * b.out + oh) * c.out + row[i];
        const int64_t at = (a.first[od] * H + b.first[oh]) * W + c.first[row[i]];
        (i < blocked ? r.out : rest_out).push_back(o);
        (i < blocked ? r.base : rest_base).push_back(at);
        r.covered[o] = 1;
      }
    }
  r.strided = static_cast<int64_t>(r.out.size());
  r.out.insert(r.out.end(), rest_out.begin(), rest_out.end());
  r.base.insert(r.base.end(), rest_base.begin(), rest_base.end());
  for (int64_t i = 0; i < a.kernel; ++i)
    for (int64_t j = 0; j < b.kernel; ++j)
      for (int64_t k = 0; k < c.kernel; ++k) r.taps.push_back((i * a.step * H + j * b.step) * W + k * c.step);
  return r;
}

// One output over its window, the first maximum's index kept as PyTorch does, and a NaN taken whenever it comes
// (so the last NaN wins).
template <typename T>
void max_one(const PoolPlan& p, const T* xp, int64_t od, int64_t oh, int64_t ow, T* y, int64_t* idx) {
  const DimWindows &a = p.w[0], &b = p.w[1], &c = p.w[2];
  const int64_t H = b.in, W = c.in;
  T best =
      std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
  int64_t bi = (a.first[od] * H + b.first[oh]) * W + c.first[ow];
  for (int64_t i = 0, id = a.first[od]; i < a.count[od]; ++i, id += a.step)
    for (int64_t j = 0, ih = b.first[oh]; j < b.count[oh]; ++j, ih += b.step)
      for (int64_t k = 0, iw = c.first[ow]; k < c.count[ow]; ++k, iw += c.step) {
        const int64_t at = (id * H + ih) * W + iw;
        const T v = xp[at];
        if (v > best || is_nan(v)) {
          best = v;
          bi = at;
        }
      }
  *y = best;
  *idx = bi;
}

// The whole windows of one plane, as max_one computes them (the same taps in the same order), but each tap
// applied to a block of outputs at once, so the compiler vectorizes over the outputs. The strided blocks read each
// tap with strided loads (S: the w stride when it is a compiled-in case, 1 or 2, else 0), the others gather.
template <typename T, int64_t S>
FL_NN_CLONES void max_whole(const WholeWindows& ww, int64_t stride, const T* xp, T* y, int64_t* idx) {
  constexpr int64_t kBlock = kMaxBlock;
  const int64_t n = static_cast<int64_t>(ww.out.size()), ntaps = static_cast<int64_t>(ww.taps.size());
  const int64_t s = S ? S : stride;
  for (int64_t o = 0; o < n; o += kBlock) {
    const int64_t m = std::min(kBlock, n - o);
    T best[kBlock];
    int64_t base[kBlock], bi[kBlock];
    for (int64_t v = 0; v < kBlock; ++v) {
      best[v] = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                     : std::numeric_limits<T>::lowest();
      base[v] = bi[v] = v < m ? ww.base[o + v] : 0;  // lanes past m read the plane's start and are never stored
    }
    const bool strided = o < ww.strided;
    T tap[kBlock];
    for (int64_t t = 0; t < ntaps; ++t) {
      const int64_t off = ww.taps[t];
      // the tap's values are loaded first, so the compare-and-select below is one branch-free vector loop
      if (strided)
        for (int64_t v = 0; v < kBlock; ++v) tap[v] = xp[base[0] + off + v * s];
      else
        for (int64_t v = 0; v < kBlock; ++v) tap[v] = xp[base[v] + off];
#pragma GCC unroll 1  // kept a loop: unrolled into 16 scalar compares GCC would not vectorize it
      for (int64_t v = 0; v < kBlock; ++v) {
        const T x = tap[v];
        const bool take = (x > best[v]) | is_nan(x);
        best[v] = take ? x : best[v];
        bi[v] = take ? base[v] + off : bi[v];
      }
    }
    for (int64_t v = 0; v < m; ++v) {
      y[ww.out[o + v]] = best[v];
      idx[ww.out[o + v]] = bi[v];
    }
  }
}

template <typename T>
void max_kernel(const PoolPlan& p, const T* x, T* y, int64_t* idx) {
  const WholeWindows ww = whole_windows(p);
  const int64_t stride = p.w[2].stride;
  auto whole = stride == 1 ? max_whole<T, 1> : stride == 2 ? max_whole<T, 2> : max_whole<T, 0>;
  parallel_planes(p, [&](int64_t pl) {
    const T* xp = x + pl * p.in_plane();
    T* yp = y + pl * p.out_plane();
    int64_t* ip = idx + pl * p.out_plane();
    whole(ww, stride, xp, yp, ip);
    for_outputs(p, [&](int64_t o, int64_t od, int64_t oh, int64_t ow) {
      if (!ww.covered[o]) max_one(p, xp, od, oh, ow, yp + o, ip + o);
    });
  });
}

// The divisor of each average: divisor_override, the padded window, or the valid taps; 0 when the
// window holds no input element (its output is 0).
double avg_divisor(const PoolPlan& p, int64_t od, int64_t oh, int64_t ow, bool include_pad, int64_t divisor_override) {
  const int64_t valid = p.w[0].count[od] * p.w[1].count[oh] * p.w[2].count[ow];
  if (valid == 0) return 0;
  if (divisor_override) return static_cast<double>(divisor_override);
  return static_cast<double>(include_pad ? p.w[0].padded[od] * p.w[1].padded[oh] * p.w[2].padded[ow] : valid);
}

template <typename T>
void avg_kernel(const PoolPlan& p, const T* x, T* y, bool include_pad, int64_t divisor_override) {
  const DimWindows &a = p.w[0], &b = p.w[1], &c = p.w[2];
  const int64_t H = b.in, W = c.in;
  parallel_planes(p, [&](int64_t pl) {
    const T* xp = x + pl * p.in_plane();
    T* yp = y + pl * p.out_plane();
    for_outputs(p, [&](int64_t o, int64_t od, int64_t oh, int64_t ow) {
      const double div = avg_divisor(p, od, oh, ow, include_pad, divisor_override);
      T sum = 0;
      for (int64_t i = 0, id = a.first[od]; i < a.count[od]; ++i, id += a.step)
        for (int64_t j = 0, ih = b.first[oh]; j < b.count[oh]; ++j, ih += b.step) {
          const T* row = xp + (id * H + ih) * W;
          for (int64_t k = 0, iw = c.first[ow]; k < c.count[ow]; ++k, iw += c.step) sum += row[iw];
        }
      yp[o] = div == 0 ? T(0) : static_cast<T>(sum / static_cast<T>(div));
    });
  });
}

template <typename T>
void avg_backward_kernel(const PoolPlan& p, const T* gy, T* gx, bool include_pad, int64_t divisor_override) {
  const DimWindows &a = p.w[0], &b = p.w[1], &c = p.w[2];
  const int64_t H = b.in, W = c.in;
  parallel_planes(p, [&](int64_t pl) {
    T* gxp = gx + pl * p.in_plane();
    const T* gyp = gy + pl * p.out_plane();
    std::fill(gxp, gxp + p.in_plane(), T(0));
    for_outputs(p, [&](int64_t o, int64_t od, int64_t oh, int64_t ow) {
      const double div = avg_divisor(p, od, oh, ow, include_pad, divisor_override);
      if (div == 0) return;
      const T g = static_cast<T>(gyp[o] / static_cast<T>(div));
      for (int64_t i = 0, id = a.first[od]; i < a.count[od]; ++i, id += a.step)
        for (int64_t j = 0, ih = b.first[oh]; j < b.count[oh]; ++j, ih += b.step) {
          T* row = gxp + (id * H + ih) * W;
          for (int64_t k = 0, iw = c.first[ow]; k < c.count[ow]; ++k, iw += c.step) row[iw] += g;
        }
    });
  });
}

// Max pooling runs on integer types as they are (as PyTorch's does), floating types as the others.
TensorPair run_max(const PoolPlan& p, const Tensor& input, size_t nd, const char* op) {
  Tensor idx = empty(p.out_sizes(nd), ScalarType::Int64);
  const ScalarType dt = input->dtype;
  if (is_integral(dt, false)) {
    Tensor x = contiguous(input), y = empty(p.out_sizes(nd), dt);
    auto run = [&](auto tag) {
      using T = decltype(tag);
      max_kernel<T>(p, x->data<const T>(), y->data<T>(), idx->data<int64_t>());
    };
    switch (dt) {
      case ScalarType::UInt8:
        run(uint8_t());
        break;
      case ScalarType::Int8:
        run(int8_t());
        break;
      case ScalarType::Int16:
        run(int16_t());
        break;
      case ScalarType::Int32:
        run(int32_t());
        break;
      default:
        run(int64_t());
        break;
    }
    return {y, idx};
  }
  const ScalarType ct = compute_type(dt, op);
  Tensor x = prepared(input, ct);
  Tensor y = empty(p.out_sizes(nd), ct);
  with_type(ct, [&](auto tag) {
    using T = decltype(tag);
    max_kernel<T>(p, x->data<const T>(), y->data<T>(), idx->data<int64_t>());
  });
  return {finished(y, dt), idx};
}

Tensor run_avg(const PoolPlan& p, const Tensor& input, size_t nd, bool include_pad, int64_t divisor_override,
               const char* op) {
  const ScalarType ct = compute_type(input->dtype, op);
  Tensor x = prepared(input, ct);
  Tensor y = empty(p.out_sizes(nd), ct);
  with_type(ct, [&](auto tag) {
    using T = decltype(tag);
    avg_kernel<T>(p, x->data<const T>(), y->data<T>(), include_pad, divisor_override);
  });
  return finished(y, input->dtype);
}

Tensor run_avg_backward(const PoolPlan& p, const Tensor& grad, const Tensor& input, size_t nd, bool include_pad,
                        int64_t divisor_override, const char* op) {
  FL_CHECK(grad->sizes == p.out_sizes(nd), Error, op, ": expected grad_output of size ", p.out_sizes(nd), ", but got ",
           grad->sizes);
  const ScalarType ct = compute_type(input->dtype, op);
  Tensor g = prepared(grad, ct);
  Tensor gx = empty(input->sizes, ct);
  with_type(ct, [&](auto tag) {
    using T = decltype(tag);
    avg_backward_kernel<T>(p, g->data<const T>(), gx->data<T>(), include_pad, divisor_override);
  });
  return finished(gx, input->dtype);
}

}  // namespace

TensorPair max_pool_cpu(const Tensor& input, const IntList& kernel, const IntList& stride,
                        const IntList& padding, const IntList& dilation, bool ceil_mode) {
  PoolPlan p = fixed_plan("max_pool", input, kernel, stride, padding, dilation, ceil_mode, true);
  return run_max(p, input, kernel.size(), "max_pool");
}

Tensor avg_pool_cpu(const Tensor& input, const IntList& kernel, const IntList& stride,
                    const IntList& padding, bool ceil_mode, bool include_pad, int64_t divisor_override) {
  PoolPlan p = fixed_plan("avg_pool", input, kernel, stride, padding, IntList(kernel.size(), 1), ceil_mode, false);
  return run_avg(p, input, kernel.size(), include_pad, divisor_override, "avg_pool");
}

Tensor avg_pool_backward_cpu(const Tensor& grad, const Tensor& input, const IntList& kernel,
                             const IntList& stride, const IntList& padding, bool ceil_mode, bool include_pad,
                             int64_t divisor_override) {
  PoolPlan p =
      fixed_plan("avg_pool_backward", input, kernel, stride, padding, IntList(kernel.size(), 1), ceil_mode, false);
  return run_avg_backward(p, grad, input, kernel.size(), include_pad, divisor_override, "avg_pool_backward");
}

Tensor adaptive_avg_pool_cpu(const Tensor& input, const IntList& output_size) {
  PoolPlan p = adaptive_plan("adaptive_avg_pool", input, output_size);
  return run_avg(p, input, output_size.size(), false, 0, "adaptive_avg_pool");
}

Tensor adaptive_avg_pool_backward_cpu(const Tensor& grad, const Tensor& input,
                                      const IntList& output_size) {
  PoolPlan p = adaptive_plan("adaptive_avg_pool_backward", input, output_size);
  return run_avg_backward(p, grad, input, output_size.size(), false, 0, "adaptive_avg_pool_backward");
}

TensorPair adaptive_max_pool_cpu(const Tensor& input, const IntList& output_size) {
  PoolPlan p = adaptive_plan("adaptive_max_pool", input, output_size);
  return run_max(p, input, output_size.size(), "adaptive_max_pool");
}

Tensor plane_scatter_cpu(const Tensor& values, const Tensor& indices, const IntList& plane_sizes,
                         bool accumulate) {
  const int64_t nd = static_cast<int64_t>(plane_sizes.size());
  FL_CHECK(values->sizes == indices->sizes, Error, "Expected shape of indices to be same as that of the input tensor (",
           values->sizes, ") but got indices tensor with shape: ", indices->sizes);
  FL_CHECK(indices->dtype == ScalarType::Int64, Error,
           "elements in indices should be type int64 but got: ", c10_type_name(indices->dtype));
  FL_CHECK(values->dim() >= nd, Error, "plane_scatter: expected values with at least ", nd, " dims");
  int64_t plane = 1;
  for (int64_t s : plane_sizes) {
    FL_CHECK(s >= 0, Error, "plane_scatter: negative output size ", plane_sizes);
    plane *= s;
  }
  IntList out_sizes(values->sizes.begin(), values->sizes.end() - nd);
  int64_t planes = 1, per = 1;
  for (int64_t s : out_sizes) planes *= s;
  for (int64_t i = values->dim() - nd; i < values->dim(); ++i) per *= values->sizes[i];
  out_sizes.insert(out_sizes.end(), plane_sizes.begin(), plane_sizes.end());
  const ScalarType ct = compute_type(values->dtype, "plane_scatter");
  Tensor v = prepared(values, ct), ix = contiguous(indices);
  Tensor out = empty(out_sizes, ct);
  fill(out, Scalar(0.0));
  const int64_t* ip = ix->data<const int64_t>();
  for (int64_t i = 0; i < ix->numel; ++i)
    FL_CHECK(ip[i] >= 0 && ip[i] < plane, Error, "Found an invalid max index: ", ip[i], " (output volumes are of size ",
             dims_x(plane_sizes), ")");
  with_type(ct, [&](auto tag) {
    using T = decltype(tag);
    const T* vp = v->data<const T>();
    T* op = out->data<T>();
#pragma omp parallel for schedule(static) if (planes > 1 && v->numel > 32768)
    for (int64_t b = 0; b < planes; ++b)
      for (int64_t j = 0; j < per; ++j) {
        T& dst = op[b * plane + ip[b * per + j]];
        dst = accumulate ? dst + vp[b * per + j] : vp[b * per + j];
      }
  });
  return finished(out, values->dtype);
}

}  // namespace fl
