// Tensor arithmetic for writing backward formulas. Everything goes through the dispatcher, so a
// formula evaluated with grad mode on (create_graph=True) records its own graph.
#pragma once
#include <array>

#include "../ops/complex.h"
#include "../ops/index.h"
#include "../ops/pointwise.h"

namespace fl::formulas {

inline Tensor num(double v) { return wrap_scalar(Scalar(v)); }
inline Tensor bin(BinaryOp op, const Tensor& a, const Tensor& b) { return binary_op(op, a, b, Scalar(int64_t(1)), nullptr); }
inline Tensor un(UnaryOp op, const Tensor& a) { return unary_op(op, a, nullptr); }

inline Tensor operator+(const Tensor& a, const Tensor& b) { return bin(BinaryOp::add, a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return bin(BinaryOp::sub, a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return bin(BinaryOp::mul, a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return bin(BinaryOp::div, a, b); }
inline Tensor operator+(const Tensor& a, double b) { return a + num(b); }
inline Tensor operator-(const Tensor& a, double b) { return a - num(b); }
inline Tensor operator*(const Tensor& a, double b) { return a * num(b); }
inline Tensor operator*(const Tensor& a, Scalar b) { return a * wrap_scalar(b); }
inline Tensor operator-(const Tensor& a) { return un(UnaryOp::neg, a); }

#define FL_FORMULA_UNARY(name) inline Tensor name(const Tensor& a) { return un(UnaryOp::name, a); }
FL_FORMULA_UNARY(exp) FL_FORMULA_UNARY(exp2) FL_FORMULA_UNARY(log) FL_FORMULA_UNARY(sin) FL_FORMULA_UNARY(cos)
FL_FORMULA_UNARY(sinh) FL_FORMULA_UNARY(cosh) FL_FORMULA_UNARY(rsqrt) FL_FORMULA_UNARY(sign) FL_FORMULA_UNARY(trunc)
FL_FORMULA_UNARY(digamma) FL_FORMULA_UNARY(isnan) FL_FORMULA_UNARY(sgn) FL_FORMULA_UNARY(abs) FL_FORMULA_UNARY(log1p)
#undef FL_FORMULA_UNARY

// The conjugate of a complex value a formula uses (a view with the conjugate bit); other values as they are. The
// formulas of holomorphic functions with real coefficients, evaluated at the conjugates, give the conjugate
// derivative torch's convention for complex gradients asks for (grad * conj(f'(z))).
inline Tensor conj_of(const Tensor& t) { return t && is_complex(t->dtype) ? ops::conj(t) : t; }

inline Tensor floor_div(const Tensor& a, const Tensor& b) { return bin(BinaryOp::div_floor, a, b); }
inline Tensor zeros_like(const Tensor& g) { return zeros(g->sizes, g->dtype); }
inline Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) { return ops::where(cond, a, b); }

// max/min: the gradient goes to the winner, split in half on ties (as PyTorch).
inline Tensor minmax_grad(const Tensor& g, const Tensor& self, const Tensor& other, bool is_max) {
  Tensor loses = bin(is_max ? BinaryOp::lt : BinaryOp::gt, self, other);
  return where(loses, num(0.0), where(bin(BinaryOp::eq, self, other), g * 0.5, g));
}
// fmax/fmin: the gradient goes to a where a wins or ties or b is NaN, else to b (as PyTorch).
inline Tensor fminmax_grad(const Tensor& g, const Tensor& a, const Tensor& b, bool is_max, bool for_a) {
  Tensor a_wins = bin(BinaryOp::logical_or, bin(is_max ? BinaryOp::ge : BinaryOp::le, a, b), isnan(b));
  return for_a ? where(a_wins, g, num(0.0)) : where(a_wins, num(0.0), g);
}
// 1 / (a^2 + b^2) for atan2's gradients, 0 where that overflows (at and near the origin), as PyTorch.
inline Tensor atan2_recip(const Tensor& a, const Tensor& b) {
  Tensor recip = num(1.0) / (a * a + b * b);
  return where(un(UnaryOp::isinf, recip), num(0.0), recip);
}
// The base of pow as the formulas see it: a real base meeting a complex exponent is promoted to complex (as the
// forward does) and conjugated, as every value in a formula is (a real negative base then lies just below the branch
// cut: log|a| - i pi).
inline Tensor pow_base(const Tensor& a, const Tensor& b) {
  return is_complex(b->dtype) && !is_complex(a->dtype) ? ops::conj(to_dtype(a, result_type(a, b))) : a;
}
inline Tensor pow_grad_base(const Tensor& g, const Tensor& a, const Tensor& b) {
  return where(bin(BinaryOp::eq, b, num(0.0)), num(0.0), g * b * bin(BinaryOp::pow, pow_base(a, b), b - 1.0));
}
inline Tensor pow_grad_exponent(const Tensor& g, const Tensor& a, const Tensor& b, const Tensor& r) {
  // as torch's pow_backward_exponent: a complex exponent counts as non-negative when it is real and >= 0
  Tensor nonneg = is_complex(b->dtype) ? bin(BinaryOp::logical_and, bin(BinaryOp::eq, ops::imag(b), num(0.0)),
                                             bin(BinaryOp::ge, ops::real(b), num(0.0)))
                                       : bin(BinaryOp::ge, b, num(0.0));
  Tensor zero_base = bin(BinaryOp::logical_and, bin(BinaryOp::eq, a, num(0.0)), nonneg);
  return where(zero_base, num(0.0), g * r * log(pow_base(a, b)));
}
inline Tensor xlogy_grad_x(const Tensor& g, const Tensor& a, const Tensor& b) {
  Tensor masked = bin(BinaryOp::logical_and, bin(BinaryOp::eq, a, num(0.0)), bin(BinaryOp::le, b, num(0.0)));
  return where(masked, num(0.0), bin(BinaryOp::xlogy, g, b));
}
inline Tensor copysign_grad(const Tensor& g, const Tensor& a, const Tensor& r) {
  return where(bin(BinaryOp::eq, a, num(0.0)), num(0.0), g * (r / a));
}
// trigamma (digamma's derivative) composed of differentiable ops, so that digamma has a double
// backward too: the recurrence up to 10, the asymptotic series beyond (relative error measured below
// 1e-12 against scipy over (-10, 30)),
// and the reflection pi^2 / sin^2(pi x) - trigamma(1 - x) for negatives.
inline Tensor trigamma(const Tensor& x) {
  const double pi = 3.14159265358979323846;
  Tensor neg = bin(BinaryOp::lt, x, num(0.0));
  Tensor y = where(neg, -x + 1.0, x);
  Tensor sum = num(1.0) / (y * y);
  for (int k = 1; k < 10; ++k) sum = sum + num(1.0) / ((y + double(k)) * (y + double(k)));
  Tensor iz = num(1.0) / (y + 10.0), iz2 = iz * iz;
  Tensor tail = iz * (iz * (iz * (iz2 * (iz2 * (iz2 * (-1.0 / 30) + 1.0 / 42) - 1.0 / 30) + 1.0 / 6) + 0.5) + 1.0);
  Tensor t = sum + tail, s = sin(x * pi);
  return where(neg, num(pi * pi) / (s * s) - t, t);
}
// sgn(z) = z / |z|: zero for a real input; for a complex one torch's sgn_backward, (g - r Re(g conj(r))) / |z|,
// zero at z = 0.
inline Tensor sgn_grad(const Tensor& g, const Tensor& x, const Tensor& r) {
  if (!is_complex(x->dtype)) return zeros_like(g);
  Tensor a = abs(x);
  Tensor gr = (g - r * ops::real(g * ops::conj(r))) / a;
  return ops::where(bin(BinaryOp::eq, a, num(0.0)), num(0.0), gr);
}
// acosh: 1 / sqrt(x^2 - 1) for real x (defined for x < -1 too, as torch's), 1 / (sqrt(z + 1) sqrt(z - 1)) for
// complex z (the branch torch's complex gradient takes)
inline Tensor acosh_grad(const Tensor& g, const Tensor& x) {
  return is_complex(x->dtype) ? g * rsqrt(x + 1.0) * rsqrt(x - 1.0) : g * rsqrt(x * x - 1.0);
}
inline IntList negated(const IntList& v) {
  IntList out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = -v[i];
  return out;
}
// The last n sizes (a pooled plane's, when n is the number of spatial dims).
inline IntList last_sizes(const IntList& sizes, size_t n) { return IntList(sizes.end() - n, sizes.end()); }

// Backward formulas that op declarations (csrc/ops/*.yaml) name, defined in their family's autograd file.
// views_autograd.cpp
IntList inverse_permutation(const IntList& dims);
Tensor trace_backward(const Tensor& g, const IntList& in_sizes);
Tensor repeat_backward(const Tensor& g, const IntList& in_sizes, const IntList& repeats);
// fft_autograd.cpp
Tensor fft_r2c_backward(const Tensor& g, const IntList& dim, int64_t normalization, const IntList& in_sizes);
Tensor fft_c2r_backward(const Tensor& g, const IntList& dim, int64_t normalization);
// index_autograd.cpp
Tensor take_backward(const Tensor& g, const IntList& in_sizes, const Tensor& index);
Tensor masked_select_backward(const Tensor& g, const IntList& in_sizes, const Tensor& mask);
// The in-place writes (index.yaml): a source's gradient read at index's positions, zero-padded to its sizes and cast
// to its dtype (scatter reads only index's extent of it); a gradient with the overwritten positions zeroed
Tensor padded(const Tensor& g, const IntList& sizes, ScalarType dt);
Tensor index_put_zeroed(const Tensor& g, const TensorList& indices);
Tensor scatter_zeroed(const Tensor& g, int64_t dim, const Tensor& index);
Tensor scatter_src_backward(const Tensor& g, int64_t dim, const Tensor& index, const IntList& src_sizes, ScalarType dt);
Tensor index_fill_zeroed(const Tensor& g, int64_t dim, const Tensor& index);
TensorList index_fill_backward(const Tensor& g, int64_t dim, const Tensor& index, ScalarType value_dtype,
                               const std::array<bool, 2>& mask);
Tensor index_source_backward(const Tensor& g, int64_t dim, const Tensor& index, Scalar alpha, const IntList& src_sizes,
                             ScalarType dt);
Tensor masked_scatter_source_backward(const Tensor& g, const Tensor& mask, const IntList& src_sizes, ScalarType dt);
TensorList scatter_reduce_backward(const Tensor& g, const Tensor& self, int64_t dim, const Tensor& index,
                                   const Tensor& src, const std::string& reduce, bool include_self,
                                   const Tensor& result, const std::array<bool, 2>& mask);
// linalg_autograd.cpp
Tensor linalg_inv_backward(const Tensor& g, const Tensor& inverse);
TensorList linalg_solve_backward(const Tensor& g, const Tensor& A, const Tensor& X, const std::array<bool, 2>& mask);
TensorList solve_triangular_backward(const Tensor& g, const Tensor& A, const Tensor& X, bool upper, bool left, bool unit,
                                     const std::array<bool, 2>& mask);
Tensor lu_factor_backward(const Tensor& grad, const Tensor& LU, const Tensor& pivots);
Tensor det_backward(const Tensor& g, const Tensor& A, const Tensor& det);
Tensor slogdet_backward(const Tensor& g_sign, const Tensor& g_logabsdet, const Tensor& A, const Tensor& sign);
Tensor cholesky_backward(const Tensor& gL, bool upper, const Tensor& L);
Tensor linalg_qr_backward(const Tensor& gQ, const Tensor& gR, const Tensor& Q, const Tensor& R, const std::string& mode);
Tensor linalg_eigh_backward(const Tensor& gL, const Tensor& gV, const Tensor& L, const Tensor& V);
Tensor linalg_eig_backward(const Tensor& gL, const Tensor& gV, const Tensor& L, const Tensor& V, bool real_input);
Tensor linalg_svd_backward(const Tensor& gU, const Tensor& gS, const Tensor& gVh, const Tensor& U, const Tensor& S,
                           const Tensor& Vh, bool full_matrices);
// matmul_autograd.cpp: the gradients of self and other in alpha * self @ other (mm or bmm), and of the addend in
// beta * self + alpha * ...
Tensor product_grad_self(const Tensor& g, const Tensor& other, const IntList& self_sizes, const IntList& self_strides,
                         Scalar alpha = Scalar(int64_t(1)));
Tensor product_grad_other(const Tensor& g, const Tensor& self, const IntList& other_sizes, const IntList& other_strides,
                          Scalar alpha = Scalar(int64_t(1)));
Tensor addend_grad(const Tensor& g, const IntList& self_sizes, Scalar beta);
// vision_autograd.cpp
const char* pad_node_name(int64_t mode);
const char* upsample_node_name(int64_t mode, size_t nd);
Tensor embedding_dense_double_backward(const Tensor& gg, const Tensor& indices, int64_t padding_idx);
TensorList grid_sampler_backward_backward(const Tensor& gg_input, const Tensor& gg_grid, const Tensor& g,
                                          const Tensor& input, const Tensor& grid, int64_t interp, int64_t padding,
                                          bool align, const std::array<bool, 3>& mask);
TensorList grid_sampler_double_backward_backward(const TensorList& grads, const Tensor& g, const Tensor& input,
                                                 const Tensor& grid, const Tensor& gg_grid, int64_t interp,
                                                 int64_t padding, bool align);
// loss_autograd.cpp: the fused backward kernels, or under create_graph the same written with differentiable ops
Tensor nll_loss_grad(const Tensor& g, const Tensor& self, const Tensor& target, const Tensor& weight, int64_t reduction,
                     int64_t ignore_index, const Tensor& total_weight);
Tensor cross_entropy_loss_grad(const Tensor& g, const Tensor& self, const Tensor& target, const Tensor& weight,
                               int64_t reduction, int64_t ignore_index, double label_smoothing, const Tensor& stats,
                               const Tensor& total_weight);
Tensor softplus_neg(const Tensor& x);  // softplus(-x) = -log(sigmoid(x)), overflow-free
Tensor bce_with_logits_grad_self(const Tensor& g, const Tensor& x, const Tensor& y, const Tensor& pos_weight);
// conv_autograd.cpp
TensorList convolution_grads(const Tensor& g, const Tensor& input, const Tensor& weight, const IntList& stride,
                             const IntList& padding, const IntList& dilation, bool transposed,
                             const IntList& output_padding, int64_t groups, const std::array<bool, 3>& mask);
Tensor conv2d_bias_act_composite(const Tensor& input, const Tensor& weight, const Tensor& bias, const IntList& stride,
                                 const IntList& padding, const IntList& dilation, int64_t groups,
                                 const std::string& activation);
// nn_autograd.cpp
TensorList attention_backward(const Tensor& g, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                              const Tensor& out, const Tensor& lse, const Tensor& seed_offset, double dropout_p,
                              bool is_causal, double scale, bool gqa, const std::array<bool, 4>& mask_);
Tensor softmax_grad(const Tensor& g, const Tensor& y, int64_t dim, bool log, ScalarType input_dtype);
TensorList layer_norm_grads(const Tensor& g, const Tensor& x, const Tensor& w, const Tensor& mean, const Tensor& rstd,
                            const IntList& shape, double eps, bool rms, ScalarType bias_dtype,
                            const std::array<bool, 3>& mask);
TensorList batch_norm_grads(const Tensor& g, const Tensor& x, const Tensor& w, const Tensor& save_mean,
                            const Tensor& save_invstd, bool training, double eps, ScalarType bias_dtype,
                            const std::array<bool, 3>& mask);
// pool_autograd.cpp: each value's gradient, gathered back from its flat position in the last plane_dims dims of g
Tensor plane_gather(const Tensor& g, const Tensor& indices, const IntList& values_sizes, size_t plane_dims);
// reduce_autograd.cpp
Tensor sum_backward(const Tensor& g, const IntList& in_sizes, const IntList& dims, bool keepdim, ScalarType dt);
Tensor mean_backward(const Tensor& g, const IntList& in_sizes, const IntList& dims, bool keepdim, ScalarType dt);
Tensor nansum_backward(const Tensor& g, const Tensor& x, const IntList& dims, bool keepdim);
Tensor nanmean_backward(const Tensor& g, const Tensor& x, const IntList& dims, bool keepdim);
Tensor extreme_backward(const Tensor& g, const Tensor& x, const Tensor& r, const IntList& dims, bool keepdim);
Tensor logsumexp_backward(const Tensor& g, const Tensor& x, const Tensor& r, const IntList& dims, bool keepdim);
Tensor prod_backward(const Tensor& g, const Tensor& x, const Tensor& r, const IntList& dims, bool keepdim);
Tensor norm_backward(const Tensor& g, const Tensor& x, const Tensor& r, double p, const IntList& dims, bool keepdim);
Tensor selected_backward(const Tensor& g, const IntList& in_sizes, int64_t dim, bool keepdim, const Tensor& indices);
Tensor evenly_distribute_backward(const Tensor& g, const Tensor& x, const Tensor& r);
Tensor reverse_cumsum(const Tensor& t, int64_t dim);
Tensor var_mean_backward(const Tensor& g_var, const Tensor& g_mean, const Tensor& x, const IntList& dims,
                         double correction, bool keepdim);
Tensor cumprod_backward(const Tensor& g, const Tensor& x, const Tensor& r, int64_t dim);
Tensor logcumsumexp_backward(const Tensor& g, const Tensor& x, const Tensor& r, int64_t dim);
TensorList quantile_backward(const Tensor& g, const Tensor& x, const Tensor& q, std::optional<int64_t> dim,
                             const std::string& interp, bool ignore_nan, const std::array<bool, 2>& mask);

// The metadata of a Tensor[] argument, one entry per tensor (kept by value by the generated kernels)
inline std::vector<IntList> to_args_sizes(const TensorList& ts) {
  std::vector<IntList> out;
  for (const Tensor& t : ts) out.push_back(t->sizes);
  return out;
}
inline std::vector<ScalarType> to_args_scalartypes(const TensorList& ts) {
  std::vector<ScalarType> out;
  for (const Tensor& t : ts) out.push_back(t->dtype);
  return out;
}
// cat's gradient: each tensor's slice of g along dim, in its dtype (empty for a skipped legacy 1-D empty tensor)
TensorList cat_tensors_backward(const Tensor& g, const std::vector<IntList>& sizes, const std::vector<ScalarType>& dtypes,
                                int64_t dim);

[[noreturn]] inline Tensor not_implemented(const char* op) {
  throw NotImplementedError(str_cat("the derivative for '", op, "' is not implemented."));
}
// torch's error (a RuntimeError) in the backward of an op that has no derivative formula at all (set_, scatter_'s
// reduce= mode); `op` as torch names it there ("set_", "aten::scatter_")
[[noreturn]] inline Tensor no_derivative(const char* op) {
  throw Error(str_cat("derivative for ", op, " is not implemented"));
}

}  // namespace fl::formulas
