// CPU kernels of the dim-wise indexing ops: index_select, gather, scatter*, index_add_/copy_/fill_.
// All of them run the offset loops of Note [Indexing by offsets] (index.h).
#include "../kernels/loops.h"
#include "index.h"
#include "pointwise.h"

namespace fl {

using namespace index_detail;

// A 0-dim tensor seen as shape [1], so dim 0 can be indexed (PyTorch allows dim 0 / -1 on scalars).
Tensor as_1d(const Tensor& t) { return t->dim() ? t : make_view(t, {1}, {1}, t->offset); }

// Equal ranks, a 0-dim tensor counting as 1-D (PyTorch lets scalars and 1-D tensors mix here).
bool same_rank(const Tensor& a, const Tensor& b) { return std::max<int64_t>(a->dim(), 1) == std::max<int64_t>(b->dim(), 1); }

IntList with_size(IntList sizes, int64_t dim, int64_t n) { sizes[dim] = n; return sizes; }
IntList with_stride(IntList strides, int64_t dim, int64_t s) { strides[dim] = s; return strides; }

// Offsets of a 1-D `index` along `dim` of self, viewed on `sizes` (self's sizes with dim = numel(index)).
Tensor dim_offsets(const Tensor& self, int64_t dim, const Tensor& index, const IntList& sizes, bool wrap,
                   const std::function<void(int64_t)>& fail) {
  Tensor idx = make_view(index, {index->numel}, {index->dim() ? index->strides[0] : 1}, index->offset);
  Tensor off = zeros_offsets({index->numel});
  add_offsets(off, idx, self->sizes[dim], self->strides[dim], wrap, fail);
  return offsets_view(off, sizes, dim);
}

// ---- index_select ------------------------------------------------------------------------
Tensor index_select_cpu(const Tensor& self_, int64_t dim, const Tensor& index) {
  FL_CHECK(index->dim() <= 1, IndexError, "index_select(): Index is supposed to be a vector");
  check_index_dtype(index, "index_select");
  Tensor self = as_1d(self_);
  dim = wrap_dim(dim, self_->dim(), "index_select");
  IntList sizes = with_size(self->sizes, dim, index->numel);
  Tensor off = dim_offsets(self, dim, index, sizes, false, [](int64_t) { throw IndexError("index out of range in self"); });
  Tensor out = empty(sizes, self->dtype);
  gather_by_offsets(out, make_view(self, sizes, with_stride(self->strides, dim, 0), self->offset), off);
  if (self_->dim() == 0) return make_view(out, {}, {}, 0);  // a scalar stays a scalar
  return out;
}

// ---- gather / scatter ----------------------------------------------------------------------
// Offsets of a same-rank `index` along `dim` (gather/scatter), checked against self.size(dim).
Tensor elementwise_offsets(const Tensor& self, int64_t dim, const Tensor& index) {
  Tensor off = zeros_offsets(index->sizes);
  int64_t size = self->sizes[dim];
  add_offsets(off, index, size, self->strides[dim], false, [&](int64_t v) {
    throw Error(str_cat("index ", v, " is out of bounds for dimension ", dim, " with size ", size));
  });
  return off;
}

Tensor gather_cpu(const Tensor& self_, int64_t dim, const Tensor& index_, bool /*sparse_grad: the gradient is dense*/) {
  if (is_float8(self_->dtype)) throw_unsupported_dtype("gather_out_cpu", self_->dtype);  // as torch's CPU build
  // as torch, an empty index of any dtype and rank gathers nothing (only dim is checked)
  if (index_->numel == 0) {
    wrap_dim(dim, self_->dim(), "gather");
    return empty(index_->sizes, self_->dtype);
  }
  FL_CHECK(same_rank(index_, self_), Error, "Index tensor must have the same number of dimensions as input tensor");
  FL_CHECK(index_->dtype == ScalarType::Int64 || index_->dtype == ScalarType::Int32, Error,
           "gather(): Expected dtype int32/int64 for index");
  dim = wrap_dim(dim, self_->dim(), "gather");
  Tensor self = as_1d(self_), index = as_1d(index_);
  for (int64_t d = 0; d < self->dim(); ++d)
    FL_CHECK(d == dim || index->sizes[d] <= self->sizes[d], Error, "Size does not match at dimension ", d, " expected index ",
             shape_str(index->sizes), " to be no larger than self ", shape_str(self->sizes), " apart from dimension ", dim);
  Tensor off = elementwise_offsets(self, dim, index);
  Tensor out = empty(index->sizes, self->dtype);
  gather_by_offsets(out, make_view(self, index->sizes, with_stride(self->strides, dim, 0), self->offset), off);
  return index_->dim() ? out : make_view(out, {}, {}, 0);
}

ScatterReduce parse_scatter_reduce(const std::string& r) {
  if (r.empty()) return ScatterReduce::None;
  if (r == "add") return ScatterReduce::Add;
  if (r == "multiply") return ScatterReduce::Mul;
  throw Error("reduce argument must be either add or multiply.");
}

// self[index[i][j]][j] (op)= src[i][j] for dim 0, after every check. `src` is a tensor of self's
// dtype, or a wrapped number (the `value` overloads) that is converted and broadcast.
void scatter_impl(const Tensor& self_, int64_t dim, const Tensor& index_, const Tensor& src_, ScatterReduce r, const char* op) {
  if (is_float8(self_->dtype)) throw_unsupported_dtype(op, self_->dtype);  // as torch's CPU build
  dim = wrap_dim(dim, self_->dim(), op);
  const bool is_value = src_->wrapped_number;
  FL_CHECK(is_value || src_->dtype == self_->dtype, Error, op, "(): Expected self.dtype to be equal to src.dtype");
  if (index_->numel == 0) return;  // as torch: an empty index of any dtype and rank scatters nothing
  FL_CHECK(index_->dtype == ScalarType::Int64 || index_->dtype == ScalarType::Int32, Error, op,
           "(): Expected dtype int64 for index");
  FL_CHECK(same_rank(index_, self_), Error, "Index tensor must have the same number of dimensions as self tensor");
  if (!is_value)
    FL_CHECK(same_rank(src_, self_), Error, "Index tensor must have the same number of dimensions as src tensor");
  Tensor self = as_1d(self_), index = as_1d(index_);
  Tensor src = is_value ? expand_to(to_dtype(src_, self->dtype, true), index->sizes, op) : as_1d(src_);
  for (int64_t d = 0; d < self->dim(); ++d) {
    FL_CHECK((d == dim || index->sizes[d] <= self->sizes[d]) && index->sizes[d] <= src->sizes[d], Error, "Expected index ",
             shape_str(index->sizes), " to be no larger than self ", shape_str(self->sizes), " apart from dimension ", dim,
             " and to be no larger size than src ", shape_str(src->sizes));
  }
  Tensor off = elementwise_offsets(self, dim, index);
  Tensor vals = is_value ? src : make_view(src, index->sizes, src->strides, src->offset);
  if (vals->storage == self->storage) vals = clone(vals);
  scatter_by_offsets(make_view(self, index->sizes, with_stride(self->strides, dim, 0), self->offset), vals, off, r);
}

Tensor scatter_cpu(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, const std::string& reduce) {
  scatter_impl(self, dim, index, src, parse_scatter_reduce(reduce), "scatter");
  self->bump_version();
  return self;
}

Tensor scatter_add_cpu(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  FL_CHECK(!src->wrapped_number, TypeError, "scatter_add_(): argument 'src' must be Tensor, not a number");
  scatter_impl(self, dim, index, src, ScatterReduce::Add, "scatter_add");
  self->bump_version();
  return self;
}

// Divides self by the number of values reduced into each element (mean), as PyTorch: floor
// division for integers, elements nothing was scattered to keep their value.
template <typename T>
void divide_loop(const ElementwiseIter& it) {
  using OM = opmath_t<T>;
  it.for_each([](char** p, const int64_t* s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      int64_t c = *reinterpret_cast<const int64_t*>(p[1] + i * s[1]);
      if (c <= 1) continue;
      T* d = reinterpret_cast<T*>(p[0] + i * s[0]);
      if constexpr (std::is_same_v<T, bool>) {
        continue;
      } else if constexpr (std::is_integral_v<T>) {
        int64_t v = static_cast<int64_t>(*d), q = v / c;
        if (v % c != 0 && v < 0) --q;
        *d = static_cast<T>(q);
      } else {
        *d = static_cast<T>(static_cast<OM>(*d) / static_cast<OM>(c));
      }
    }
  });
}

