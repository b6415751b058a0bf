// Reductions with their own signatures: max/min along a dim with indices, argmax/argmin,
// var_mean (std/var/std_mean are written on it in Python) and vector norms.
#include <cmath>
#include <limits>

#include "complex.h"
#include "pointwise.h"
#include "tensor_ops.h"
#include "pointwise_math.h"
#include "reduce.h"

namespace fl {

void check_nonempty_dim(const Tensor& t, int64_t d, const char* op) {
  FL_CHECK(t->dim() == 0 || t->sizes[d] != 0, IndexError, op, "(): Expected reduction dim ", d, " to have non-zero size.");
}

// (value, index) of the first max (or min) of each row; a NaN wins, the first one.
TensorPair arg_reduce(const Tensor& self, const std::vector<bool>& mask, bool keepdim, bool is_max, const char* op,
                      bool want_values) {
  RowView rv = to_rows(self, mask, keepdim);
  Tensor values = want_values ? empty(rv.out_sizes, self->dtype) : Tensor();
  Tensor indices = empty(rv.out_sizes, ScalarType::Int64);
  int64_t* idx = indices->data<int64_t>();
  FL_DISPATCH_ALL(self->dtype, op, {
    using M = opmath_t<scalar_t>;
    using P = std::pair<M, int64_t>;
    const scalar_t* x = rv.rows->data<scalar_t>();
    scalar_t* vals = want_values ? values->data<scalar_t>() : nullptr;
    const int64_t inner = rv.inner;
    auto better = [is_max](M cand, M cur) { return isnan_impl(cand) ? !isnan_impl(cur) : !isnan_impl(cur) && (is_max ? cand > cur : cand < cur); };
    run_rows<P>(rv.outer, inner, [&](int64_t o, int64_t b, int64_t e) {
      // two passes: the vectorized extreme value, then its first position
      const scalar_t* r = x + o * inner;
      const M m = extreme(r + b, e - b, is_max);
      int64_t i = b;
      if (isnan_impl(m)) while (!isnan_impl(static_cast<M>(r[i]))) ++i;
      else while (static_cast<M>(r[i]) != m) ++i;
      return P{m, i};
    }, [&](P a, P b) { return better(b.first, a.first) ? b : a; }, [&](int64_t o, P p) {
      idx[o] = p.second;
      if (vals) vals[o] = static_cast<scalar_t>(p.first);
    });
  });
  return {values, indices};
}

TensorPair max_min_dim(const Tensor& self, int64_t dim, bool keepdim, bool is_max) {
  FL_CHECK(!is_complex(self->dtype), Error, is_max ? "max" : "min", "(): does not support complex input");
  const char* op = is_max ? "max" : "min";
  int64_t d = wrap_dim(dim, self->dim(), op);
  check_nonempty_dim(self, d, op);
  return arg_reduce(self, reduce_mask({d}, self->dim(), op), keepdim, is_max, op, true);
}

Tensor arg_max_min(const Tensor& self, std::optional<int64_t> dim, bool keepdim, bool is_max) {
  FL_CHECK(!is_complex(self->dtype), Error, is_max ? "argmax" : "argmin", "(): does not support complex input");
  const char* op = is_max ? "argmax" : "argmin";
  FL_CHECK(self->dtype != ScalarType::Bool, Error, op, "(): does not support bool input");
  if (!dim) {
    FL_CHECK(self->numel != 0, IndexError, op, "(): Expected reduction dim to be specified for input.numel() == 0.");
    Tensor r = std::get<1>(arg_reduce(self, reduce_mask({}, self->dim(), op), keepdim, is_max, op, false));
    return r;
  }
  int64_t d = wrap_dim(*dim, self->dim(), op);
  check_nonempty_dim(self, d, op);
  return std::get<1>(arg_reduce(self, reduce_mask({d}, self->dim(), op), keepdim, is_max, op, false));
}

// Welford-style partial moments in double, merged with Chan's formula.
struct Moments { double n = 0, mean = 0, m2 = 0; };
Moments merge(const Moments& a, const Moments& b) {
  if (a.n == 0) return b;
  if (b.n == 0) return a;
  double n = a.n + b.n, delta = b.mean - a.mean;
  return {n, a.mean + delta * b.n / n, a.m2 + b.m2 + delta * delta * a.n * b.n / n};
}

TensorPair var_mean_cpu(const Tensor& self, const IntList& dims, double correction, bool keepdim) {
  if (is_complex(self->dtype)) {
    // the variance of complex values is the real part's plus the imaginary part's: both are columns of the
    // (..., 2) real view
    std::vector<bool> mask = reduce_mask(dims, self->dim(), "var");
    IntList d;
    for (int64_t i = 0; i < self->dim(); ++i) if (mask[i]) d.push_back(i);
    if (d.empty()) {  // a 0-dim input reduces nothing
      TensorPair vm = var_mean_cpu(ops::view_as_real(self), {self->dim()}, correction, true);
      return {ops::sum(std::get<0>(vm), {-1}, false, ScalarType::NumTypes), ops::clone(self)};
    }
    TensorPair vm = var_mean_cpu(ops::view_as_real(self), d, correction, keepdim);
    return {ops::sum(std::get<0>(vm), {-1}, false, ScalarType::NumTypes),
            ops::view_as_complex(ops::contiguous(std::get<1>(vm)))};
  }
  FL_CHECK(is_floating(self->dtype), Error, "std and var only support floating point and complex dtypes");
  RowView rv = to_rows(self, reduce_mask(dims, self->dim(), "var"), keepdim);
  Tensor var = empty(rv.out_sizes, self->dtype), mean = empty(rv.out_sizes, self->dtype);
  FL_DISPATCH_FLOATING(self->dtype, "var", {
    const scalar_t* x = rv.rows->data<scalar_t>();
    scalar_t* vo = var->data<scalar_t>();
    scalar_t* mo = mean->data<scalar_t>();
    const int64_t inner = rv.inner;
    run_rows<Moments>(rv.outer, inner, [&](int64_t o, int64_t b, int64_t e) {
      const scalar_t* r = x + o * inner;
      Moments m;
      m.n = static_cast<double>(e - b);
      if (e == b) return m;
      double s = 0;  // two passes over the chunk: exact mean, then squared deviations
      for (int64_t i = b; i < e; ++i) s += static_cast<double>(r[i]);
      m.mean = s / m.n;
      for (int64_t i = b; i < e; ++i) { double dv = static_cast<double>(r[i]) - m.mean; m.m2 += dv * dv; }
      return m;
    }, merge, [&](int64_t o, const Moments& m) {
      double dof = std::max(0.0, m.n - correction);
      mo[o] = static_cast<scalar_t>(m.n == 0 ? std::nan("") : m.mean);
      vo[o] = static_cast<scalar_t>(m.n == 0 ? std::nan("") : m.m2 / dof);
    });
  });
  return {var, mean};
}

Tensor norm_cpu(const Tensor& self, double p, const IntList& dims, bool keepdim, ScalarType dtype) {
  if (is_complex(self->dtype))  // the norm of the magnitudes, a real result
    return norm_cpu(ops::abs(self, nullptr), p, dims, keepdim, dtype == ScalarType::NumTypes ? dtype : to_real_type(dtype));
  FL_CHECK(is_floating(self->dtype), Error, "linalg.vector_norm: Expected a floating point or complex tensor as input. Got ",
           c10_type_name(self->dtype));
  ScalarType out_t = dtype == ScalarType::NumTypes ? self->dtype : dtype;
  Tensor in = self->dtype == out_t ? self : to_dtype(self, out_t);
  std::vector<bool> mask = reduce_mask(dims, in->dim(), "linalg.vector_norm");
  const bool maxlike = std::isinf(p);
  if (maxlike && in->numel == 0) {
    FL_CHECK(!dims.empty(), Error, "linalg.vector_norm cannot compute the ", p > 0 ? "inf" : "-inf",
             " norm on an empty tensor because the operation does not have an identity");
    for (int64_t d = 0; d < in->dim(); ++d)
      FL_CHECK(!mask[d] || in->sizes[d] != 0, IndexError, "linalg.vector_norm(): Expected reduction dim ", d,
               " to have non-zero size.");
  }
  RowView rv = to_rows(in, mask, keepdim);
  Tensor out = empty(rv.out_sizes, out_t);
  FL_DISPATCH_FLOATING(out_t, "linalg.vector_norm", {
    using A = double;  // a sequential accumulation: double keeps long rows accurate
    const scalar_t* x = rv.rows->data<scalar_t>();
    scalar_t* o_ = out->data<scalar_t>();
    const int64_t inner = rv.inner;
    const A pa = static_cast<A>(p);
    run_rows<A>(rv.outer, inner, [&](int64_t o, int64_t b, int64_t e) {
      const scalar_t* r = x + o * inner;
      A acc = maxlike ? std::abs(static_cast<A>(r[b])) : A(0);
      for (int64_t i = b; i < e; ++i) {
        A v = std::abs(static_cast<A>(r[i]));
        if (maxlike) acc = std::isnan(v) || std::isnan(acc) ? std::numeric_limits<A>::quiet_NaN() : (p > 0 ? std::max(acc, v) : std::min(acc, v));
        else if (p == 2) acc += v * v;
        else if (p == 1) acc += v;
        else if (p == 0) acc += v != 0;
        else acc += std::pow(v, pa);
      }
      return acc;
    }, [&](A a, A b) {
      if (!maxlike) return a + b;
      return std::isnan(a) || std::isnan(b) ? std::numeric_limits<A>::quiet_NaN() : (p > 0 ? std::max(a, b) : std::min(a, b));
    }, [&](int64_t o, A v) {
      o_[o] = static_cast<scalar_t>(maxlike || p == 1 || p == 0 ? v : p == 2 ? std::sqrt(v) : std::pow(v, A(1) / pa));
    });
  });
  return out;
}

}  // namespace fl
