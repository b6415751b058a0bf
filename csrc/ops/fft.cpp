// CPU kernels of the torch.fft primitives (ops/fft.h): multi-dim transforms as 1-D passes of kernels/fft.h, one dim
// at a time, the first pass reading the input and the others working in place on the output.
#include "fft.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "../kernels/fft.h"

namespace fl {
namespace {

// Wrapped, checked dims (IndexError for one out of range, RuntimeError for a repeat or none at all).
IntList fft_dims(const char* op, const Tensor& self, const IntList& dim) {
  if (dim.empty()) throw Error(str_cat(op, ": expects at least one dim to transform"));
  IntList d;
  for (int64_t x : dim) d.push_back(wrap_dim(x, self->dim(), op));
  IntList sorted = d;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    throw Error(str_cat(op, ": FFT dims must be unique"));
  return d;
}

double norm_scale(const char* op, int64_t normalization, double signal_numel) {
  switch (normalization) {
    case 0: return 1.0;
    case 1: return 1.0 / std::sqrt(signal_numel);
    case 2: return 1.0 / signal_numel;
    default: throw Error(str_cat(op, ": invalid normalization mode ", normalization));
  }
}

// The lines along `dim` of a (real or complex) and b, which share their sizes except along `dim`: their start
// offsets in T elements (`ea`, `eb` T per element), enumerated with b's smallest-stride dim fastest, so that
// neighbouring lines are neighbours in memory and the engine's lanes read adjacent data.
void line_offsets(const IntList& sizes, int64_t dim, const IntList& sa, int64_t ea, const IntList& sb, int64_t eb,
                  std::vector<int64_t>& oa, std::vector<int64_t>& ob) {
  IntList others;
  int64_t count = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(sizes.size()); ++d)
    if (d != dim) { others.push_back(d); count *= sizes[d]; }
  std::stable_sort(others.begin(), others.end(), [&](int64_t x, int64_t y) { return sb[x] > sb[y]; });
  oa.assign(count, 0);
  ob.assign(count, 0);
  IntList idx(others.size(), 0);
  int64_t a = 0, b = 0;
  for (int64_t i = 0; i < count; ++i) {
    oa[i] = a;
    ob[i] = b;
    for (int64_t k = static_cast<int64_t>(others.size()) - 1; k >= 0; --k) {
      const int64_t d = others[k];
      a += sa[d] * ea;
      b += sb[d] * eb;
      if (++idx[k] < sizes[d]) break;
      a -= sa[d] * ea * sizes[d];
      b -= sb[d] * eb * sizes[d];
      idx[k] = 0;
    }
  }
}

// One complex-to-complex pass along `dim` from src into dst (same sizes; dst may be src).
template <typename T>
void c2c_pass(const Tensor& src, const Tensor& dst, int64_t dim, bool inverse, T scale) {
  std::vector<int64_t> oa, ob;
  line_offsets(src->sizes, dim, src->strides, 2, dst->strides, 2, oa, ob);
  fft::c2c<T>(src->data<T>(), dst->data<T>(), src->sizes[dim], 2 * src->strides[dim], 2 * dst->strides[dim], oa, ob,
              inverse, scale);
}

void check_complex(const char* op, const Tensor& self) {
  if (!is_complex(self->dtype))
    throw Error(str_cat(op, " expects a complex input tensor, but got ", c10_type_name(self->dtype)));
}

}  // namespace

Tensor fft_c2c_cpu(const Tensor& self, const IntList& dim, int64_t normalization, bool forward) {
  check_complex("_fft_c2c", self);
  const IntList dims = fft_dims("_fft_c2c", self, dim);
  double signal = 1;
  for (int64_t d : dims) signal *= static_cast<double>(self->sizes[d]);
  const double scale = norm_scale("_fft_c2c", normalization, signal);
  Tensor out = empty(self->sizes, self->dtype);
  if (out->numel == 0) return out;
  // the last dims first: they are the output's contiguous ones
  for (size_t i = dims.size(); i-- > 0;) {
    const Tensor& src = i + 1 == dims.size() ? self : out;
    const bool first = i + 1 == dims.size();
    if (self->dtype == ScalarType::ComplexFloat) c2c_pass<float>(src, out, dims[i], !forward, first ? float(scale) : 1.f);
    else c2c_pass<double>(src, out, dims[i], !forward, first ? scale : 1.0);
  }
  return out;
}

