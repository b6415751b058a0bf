// CPU kernels of advanced indexing (index, index_put_), the masked ops, take, nonzero and where;
// the loops of Note [Indexing by offsets] (index.h) live here too.
#include <atomic>
#include <cstring>

#include "../core/warning.h"
#include "../kernels/copy.h"
#include "../kernels/loops.h"
#include "index.h"
#include "pointwise.h"

namespace fl {
namespace index_detail {

Tensor expand_to(const Tensor& t, const IntList& sizes, const char* op) {
  if (t->sizes == sizes) return t;
  FL_CHECK(t->dim() <= static_cast<int64_t>(sizes.size()), Error, op, ": the expanded size must be at least the tensor's dims ",
           shape_str(t->sizes), " vs ", shape_str(sizes));
  IntList st(sizes.size(), 0);
  int64_t lead = static_cast<int64_t>(sizes.size()) - t->dim();
  for (int64_t d = 0; d < t->dim(); ++d) {
    int64_t s = t->sizes[d];
    FL_CHECK(s == sizes[lead + d] || s == 1, Error, op, ": the expanded size of the tensor (", sizes[lead + d],
             ") must match the existing size (", s, ") at non-singleton dimension ", lead + d, ".  Target sizes: ",
             shape_str(sizes), ".  Tensor sizes: ", shape_str(t->sizes));
    st[lead + d] = s == 1 ? 0 : t->strides[d];
  }
  return make_view(t, sizes, st, t->offset);
}

namespace {
// Byte-moving element types: copies need only the element size, not the dtype.
template <typename F>
void by_itemsize(size_t n, F f) {
  switch (n) {
    case 1: f(uint8_t{}); break;
    case 2: f(uint16_t{}); break;
    case 4: f(uint32_t{}); break;
    case 8: f(uint64_t{}); break;
    default: f(complex<double>{}); break;  // 16 bytes
  }
}
constexpr int64_t kSerial = int64_t(1) << 62;  // grain that keeps a loop on one thread
}  // namespace

void gather_by_offsets(const Tensor& out, const Tensor& src, const Tensor& offsets) {
  if (out->numel == 0) return;
  ElementwiseIter it({out.get(), src.get(), offsets.get()}, "index");
  by_itemsize(out->itemsize(), [&](auto tag) {
    using T = decltype(tag);
    it.for_each([](char** p, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<T*>(p[0] + i * s[0]) =
            reinterpret_cast<const T*>(p[1] + i * s[1])[*reinterpret_cast<const int64_t*>(p[2] + i * s[2])];
    });
  });
}

namespace {
template <typename T>
void reduce_loop(const ElementwiseIter& it, ScatterReduce r) {
  using OM = opmath_t<T>;
  auto run = [&](auto f) {
    it.for_each([&](char** p, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        T* d = reinterpret_cast<T*>(p[0] + i * s[0]) + *reinterpret_cast<const int64_t*>(p[2] + i * s[2]);
        *d = static_cast<T>(f(static_cast<OM>(*d), static_cast<OM>(*reinterpret_cast<const T*>(p[1] + i * s[1]))));
      }
    }, kSerial);
  };
  // max/min propagate NaN from either side, as PyTorch's scatter_reduce does
  switch (r) {
    case ScatterReduce::Add: case ScatterReduce::Mean: run([](OM a, OM b) { return a + b; }); break;
    case ScatterReduce::Mul: run([](OM a, OM b) { return a * b; }); break;
    case ScatterReduce::Max: case ScatterReduce::Min:
      if constexpr (is_complex_v<T>) {
        throw NotImplementedError("scatter_reduce(): the amax and amin reductions are not implemented for complex tensors");
      } else if (r == ScatterReduce::Max) {
        run([](OM a, OM b) { return (b != b || a < b) ? b : a; });
      } else {
        run([](OM a, OM b) { return (b != b || b < a) ? b : a; });
      }
      break;
    case ScatterReduce::None: break;
  }
}
}  // namespace

void scatter_by_offsets(const Tensor& dst, const Tensor& values, const Tensor& offsets, ScatterReduce r) {
  if (dst->numel == 0) return;
  ElementwiseIter it({dst.get(), values.get(), offsets.get()}, "scatter");
  // Serial so that repeated indices resolve deterministically (last write / full reduction).
  if (r == ScatterReduce::None) {
    by_itemsize(dst->itemsize(), [&](auto tag) {
      using T = decltype(tag);
      it.for_each([](char** p, const int64_t* s, int64_t n) {
        for (int64_t i = 0; i < n; ++i)
          reinterpret_cast<T*>(p[0] + i * s[0])[*reinterpret_cast<const int64_t*>(p[2] + i * s[2])] =
              *reinterpret_cast<const T*>(p[1] + i * s[1]);
      }, kSerial);
    });
    return;
  }
  FL_DISPATCH_ALL_AND_COMPLEX(dst->dtype, "scatter", reduce_loop<scalar_t>(it, r));
}

void check_index_dtype(const Tensor& index, const char* op) {
  FL_CHECK(index->dtype == ScalarType::Int64 || index->dtype == ScalarType::Int32, Error, op,
           "(): Expected dtype int32 or int64 for index");
}

void add_offsets(const Tensor& offsets, const Tensor& index, int64_t size, int64_t stride, bool wrap,
                 const std::function<void(int64_t)>& fail) {
  if (offsets->numel == 0) return;
  std::atomic<bool> bad{false};
  std::atomic<int64_t> bad_value{0};
  ElementwiseIter it({offsets.get(), index.get()}, "index");
  auto body = [&](auto tag) {
    using I = decltype(tag);
    it.for_each([&](char** p, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        int64_t v = static_cast<int64_t>(*reinterpret_cast<const I*>(p[1] + i * s[1]));
        int64_t w = (wrap && v < 0) ? v + size : v;
        if (w < 0 || w >= size) {
          if (!bad.exchange(true)) bad_value = v;
          continue;
        }
        *reinterpret_cast<int64_t*>(p[0] + i * s[0]) += w * stride;
      }
    });
  };
  if (index->dtype == ScalarType::Int32) body(int32_t{});
  else body(int64_t{});
  if (bad) fail(bad_value);
}

