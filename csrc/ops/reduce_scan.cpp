// Scans along one dim: cumsum, cumprod, logcumsumexp, cummax, cummin.
#include <cmath>
#include <limits>

#include "pointwise.h"
#include "pointwise_math.h"
#include "reduce.h"

namespace fl {

// One step of cumsum (is_sum) or cumprod; integers wrap like torch.
template <typename A>
A cum_step(A acc, A v, bool is_sum) {
  if constexpr (std::is_integral_v<A>)
    return static_cast<A>(is_sum ? static_cast<uint64_t>(acc) + static_cast<uint64_t>(v)
                                 : static_cast<uint64_t>(acc) * static_cast<uint64_t>(v));
  else
    return is_sum ? acc + v : acc * v;
}

// cumsum/cumprod: integers (and bool) give int64 unless dtype= says otherwise.
Tensor cum_arith(const Tensor& self, int64_t dim, ScalarType dtype, bool is_sum) {
  const char* op = is_sum ? "cumsum" : "cumprod";
  ScalarType out_t = dtype != ScalarType::NumTypes ? dtype : is_integral(self->dtype, true) ? ScalarType::Int64 : self->dtype;
  Tensor in = self->dtype == out_t ? self : to_dtype(self, out_t);
  RowView rv = rows_along(in, dim, op);
  Tensor r = empty(rv.perm_sizes, out_t);
  FL_DISPATCH_ALL_AND_COMPLEX(out_t, op, {
    using A = std::conditional_t<std::is_integral_v<scalar_t>, int64_t, opmath_t<scalar_t>>;
    const scalar_t* x = rv.rows->data<scalar_t>();
    scalar_t* y = r->data<scalar_t>();
    const int64_t n = rv.inner;
    if (n) for_each_row(rv.outer, n, [&](int64_t o) {  // (empty rows: nothing to scan, however many)
      A acc = is_sum ? A(0) : A(1);
      for (int64_t i = o * n; i < (o + 1) * n; ++i) {
        acc = cum_step(acc, static_cast<A>(x[i]), is_sum);
        y[i] = static_cast<scalar_t>(acc);
      }
    });
  });
  return from_rows(r, rv);
}

Tensor logcumsumexp_cpu(const Tensor& self, int64_t dim) {
  FL_CHECK(is_floating(self->dtype), NotImplementedError, "\"logcumsumexp_out_cpu\" not implemented for '",
           c10_type_name(self->dtype), "'");
  RowView rv = rows_along(self, dim, "logcumsumexp");
  Tensor r = empty(rv.perm_sizes, self->dtype);
  FL_DISPATCH_FLOATING(self->dtype, "logcumsumexp", {
    using A = opmath_t<scalar_t>;
    const scalar_t* x = rv.rows->data<scalar_t>();
    scalar_t* y = r->data<scalar_t>();
    const int64_t n = rv.inner;
    if (n) for_each_row(rv.outer, n, [&](int64_t o) {  // (empty rows: nothing to scan, however many)
      A acc = -std::numeric_limits<A>::infinity();
      for (int64_t i = o * n; i < (o + 1) * n; ++i) {
        A v = static_cast<A>(x[i]);
        A hi = std::max(acc, v), lo = std::min(acc, v);
        // log(exp(hi) + exp(lo)) = hi + log1p(exp(lo - hi)), with infinities handled exactly
        if (std::isnan(v) || std::isnan(acc)) acc = std::numeric_limits<A>::quiet_NaN();
        else if (std::isinf(lo) && lo < 0) acc = hi;
        else if (std::isinf(hi) && hi > 0) acc = hi;
        else acc = hi + std::log1p(std::exp(lo - hi));
        y[i] = static_cast<scalar_t>(acc);
      }
    });
  });
  return from_rows(r, rv);
}

TensorPair cum_extreme(const Tensor& self, int64_t dim, bool is_max) {
  const char* op = is_max ? "cummax" : "cummin";
  RowView rv = rows_along(self, dim, op);
  Tensor r = empty(rv.perm_sizes, self->dtype), ri = empty(rv.perm_sizes, ScalarType::Int64);
  FL_DISPATCH_ALL(self->dtype, op, {
    using M = opmath_t<scalar_t>;
    const scalar_t* x = rv.rows->data<scalar_t>();
    scalar_t* y = r->data<scalar_t>();
    int64_t* yi = ri->data<int64_t>();
    const int64_t n = rv.inner;
    if (n) for_each_row(rv.outer, n, [&](int64_t o) {  // (empty rows: nothing to scan, however many)
      const scalar_t* xr = x + o * n;
      M best = n ? static_cast<M>(xr[0]) : M(0);
      int64_t bi = 0;
      for (int64_t i = 0; i < n; ++i) {
        M v = static_cast<M>(xr[i]);
        // torch takes the latest index among equal values, and a NaN sticks once seen
        if (!isnan_impl(best) && (isnan_impl(v) || (is_max ? v >= best : v <= best))) { best = v; bi = i; }
        y[o * n + i] = static_cast<scalar_t>(best);
        yi[o * n + i] = bi;
      }
    });
  });
  return {from_rows(r, rv), from_rows(ri, rv)};
}

}  // namespace fl