template <typename T>
void r2c_impl(const Tensor& self, const Tensor& out, const IntList& dims, bool onesided, T scale) {
  const int64_t last = dims.back();
  std::vector<int64_t> oa, ob;
  line_offsets(self->sizes, last, self->strides, 1, out->strides, 2, oa, ob);
  fft::r2c<T>(self->data<T>(), out->data<T>(), self->sizes[last], self->strides[last], 2 * out->strides[last], oa, ob,
              onesided, scale);
  for (size_t i = dims.size() - 1; i-- > 0;) c2c_pass<T>(out, out, dims[i], false, T(1));
}

Tensor fft_r2c_cpu(const Tensor& self, const IntList& dim, int64_t normalization, bool onesided) {
  if (self->dtype != ScalarType::Float32 && self->dtype != ScalarType::Float64)
    throw Error(str_cat("_fft_r2c expects a float32 or float64 input tensor, but got ", c10_type_name(self->dtype)));
  const IntList dims = fft_dims("_fft_r2c", self, dim);
  double signal = 1;
  for (int64_t d : dims) signal *= static_cast<double>(self->sizes[d]);
  const double scale = norm_scale("_fft_r2c", normalization, signal);
  IntList sizes = self->sizes;
  const int64_t n = sizes[dims.back()];
  if (onesided) sizes[dims.back()] = n / 2 + 1;
  Tensor out = empty(sizes, to_complex_type(self->dtype));
  if (self->numel == 0) {
    if (out->numel) fill(out, Scalar(int64_t(0)));
    return out;
  }
  if (self->dtype == ScalarType::Float32) r2c_impl<float>(self, out, dims, onesided, float(scale));
  else r2c_impl<double>(self, out, dims, onesided, scale);
  return out;
}

template <typename T>
void c2r_impl(const Tensor& self, const Tensor& out, const IntList& dims, T scale) {
  const int64_t last = dims.back();
  Tensor half = self;
  if (dims.size() > 1) {
    half = empty(self->sizes, self->dtype);
    for (size_t i = dims.size() - 1; i-- > 0;) c2c_pass<T>(i + 2 == dims.size() ? self : half, half, dims[i], true, T(1));
  }
  std::vector<int64_t> oa, ob;
  line_offsets(out->sizes, last, half->strides, 2, out->strides, 1, oa, ob);
  fft::c2r<T>(half->data<T>(), out->data<T>(), out->sizes[last], 2 * half->strides[last], out->strides[last], oa, ob,
              scale);
}

Tensor fft_c2r_cpu(const Tensor& self, const IntList& dim, int64_t normalization,
                   int64_t last_dim_size) {
  check_complex("_fft_c2r", self);
  const IntList dims = fft_dims("_fft_c2r", self, dim);
  const int64_t last = dims.back();
  if (last_dim_size < 1 || self->sizes[last] < last_dim_size / 2 + 1)
    throw Error(str_cat("_fft_c2r: an output of ", last_dim_size, " points along dim ", last, " needs ",
                        last_dim_size / 2 + 1, " input points there, got an input of shape ", shape_str(self->sizes)));
  IntList sizes = self->sizes;
  sizes[last] = last_dim_size;
  double signal = 1;
  for (int64_t d : dims) signal *= static_cast<double>(sizes[d]);
  const double scale = norm_scale("_fft_c2r", normalization, signal);
  Tensor out = empty(sizes, to_real_type(self->dtype));
  if (out->numel == 0) return out;
  if (self->dtype == ScalarType::ComplexFloat) c2r_impl<float>(self, out, dims, float(scale));
  else c2r_impl<double>(self, out, dims, scale);
  return out;
}

}  // namespace fl