Tensor zeros_offsets(const IntList& sizes) {
  Tensor t = empty(sizes, ScalarType::Int64);
  if (t->numel) std::memset(t->data_ptr(), 0, t->numel * sizeof(int64_t));
  return t;
}

Tensor offsets_view(const Tensor& offsets, const IntList& sizes, int64_t first) {
  // places the contiguous offsets dims at [first, first + offsets.dim()) of `sizes`, stride 0 elsewhere
  IntList st(sizes.size(), 0);
  for (int64_t d = 0; d < offsets->dim(); ++d) st[first + d] = offsets->strides[d];
  return make_view(offsets, sizes, st, offsets->offset);
}

TensorList expand_masks(const Tensor& self, const TensorList& indices) {
  TensorList out;
  for (const Tensor& idx : indices) {
    if (!idx || !(idx->dtype == ScalarType::Bool || idx->dtype == ScalarType::UInt8)) {
      if (idx) FL_CHECK(idx->dtype == ScalarType::Int64 || idx->dtype == ScalarType::Int32, IndexError,
                        "tensors used as indices must be long, int, byte or bool tensors");
      out.push_back(idx);
      continue;
    }
    if (idx->dtype == ScalarType::UInt8) warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead.");
    int64_t first = static_cast<int64_t>(out.size());
    for (int64_t j = 0; j < idx->dim(); ++j) {
      int64_t d = first + j;
      FL_CHECK(d < self->dim(), IndexError, "too many indices for tensor of dimension ", self->dim());
      FL_CHECK(idx->sizes[j] == self->sizes[d], IndexError, "The shape of the mask ", shape_str(idx->sizes), " at index ", j,
               " does not match the shape of the indexed tensor ", shape_str(self->sizes), " at index ", d);
    }
    Tensor nz = ops::nonzero(idx->dtype == ScalarType::Bool ? idx : to_dtype(idx, ScalarType::Bool));
    for (int64_t j = 0; j < idx->dim(); ++j) out.push_back(make_view(nz, {nz->sizes[0]}, {nz->strides[0]}, nz->offset + j));
  }
  return out;
}

}  // namespace index_detail

