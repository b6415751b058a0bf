// Sorting along a dim and the order statistics built on it: sort, topk, kthvalue, median,
// nanmedian, mode, quantile. NaN orders as the largest value, as in PyTorch.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "index.h"
#include "pointwise.h"
#include "pointwise_math.h"
#include "reduce.h"

namespace fl {

// The elements of row o as (value, index) pairs.
template <typename T>
std::vector<std::pair<opmath_t<T>, int64_t>> row_pairs(const RowView& rv, int64_t o) {
  const T* x = rv.rows->data<T>() + o * rv.inner;
  std::vector<std::pair<opmath_t<T>, int64_t>> p(static_cast<size_t>(rv.inner));
  for (int64_t i = 0; i < rv.inner; ++i) p[i] = {static_cast<opmath_t<T>>(x[i]), i};
  return p;
}

// Orders (value, index) pairs by value (NaN largest), ties by index: deterministic results.
template <typename P>
bool pair_less(const P& a, const P& b) {
  if (nan_last_less(a.first, b.first)) return true;
  if (nan_last_less(b.first, a.first)) return false;
  return a.second < b.second;
}

TensorPair sort_cpu(const Tensor& self, int64_t dim, bool descending, bool stable) {
  FL_CHECK(!is_complex(self->dtype), Error, " Sort does not support complex dtypes on CPU");
  (void)stable;  // always stable: equal elements keep their order
  RowView rv = rows_along(self, dim, "sort");
  Tensor v = empty(rv.perm_sizes, self->dtype), ix = empty(rv.perm_sizes, ScalarType::Int64);
  if (self->numel == 0) return {from_rows(v, rv), from_rows(ix, rv)};  // (a (0, 2**40) input: 2**40 empty rows)
  FL_DISPATCH_ALL(self->dtype, "sort", {
    using M = opmath_t<scalar_t>;
    scalar_t* vo = v->data<scalar_t>();
    int64_t* io = ix->data<int64_t>();
    for_each_row(rv.outer, rv.inner, [&](int64_t o) {
      auto p = row_pairs<scalar_t>(rv, o);
      using P = std::pair<M, int64_t>;
      bool has_nan = false;
      for (const P& e : p) has_nan |= isnan_impl(e.first);
      if (has_nan) {
        if (descending) std::stable_sort(p.begin(), p.end(), [](const P& a, const P& b) { return nan_last_less(b.first, a.first); });
        else std::stable_sort(p.begin(), p.end(), [](const P& a, const P& b) { return nan_last_less(a.first, b.first); });
      } else {  // the common case: plain comparisons, which the sort runs faster
        if (descending) std::stable_sort(p.begin(), p.end(), [](const P& a, const P& b) { return a.first > b.first; });
        else std::stable_sort(p.begin(), p.end(), [](const P& a, const P& b) { return a.first < b.first; });
      }
      for (int64_t i = 0; i < rv.inner; ++i) {
        vo[o * rv.inner + i] = static_cast<scalar_t>(p[i].first);
        io[o * rv.inner + i] = p[i].second;
      }
    });
  });
  return {from_rows(v, rv), from_rows(ix, rv)};
}

TensorPair topk_cpu(const Tensor& self, int64_t k, int64_t dim, bool largest, bool sorted) {
  FL_CHECK(!is_complex(self->dtype), Error, " topk does not support complex dtypes on CPU");
  (void)sorted;  // results always come sorted, which torch allows either way
  FL_CHECK(self->dtype != ScalarType::Bool, Error, "topk does not support bool dtypes on CPU");
  RowView rv = rows_along(self, dim, "topk");
  FL_CHECK(k >= 0 && k <= rv.inner, Error, "selected index k out of range");
  IntList sizes = rv.perm_sizes;
  if (!sizes.empty()) sizes.back() = k;
  Tensor v = empty(sizes, self->dtype), ix = empty(sizes, ScalarType::Int64);
  FL_DISPATCH_ALL(self->dtype, "topk", {
    using P = std::pair<opmath_t<scalar_t>, int64_t>;
    scalar_t* vo = v->data<scalar_t>();
    int64_t* io = ix->data<int64_t>();
    for_each_row(rv.outer, rv.inner, [&](int64_t o) {
      auto p = row_pairs<scalar_t>(rv, o);
      if (largest)
        std::partial_sort(p.begin(), p.begin() + k, p.end(), [](const P& a, const P& b) {
          return nan_last_less(b.first, a.first) || (!nan_last_less(a.first, b.first) && a.second < b.second);
        });
      else
        std::partial_sort(p.begin(), p.begin() + k, p.end(), pair_less<P>);
      for (int64_t i = 0; i < k; ++i) { vo[o * k + i] = static_cast<scalar_t>(p[i].first); io[o * k + i] = p[i].second; }
    });
  });
  RowView out_rv = rv;
  out_rv.perm_sizes = sizes;
  return {from_rows(v, out_rv), from_rows(ix, out_rv)};
}

// Drops the innermost (size-1) dim of a keepdim-shaped row result unless keepdim.
Tensor finish_rows(const Tensor& r, const Tensor& self, int64_t dim, bool keepdim) {
  IntList shape = self->sizes;
  if (self->dim() > 0) {
    int64_t d = wrap_dim(dim, self->dim());
    if (keepdim) shape[d] = 1;
    else shape.erase(shape.begin() + d);
  }
  return reshaped(r, shape);  // kept dims keep their order, so the row-major layout already matches
}

// Selects, per row, the element of rank k (0-based) among the non-NaN values when ignore_nan,
// or NaN (first NaN's index) when the row holds one and !ignore_nan.
TensorPair select_rank(const Tensor& self, int64_t dim, bool keepdim, const char* op, bool ignore_nan,
                       int64_t fixed_k /* -1: lower median */) {
  RowView rv = rows_along(self, dim, op);
  FL_CHECK(self->dim() == 0 || rv.inner != 0, IndexError, op, "(): Expected reduction dim ", wrap_dim(dim, self->dim()),
           " to have non-zero size.");
  FL_CHECK(self->dtype != ScalarType::Bool, NotImplementedError, "\"", fixed_k >= 0 ? "kthvalue" : "median",
           "_cpu\" not implemented for 'Bool'");
  Tensor v = empty({rv.outer}, self->dtype), ix = empty({rv.outer}, ScalarType::Int64);
  FL_DISPATCH_ALL(self->dtype, op, {
    using P = std::pair<opmath_t<scalar_t>, int64_t>;
    scalar_t* vo = v->data<scalar_t>();
    int64_t* io = ix->data<int64_t>();
    for_each_row(rv.outer, rv.inner, [&](int64_t o) {
      auto p = row_pairs<scalar_t>(rv, o);
      int64_t valid = 0, first_nan = -1;
      for (auto& e : p) { if (isnan_impl(e.first)) { if (first_nan < 0) first_nan = e.second; } else ++valid; }
      if (fixed_k < 0 && ((first_nan >= 0 && !ignore_nan) || valid == 0)) {
        vo[o] = static_cast<scalar_t>(p[first_nan >= 0 ? first_nan : 0].first);
        io[o] = first_nan >= 0 ? first_nan : 0;
        return;
      }
      int64_t k = fixed_k >= 0 ? fixed_k : (valid - 1) / 2;
      std::nth_element(p.begin(), p.begin() + k, p.end(), pair_less<P>);
      vo[o] = static_cast<scalar_t>(p[k].first);
      io[o] = p[k].second;
    });
  });
  return {finish_rows(v, self, dim, keepdim), finish_rows(ix, self, dim, keepdim)};
}

TensorPair kthvalue_cpu(const Tensor& self, int64_t k, int64_t dim, bool keepdim) {
  int64_t d = wrap_dim(dim, self->dim(), "kthvalue");
  int64_t n = self->dim() ? self->sizes[d] : 1;
  FL_CHECK(self->dim() == 0 || n != 0, IndexError, "kthvalue(): Expected reduction dim ", d, " to have non-zero size.");
  FL_CHECK(k >= 1 && k <= n, Error, "kthvalue(): selected number k out of range for dimension ", d);
  return select_rank(self, dim, keepdim, "kthvalue", false, k - 1);
}

Tensor median_all_cpu(const Tensor& self, bool ignore_nan) {
  FL_CHECK(self->dtype != ScalarType::Bool, NotImplementedError, "\"median_cpu\" not implemented for 'Bool'");
  if (self->numel == 0) return scalar_tensor(Scalar(std::nan("")), self->dtype);
  Tensor flat = reshaped(row_major(self), {self->numel});
  return std::get<0>(select_rank(flat, 0, false, ignore_nan ? "nanmedian" : "median", ignore_nan, -1));
}

TensorPair mode_cpu(const Tensor& self, int64_t dim, bool keepdim) {
  RowView rv = rows_along(self, dim, "mode");
  FL_CHECK(self->dim() == 0 || rv.inner != 0, IndexError, "mode(): Expected reduction dim ", wrap_dim(dim, self->dim()),
           " to have non-zero size.");
  Tensor v = empty({rv.outer}, self->dtype), ix = empty({rv.outer}, ScalarType::Int64);
  FL_DISPATCH_ALL(self->dtype, "mode", {
    using P = std::pair<opmath_t<scalar_t>, int64_t>;
    scalar_t* vo = v->data<scalar_t>();
    int64_t* io = ix->data<int64_t>();
    for_each_row(rv.outer, rv.inner, [&](int64_t o) {
      auto p = row_pairs<scalar_t>(rv, o);
      std::sort(p.begin(), p.end(), pair_less<P>);
      // the most frequent value, the smallest among ties, reported at its last index
      int64_t best = 0, best_count = 0;
      for (int64_t i = 0; i < rv.inner;) {
        int64_t j = i + 1;
        while (j < rv.inner && !nan_last_less(p[i].first, p[j].first)) ++j;
        if (j - i > best_count) { best_count = j - i; best = j - 1; }
        i = j;
      }
      vo[o] = static_cast<scalar_t>(p[best].first);
      io[o] = p[best].second;
    });
  });
  return {finish_rows(v, self, dim, keepdim), finish_rows(ix, self, dim, keepdim)};
}

Tensor quantile_cpu(const Tensor& self, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                    const std::string& interp, bool ignore_nan) {
  const char* op = ignore_nan ? "nanquantile" : "quantile";
  FL_CHECK(self->dtype == ScalarType::Float32 || self->dtype == ScalarType::Float64, Error, op,
           "() input tensor must be either float or double dtype");
  FL_CHECK(q->dim() <= 1, Error, op, "() q must be a scalar or 1D tensor");
  FL_CHECK(interp == "linear" || interp == "lower" || interp == "higher" || interp == "midpoint" || interp == "nearest",
           Error, op, "() interpolation must be one of linear, lower, higher, midpoint or nearest, but got ", interp);
  Tensor qd = row_major(to_dtype(q, ScalarType::Float64));
  const double* qs = qd->data<double>();
  const int64_t nq = qd->numel;
  for (int64_t i = 0; i < nq; ++i)
    FL_CHECK(qs[i] >= 0 && qs[i] <= 1, Error, op, "() q values must be in the range [0, 1]");
  FL_CHECK(self->numel > 0, Error, op, "() input tensor must be non-empty");
  RowView rv;
  IntList out_shape;
  if (dim) {
    int64_t d = wrap_dim(*dim, self->dim(), op);
    rv = rows_along(self, d, op);
    out_shape = self->sizes;
    if (self->dim() > 0) { if (keepdim) out_shape[d] = 1; else out_shape.erase(out_shape.begin() + d); }
  } else {
    rv = to_rows(self, std::vector<bool>(static_cast<size_t>(self->dim()), true), keepdim);
    out_shape = rv.out_sizes;
  }
  Tensor out = empty({nq, rv.outer}, self->dtype);
  FL_DISPATCH_FLOATING(self->dtype, op, {
    const scalar_t* x = rv.rows->data<scalar_t>();
    scalar_t* y = out->data<scalar_t>();
    const int64_t n = rv.inner, outer = rv.outer;
    for_each_row(outer, n, [&](int64_t o) {
      std::vector<double> s(x + o * n, x + (o + 1) * n);
      std::sort(s.begin(), s.end(), [](double a, double b) { return nan_last_less(a, b); });
      int64_t valid = 0;
      while (valid < n && !std::isnan(s[valid])) ++valid;
      for (int64_t i = 0; i < nq; ++i) {
        double r;
        if (valid == 0 || (!ignore_nan && valid < n)) { r = std::nan(""); }
        else {
          double rank = qs[i] * static_cast<double>(valid - 1);
          double lo_i = std::floor(rank), hi_i = std::ceil(rank);
          double lo = s[static_cast<size_t>(lo_i)], hi = s[static_cast<size_t>(hi_i)];
          if (interp == "lower") r = lo;
          else if (interp == "higher") r = hi;
          else if (interp == "nearest") r = s[static_cast<size_t>(std::nearbyint(rank))];  // half to even
          else {
            double w = interp == "midpoint" ? 0.5 : rank - lo_i;
            r = w < 0.5 ? lo + w * (hi - lo) : hi - (hi - lo) * (1 - w);  // torch.lerp's formula
          }
        }
        y[i * outer + o] = static_cast<scalar_t>(r);
      }
    });
  });
  IntList shape = out_shape;
  if (q->dim() == 1) shape.insert(shape.begin(), nq);
  return reshaped(out, shape);
}

// The rank rules are PyTorch's: a row with NaN picks its last (NaN) element for quantile, and nanquantile ranks
// among the non-NaN values (the first element when there is none).
std::tuple<Tensor, Tensor, Tensor> quantile_weights_cpu(const Tensor& x, const Tensor& q, bool ignore_nan,
                                                        const std::string& interp) {
  FL_CHECK(x->dim() == 2 && q->dim() <= 1, Error, "quantile_weights: expected rows (rows, n) and a 1-D q, got ",
           shape_str(x->sizes), " and ", shape_str(q->sizes));
  const int64_t rows = x->sizes[0], n = x->sizes[1];
  Tensor qd = contiguous(to_dtype(q, ScalarType::Float64));
  const int64_t nq = qd->numel;
  Tensor idx = empty({rows, 2 * nq}, ScalarType::Int64), w = empty({rows, nq}, ScalarType::Float64),
         dq = empty({rows, nq}, ScalarType::Float64);
  Tensor order = contiguous(std::get<1>(ops::sort(x, 1, false, true)));
  Tensor sorted = contiguous(ops::gather(contiguous(to_dtype(x, ScalarType::Float64)), 1, order, false));
  const int64_t* o = order->data<int64_t>();
  const double *sv = sorted->data<double>(), *qs = qd->data<double>();
  int64_t* ip = idx->data<int64_t>();
  double *wp = w->data<double>(), *dp = dq->data<double>();
  for (int64_t row = 0; row < rows; ++row) {
    int64_t valid = 0;
    while (valid < n && !std::isnan(sv[row * n + valid])) ++valid;
    for (int64_t i = 0; i < nq; ++i) {
      double count = static_cast<double>(ignore_nan ? valid : n), rank = qs[i] * (count - 1);
      bool fixed = ignore_nan ? rank < 0 : valid < n;
      if (fixed) rank = ignore_nan ? 0.0 : static_cast<double>(n - 1);
      double lo = std::floor(rank), hi = std::ceil(rank), wh = 0;
      if (interp == "higher") lo = hi;
      else if (interp == "nearest") lo = std::nearbyint(rank);
      else if (interp == "midpoint") wh = 0.5;
      else if (interp == "linear") wh = rank - lo;
      int64_t k = row * 2 * nq + 2 * i;
      ip[k] = o[row * n + static_cast<int64_t>(lo)];
      ip[k + 1] = o[row * n + static_cast<int64_t>(hi)];
      wp[row * nq + i] = wh;
      dp[row * nq + i] = interp == "linear" && !fixed ? count - 1 : 0.0;
    }
  }
  return {idx, w, dq};
}

}  // namespace fl
