// Backward formulas of the reductions and scans (declared with their ops in csrc/ops/reduce.yaml) longer than
// one line. The gradient of a reduction is broadcast back over the reduced dims (expand_reduced), then weighted
// per op.
#include <cmath>
#include <limits>

#include "../ops/index.h"
#include "../ops/reduce.h"
#include "../ops/tensor_ops.h"
#include "../ops/views.h"
#include "autograd.h"
#include "formulas.h"

namespace fl::formulas {
namespace {

// The reduced result's gradient reshaped with the reduced dims kept as 1, then expanded to `in`.
Tensor expand_reduced(const Tensor& g, const IntList& in, const IntList& dims, bool keepdim) {
  std::vector<bool> mask(in.size(), dims.empty());
  // (a 0-dim input accepts dim 0 / -1, which names no dim of its empty shape)
  for (int64_t d : dims) if (!in.empty()) mask[wrap_dim(d, static_cast<int64_t>(in.size()))] = true;
  IntList kept(in.size());
  for (size_t d = 0; d < in.size(); ++d) kept[d] = mask[d] ? 1 : in[d];
  Tensor k = keepdim ? g : ops::reshape(g, kept);
  return ops::expand(k, in);
}

int64_t reduced_count(const IntList& in, const IntList& dims) {
  int64_t n = 1;
  if (dims.empty()) { for (int64_t s : in) n *= s; return n; }
  for (int64_t d : dims) if (!in.empty()) n *= in[wrap_dim(d, static_cast<int64_t>(in.size()))];
  return n;
}

double lowest_finite(ScalarType dt) {
  switch (dt) {
    case ScalarType::Float64: return std::numeric_limits<double>::lowest();
    case ScalarType::Float16: return -65504.0;
    case ScalarType::BFloat16: return -3.3895313892515355e38;
    default: return std::numeric_limits<float>::lowest();
  }
}

}  // namespace

Tensor sum_backward(const Tensor& g, const IntList& in, const IntList& dims, bool keepdim, ScalarType dt) {
  Tensor ge = expand_reduced(g, in, dims, keepdim);
  // recording (create_graph): the expanded view itself, which is differentiable
  return autograd::cast_grad(thread_state().grad_enabled ? ge : contiguous(ge), dt);
}

Tensor mean_backward(const Tensor& g, const IntList& in, const IntList& dims, bool keepdim, ScalarType dt) {
  return autograd::cast_grad(expand_reduced(g, in, dims, keepdim) * (1.0 / double(reduced_count(in, dims))), dt);
}

Tensor nansum_backward(const Tensor& g, const Tensor& x, const IntList& dims, bool keepdim) {
  return autograd::cast_grad(where(isnan(x), num(0.0), expand_reduced(g, x->sizes, dims, keepdim)), x->dtype);
}

Tensor nanmean_backward(const Tensor& g, const Tensor& x, const IntList& dims, bool keepdim) {
  Tensor valid = to_dtype(un(UnaryOp::logical_not, isnan(x)), g->dtype);
  Tensor count = expand_reduced(ops::sum(valid, dims, true, ScalarType::NumTypes), x->sizes, dims, true);
  return autograd::cast_grad(where(isnan(x), num(0.0), expand_reduced(g, x->sizes, dims, keepdim) / count), x->dtype);
}

// amax/amin: the gradient is shared evenly by the elements equal to the extreme (as PyTorch).
Tensor extreme_backward(const Tensor& g, const Tensor& x, const Tensor& r, const IntList& dims, bool keepdim) {
  Tensor ge = expand_reduced(g, x->sizes, dims, keepdim), re = expand_reduced(r, x->sizes, dims, keepdim);
  Tensor hit = to_dtype(bin(BinaryOp::eq, x, re), ge->dtype);
  Tensor ties = expand_reduced(ops::sum(hit, dims, true, ScalarType::NumTypes), x->sizes, dims, true);
  return autograd::cast_grad(ge * hit / ties, x->dtype);
}

Tensor logsumexp_backward(const Tensor& g, const Tensor& x, const Tensor& r, const IntList& dims, bool keepdim) {
  Tensor ge = expand_reduced(g, x->sizes, dims, keepdim), re = expand_reduced(r, x->sizes, dims, keepdim);
  return autograd::cast_grad(ge * exp(x - re), x->dtype);
}

// product / x where x != 0; a zero's gradient is the product of the others (computed directly)
Tensor prod_backward(const Tensor& g, const Tensor& x0, const Tensor& r0, const IntList& d, bool keepdim) {
  Tensor ge = expand_reduced(g, x0->sizes, d, keepdim);
  const Tensor x = conj_of(x0), r = conj_of(expand_reduced(r0, x0->sizes, d, keepdim));
  Tensor zero = bin(BinaryOp::eq, x, num(0.0));
  Tensor others = ops::prod(where(zero, num(1.0), x), d, true, ScalarType::NumTypes);
  Tensor zeros_in_row = expand_reduced(ops::sum(to_dtype(zero, x->dtype), d, true, ScalarType::NumTypes), x->sizes, d, true);
  Tensor at_zero = where(bin(BinaryOp::eq, zeros_in_row, num(1.0)), expand_reduced(others, x->sizes, d, true), num(0.0));
  return autograd::cast_grad(ge * where(zero, at_zero, r / where(zero, num(1.0), x)), x0->dtype);
}

Tensor norm_backward(const Tensor& g, const Tensor& x, const Tensor& r, double p, const IntList& d, bool k) {
  Tensor ge = expand_reduced(g, x->sizes, d, k), re = expand_reduced(r, x->sizes, d, k);
  Tensor gx;
  if (p == 0) {
    gx = zeros_like(x);
  } else if (std::isinf(p)) {
    Tensor hit = to_dtype(bin(BinaryOp::eq, un(UnaryOp::abs, x), re), x->dtype);
    Tensor ties = expand_reduced(ops::sum(hit, d, true, ScalarType::NumTypes), x->sizes, d, true);
    gx = ge * sgn(x) * hit / ties;  // (sgn: x / |x| for complex x)
  } else {
    // d|x|_p / dx = x |x|^(p-2) / |x|_p^(p-1), 0 where the norm is 0
    Tensor scale = p == 2 ? x / re : x * bin(BinaryOp::pow, un(UnaryOp::abs, x), num(p - 2)) / bin(BinaryOp::pow, re, num(p - 1));
    gx = ge * where(bin(BinaryOp::eq, re, num(0.0)), num(0.0), scale);
  }
  return autograd::cast_grad(gx, x->dtype);
}

// (values, indices) ops along a dim: the gradient goes back to the selected indices.
Tensor selected_backward(const Tensor& g, const IntList& in, int64_t dim, bool keepdim, const Tensor& idx) {
  Tensor z = empty(in, g->dtype);
  fill(z, Scalar(int64_t(0)));
  if (in.empty()) return ops::scatter_add_(z, 0, idx, g);
  int64_t d = wrap_dim(dim, static_cast<int64_t>(in.size()));
  Tensor gk = keepdim ? g : ops::unsqueeze(g, d);
  Tensor ik = keepdim ? idx : ops::unsqueeze(idx, d);
  return ops::scatter_add_(z, d, ik, gk);
}

// median/nanmedian over all elements: the gradient is shared evenly by the elements equal to the
// result (NaN ones when it is NaN), as PyTorch's evenly_distribute_backward.
Tensor evenly_distribute_backward(const Tensor& g, const Tensor& x, const Tensor& r) {
  const Tensor xv = conj_of(x), rv = conj_of(r);
  Tensor hit = where(isnan(rv), isnan(xv), bin(BinaryOp::eq, xv, rv));
  Tensor m = to_dtype(hit, g->dtype);
  return m * (g / ops::sum(m, {}, false, ScalarType::NumTypes));
}

// sum over j >= i along dim (a cumsum from the end)
Tensor reverse_cumsum(const Tensor& t, int64_t dim) {
  IntList d{dim};
  return ops::flip(ops::cumsum(ops::flip(t, d), dim, ScalarType::NumTypes), d);
}

// cumprod: grad_i = sum_{j>=i} g_j * prod_{k<=j, k!=i} x_k, exact with zeros: before a row's first
// zero it is reverse_cumsum(g * r) / x_i; at the first zero, the same sum with that zero replaced by
// 1; after it, 0 (every product holds the zero).
// var_mean's two outputs: each gradient that arrives contributes.
Tensor var_mean_backward(const Tensor& g_var, const Tensor& g_mean, const Tensor& x, const IntList& dims,
                         double correction, bool keepdim) {
  const int64_t n = reduced_count(x->sizes, dims);
  Tensor gx;
  if (g_var) {
    Tensor mean = ops::mean(x, dims, true, ScalarType::NumTypes);
    gx = expand_reduced(g_var, x->sizes, dims, keepdim) * (x - mean) * (2.0 / (double(n) - correction));
  }
  if (g_mean) {
    Tensor gm = expand_reduced(g_mean, x->sizes, dims, keepdim) * (1.0 / double(n));
    gx = gx ? gx + gm : gm;
  }
  return gx;
}

Tensor cumprod_backward(const Tensor& g, const Tensor& x, const Tensor& r, int64_t dim) {
  const Tensor xv = conj_of(x), rv = conj_of(r);
  Tensor zero = bin(BinaryOp::eq, xv, num(0.0));
  Tensor zeros_so_far = ops::cumsum(zero, dim, ScalarType::Int64);
  Tensor before = bin(BinaryOp::eq, zeros_so_far, num(0.0));
  Tensor first_zero = bin(BinaryOp::logical_and, zero, bin(BinaryOp::eq, zeros_so_far, num(1.0)));
  Tensor safe_x = where(zero, num(1.0), xv);
  Tensor gx = where(before, reverse_cumsum(g * rv, dim) / safe_x, num(0.0));
  Tensor r1 = ops::cumprod(where(first_zero, num(1.0), xv), dim, ScalarType::NumTypes);
  return where(first_zero, reverse_cumsum(g * where(before, num(0.0), r1), dim), gx);
}

// logcumsumexp: grad_i = sum_{j>=i} g_j exp(x_i - r_j), in log space with the positive and negative
// parts of g apart so nothing overflows (PyTorch's formulation). The absent part is the dtype's lowest
// finite value, not -inf: the formula stays finite, so it is differentiable again.
Tensor logcumsumexp_backward(const Tensor& g, const Tensor& x, const Tensor& r, int64_t dim) {
  const Tensor xv = conj_of(x), rv = conj_of(r);
  if (g->dim() == 0 || g->numel == 0) return g;
  IntList d{dim};
  Tensor lowest = scalar_tensor(Scalar(lowest_finite(g->dtype)), g->dtype);
  Tensor log_abs = log(un(UnaryOp::abs, g));
  auto part = [&](BinaryOp side) {
    Tensor lg = where(bin(side, g, num(0.0)), log_abs, lowest) - rv;
    return exp(ops::flip(ops::logcumsumexp(ops::flip(lg, d), dim), d) + xv);
  };
  return part(BinaryOp::gt) - part(BinaryOp::lt);
}

// quantile/nanquantile: each result interpolates two order statistics of its row (PyTorch's composite:
// sort, gather, lerp), so the gradient goes to those two elements with weights 1 - w and w; with
// linear interpolation w = rank - floor(rank) and rank = q * (count - 1) also carry a gradient to q
// (and, under create_graph, make the weights depend on q).
// The rank rules are PyTorch's: a row with NaN picks its last (NaN) element for quantile, and
// nanquantile ranks among the non-NaN values (the first element when there is none).
TensorList quantile_backward(const Tensor& g, const Tensor& x, const Tensor& q, std::optional<int64_t> dim,
                             const std::string& interp, bool ignore_nan, const std::array<bool, 2>& mask) {
  // the rows of x (flattened when dim is None) along the reduced dim: permuted by perm to (rows..., n)
  const bool along = dim.has_value() && x->dim() > 0;
  const int64_t d = along ? wrap_dim(*dim, x->dim()) : 0;
  const IntList xs_sizes = along ? x->sizes : IntList{x->numel};
  const int64_t nd = static_cast<int64_t>(xs_sizes.size());
  IntList perm, inv(nd), moved;
  for (int64_t i = 0; i < nd; ++i) if (i != d) perm.push_back(i);
  perm.push_back(d);
  for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int64_t>(i);
  for (int64_t p : perm) moved.push_back(xs_sizes[p]);
  const int64_t n = xs_sizes[d], rows = x->numel / n, nq = q->numel;
  Tensor xr = ops::reshape(ops::permute(ops::reshape(x, xs_sizes), perm), {rows, n});
  // idx: for each row, the positions (in the row) of the 2 * nq elements read, weighted 1 - w and w;
  // dq: d rank / d q
  Tensor idx, w, dq;
  {
    GradModeGuard off(false);
    std::tie(idx, w, dq) = ops::quantile_weights(xr, ops::reshape(q, {nq}), ignore_nan, interp);
    w = to_dtype(w, x->dtype);
    dq = to_dtype(dq, x->dtype);
  }
  // q has a gradient only through linear interpolation's weight (the other modes round the rank, as in PyTorch)
  const bool q_grad = mask[1] && interp == "linear";
  Tensor gr = ops::transpose(ops::reshape(g, {nq, rows}), 0, 1);  // (rows, nq)
  Tensor gx, gq;
  if (mask[0]) {
    Tensor wh = w;
    if (q_grad && thread_state().grad_enabled) {  // create_graph: w moves with q
      Tensor q_now = ops::reshape(q, {1, nq});
      wh = wh + (q_now - ops::detach(q_now)) * dq;
    }
    // (rows, 2 * nq), matching idx: each gradient column weighted 1 - w and w
    Tensor g2 = ops::reshape(ops::cat({ops::unsqueeze(gr * (num(1.0) - wh), 2), ops::unsqueeze(gr * wh, 2)}, 2),
                             {rows, 2 * nq});
    gx = ops::scatter_add_(zeros({rows, n}, g->dtype), 1, idx, g2);
    gx = ops::reshape(ops::permute(ops::reshape(gx, moved), inv), x->sizes);
  }
  if (q_grad) {
    // d result / d q = (x[hi] - x[lo]) * d rank / d q
    Tensor picked = ops::reshape(ops::gather(xr, 1, idx, false), {rows, nq, 2});
    Tensor spread = ops::select(picked, 2, 1) - ops::select(picked, 2, 0);
    // rows whose rank is fixed (NaN rows) add nothing, even where x[hi] - x[lo] is NaN
    Tensor per_row = where(bin(BinaryOp::ne, dq, num(0.0)), gr * spread * dq, num(0.0));
    gq = autograd::cast_grad(ops::reshape(ops::sum(per_row, {0}, false, ScalarType::NumTypes), q->sizes), q->dtype);
  }
  return {gx, gq};
}

}  // namespace fl::formulas