using namespace index_detail;

// ---- advanced indexing ----------------------------------------------------------------------
AdvancedIndex::AdvancedIndex(const Tensor& self, const TensorList& raw, const char* op) {
  TensorList indices = expand_masks(self, raw);
  FL_CHECK(static_cast<int64_t>(indices.size()) <= self->dim(), IndexError, "too many indices for tensor of dimension ", self->dim(),
           " (got ", indices.size(), ")");
  // broadcast the index tensors together; a failure names every index shape, as PyTorch's IndexError
  bool any = false, ok = true;
  std::string shapes;
  for (const Tensor& t : indices) {
    if (!t) continue;
    shapes += (shapes.empty() ? "" : ", ") + shape_str(t->sizes);
    if (!any) { bshape = t->sizes; any = true; continue; }
    if (ok) {
      try { bshape = broadcast_shapes(bshape, t->sizes); } catch (const Error&) { ok = false; }
    }
  }
  FL_CHECK(any, Error, op, ": at least one index tensor is needed");
  FL_CHECK(ok, IndexError, "shape mismatch: indexing tensors could not be broadcast together with shapes ", shapes);

  // adjacent advanced dims stay in place; separated ones move to the front (NumPy's rule)
  int64_t firsta = -1, lasta = -1, count = 0;
  for (size_t d = 0; d < indices.size(); ++d)
    if (indices[d]) { if (firsta < 0) firsta = d; lasta = d; ++count; }
  bool adjacent = lasta - firsta + 1 == count;
  first = adjacent ? firsta : 0;
  const int64_t nb = static_cast<int64_t>(bshape.size());
  for (int64_t d = 0; d < self->dim(); ++d) {
    bool adv = d < static_cast<int64_t>(indices.size()) && indices[d];
    if (adv) continue;
    bool before = adjacent && d < firsta;
    auto pos = before ? result_sizes.begin() + d : result_sizes.end();
    size_t at = pos - result_sizes.begin();
    result_sizes.insert(pos, self->sizes[d]);
    restrides.insert(restrides.begin() + at, self->strides[d]);
  }
  result_sizes.insert(result_sizes.begin() + first, bshape.begin(), bshape.end());
  restrides.insert(restrides.begin() + first, nb, 0);

  Tensor off = zeros_offsets(bshape);
  for (size_t d = 0; d < indices.size(); ++d) {
    if (!indices[d]) continue;
    int64_t size = self->sizes[d];
    add_offsets(off, expand_to(indices[d], bshape, op), size, self->strides[d], true, [&](int64_t v) {
      throw IndexError(str_cat("index ", v, " is out of bounds for dimension ", d, " with size ", size));
    });
  }
  offsets = offsets_view(off, result_sizes, first);
}


Tensor index_cpu(const Tensor& self, const TensorList& indices) {
  AdvancedIndex ai(self, indices, "index");
  Tensor out = empty(ai.result_sizes, self->dtype);
  gather_by_offsets(out, make_view(self, ai.result_sizes, ai.restrides, self->offset), ai.offsets);
  return out;
}

Tensor index_put_cpu(const Tensor& self, const TensorList& indices, const Tensor& values, bool accumulate) {
  // torch's CPU build has index_put for every float8 type but e8m0fnu
  if (self->dtype == ScalarType::Float8_e8m0fnu) throw_unsupported_dtype("index_put", self->dtype);
  FL_CHECK(values->dtype == self->dtype, Error, "Index put requires the source and destination dtypes match, got ",
           c10_type_name(self->dtype), " for the destination and ", c10_type_name(values->dtype), " for the source.");
  AdvancedIndex ai(self, indices, "index_put_");
  FL_CHECK(values->dim() <= static_cast<int64_t>(ai.result_sizes.size()) &&
               [&] { try { return broadcast_shapes(ai.result_sizes, values->sizes) == ai.result_sizes; } catch (const Error&) { return false; } }(),
           Error, "shape mismatch: value tensor of shape ", shape_str(values->sizes),
           " cannot be broadcast to indexing result of shape ", shape_str(ai.result_sizes));
  // values may alias self (x[i] = x): read them from a copy
  Tensor v = values->storage == self->storage ? clone(values) : values;
  scatter_by_offsets(make_view(self, ai.result_sizes, ai.restrides, self->offset), expand_to(v, ai.result_sizes, "index_put_"),
                     ai.offsets, accumulate ? ScatterReduce::Add : ScatterReduce::None);
  self->bump_version();
  return self;
}

