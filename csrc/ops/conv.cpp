// The convolution ops: argument checks with PyTorch's messages, the geometry, and the dtype
// handling around the kernels of conv_kernels.cpp (float16/bfloat16 compute in float32).
#include "conv.h"

#include <omp.h>

#include <optional>

#include "../core/gil.h"
#include "conv_kernels.h"

namespace fl {
namespace {

using conv::Geom;
using conv::kD;

std::string joined(const IntList& v, const char* sep) {
  std::string r;
  for (size_t i = 0; i < v.size(); ++i) r += (i ? sep : "") + std::to_string(v[i]);
  return r;
}

// A per-spatial-dim parameter with one value per dim (or, for padding, two).
void check_param(const IntList& v, size_t nd, const char* name, bool allow_pairs = false) {
  FL_CHECK(v.size() == nd || (allow_pairs && v.size() == 2 * nd), Error, "expected ", name,
           " to be a single integer value or a list of ", nd, " values to match the convolution dimensions, but got ",
           name, "=", v);
}

struct ConvArgs {
  Geom g;                // the ordinary convolution (for transposed: the one it is the adjoint of)
  IntList result_sizes;  // sizes of the op's output
};

// Checks the arguments as PyTorch's check_shape_forward does and builds the geometry.
ConvArgs conv_args(const Tensor& input, const Tensor& weight, const Tensor& bias, const IntList& stride,
                   const IntList& padding, const IntList& dilation, bool transposed, const IntList& output_padding,
                   int64_t groups) {
  const int64_t k = input->dim(), wd = weight->dim();
  FL_CHECK(wd >= 3 && wd <= 5, Error, "convolution: expected a 3-D, 4-D or 5-D weight, but got weight of size ",
           weight->sizes);
  const size_t nd = static_cast<size_t>(wd - 2);
  check_param(stride, nd, "stride");
  check_param(padding, nd, "padding", !transposed);
  check_param(dilation, nd, "dilation");
  if (transposed) check_param(output_padding, nd, "output_padding");
  FL_CHECK(groups > 0, Error, "non-positive groups is not supported");
  for (int64_t p : padding) FL_CHECK(p >= 0, Error, "negative padding is not supported");
  if (transposed)
    for (int64_t p : output_padding) FL_CHECK(p >= 0, Error, "negative output_padding is not supported");
  for (int64_t s : stride) FL_CHECK(s > 0, Error, "non-positive stride is not supported");
  for (int64_t d : dilation) FL_CHECK(d > 0, Error, "non-positive dilation is not supported");
  const IntList& ws = weight->sizes;
  FL_CHECK(wd == k, Error, "Expected ", wd, "-dimensional input for ", wd, "-dimensional weight ", ws, ", but got ", k,
           "-dimensional input of size ", input->sizes, " instead");
  FL_CHECK(ws[0] >= groups, Error, "Given groups=", groups, ", expected weight to be at least ", groups,
           " at dimension 0, but got weight of size ", ws, " instead");
  FL_CHECK(ws[0] % groups == 0, Error, "Given groups=", groups, ", expected weight to be divisible by ", groups,
           " at dimension 0, but got weight of size [", ws, "] instead");
  FL_CHECK(input->dtype == weight->dtype, Error, "expected scalar type ", c10_type_name(input->dtype), " but found ",
           c10_type_name(weight->dtype));
  FL_CHECK(!bias || bias->dtype == input->dtype, Error, "Input type (", c10_type_name(input->dtype),
           ") and bias type (", c10_type_name(bias->dtype), ") should be the same");
  for (size_t i = 0; i < nd; ++i)
    FL_CHECK(ws[2 + i] > 0, Error, "convolution: non-positive kernel size in weight of size ", ws);
  FL_CHECK(input->numel != 0 || input->sizes[0] == 0 || input->sizes[1] == 0, Error,
           "Only zero batch or zero channel inputs are supported, but got input shape: ", input->sizes);
  const int64_t lo = kD - static_cast<int64_t>(nd);  // first of the 3 geometry dims that is a real one
  const auto pad_lo = [&](size_t i) { return padding[i]; };
  const auto pad_hi = [&](size_t i) { return padding.size() == 2 * nd ? padding[nd + i] : padding[i]; };
  ConvArgs a;
  Geom& g = a.g;
  g.N = input->sizes[0];
  g.G = groups;
  if (!transposed) {
    FL_CHECK(input->sizes[1] == ws[1] * groups, Error, "Given groups=", groups, ", weight of size ", ws,
             ", expected input", input->sizes, " to have ", ws[1] * groups, " channels, but got ", input->sizes[1],
             " channels instead");
    FL_CHECK(!bias || (bias->dim() == 1 && bias->sizes[0] == ws[0]), Error, "Given weight of size ", ws,
             ", expected bias to be 1-dimensional with ", ws[0], " elements, but got bias of size ",
             bias ? bias->sizes : IntList{}, " instead");
    IntList padded(nd), kernel(nd);
    bool fits = true;
    for (size_t i = 0; i < nd; ++i) {
      padded[i] = input->sizes[2 + i] + pad_lo(i) + pad_hi(i);
      kernel[i] = dilation[i] * (ws[2 + i] - 1) + 1;
      fits = fits && padded[i] >= kernel[i];
    }
    FL_CHECK(fits, Error, "Calculated padded input size per channel: (", joined(padded, " x "), "). Kernel size: (",
             joined(kernel, " x "), "). Kernel size can't be greater than actual input size");
    g.Cin = input->sizes[1];
    g.Cout = ws[0];
    a.result_sizes = {g.N, g.Cout};
    for (size_t i = 0; i < nd; ++i) {
      const int64_t o = (padded[i] - kernel[i]) / stride[i] + 1;
      g.in[lo + i] = input->sizes[2 + i];
      g.out[lo + i] = o;
      a.result_sizes.push_back(o);
    }
  } else {
    FL_CHECK(input->sizes[1] == ws[0], Error, "Given transposed=1, weight of size ", ws, ", expected input",
             input->sizes, " to have ", ws[0], " channels, but got ", input->sizes[1], " channels instead");
    FL_CHECK(!bias || (bias->dim() == 1 && bias->sizes[0] == ws[1] * groups), Error,
             "Given transposed=1, weight of size ", ws, ", expected bias to be 1-dimensional with ", ws[1] * groups,
             " elements, but got bias of size ", bias ? bias->sizes : IntList{}, " instead");
    for (size_t i = 0; i < nd; ++i)
      FL_CHECK(output_padding[i] < stride[i] || output_padding[i] < dilation[i], Error,
               "output padding must be smaller than either stride or dilation, but got output_padding=", output_padding,
               ", stride=", stride, ", dilation=", dilation);
    g.Cin = ws[1] * groups;
    g.Cout = ws[0];
    a.result_sizes = {g.N, g.Cin};
    IntList out(nd);
    bool positive = true;
    for (size_t i = 0; i < nd; ++i) {
      out[i] = (input->sizes[2 + i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (ws[2 + i] - 1) +
               output_padding[i] + 1;
      positive = positive && out[i] > 0;
      g.in[lo + i] = out[i];
      g.out[lo + i] = input->sizes[2 + i];
      a.result_sizes.push_back(out[i]);
    }
    FL_CHECK(positive, Error, "Given input size per channel: (",
             joined(IntList(input->sizes.begin() + 2, input->sizes.end()), " x "),
             "). Calculated output size per channel: (", joined(out, " x "), "). Output size is too small");
  }
  for (size_t i = 0; i < nd; ++i) {
    g.k[lo + i] = ws[2 + i];
    g.s[lo + i] = stride[i];
    g.p[lo + i] = pad_lo(i);
    g.d[lo + i] = dilation[i];
  }
  return a;
}

using conv::compute_type;
using conv::finished;
using conv::prepared;
using conv::with_type;

template <typename T>
const T* ptr(const Tensor& t) {
  return t ? t->data<const T>() : nullptr;
}

// Long convolutions let other Python threads run (Note [GIL release]): the work is about the output's size times
// the weight's per output channel.
bool long_conv(int64_t out_numel, const Tensor& weight) {
  const int64_t per = weight->sizes[0] ? weight->numel / weight->sizes[0] : 0;
  return static_cast<double>(out_numel) * per >= kGilReleaseWork;
}

}  // namespace

Tensor convolution_cpu(const Tensor& input, const Tensor& weight, const Tensor& bias,
                       const IntList& stride, const IntList& padding, const IntList& dilation, bool transposed,
                       const IntList& output_padding, int64_t groups) {
  ConvArgs a = conv_args(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups);
  const ScalarType ct = compute_type(input->dtype, "convolution");
  Tensor x = prepared(input, ct), w = prepared(weight, ct), b = prepared(bias, ct);
  Tensor y = empty(a.result_sizes, ct);
  if (y->numel == 0) return finished(y, input->dtype);
  std::optional<GilRelease> nogil;
  if (long_conv(y->numel, weight)) nogil.emplace();
  with_type(ct, [&](auto tag) {
    using T = decltype(tag);
    if (!transposed) {
      conv::forward<T>(a.g, ptr<T>(x), ptr<T>(w), ptr<T>(b), y->data<T>());
      return;
    }
    conv::backward_data<T>(a.g, ptr<T>(x), ptr<T>(w), y->data<T>());
    if (b) {
      const int64_t L = a.g.in_plane(), C = a.g.Cin;
      T* yp = y->data<T>();
      const T* bp = ptr<T>(b);
#pragma omp parallel for schedule(static) if (y->numel > 32768)
      for (int64_t nc = 0; nc < a.g.N * C; ++nc)
        for (int64_t i = 0; i < L; ++i) yp[nc * L + i] += bp[nc % C];
    }
  });
  return finished(y, input->dtype);
}

std::tuple<Tensor, Tensor, Tensor> convolution_backward_cpu(const Tensor& grad_out, const Tensor& input,
                                                            const Tensor& weight, const IntList& stride,
                                                            const IntList& padding, const IntList& dilation,
                                                            bool transposed, const IntList& output_padding,
                                                            int64_t groups, bool need_input, bool need_weight,
                                                            bool need_bias) {
  ConvArgs a = conv_args(input, weight, nullptr, stride, padding, dilation, transposed, output_padding, groups);
  FL_CHECK(grad_out->sizes == a.result_sizes, Error, "convolution_backward: expected grad_output of size ",
           a.result_sizes, ", but got ", grad_out->sizes);
  const ScalarType ct = compute_type(input->dtype, "convolution_backward");
  Tensor x = prepared(input, ct), w = prepared(weight, ct), gy = prepared(grad_out, ct);
  std::optional<GilRelease> nogil;
  if (long_conv(gy->numel, weight)) nogil.emplace();
  Tensor gx = need_input ? empty(input->sizes, ct) : nullptr;
  Tensor gw = need_weight ? empty(weight->sizes, ct) : nullptr;
  Tensor gb = need_bias ? empty({grad_out->sizes[1]}, ct) : nullptr;
  with_type(ct, [&](auto tag) {
    using T = decltype(tag);
    // For a transposed convolution the roles swap (Note [Convolution geometry]): its input is the
    // ordinary convolution's output, and its output gradient that convolution's input.
    if (gx && gx->numel) {
      if (!transposed) conv::backward_data<T>(a.g, ptr<T>(gy), ptr<T>(w), gx->data<T>());
      else conv::forward<T>(a.g, ptr<T>(gy), ptr<T>(w), nullptr, gx->data<T>());
    }
    if (gw && gw->numel) {
      if (!transposed) conv::backward_weight<T>(a.g, ptr<T>(gy), ptr<T>(x), gw->data<T>());
      else conv::backward_weight<T>(a.g, ptr<T>(x), ptr<T>(gy), gw->data<T>());
    }
    if (gb) {
      const int64_t N = gy->sizes[0], C = gy->sizes[1], L = N * C ? gy->numel / (N * C) : 0;
      const T* g = ptr<T>(gy);
      T* out = gb->data<T>();
#pragma omp parallel for schedule(static) if (gy->numel > 32768)
      for (int64_t c = 0; c < C; ++c) {
        T acc = 0;
        for (int64_t n = 0; n < N; ++n)
          for (int64_t i = 0; i < L; ++i) acc += g[(n * C + c) * L + i];
        out[c] = acc;
      }
    }
  });
  return {finished(gx, input->dtype), finished(gw, input->dtype), finished(gb, input->dtype)};
}

// activation(conv2d(input, weight, bias)). float32 applies the activation while the output is still in
// cache: as each output row is copied out of the stride-1 GEMM, or as the GEMM stores each tile (its
// epilogue), with the activation op's own kernel, so the values are the unfused ops' bit for bit; other
// dtypes run convolution, then the activation op in place (what the unfused ops compute, too).
Tensor conv2d_bias_act_cpu(const Tensor& input, const Tensor& weight, const Tensor& bias,
                           const IntList& stride, const IntList& padding, const IntList& dilation, int64_t groups,
                           const std::string& activation) {
  const std::optional<Activation> act = conv2d_bias_act_kind(input, activation);
  if (input->dtype != ScalarType::Float32 || !act) {
    Tensor y = ops::convolution(input, weight, bias, stride, padding, dilation, false, {0, 0}, groups);
    return act ? activation_op(*act)(y, 0.0, 0.0, 0.0, y) : y;
  }
  ConvArgs a = conv_args(input, weight, bias, stride, padding, dilation, false, {}, groups);
  Tensor x = prepared(input, ScalarType::Float32), w = prepared(weight, ScalarType::Float32),
         b = prepared(bias, ScalarType::Float32);
  Tensor y = empty(a.result_sizes, ScalarType::Float32);
  if (y->numel == 0) return y;
  std::optional<GilRelease> nogil;
  if (long_conv(y->numel, weight)) nogil.emplace();
  const Activation kind = *act;
  conv::forward<float>(a.g, ptr<float>(x), ptr<float>(w), ptr<float>(b), y->data<float>(),
                       blas::Epilogue{activation_inplace_f32, &kind});
  return y;
}

namespace {

// ---- im2col / col2im (F.unfold / F.fold): 2-d, batched ----------------------------------------------

std::string pair_str(const IntList& v) { return "(" + joined(v, ", ") + ")"; }

// The geometry of the sliding blocks over an (H, W) plane, checked as PyTorch's im2col/col2im do.
Geom blocks_geom(const char* op, int64_t N, int64_t C, const IntList& plane, const IntList& kernel,
                 const IntList& dilation, const IntList& padding, const IntList& stride) {
  FL_CHECK(kernel.size() == 2 && dilation.size() == 2 && padding.size() == 2 && stride.size() == 2, Error, op,
           ": expected kernel_size, dilation, padding and stride to have 2 elements each");
  FL_CHECK(kernel[0] > 0 && kernel[1] > 0, Error,
           "kernel size should be greater than zero, but got kernel_height: ", kernel[0], " kernel_width: ", kernel[1]);
  FL_CHECK(stride[0] > 0 && stride[1] > 0, Error,
           "stride should be greater than zero, but got stride_height: ", stride[0], " stride_width: ", stride[1]);
  FL_CHECK(dilation[0] > 0 && dilation[1] > 0, Error,
           "dilation should be greater than zero, but got dilation_height: ", dilation[0],
           " dilation_width: ", dilation[1]);
  FL_CHECK(padding[0] >= 0 && padding[1] >= 0, Error,
           "padding should be non-negative, but got pad_height: ", padding[0], " pad_width: ", padding[1]);
  Geom g;
  g.N = N;
  g.Cin = g.Cout = C;
  for (int i = 0; i < 2; ++i) {
    g.in[1 + i] = plane[i];
    g.k[1 + i] = kernel[i];
    g.d[1 + i] = dilation[i];
    g.p[1 + i] = padding[i];
    g.s[1 + i] = stride[i];
    const int64_t span = plane[i] + 2 * padding[i] - (dilation[i] * (kernel[i] - 1) + 1);
    g.out[1 + i] = span < 0 ? 0 : span / stride[i] + 1;
  }
  return g;
}

}  // namespace

Tensor im2col_cpu(const Tensor& input, const IntList& kernel, const IntList& dilation,
                  const IntList& padding, const IntList& stride) {
  FL_CHECK(input->dim() == 4, Error,
           "Expected 3D or 4D (batch mode) tensor for input with possibly 0 batch size and non-zero dimensions for "
           "input, but got: ",
           input->sizes);
  Geom g = blocks_geom("im2col", input->sizes[0], input->sizes[1], {input->sizes[2], input->sizes[3]}, kernel, dilation,
                       padding, stride);
  FL_CHECK(g.out[1] >= 1 && g.out[2] >= 1, Error, "Given input with spatial size (", input->sizes[2], ", ",
           input->sizes[3], "), kernel_size=", pair_str(kernel), ", dilation=", pair_str(dilation),
           ", padding=", pair_str(padding), ", calculated shape of the array of sliding blocks as (", g.out[1], ", ",
           g.out[2], "), but its components must be at least one.");
  const ScalarType ct = compute_type(input->dtype, "im2col");
  Tensor x = prepared(input, ct);
  Tensor out = empty({g.N, g.Cin * g.taps(), g.out_plane()}, ct);
  with_type(ct, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t n = 0; n < g.N; ++n)
      conv::im2col<T>(g, ptr<T>(x) + n * g.Cin * g.in_plane(), out->data<T>() + n * g.Cin * g.taps() * g.out_plane(),
                      true);
  });
  return finished(out, input->dtype);
}

Tensor col2im_cpu(const Tensor& input, const IntList& output_size, const IntList& kernel,
                  const IntList& dilation, const IntList& padding, const IntList& stride) {
  FL_CHECK(input->dim() == 3, Error,
           "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero dimensions for "
           "input, but got: ",
           input->sizes);
  FL_CHECK(output_size.size() == 2, Error, "It is expected output_size equals to 2, but got size ", output_size.size());
  FL_CHECK(kernel.size() == 2 && kernel[0] > 0 && kernel[1] > 0, Error,
           "kernel size should be greater than zero, but got kernel_size=", pair_str(kernel));
  const int64_t kprod = kernel[0] * kernel[1];
  FL_CHECK(input->sizes[1] % kprod == 0, Error,
           "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got input.size(1)=",
           input->sizes[1], " and kernel_size=", pair_str(kernel));
  Geom g =
      blocks_geom("col2im", input->sizes[0], input->sizes[1] / kprod, output_size, kernel, dilation, padding, stride);
  FL_CHECK(g.out[1] >= 1 && g.out[2] >= 1, Error, "Given output_size=", pair_str(output_size),
           ", kernel_size=", pair_str(kernel), ", dilation=", pair_str(dilation), ", padding=", pair_str(padding),
           ", stride=", pair_str(stride), ", calculated shape of the array of sliding blocks as (", g.out[1], ", ",
           g.out[2], "), which is too small (non-positive)");
  FL_CHECK(input->sizes[2] == g.out_plane(), Error, "Given output_size=", pair_str(output_size),
           ", kernel_size=", pair_str(kernel), ", dilation=", pair_str(dilation), ", padding=", pair_str(padding),
           ", stride=", pair_str(stride),
           ", expected size of input's dimension 2 to match the calculated number of sliding blocks ", g.out[1], " * ",
           g.out[2], " = ", g.out_plane(), ", but got input.size(2)=", input->sizes[2], ".");
  const ScalarType ct = compute_type(input->dtype, "col2im");
  Tensor c = prepared(input, ct);
  Tensor out = empty({g.N, g.Cin, output_size[0], output_size[1]}, ct);
  with_type(ct, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t n = 0; n < g.N; ++n)
      conv::col2im<T>(g, ptr<T>(c) + n * g.Cin * g.taps() * g.out_plane(), out->data<T>() + n * g.Cin * g.in_plane(),
                      true);
  });
  return finished(out, input->dtype);
}

std::optional<Activation> conv2d_bias_act_kind(const Tensor& input, const std::string& activation) {
  const std::optional<Activation> act = epilogue_activation(activation, "_conv2d_bias_act");
  FL_CHECK(input->dim() == 4, Error, "_conv2d_bias_act: expected a 4-D input (N, C, H, W), but got input of size ",
           input->sizes);
  return act;
}

}  // namespace fl
