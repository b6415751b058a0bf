// Internal to csrc/ops/conv*.cpp and pool.cpp: the convolution geometry (Note [Convolution
// geometry] in conv.h), the float/double kernels on contiguous buffers, and the dtype handling
// around them that pooling shares.
#pragma once
#include <cstdint>

#include "../core/tensor.h"
#include "../kernels/blas.h"

namespace fl::conv {

// ---- dtype handling: kernels run on float or double; float16/bfloat16 compute in float32 ------------

// The type the kernels compute in; RuntimeError (NotImplementedError) for non-floating types.
inline ScalarType compute_type(ScalarType t, const char* op) {
  FL_CHECK(is_floating(t), NotImplementedError, "\"", op, "\" not implemented for '", c10_type_name(t), "'");
  return t == ScalarType::Float64 ? ScalarType::Float64 : ScalarType::Float32;
}
// t in the compute type, row-major (undefined stays undefined).
inline Tensor prepared(const Tensor& t, ScalarType ct) { return t ? contiguous(to_dtype(t, ct)) : nullptr; }
// A result back in the caller's dtype.
inline Tensor finished(const Tensor& t, ScalarType dt) { return t && t->dtype != dt ? to_dtype(t, dt) : t; }
// f(T()) with T the C++ type of the compute type ct.
template <typename F>
void with_type(ScalarType ct, F&& f) {
  if (ct == ScalarType::Float64) f(double());
  else f(float());
}

constexpr int kD = 3;  // spatial dims every convolution is computed in

// One ordinary convolution: input (N, Cin, in), weight (Cout, Cin/G, k), output (N, Cout, out).
struct Geom {
  int64_t N = 0, Cin = 0, Cout = 0, G = 1;
  int64_t in[kD] = {1, 1, 1}, out[kD] = {1, 1, 1}, k[kD] = {1, 1, 1};
  int64_t s[kD] = {1, 1, 1}, p[kD] = {0, 0, 0}, d[kD] = {1, 1, 1};  // p: the low-side padding
  int64_t in_plane() const { return in[0] * in[1] * in[2]; }
  int64_t out_plane() const { return out[0] * out[1] * out[2]; }
  int64_t taps() const { return k[0] * k[1] * k[2]; }
  int64_t cin_g() const { return Cin / G; }
  int64_t cout_g() const { return Cout / G; }
  int64_t K() const { return cin_g() * taps(); }  // rows of one group's column matrix
  // A 1x1 convolution with unit stride and no padding: the input already is its column matrix.
  bool pointwise() const;
  // One input channel per group: the direct (depthwise) kernels beat a one-row GEMM.
  bool depthwise() const { return G > 1 && cin_g() == 1; }
};

// Columns (Cin * taps, out_plane) of one sample (Cin, in_plane); parallel over channels when `par`.
template <typename T>
void im2col(const Geom& g, const T* x, T* col, bool par);
// The adjoint: x (Cin, in_plane) = sum of the columns over the positions they were read from.
template <typename T>
void col2im(const Geom& g, const T* col, T* x, bool par);

// y = conv(x, w) + bias (bias may be null), then `ep` (float only; empty for double) on every element of y,
// run on each tile as the GEMM stores it.
template <typename T>
void forward(const Geom& g, const T* x, const T* w, const T* bias, T* y, const blas::Epilogue& ep = {});
// gx = the input gradient for output gradient gy.
template <typename T>
void backward_data(const Geom& g, const T* gy, const T* w, T* gx);
// gw = the weight gradient, summed over the batch.
template <typename T>
void backward_weight(const Geom& g, const T* gy, const T* x, T* gw);

}  // namespace fl::conv