// ---- masks ----------------------------------------------------------------------------------
Tensor broadcast_copy(const Tensor& self, const Tensor& mask, const char* op) {
  return clone(expand_to(self, broadcast_shapes(self->sizes, mask->sizes, op), op));
}

Tensor masked_fill_cpu(const Tensor& self, const Tensor& mask, const Tensor& value) {
  if (is_float8(self->dtype)) throw_unsupported_dtype("masked_fill", self->dtype);  // as torch's CPU build
  FL_CHECK(mask->dtype == ScalarType::Bool, Error, "masked_fill_ only supports boolean masks, but got mask with dtype ",
           mask->dtype == ScalarType::UInt8 ? "unsigned char" : dtype_name(mask->dtype));
  if (is_complex(value->dtype) && !is_complex(self->dtype) && value->numel == 1) check_fits(item(value), self->dtype);
  FL_CHECK(value->dim() == 0, Error, "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with ", value->dim(),
           " dimension(s).");
  IntList shape = broadcast_shapes(self->sizes, mask->sizes, "masked_fill_");
  FL_CHECK(shape == self->sizes, Error, "output with shape ", shape_str(self->sizes), " doesn't match the broadcast shape ",
           shape_str(shape));
  Tensor v = to_dtype(value, self->dtype, true);
  if (self->numel) {
    ElementwiseIter it({self.get(), mask.get()}, "masked_fill_");
    const size_t isz = self->itemsize();
    const char* src = v->data_ptr();
    it.for_each([&](char** p, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i)
        if (*reinterpret_cast<const bool*>(p[1] + i * s[1])) std::memcpy(p[0] + i * s[0], src, isz);
    });
  }
  self->bump_version();
  return self;
}

Tensor masked_select_cpu(const Tensor& self, const Tensor& mask) {
  FL_CHECK(mask->dtype == ScalarType::Bool, Error, "masked_select: expected BoolTensor for mask");
  IntList shape = broadcast_shapes(self->sizes, mask->sizes, "masked_select");
  if (shape.empty()) {  // 0-dim: index a 1-element view
    Tensor s = make_view(self, {1}, {1}, self->offset);
    return index_cpu(s, {make_view(mask, {1}, {1}, mask->offset)});
  }
  return index_cpu(expand_to(self, shape, "masked_select"), {expand_to(mask, shape, "masked_select")});
}

Tensor masked_scatter_cpu(const Tensor& self, const Tensor& mask, const Tensor& source) {
  if (is_float8(self->dtype)) throw_unsupported_dtype("masked_scatter", self->dtype);  // as torch's CPU build
  FL_CHECK(mask->dtype == ScalarType::Bool, Error, "masked_scatter_ only supports boolean masks, but got mask with dtype ",
           c10_type_name(mask->dtype));
  FL_CHECK(self->dtype == source->dtype, Error, "masked_scatter: expected self and source to have same dtypes but got",
           c10_type_name(self->dtype), " and ", c10_type_name(source->dtype));
  IntList shape = broadcast_shapes(self->sizes, mask->sizes, "masked_scatter_");
  FL_CHECK(shape == self->sizes, Error, "masked_scatter_: mask of shape ", shape_str(mask->sizes),
           " cannot be broadcast to self of shape ", shape_str(self->sizes));
  Tensor s = self->dim() ? self : make_view(self, {1}, {1}, self->offset);
  Tensor m = self->dim() ? expand_to(mask, shape, "masked_scatter_") : make_view(mask, {1}, {1}, mask->offset);
  Tensor nz = ops::nonzero(m);
  int64_t n = nz->sizes[0];
  FL_CHECK(source->numel >= n, Error, "Number of elements of source < number of ones in mask");
  Tensor flat = contiguous(source);
  Tensor vals = make_view(flat, {n}, {1}, flat->offset);
  TensorList idx;
  for (int64_t j = 0; j < s->dim(); ++j) idx.push_back(make_view(nz, {n}, {nz->strides[0]}, nz->offset + j));
  if (n) index_put_cpu(s, idx, vals, false);
  self->bump_version();
  return self;
}

