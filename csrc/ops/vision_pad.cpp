// pad and pad_backward: every mode is one index map per padded dim (output position -> input
// position, -1 for the constant border), so one loop serves all modes and any number of dims.
#include <omp.h>

#include <algorithm>

#include "../core/dispatch.h"
#include "../kernels/copy.h"
#include "../kernels/loops.h"
#include "vision.h"

namespace fl {
namespace {

const char* mode_name(PadMode m) {
  switch (m) {
    case PadMode::Reflect: return "reflect";
    case PadMode::Replicate: return "replicate";
    case PadMode::Circular: return "circular";
    default: return "constant";
  }
}

int64_t source_index(int64_t p, int64_t n, PadMode m) {
  if (p >= 0 && p < n) return p;
  switch (m) {
    case PadMode::Reflect: return p < 0 ? -p : 2 * (n - 1) - p;
    case PadMode::Replicate: return p < 0 ? 0 : n - 1;
    default: return -1;
  }
}

// The geometry shared by forward and backward: the input viewed as [outer, padded dims...] and,
// per padded dim (outermost first), the output size and the output -> input index map.
struct PadPlan {
  int64_t outer = 1;
  IntList in_sizes, out_sizes, out_full;  // padded dims only; the full output shape
  std::vector<std::vector<int64_t>> maps;
  int64_t rows_per_outer = 1;  // output rows (all padded dims but the last) per outer index
  // The longest run of the last dim's map reading consecutive input elements: copied as a block.
  int64_t run_begin = 0, run_len = 0, run_src = 0;

  PadPlan(const IntList& sizes, const IntList& pad, PadMode mode) {
    const int64_t ndim = static_cast<int64_t>(sizes.size());
    FL_CHECK(pad.size() % 2 == 0, Error, "Padding length must be divisible by 2");
    const int64_t k = static_cast<int64_t>(pad.size()) / 2;
    FL_CHECK(k <= ndim, Error, "Padding length should be less than or equal to two times the input dimension but got "
             "padding length ", pad.size(), " and input of dimension ", ndim);
    if (mode != PadMode::Constant) {
      FL_CHECK(k >= 1 && k <= 3 && (ndim == k + 1 || ndim == k + 2), NotImplementedError, "Padding size ", pad.size(),
               " is not supported for ", ndim, "D input tensor.\nSupported combinations for non-constant padding:\n"
               "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
               "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
               "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)");
      for (int64_t d = ndim == k + 2 ? 1 : 0; d < ndim; ++d)
        FL_CHECK(sizes[d] > 0, Error, "Expected ", k + 1, "D or ", k + 2, "D (batch mode) tensor with possibly 0 batch "
                 "size and other non-zero dimensions for input, but got: ", shape_str(sizes));
    }
    out_full = sizes;
    for (int64_t d = 0; d < ndim - k; ++d) outer *= sizes[d];
    for (int64_t j = k - 1; j >= 0; --j) {  // outermost padded dim first
      const int64_t d = ndim - 1 - j, n = sizes[d], l = pad[2 * j], r = pad[2 * j + 1];
      if (mode == PadMode::Reflect)
        FL_CHECK(l < n && r < n, Error, "Argument #", 4 + 2 * (ndim - 1 - d), ": Padding size should be less than the "
                 "corresponding input dimension, but got: padding (", l, ", ", r, ") at dimension ", d, " of input ",
                 shape_str(sizes));
      if (mode == PadMode::Circular)
        FL_CHECK(l <= n && r <= n, Error, "Padding value causes wrapping around more than once.");
      const int64_t o = n + l + r;
      FL_CHECK(o >= 0, Error, "narrow(): length must be non-negative.");
      FL_CHECK(mode == PadMode::Constant || o > 0, Error, "pad: ", mode_name(mode), " padding of input ",
               shape_str(sizes), " gives an empty output");
      std::vector<int64_t> m(o);
      if (mode == PadMode::Circular) {
        // PyTorch wraps within the part of the input that survives negative padding (the center)
        const int64_t start = std::max<int64_t>(-l, 0), len = n - start - std::max<int64_t>(-r, 0);
        FL_CHECK(len > 0, Error, "pad: circular padding ", l, ", ", r, " leaves nothing of dimension ", d, " of input ",
                 shape_str(sizes));
        for (int64_t i = 0; i < o; ++i) m[i] = start + (((i - std::max<int64_t>(l, 0)) % len) + len) % len;
      } else {
        for (int64_t i = 0; i < o; ++i) m[i] = source_index(i - l, n, mode);
      }
      maps.push_back(std::move(m));
      in_sizes.push_back(n);
      out_sizes.push_back(o);
      out_full[d] = o;
    }
    for (size_t i = 0; i + 1 < out_sizes.size(); ++i) rows_per_outer *= out_sizes[i];
    if (maps.empty()) return;
    const std::vector<int64_t>& last = maps.back();
    for (int64_t j = 0, n = static_cast<int64_t>(last.size()); j < n;) {
      int64_t e = j + 1;
      if (last[j] >= 0)
        while (e < n && last[e] == last[e - 1] + 1) ++e;
      if (last[j] >= 0 && e - j > run_len) { run_begin = j; run_len = e - j; run_src = last[j]; }
      j = e;
    }
  }

  int64_t in_inner() const { int64_t s = 1; for (int64_t v : in_sizes) s *= v; return s; }
  int64_t out_inner() const { int64_t s = 1; for (int64_t v : out_sizes) s *= v; return s; }

