// Autograd kernels of the reductions and scans (ops/reduce.h). The gradient of a reduction is
// broadcast back over the reduced dims (expand_reduced), then weighted per op.
#include "../ops/index.h"
#include "../ops/reduce.h"
#include "../ops/views.h"
#include "autograd.h"
#include "formulas.h"

namespace fl::autograd {
namespace {

using namespace fl::formulas;

// The reduced result's gradient reshaped with the reduced dims kept as 1, then expanded to `in`.
Tensor expand_reduced(const Tensor& g, const IntList& in, const IntList& dims, bool keepdim) {
  std::vector<bool> mask(in.size(), dims.empty());
  for (int64_t d : dims) mask[wrap_dim(d, static_cast<int64_t>(in.size()))] = true;
  IntList kept(in.size());
  for (size_t d = 0; d < in.size(); ++d) kept[d] = mask[d] ? 1 : in[d];
  Tensor k = keepdim ? g : ops::reshape(g, kept);
  return ops::expand(k, in);
}

int64_t reduced_count(const IntList& in, const IntList& dims) {
  int64_t n = 1;
  if (dims.empty()) { for (int64_t s : in) n *= s; return n; }
  for (int64_t d : dims) n *= in[wrap_dim(d, static_cast<int64_t>(in.size()))];
  return n;
}

using ReduceOp = Op<Tensor(const Tensor&, const IntList&, bool, ScalarType)>;

// Registers the autograd kernel of a reduction whose gradient is grad_fn(g', x, r', count), where g'
// and r' are the gradient and result broadcast back to x's shape.
template <typename F>
Tensor reduce_autograd(const ReduceOp& op, const char* name, bool save_x, DispatchKeySet ks, const Tensor& x,
                       const IntList& dims, bool keepdim, ScalarType dtype, F grad_fn) {
  Tensor r = redispatch_no_grad(op, ks, x, dims, keepdim, dtype);
  if (!is_floating(r->dtype)) return r;
  Tensor x_saved = save_x ? x : nullptr;
  Tensor r_saved = save_x ? make_view(r, r->sizes, r->strides, r->offset) : nullptr;  // no history: see Note
  return record_lambda(name, r, {gradient_edge(x)},
                       [in = x->sizes, dims, keepdim, dt = x->dtype, x_saved, r_saved, grad_fn](const Tensor& g) {
                         Tensor ge = expand_reduced(g, in, dims, keepdim);
                         Tensor re = r_saved ? expand_reduced(r_saved, in, dims, keepdim) : nullptr;
                         Tensor gx = grad_fn(ge, x_saved, re, reduced_count(in, dims));
                         return TensorList{gx->dtype != dt ? to_dtype(gx, dt) : gx};
                       });
}

}  // namespace

FL_REGISTER_KERNEL(sum, Autograd, [](DispatchKeySet ks, const Tensor& x, const IntList& d, bool k, ScalarType dt) {
  return reduce_autograd(ops::sum, "SumBackward1", false, ks, x, d, k, dt,
                         [](const Tensor& g, const Tensor&, const Tensor&, int64_t) {
                           // recording (create_graph): the expanded view itself, which is differentiable
                           return thread_state().grad_enabled ? g : contiguous(g);
                         });
})
FL_REGISTER_KERNEL(mean, Autograd, [](DispatchKeySet ks, const Tensor& x, const IntList& d, bool k, ScalarType dt) {
  return reduce_autograd(ops::mean, "MeanBackward1", false, ks, x, d, k, dt,
                         [](const Tensor& g, const Tensor&, const Tensor&, int64_t n) { return g * (1.0 / double(n)); });
})
FL_REGISTER_KERNEL(nansum, Autograd, [](DispatchKeySet ks, const Tensor& x, const IntList& d, bool k, ScalarType dt) {
  return reduce_autograd(ops::nansum, "NansumBackward0", true, ks, x, d, k, dt,
                         [](const Tensor& g, const Tensor& x, const Tensor&, int64_t) { return where(isnan(x), num(0.0), g); });
})
// amax/amin: the gradient is shared evenly by the elements equal to the extreme (as PyTorch).
#define FL_AMAX_AUTOGRAD(opname, Name)                                                                           \
  FL_REGISTER_KERNEL(opname, Autograd, [](DispatchKeySet ks, const Tensor& x, const IntList& d, bool k, ScalarType dt) { \
    return reduce_autograd(ops::opname, Name, true, ks, x, d, k, dt,                                             \
                           [d](const Tensor& g, const Tensor& x, const Tensor& r, int64_t) {                    \
                             Tensor hit = to_dtype(bin(BinaryOp::eq, x, r), g->dtype);                          \
                             Tensor ties = expand_reduced(ops::sum(hit, d, true, ScalarType::NumTypes), x->sizes, d, true); \
                             return g * hit / ties;                                                             \
                           });                                                                                  \
  })
FL_AMAX_AUTOGRAD(amax, "AmaxBackward0")
FL_AMAX_AUTOGRAD(amin, "AminBackward0")
FL_REGISTER_KERNEL(logsumexp, Autograd, [](DispatchKeySet ks, const Tensor& x, const IntList& d, bool k, ScalarType dt) {
  return reduce_autograd(ops::logsumexp, "LogsumexpBackward0", true, ks, x, d, k, dt,
                         [](const Tensor& g, const Tensor& x, const Tensor& r, int64_t) { return g * exp(x - r); });
})
FL_REGISTER_KERNEL(prod, Autograd, [](DispatchKeySet ks, const Tensor& x, const IntList& d, bool k, ScalarType dt) {
  // product / x where x != 0; a zero's gradient is the product of the others (computed directly)
  return reduce_autograd(ops::prod, "ProdBackward1", true, ks, x, d, k, dt,
                         [d](const Tensor& g, const Tensor& x, const Tensor& r, int64_t) {
                           Tensor zero = bin(BinaryOp::eq, x, num(0.0));
                           Tensor others = ops::prod(where(zero, num(1.0), x), d, true, ScalarType::NumTypes);
                           Tensor zeros_in_row = expand_reduced(ops::sum(to_dtype(zero, x->dtype), d, true, ScalarType::NumTypes), x->sizes, d, true);
                           Tensor at_zero = where(bin(BinaryOp::eq, zeros_in_row, num(1.0)), expand_reduced(others, x->sizes, d, true), num(0.0));
                           return g * where(zero, at_zero, r / where(zero, num(1.0), x));
                         });
})

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

template <typename OpT, typename... Args>
TensorPair record_selected(const OpT& op, const char* name, DispatchKeySet ks, const Tensor& x, int64_t dim, bool keepdim,
                           Args... args) {
  TensorPair r = redispatch_no_grad(op, ks, x, args...);
  if (!is_floating(std::get<0>(r)->dtype)) return r;
  record_lambda(name, std::get<0>(r), {gradient_edge(x)}, [in = x->sizes, dim, keepdim, idx = std::get<1>(r)](const Tensor& g) {
    return TensorList{selected_backward(g, in, dim, keepdim, idx)};
  });
  return r;
}

FL_REGISTER_KERNEL(max_dim, Autograd, [](DispatchKeySet ks, const Tensor& x, int64_t dim, bool keepdim) {
  return record_selected(ops::max_dim, "MaxBackward0", ks, x, dim, keepdim, dim, keepdim);
})
FL_REGISTER_KERNEL(min_dim, Autograd, [](DispatchKeySet ks, const Tensor& x, int64_t dim, bool keepdim) {
  return record_selected(ops::min_dim, "MinBackward0", ks, x, dim, keepdim, dim, keepdim);
})
FL_REGISTER_KERNEL(sort, Autograd, [](DispatchKeySet ks, const Tensor& x, int64_t dim, bool desc, bool stable) {
  return record_selected(ops::sort, "SortBackward0", ks, x, dim, true, dim, desc, stable);
})
FL_REGISTER_KERNEL(topk, Autograd, [](DispatchKeySet ks, const Tensor& x, int64_t k, int64_t dim, bool largest, bool sorted) {
  return record_selected(ops::topk, "TopkBackward0", ks, x, dim, true, k, dim, largest, sorted);
})
FL_REGISTER_KERNEL(kthvalue, Autograd, [](DispatchKeySet ks, const Tensor& x, int64_t k, int64_t dim, bool keepdim) {
  return record_selected(ops::kthvalue, "KthvalueBackward0", ks, x, dim, keepdim, k, dim, keepdim);
})
FL_REGISTER_KERNEL(median_dim, Autograd, [](DispatchKeySet ks, const Tensor& x, int64_t dim, bool keepdim, bool ignore_nan) {
  return record_selected(ops::median_dim, "MedianBackward1", ks, x, dim, keepdim, dim, keepdim, ignore_nan);
})
FL_REGISTER_KERNEL(mode, Autograd, [](DispatchKeySet ks, const Tensor& x, int64_t dim, bool keepdim) {
  return record_selected(ops::mode, "ModeBackward0", ks, x, dim, keepdim, dim, keepdim);
})

FL_REGISTER_KERNEL(cumsum, Autograd, [](DispatchKeySet ks, const Tensor& x, int64_t dim, ScalarType dt) {
  Tensor r = redispatch_no_grad(ops::cumsum, ks, x, dim, dt);
  if (!is_floating(r->dtype)) return r;
  return record_lambda("CumsumBackward0", r, {gradient_edge(x)}, [dim, xdt = x->dtype](const Tensor& g) {
    IntList d{dim};
    Tensor gx = ops::flip(ops::cumsum(ops::flip(g, d), dim, ScalarType::NumTypes), d);
    return TensorList{gx->dtype != xdt ? to_dtype(gx, xdt) : gx};
  });
})

FL_REGISTER_KERNEL(cummax, Autograd, [](DispatchKeySet ks, const Tensor& x, int64_t dim) {
  return record_selected(ops::cummax, "CummaxBackward0", ks, x, dim, true, dim);
})
FL_REGISTER_KERNEL(cummin, Autograd, [](DispatchKeySet ks, const Tensor& x, int64_t dim) {
  return record_selected(ops::cummin, "CumminBackward0", ks, x, dim, true, dim);
})

namespace {
// sum over j >= i along dim (a cumsum from the end)
Tensor reverse_cumsum(const Tensor& t, int64_t dim) {
  IntList d{dim};
  return ops::flip(ops::cumsum(ops::flip(t, d), dim, ScalarType::NumTypes), d);
}
}  // namespace

// cumprod: grad_i = sum_{j>=i} g_j * prod_{k<=j, k!=i} x_k, exact with zeros: before a row's first
// zero it is reverse_cumsum(g * r) / x_i; at the first zero, the same sum with that zero replaced by
// 1; after it, 0 (every product holds the zero).
FL_REGISTER_KERNEL(cumprod, Autograd, [](DispatchKeySet ks, const Tensor& x, int64_t dim, ScalarType dt) {
  Tensor r = redispatch_no_grad(ops::cumprod, ks, x, dim, dt);
  if (!is_floating(r->dtype)) return r;
  return record_saved("CumprodBackward0", r, {gradient_edge(x)}, {x}, true,
                      [dim, xdt = x->dtype](const Tensor& g, const TensorList& s) {
                        const Tensor &xv = s[0], &rv = s[1];
                        Tensor zero = bin(BinaryOp::eq, xv, num(0.0));
                        Tensor zeros_so_far = ops::cumsum(zero, dim, ScalarType::Int64);
                        Tensor before = bin(BinaryOp::eq, zeros_so_far, num(0.0));
                        Tensor first_zero = bin(BinaryOp::logical_and, zero, bin(BinaryOp::eq, zeros_so_far, num(1.0)));
                        Tensor safe_x = where(zero, num(1.0), xv);
                        Tensor gx = where(before, reverse_cumsum(g * rv, dim) / safe_x, num(0.0));
                        Tensor r1 = ops::cumprod(where(first_zero, num(1.0), xv), dim, ScalarType::NumTypes);
                        gx = where(first_zero, reverse_cumsum(g * where(before, num(0.0), r1), dim), gx);
                        return TensorList{gx->dtype != xdt ? to_dtype(gx, xdt) : gx};
                      });
})

// logcumsumexp: grad_i = sum_{j>=i} g_j exp(x_i - r_j), in log space with the positive and negative
// parts of g apart so nothing overflows (PyTorch's formulation).
FL_REGISTER_KERNEL(logcumsumexp, Autograd, [](DispatchKeySet ks, const Tensor& x, int64_t dim) {
  Tensor r = redispatch_no_grad(ops::logcumsumexp, ks, x, dim);
  return record_saved("LogcumsumexpBackward0", r, {gradient_edge(x)}, {x}, true,
                      [dim](const Tensor& g, const TensorList& s) {
                        const Tensor &xv = s[0], &rv = s[1];
                        IntList d{dim};
                        auto part = [&](const Tensor& gpart) {
                          Tensor lg = log(gpart) - rv;  // -inf where gpart is 0
                          Tensor acc = ops::flip(ops::logcumsumexp(ops::flip(lg, d), dim), d);
                          return exp(acc + xv);
                        };
                        Tensor pos = where(bin(BinaryOp::gt, g, num(0.0)), g, num(0.0));
                        Tensor neg = where(bin(BinaryOp::lt, g, num(0.0)), -g, num(0.0));
                        return TensorList{part(pos) - part(neg)};
                      });
})

FL_REGISTER_KERNEL(nanmean, Autograd, [](DispatchKeySet ks, const Tensor& x, const IntList& d, bool k, ScalarType dt) {
  return reduce_autograd(ops::nanmean, "NanmeanBackward0", true, ks, x, d, k, dt,
                         [d](const Tensor& g, const Tensor& x, const Tensor&, int64_t) {
                           Tensor valid = to_dtype(un(UnaryOp::logical_not, isnan(x)), g->dtype);
                           Tensor count = expand_reduced(ops::sum(valid, d, true, ScalarType::NumTypes), x->sizes, d, true);
                           return where(isnan(x), num(0.0), g / count);
                         });
})

FL_REGISTER_KERNEL(norm, Autograd, [](DispatchKeySet ks, const Tensor& x, double p, const IntList& d, bool k, ScalarType dt) {
  Tensor r = redispatch_no_grad(ops::norm, ks, x, p, d, k, dt);
  Tensor r_saved = make_view(r, r->sizes, r->strides, r->offset);
  return record_lambda("NormBackward1", r, {gradient_edge(x)}, [x, r_saved, p, d, k](const Tensor& g) {
    Tensor ge = expand_reduced(g, x->sizes, d, k), re = expand_reduced(r_saved, x->sizes, d, k);
    Tensor gx;
    if (p == 0) {
      gx = zeros_like(x);
    } else if (std::isinf(p)) {
      Tensor hit = to_dtype(bin(BinaryOp::eq, un(UnaryOp::abs, x), re), x->dtype);
      Tensor ties = expand_reduced(ops::sum(hit, d, true, ScalarType::NumTypes), x->sizes, d, true);
      gx = ge * sign(x) * hit / ties;
    } else {
      // d|x|_p / dx = x |x|^(p-2) / |x|_p^(p-1), 0 where the norm is 0
      Tensor scale = p == 2 ? x / re : x * bin(BinaryOp::pow, un(UnaryOp::abs, x), num(p - 2)) / bin(BinaryOp::pow, re, num(p - 1));
      gx = ge * where(bin(BinaryOp::eq, re, num(0.0)), num(0.0), scale);
    }
    return TensorList{gx->dtype != x->dtype ? to_dtype(gx, x->dtype) : gx};
  });
})

// var_mean has two outputs; each gradient that arrives contributes.
struct VarMeanBackward : Node {
  Tensor x;
  IntList dims;
  double correction;
  bool keepdim;
  std::string name() const override { return "VarMeanBackward0"; }
  void release_saved() override { x.reset(); }
  TensorList apply(TensorList&& grads) override {
    FL_CHECK(x, Error, "Trying to backward through the graph a second time (or directly access saved tensors after they "
                       "have already been freed). Specify retain_graph=True if you need to backward through the graph a second time.");
    int64_t n = reduced_count(x->sizes, dims);
    Tensor gx;
    if (grads.size() > 0 && grads[0]) {
      Tensor mean = ops::mean(x, dims, true, ScalarType::NumTypes);
      gx = expand_reduced(grads[0], x->sizes, dims, keepdim) * (x - mean) * (2.0 / (double(n) - correction));
    }
    if (grads.size() > 1 && grads[1]) {
      Tensor gm = expand_reduced(grads[1], x->sizes, dims, keepdim) * (1.0 / double(n));
      gx = gx ? gx + gm : gm;
    }
    return {gx};
  }
};
FL_REGISTER_KERNEL(var_mean, Autograd, [](DispatchKeySet ks, const Tensor& x, const IntList& d, double c, bool k) {
  TensorPair r = redispatch_no_grad(ops::var_mean, ks, x, d, c, k);
  auto node = std::make_shared<VarMeanBackward>();
  node->x = x;
  node->dims = d;
  node->correction = c;
  node->keepdim = k;
  node->next_edges = {gradient_edge(x)};
  set_history(std::get<0>(r), node, 0);
  set_history(std::get<1>(r), node, 1);
  return r;
})

}  // namespace fl::autograd