// ---- take, nonzero, where -------------------------------------------------------------------
Tensor take_cpu(const Tensor& self, const Tensor& index) {
  if (is_float8(self->dtype)) throw_unsupported_dtype("take_cpu", self->dtype);  // as torch's CPU build
  FL_CHECK(index->dtype == ScalarType::Int64, Error, "take(): Expected a long tensor for index, but got ", c10_type_name(index->dtype));
  Tensor flat = contiguous(self);
  const int64_t numel = self->numel;
  Tensor off = zeros_offsets(index->sizes);
  add_offsets(off, index, numel, 1, true, [&](int64_t v) {
    throw IndexError(str_cat("out of range: tried to access index ", v, " on a tensor of ", numel, " elements."));
  });
  Tensor out = empty(index->sizes, self->dtype);
  gather_by_offsets(out, make_view(flat, index->sizes, IntList(index->dim(), 0), flat->offset), off);
  return out;
}

Tensor nonzero_cpu(const Tensor& self) {
  Tensor c = contiguous(self);
  const int64_t nd = self->dim(), numel = self->numel;
  std::vector<uint8_t> nz(numel);
  FL_DISPATCH_ALL_AND_COMPLEX(self->dtype, "nonzero", {
    const scalar_t* p = c->data<scalar_t>();
    for (int64_t i = 0; i < numel; ++i) nz[i] = static_cast<opmath_t<scalar_t>>(p[i]) != opmath_t<scalar_t>(0);
  });
  int64_t n = 0;
  for (uint8_t b : nz) n += b;
  Tensor out = empty({n, nd}, ScalarType::Int64);
  int64_t* o = out->data<int64_t>();
  IntList pos(nd, 0);
  for (int64_t i = 0; i < numel; ++i) {
    if (nz[i]) { std::copy(pos.begin(), pos.end(), o); o += nd; }
    for (int64_t d = nd - 1; d >= 0; --d) {  // row-major increment of the multi-index
      if (++pos[d] < self->sizes[d]) break;
      pos[d] = 0;
    }
  }
  return out;
}

TensorList where_true_cpu(const Tensor& cond) {
  Tensor nz = nonzero_cpu(cond->dim() ? cond : make_view(cond, {1}, {1}, cond->offset));  // (a 0-dim one as 1 element)
  TensorList out;
  for (int64_t j = 0; j < nz->sizes[1]; ++j) out.push_back(make_view(nz, {nz->sizes[0]}, {nz->strides[0]}, nz->offset + j));
  return out;
}

Tensor where_cpu(const Tensor& cond, const Tensor& x, const Tensor& y) {
  FL_CHECK(cond->dtype == ScalarType::Bool || cond->dtype == ScalarType::UInt8, Error,
           "where expected condition to be a boolean tensor, but got a tensor with dtype ", c10_type_name(cond->dtype));
  if (cond->dtype == ScalarType::UInt8)
    warn("where received a uint8 condition tensor. This behavior is deprecated and will be removed in a future version "
         "of PyTorch. Use a boolean condition instead.");
  ScalarType rt = result_type(x, y);
  IntList shape = broadcast_shapes(broadcast_shapes(cond->sizes, x->sizes), y->sizes);
  Tensor c = to_dtype(cond, ScalarType::Bool), xc = to_dtype(x, rt), yc = to_dtype(y, rt);
  Tensor out = empty(shape, rt);
  if (out->numel == 0) return out;
  ElementwiseIter it({out.get(), c.get(), xc.get(), yc.get()}, "where");
  by_itemsize(out->itemsize(), [&](auto tag) {
    using T = decltype(tag);
    it.for_each([](char** p, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<T*>(p[0] + i * s[0]) = *reinterpret_cast<const bool*>(p[1] + i * s[1])
                                                     ? *reinterpret_cast<const T*>(p[2] + i * s[2])
                                                     : *reinterpret_cast<const T*>(p[3] + i * s[3]);
    });
  });
  return out;
}

}  // namespace fl