  // Offset of output row `r` (within one outer slice) in the input, or -1 when it lies in the
  // constant border.
  int64_t row_source(int64_t r) const {
    int64_t off = 0, stride = in_sizes.back();
    for (int64_t i = static_cast<int64_t>(out_sizes.size()) - 2; i >= 0; --i) {
      const int64_t o = r % out_sizes[i];
      r /= out_sizes[i];
      const int64_t s = maps[i][o];
      if (s < 0) return -1;
      off += s * stride;
      stride *= in_sizes[i];
    }
    return off;
  }
};

template <typename T>
void pad_forward_impl(const Tensor& out, const Tensor& x, const PadPlan& p, double value) {
  const T* in = x->data<const T>();
  T* o = out->data<T>();
  const T fillv = convert<T>(value);
  const int64_t ni = p.in_inner(), no = p.out_inner(), w = p.out_sizes.back();
  const int64_t rows = p.outer * p.rows_per_outer;
  const std::vector<int64_t>& last = p.maps.back();
#pragma omp parallel for if (rows * w >= kParallelGrain) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t b = r / p.rows_per_outer, rr = r % p.rows_per_outer;
    T* dst = o + b * no + rr * w;
    const int64_t src = p.row_source(rr);
    if (src < 0) {
      for (int64_t j = 0; j < w; ++j) dst[j] = fillv;
      continue;
    }
    const T* s = in + b * ni + src;
    for (int64_t j = 0; j < p.run_begin; ++j) dst[j] = last[j] < 0 ? fillv : s[last[j]];
    std::copy(s + p.run_src, s + p.run_src + p.run_len, dst + p.run_begin);
    for (int64_t j = p.run_begin + p.run_len; j < w; ++j) dst[j] = last[j] < 0 ? fillv : s[last[j]];
  }
}

template <typename T>
void pad_backward_impl(const Tensor& gin, const Tensor& g, const PadPlan& p) {
  using OM = opmath_t<T>;
  const T* go = g->data<const T>();
  T* gi = gin->data<T>();
  const int64_t ni = p.in_inner(), no = p.out_inner(), w = p.out_sizes.back();
  const std::vector<int64_t>& last = p.maps.back();
  // Output rows of one outer slice may land on the same input row: parallel over slices only.
#pragma omp parallel for if (p.outer > 1 && p.outer * no >= kParallelGrain) schedule(static)
  for (int64_t b = 0; b < p.outer; ++b) {
    for (int64_t rr = 0; rr < p.rows_per_outer; ++rr) {
      const int64_t src = p.row_source(rr);
      if (src < 0) continue;
      const T* s = go + b * no + rr * w;
      T* d = gi + b * ni + src;
      for (int64_t j = 0; j < w; ++j)
        if (last[j] >= 0) d[last[j]] = static_cast<T>(static_cast<OM>(d[last[j]]) + static_cast<OM>(s[j]));
    }
  }
}

}  // namespace

Tensor pad_cpu(const Tensor& self, const IntList& pad, int64_t mode, double value) {
  PadPlan p(self->sizes, pad, static_cast<PadMode>(mode));
  // torch has no reflection/replication kernels for bool and the float8 storage types
  if ((self->dtype == ScalarType::Bool || is_float8(self->dtype)) &&
      (mode == int64_t(PadMode::Reflect) || mode == int64_t(PadMode::Replicate))) {
    const std::string kernel = str_cat(mode == int64_t(PadMode::Reflect) ? "reflection" : "replication", "_pad",
                                       pad.size() / 2, "d");
    throw_unsupported_dtype(kernel.c_str(), self->dtype);
  }
  Tensor out = empty(p.out_full, self->dtype);
  if (out->numel == 0) return out;
  if (p.maps.empty()) { copy_into(out, self); return out; }
  Tensor x = contiguous(self);
  if (is_float8(self->dtype)) {  // the constant (and circular) forms move values only, as torch's
    if (static_cast<PadMode>(mode) == PadMode::Constant) check_fill_value(Scalar(value), self->dtype);
    switch (self->dtype) {
      FL_DISPATCH_FLOAT8_CASES(pad_forward_impl<scalar_t>(out, x, p, value))
      default: break;
    }
    return out;
  }
  FL_DISPATCH_ALL_AND_COMPLEX(self->dtype, "pad", pad_forward_impl<scalar_t>(out, x, p, value));
  return out;
}

Tensor pad_backward_cpu(const Tensor& grad, const IntList& input_sizes, const IntList& pad, int64_t mode) {
  PadPlan p(input_sizes, pad, static_cast<PadMode>(mode));
  FL_CHECK(grad->sizes == p.out_full, Error, "pad_backward: expected grad of size ", shape_str(p.out_full), " but got ",
           shape_str(grad->sizes));
  Tensor gin = empty(input_sizes, grad->dtype);
  fill(gin, Scalar(int64_t(0)));
  if (gin->numel == 0 || grad->numel == 0) return gin;
  if (p.maps.empty()) { copy_into(gin, grad); return gin; }
  Tensor g = contiguous(grad);
  if (is_complex(grad->dtype)) FL_DISPATCH_COMPLEX(grad->dtype, "pad_backward", pad_backward_impl<scalar_t>(gin, g, p))
  else FL_DISPATCH_FLOATING(grad->dtype, "pad_backward", pad_backward_impl<scalar_t>(gin, g, p))
  return gin;
}

}  // namespace fl