void divide_by_counts(const Tensor& self, const Tensor& counts) {
  ElementwiseIter it({self.get(), counts.get()}, "scatter_reduce");
  FL_DISPATCH_ALL(self->dtype, "scatter_reduce", divide_loop<scalar_t>(it));
}

Tensor scatter_reduce_cpu(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                          const std::string& reduce, bool include_self) {
  ScatterReduce r;
  if (reduce == "sum") r = ScatterReduce::Add;
  else if (reduce == "prod") r = ScatterReduce::Mul;
  else if (reduce == "mean") r = ScatterReduce::Mean;
  else if (reduce == "amax" || reduce == "max") r = ScatterReduce::Max;  // PyTorch also takes max/min
  else if (reduce == "amin" || reduce == "min") r = ScatterReduce::Min;
  else throw Error(str_cat("reduce argument must be either sum, prod, mean, amax or amin, got ", reduce));
  FL_CHECK(!src->wrapped_number, TypeError, "scatter_reduce_(): argument 'src' must be Tensor, not a number");
  if (!include_self) {
    // reset every target to the reduction's identity, so only the scattered values count
    Scalar init;
    const bool fl = is_floating(self->dtype);
    switch (r) {
      case ScatterReduce::Mul: init = Scalar(int64_t(1)); break;
      case ScatterReduce::Max: init = fl ? Scalar(-INFINITY) : self->dtype == ScalarType::Bool ? Scalar(false) : Scalar(std::numeric_limits<int64_t>::min()); break;
      case ScatterReduce::Min: init = fl ? Scalar(INFINITY) : self->dtype == ScalarType::Bool ? Scalar(true) : Scalar(std::numeric_limits<int64_t>::max()); break;
      default: init = Scalar(int64_t(0)); break;
    }
    if (!fl && (r == ScatterReduce::Max || r == ScatterReduce::Min) && self->dtype != ScalarType::Bool && self->dtype != ScalarType::Int64) {
      // the integer limits of the narrower type
      FL_DISPATCH_INTEGRAL(self->dtype, "scatter_reduce", {
        init = Scalar(static_cast<int64_t>(r == ScatterReduce::Max ? std::numeric_limits<scalar_t>::lowest() : std::numeric_limits<scalar_t>::max()));
      });
    }
    Tensor v = scalar_tensor(init, self->dtype);
    v->wrapped_number = true;
    scatter_impl(self, dim, index, v, ScatterReduce::None, "scatter_reduce");
  }
  scatter_impl(self, dim, index, src, r, "scatter_reduce");
  if (r == ScatterReduce::Mean) {
    Tensor counts = empty(self->sizes, ScalarType::Int64);
    fill(counts, Scalar(int64_t(include_self ? 1 : 0)));
    Tensor ones = scalar_tensor(Scalar(int64_t(1)), ScalarType::Int64);
    ones->wrapped_number = true;
    scatter_impl(counts, dim, index, ones, ScatterReduce::Add, "scatter_reduce");
    divide_by_counts(self, counts);
  }
  self->bump_version();
  return self;
}

