// Counting and searching: unique / unique_consecutive, bincount, histc, searchsorted.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "pointwise.h"
#include "reduce.h"

namespace fl {

std::tuple<Tensor, Tensor, Tensor> unique_cpu(const Tensor& self, bool consecutive) {
  const int64_t n = self->numel;
  Tensor flat = reshaped(row_major(self), {n});
  Tensor inverse = empty(self->sizes, ScalarType::Int64);
  std::vector<int64_t> counts;
  Tensor values;
  FL_DISPATCH_ALL(self->dtype, "unique", {
    using M = opmath_t<scalar_t>;
    const scalar_t* x = flat->data<scalar_t>();
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), int64_t(0));
    if (!consecutive)
      std::stable_sort(order.begin(), order.end(), [x](int64_t a, int64_t b) {
        return nan_last_less(static_cast<M>(x[a]), static_cast<M>(x[b]));
      });
    std::vector<scalar_t> vals;
    int64_t* inv = inverse->data<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      M v = static_cast<M>(x[order[i]]);
      if (vals.empty() || static_cast<M>(vals.back()) != v) { vals.push_back(x[order[i]]); counts.push_back(0); }
      ++counts.back();
      inv[order[i]] = static_cast<int64_t>(vals.size()) - 1;
    }
    values = empty({static_cast<int64_t>(vals.size())}, self->dtype);
    std::copy(vals.begin(), vals.end(), values->data<scalar_t>());
  });
  Tensor c = empty({static_cast<int64_t>(counts.size())}, ScalarType::Int64);
  std::copy(counts.begin(), counts.end(), c->data<int64_t>());
  return {values, inverse, c};
}

std::tuple<Tensor, Tensor, Tensor> unique_dim_cpu(const Tensor& self, int64_t dim, bool consecutive) {
  const char* op = consecutive ? "unique_consecutive" : "unique_dim";
  const int64_t d = wrap_dim(dim, self->dim(), op);
  FL_CHECK(self->dim() > 0, Error, op, "(): cannot be applied to a 0-dim tensor");
  std::vector<bool> mask(static_cast<size_t>(self->dim()), true);
  mask[d] = false;
  RowView rv = to_rows(self, mask, true);  // row i is the slice i along dim
  const int64_t n = rv.outer, m = rv.inner;
  Tensor inverse = empty({n}, ScalarType::Int64);
  std::vector<int64_t> counts, firsts;
  FL_DISPATCH_ALL(self->dtype, op, {
    using M = opmath_t<scalar_t>;
    const scalar_t* x = rv.rows->data<scalar_t>();
    auto less = [&](int64_t a, int64_t b) {
      for (int64_t j = 0; j < m; ++j) {
        M u = static_cast<M>(x[a * m + j]), v = static_cast<M>(x[b * m + j]);
        if (nan_last_less(u, v)) return true;
        if (nan_last_less(v, u)) return false;
      }
      return false;
    };
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), int64_t(0));
    if (!consecutive) std::stable_sort(order.begin(), order.end(), less);
    int64_t* inv = inverse->data<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      if (firsts.empty() || less(firsts.back(), order[i]) || less(order[i], firsts.back())) {
        firsts.push_back(order[i]);
        counts.push_back(0);
      }
      ++counts.back();
      inv[order[i]] = static_cast<int64_t>(firsts.size()) - 1;
    }
  });
  const int64_t nu = static_cast<int64_t>(firsts.size());
  RowView out_rv = rv;
  out_rv.perm_sizes[0] = nu;
  Tensor vals = empty(out_rv.perm_sizes, self->dtype);
  const size_t row_bytes = static_cast<size_t>(m) * self->itemsize();
  for (int64_t g = 0; g < nu; ++g)
    std::memcpy(vals->data_ptr() + g * row_bytes, rv.rows->data_ptr() + firsts[g] * row_bytes, row_bytes);
  Tensor c = empty({nu}, ScalarType::Int64);
  std::copy(counts.begin(), counts.end(), c->data<int64_t>());
  return {from_rows(vals, out_rv), inverse, c};
}

Tensor bincount_cpu(const Tensor& self, const Tensor& weights, int64_t minlength) {
  FL_CHECK(minlength >= 0, Error, "minlength should be >= 0");
  FL_CHECK(!is_floating(self->dtype), NotImplementedError, "\"bincount_cpu\" not implemented for '", c10_type_name(self->dtype), "'");
  FL_CHECK(self->dim() == 1 && is_integral(self->dtype, false), Error, "bincount only supports 1-d non-negative integral inputs.");
  FL_CHECK(!weights || (weights->dim() == 1 && weights->numel == self->numel), Error,
           "weights should be 1-d and have the same length as input");
  Tensor idx = row_major(to_dtype(self, ScalarType::Int64));
  const int64_t* x = idx->data<int64_t>();
  int64_t hi = -1;
  for (int64_t i = 0; i < idx->numel; ++i) {
    FL_CHECK(x[i] >= 0, Error, "bincount only supports 1-d non-negative integral inputs.");
    hi = std::max(hi, x[i]);
  }
  const int64_t len = std::max(minlength, hi + 1);
  // float32 weights keep their dtype; any other weights count in float64, as torch does
  ScalarType out_t = !weights ? ScalarType::Int64 : weights->dtype == ScalarType::Float32 ? ScalarType::Float32 : ScalarType::Float64;
  Tensor out = empty({len}, out_t);
  fill(out, Scalar(int64_t(0)));
  if (!weights) {
    int64_t* o = out->data<int64_t>();
    for (int64_t i = 0; i < idx->numel; ++i) ++o[x[i]];
    return out;
  }
  Tensor w = row_major(to_dtype(weights, ScalarType::Float64));
  const double* wv = w->data<double>();
  std::vector<double> acc(static_cast<size_t>(len), 0.0);
  for (int64_t i = 0; i < idx->numel; ++i) acc[x[i]] += wv[i];
  FL_DISPATCH_FLOATING(out_t, "bincount", {
    scalar_t* o = out->data<scalar_t>();
    for (int64_t i = 0; i < len; ++i) o[i] = static_cast<scalar_t>(acc[i]);
  });
  return out;
}

Tensor histc_cpu(const Tensor& self, int64_t bins, double lo, double hi) {
  FL_CHECK(is_floating(self->dtype), NotImplementedError, "\"histogram_cpu\" not implemented for '", c10_type_name(self->dtype), "'");
  FL_CHECK(bins > 0, Error, "torch.histc: bins must be > 0, but got ", bins, " for dimension 0");
  FL_CHECK(!(lo > hi), Error, "torch.histc: max must be larger than min");
  Tensor x = row_major(to_dtype(self, ScalarType::Float64));
  const double* v = x->data<double>();
  const int64_t n = x->numel;
  if (lo == hi && n > 0) {  // the data's own range
    lo = *std::min_element(v, v + n);
    hi = *std::max_element(v, v + n);
  }
  if (lo == hi) { lo -= 1; hi += 1; }
  FL_CHECK(std::isfinite(lo) && std::isfinite(hi), Error, "torch.histc: range of [", lo, ", ", hi, "] is not finite");
  std::vector<double> counts(static_cast<size_t>(bins), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    if (!(v[i] >= lo && v[i] <= hi)) continue;  // outside the range, or NaN
    int64_t b = static_cast<int64_t>((v[i] - lo) * static_cast<double>(bins) / (hi - lo));
    counts[std::min(b, bins - 1)] += 1;
  }
  Tensor out = empty({bins}, self->dtype);
  FL_DISPATCH_FLOATING(self->dtype, "histc", {
    scalar_t* o = out->data<scalar_t>();
    for (int64_t i = 0; i < bins; ++i) o[i] = static_cast<scalar_t>(counts[i]);
  });
  return out;
}

Tensor searchsorted_cpu(const Tensor& seq, const Tensor& values, bool out_int32, bool right, const Tensor& sorter) {
  FL_CHECK(seq->dim() >= 1, Error, "torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 dimension");
  const bool shared = seq->dim() == 1;
  if (!shared) {
    IntList a(seq->sizes.begin(), seq->sizes.end() - 1), b = values->sizes;
    if (!b.empty()) b.pop_back();
    FL_CHECK(values->dim() == seq->dim() && a == b, Error,
             "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries tensor "
             "and input value tensor must match, but we got boundaries tensor ", shape_str(seq->sizes),
             " and input value tensor ", shape_str(values->sizes));
  }
  FL_CHECK(!sorter || sorter->sizes == seq->sizes, Error,
           "torch.searchsorted(): boundary and sorter must have the same size, but got boundary tensor ",
           shape_str(seq->sizes), " and got sorter tensor ", shape_str(sorter ? sorter->sizes : IntList{}));
  ScalarType ct = promote_types(seq->dtype, values->dtype);
  Tensor s = row_major(to_dtype(seq, ct)), v = row_major(to_dtype(values, ct));
  Tensor srt = sorter ? row_major(to_dtype(sorter, ScalarType::Int64)) : Tensor();
  const int64_t m = seq->sizes.back();
  const int64_t vrow = values->dim() ? values->sizes.back() : 1;
  if (srt)
    for (int64_t i = 0; i < srt->numel; ++i)
      FL_CHECK(srt->data<int64_t>()[i] >= 0 && srt->data<int64_t>()[i] < m, Error, "torch.searchsorted(): sorter index out of range");
  Tensor out = empty(values->sizes, out_int32 ? ScalarType::Int32 : ScalarType::Int64);
  FL_DISPATCH_ALL(ct, "searchsorted", {
    using M = opmath_t<scalar_t>;
    const scalar_t* sv = s->data<scalar_t>();
    const scalar_t* vv = v->data<scalar_t>();
    const int64_t* so = srt ? srt->data<int64_t>() : nullptr;
    const int64_t n = v->numel;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t base = shared ? 0 : (i / vrow) * m;
      const M key = static_cast<M>(vv[i]);
      auto at = [&](int64_t j) { return static_cast<M>(sv[base + (so ? so[base + j] : j)]); };
      int64_t lo = 0, hi = m;  // first j with seq[j] > key (right) or seq[j] >= key (left)
      while (lo < hi) {
        int64_t mid = (lo + hi) / 2;
        bool go_right = right ? !nan_last_less(key, at(mid)) : nan_last_less(at(mid), key);
        if (go_right) lo = mid + 1; else hi = mid;
      }
      if (out_int32) out->data<int32_t>()[i] = static_cast<int32_t>(lo);
      else out->data<int64_t>()[i] = lo;
    }
  });
  return out;
}

}  // namespace fl