// ---- index_add_ / index_copy_ / index_fill_ ------------------------------------------------------
// Checks shared by index_add_ and index_copy_; returns source seen with self's rank.
Tensor check_index_source(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const char* op, bool index_error) {
  auto raise = [&](const std::string& msg) {
    if (index_error) throw IndexError(msg);
    throw Error(msg);
  };
  if (index->dim() > 1) raise(str_cat(op, "(): Index should have dimension 1 or 0 (got ", index->dim(), ")"));
  if (source->dim() != self->dim() && !(source->numel == 1 && std::max<int64_t>(source->dim(), 1) == self->dim()))
    raise(str_cat(op, "(): When source and destination are not scalars, their dimensionality must match. Source dimensionality (",
                  source->dim(), "), destination dimensionality (", self->dim(), ")"));
  Tensor src = as_1d(source);
  if (index->numel != src->sizes[dim])
    raise(str_cat(op, "(): Number of indices (", index->numel, ") should be equal to source.size(dim)", index_error ? " (" : ": (",
                  src->sizes[dim], ")", index_error ? "" : str_cat(", for dim: ", dim)));
  for (int64_t d = 0; d < self->dim(); ++d)
    if (d != dim && src->sizes[d] != self->sizes[d])
      raise(str_cat(op, "(): Source/destination tensor must have same slice shapes. Destination slice shape: ",
                    shape_str(with_size(self->sizes, dim, 1)), " at dimension ", dim, " and source slice shape: ",
                    shape_str(with_size(src->sizes, dim, 1)), " at dimension 0."));
  return src;
}

Tensor index_add_cpu(const Tensor& self_, int64_t dim, const Tensor& index, const Tensor& source, Scalar alpha) {
  check_index_dtype(index, "index_add_");
  FL_CHECK(self_->dtype == source->dtype, Error, "index_add_(): self (", c10_type_name(self_->dtype), ") and source (",
           c10_type_name(source->dtype), ") must have the same scalar type");
  Tensor self = as_1d(self_);
  dim = wrap_dim(dim, self_->dim(), "index_add_");
  Tensor src = check_index_source(self, dim, index, source, "index_add_", false);
  int64_t size = self->sizes[dim];
  Tensor off = dim_offsets(self, dim, index, src->sizes, false, [&](int64_t v) {
    throw Error(str_cat("index ", v, " is out of bounds for dimension ", dim, " with size ", size));
  });
  if (!(alpha.is_int() && alpha.v.i == 1)) {
    // alpha takes self's dtype first (2.5 -> 2 for integers), as PyTorch does
    Tensor a = scalar_tensor(alpha, self->dtype);
    a->wrapped_number = true;
    src = to_dtype(ops::mul(src, a, Scalar(int64_t(1)), nullptr), self->dtype);
  }
  if (src->storage == self->storage) src = clone(src);
  scatter_by_offsets(make_view(self, src->sizes, with_stride(self->strides, dim, 0), self->offset), src, off, ScatterReduce::Add);
  self_->bump_version();
  return self_;
}

Tensor index_copy_cpu(const Tensor& self_, int64_t dim, const Tensor& index, const Tensor& source) {
  if (is_float8(self_->dtype)) throw_unsupported_dtype("index_copy_cpu", self_->dtype);  // as torch's CPU build
  FL_CHECK(index->dtype == ScalarType::Int64, Error, "index_copy_(): Expected a long tensor for index, but got ", c10_type_name(index->dtype));
  FL_CHECK(self_->dtype == source->dtype, Error, "index_copy_(): self and source expected to have the same dtype, but got (self) ",
           c10_type_name(self_->dtype), " and (source) ", c10_type_name(source->dtype));
  Tensor self = as_1d(self_);
  dim = wrap_dim(dim, self_->dim(), "index_copy_");
  Tensor src = check_index_source(self, dim, index, source, "index_copy_", true);
  int64_t size = self->sizes[dim];
  Tensor off = dim_offsets(self, dim, index, src->sizes, false, [&](int64_t v) {
    throw IndexError(str_cat("index_copy_(): index ", v, " is out of bounds for dimension ", dim, " with size ", size));
  });
  if (src->storage == self->storage) src = clone(src);
  scatter_by_offsets(make_view(self, src->sizes, with_stride(self->strides, dim, 0), self->offset), src, off, ScatterReduce::None);
  self_->bump_version();
  return self_;
}

Tensor index_fill_cpu(const Tensor& self_, int64_t dim, const Tensor& index, const Tensor& value) {
  if (is_float8(self_->dtype)) throw_unsupported_dtype("index_fill_cpu", self_->dtype);  // as torch's CPU build
  FL_CHECK(index->dtype == ScalarType::Int64, IndexError, "index_fill_(): Expected dtype int64 for index.");
  FL_CHECK(index->dim() <= 1, IndexError, "Index has to be a vector/scalar");
  FL_CHECK(value->dim() == 0, Error, "index_fill_ only supports a 0-dimensional value tensor, but got tensor with ", value->dim(),
           " dimension(s).");
  Tensor self = as_1d(self_);
  dim = wrap_dim(dim, self_->dim(), "index_fill_");
  IntList sizes = with_size(self->sizes, dim, index->numel);
  int64_t size = self->sizes[dim];
  Tensor off = dim_offsets(self, dim, index, sizes, true, [&](int64_t v) {
    throw IndexError(str_cat("index ", v, " is out of bounds for dimension ", dim, " with size ", size));
  });
  Tensor v = expand_to(to_dtype(value, self->dtype, true), sizes, "index_fill_");
  scatter_by_offsets(make_view(self, sizes, with_stride(self->strides, dim, 0), self->offset), v, off, ScatterReduce::None);
  self_->bump_version();
  return self_;
}

}  // namespace fl
