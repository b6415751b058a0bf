// CPU kernels of the view ops: each only computes new sizes/strides/offset over its input's
// storage with make_view, so writes through the result are seen by the base and vice versa.
#include "views.h"

#include <algorithm>

#include "pointwise.h"  // c10_type_name

namespace fl {

IntList infer_size(const IntList& shape, int64_t numel) {
  int64_t known = 1, infer = -1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == -1) {
      FL_CHECK(infer < 0, Error, "only one dimension can be inferred");
      infer = static_cast<int64_t>(d);
    } else {
      FL_CHECK(shape[d] >= 0, Error, "invalid shape dimension ", shape[d]);
      // an overflowing product could otherwise match numel and describe memory that isn't there
      FL_CHECK(!__builtin_mul_overflow(known, shape[d], &known), Error, "shape '", shape_str(shape), "' is invalid for input of size ", numel);
    }
  }
  IntList out = shape;
  if (infer >= 0) {
    FL_CHECK(known != 0, Error, "cannot reshape tensor of 0 elements into shape ", shape_str(shape),
             " because the unspecified dimension size -1 can be any value and is ambiguous");
    FL_CHECK(numel % known == 0, Error, "shape '", shape_str(shape), "' is invalid for input of size ", numel);
    out[infer] = numel / known;
  } else {
    FL_CHECK(known == numel, Error, "shape '", shape_str(shape), "' is invalid for input of size ", numel);
  }
  return out;
}

bool compute_view_strides(const IntList& old_sizes, const IntList& old_strides, const IntList& sizes, IntList* strides) {
  const int64_t nd = static_cast<int64_t>(sizes.size());
  strides->assign(nd, 1);
  if (old_sizes.empty()) return true;
  int64_t numel = 1;
  for (int64_t s : old_sizes) numel *= s;
  if (numel == 0 && old_sizes == sizes) { *strides = old_strides; return true; }
  if (numel == 0) {
    for (int64_t d = nd - 1; d >= 0; --d)
      (*strides)[d] = d == nd - 1 ? 1 : std::max<int64_t>(sizes[d + 1], 1) * (*strides)[d + 1];
    return true;
  }
  // Walk the old dims from the innermost, grouping them into chunks that are contiguous among
  // themselves; each chunk must be matched exactly by a run of new dims.
  int64_t view_d = nd - 1;
  int64_t chunk_base_stride = old_strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t td = static_cast<int64_t>(old_sizes.size()) - 1; td >= 0; --td) {
    tensor_numel *= old_sizes[td];
    if (td == 0 || (old_sizes[td - 1] != 1 && old_strides[td - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || sizes[view_d] == 1)) {
        (*strides)[view_d] = view_numel * chunk_base_stride;
        view_numel *= sizes[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return false;
      if (td > 0) {
        chunk_base_stride = old_strides[td - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  return view_d == -1;
}

Tensor view_cpu(const Tensor& t, const IntList& shape) {
  IntList sizes = infer_size(shape, t->numel);
  IntList strides;
  FL_CHECK(compute_view_strides(t->sizes, t->strides, sizes, &strides), Error,
           "view size is not compatible with input tensor's size and stride (at least one dimension spans across two "
           "contiguous subspaces). Use .reshape(...) instead.");
  return make_view(t, std::move(sizes), std::move(strides), t->offset);
}

// The same bytes seen as another dtype; with another element size the last dim (stride 1) is
// split or merged, as PyTorch's view(dtype).
Tensor view_dtype_cpu(const Tensor& t, ScalarType dtype) {
  const int64_t old_size = static_cast<int64_t>(t->itemsize()), new_size = static_cast<int64_t>(element_size(dtype));
  IntList sizes = t->sizes, strides = t->strides;
  int64_t offset = t->offset;
  if (old_size != new_size) {
    const char* from = c10_type_name(t->dtype);
    const char* to = c10_type_name(dtype);
    FL_CHECK(t->dim() > 0, Error, "self.dim() cannot be 0 to view ", from, " as ", to, " (different element sizes)");
    FL_CHECK(strides.back() == 1, Error, "self.stride(-1) must be 1 to view ", from, " as ", to,
             " (different element sizes), but got ", strides.back());
    if (old_size > new_size) {
      const int64_t r = old_size / new_size;
      for (int64_t& st : strides) st *= r;
      strides.back() = 1;
      sizes.back() *= r;
      offset *= r;
    } else {
      const int64_t r = new_size / old_size;
      FL_CHECK(sizes.back() % r == 0, Error, "self.size(-1) must be divisible by ", r, " to view ", from, " as ", to,
               " (different element sizes), but got ", sizes.back());
      FL_CHECK(offset % r == 0, Error, "self.storage_offset() must be divisible by ", r, " to view ", from, " as ", to,
               " (different element sizes), but got ", offset);
      for (size_t d = 0; d + 1 < strides.size(); ++d)
        FL_CHECK(strides[d] % r == 0, Error, "self.stride(", d, ") must be divisible by ", r, " to view ", from, " as ", to,
                 " (different element sizes), but got ", strides[d]);
      for (size_t d = 0; d + 1 < strides.size(); ++d) strides[d] /= r;
      sizes.back() /= r;
      offset /= r;
    }
  }
  Tensor v = make_view(t, std::move(sizes), std::move(strides), offset);
  v->dtype = dtype;
  v->refresh();
  return v;
}

Tensor reshape_cpu(const Tensor& t, const IntList& shape) {
  IntList sizes = infer_size(shape, t->numel);
  IntList strides;
  if (compute_view_strides(t->sizes, t->strides, sizes, &strides)) return make_view(t, std::move(sizes), std::move(strides), t->offset);
  Tensor c = empty(t->sizes, t->dtype);  // not viewable: copy into a fresh row-major tensor
  copy_into(c, t);
  return make_view(c, sizes, contiguous_strides(sizes), 0);
}

Tensor permute_cpu(const Tensor& t, const IntList& dims) {
  const int64_t nd = t->dim();
  FL_CHECK(static_cast<int64_t>(dims.size()) == nd, Error,
           "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired "
           "ordering of dimensions i.e. input.dim() = ", nd, " is not equal to len(dims) = ", dims.size());
  IntList sizes(nd), strides(nd);
  std::vector<bool> seen(nd, false);
  for (int64_t i = 0; i < nd; ++i) {
    int64_t d = wrap_dim(dims[i], nd);
    FL_CHECK(!seen[d], Error, "permute(): duplicate dims are not allowed.");
    seen[d] = true;
    sizes[i] = t->sizes[d];
    strides[i] = t->strides[d];
  }
  return make_view(t, std::move(sizes), std::move(strides), t->offset);
}

Tensor transpose_cpu(const Tensor& t, int64_t d0, int64_t d1) {
  const int64_t nd = t->dim();
  d0 = wrap_dim(d0, nd);
  d1 = wrap_dim(d1, nd);
  IntList sizes = t->sizes, strides = t->strides;
  if (nd > 0) {
    std::swap(sizes[d0], sizes[d1]);
    std::swap(strides[d0], strides[d1]);
  }
  return make_view(t, std::move(sizes), std::move(strides), t->offset);
}

Tensor expand_cpu(const Tensor& t, const IntList& target) {
  const int64_t nd = t->dim(), n = static_cast<int64_t>(target.size());
  FL_CHECK(n >= nd, Error, "expand(torch.", c10_type_name(t->dtype), "Tensor{", shape_str(t->sizes), "}, size=", shape_str(target),
           "): the number of sizes provided (", n, ") must be greater or equal to the number of dimensions in the tensor (", nd, ")");
  IntList sizes(n), strides(n);
  for (int64_t i = n - 1; i >= 0; --i) {
    int64_t od = i - (n - nd);
    int64_t size = od >= 0 ? t->sizes[od] : 1;
    int64_t stride = od >= 0 ? t->strides[od] : 0;
    int64_t want = target[i];
    if (od < 0) {
      FL_CHECK(want >= 0, Error, "The expanded size of the tensor (", want, ") isn't allowed in a leading, non-existing dimension ", i);
    } else if (want == -1) {
      want = size;
    } else if (size != want) {
      FL_CHECK(size == 1, Error, "The expanded size of the tensor (", want, ") must match the existing size (", size,
               ") at non-singleton dimension ", i, ".  Target sizes: ", shape_str(target), ".  Tensor sizes: ", shape_str(t->sizes));
      FL_CHECK(want >= 0, Error, "Trying to create tensor with negative dimension ", want, ": ", shape_str(target));
      stride = 0;
    }
    sizes[i] = want;
    strides[i] = stride;
  }
  return make_view(t, std::move(sizes), std::move(strides), t->offset);
}

Tensor squeeze_cpu(const Tensor& t, const IntList& dims, bool all) {
  const int64_t nd = t->dim();
  std::vector<bool> drop(nd, false);
  for (int64_t d = 0; d < nd; ++d) drop[d] = all && t->sizes[d] == 1;
  if (!all) {
    for (int64_t d : dims) {
      int64_t w = wrap_dim(d, nd);
      if (nd > 0 && t->sizes[w] == 1) drop[w] = true;
    }
  }
  IntList sizes, strides;
  for (int64_t d = 0; d < nd; ++d) {
    if (drop[d]) continue;
    sizes.push_back(t->sizes[d]);
    strides.push_back(t->strides[d]);
  }
  return make_view(t, std::move(sizes), std::move(strides), t->offset);
}

Tensor unsqueeze_cpu(const Tensor& t, int64_t dim) {
  const int64_t nd = t->dim();
  dim = wrap_dim(dim, nd + 1);
  IntList sizes = t->sizes, strides = t->strides;
  int64_t stride = dim >= nd ? 1 : sizes[dim] * strides[dim];
  sizes.insert(sizes.begin() + dim, 1);
  strides.insert(strides.begin() + dim, stride);
  return make_view(t, std::move(sizes), std::move(strides), t->offset);
}

Tensor slice_cpu(const Tensor& t, int64_t dim, int64_t start, int64_t end, int64_t step) {
  FL_CHECK(t->dim() > 0, IndexError, "slice() cannot be applied to a 0-dim tensor.");
  dim = wrap_dim(dim, t->dim());
  FL_CHECK(step > 0, Error, "slice step must be positive");
  const int64_t n = t->sizes[dim];
  auto clamp = [n](int64_t v) { if (v < 0) v += n; return std::min(std::max<int64_t>(v, 0), n); };
  start = clamp(start);
  end = std::max(clamp(end), start);
  IntList sizes = t->sizes, strides = t->strides;
  sizes[dim] = (end - start + step - 1) / step;
  strides[dim] *= step;
  return make_view(t, std::move(sizes), std::move(strides), t->offset + start * t->strides[dim]);
}

int64_t narrow_start(const Tensor& start) {
  FL_CHECK(start->dim() == 0 && is_integral(start->dtype, false), Error, "start must be an 0-dim integral Tensor.");
  return item(start).to_int();
}

Tensor narrow_cpu(const Tensor& t, int64_t dim, int64_t start, int64_t length) {
  FL_CHECK(t->dim() > 0, Error, "narrow() cannot be applied to a 0-dim tensor.");
  FL_CHECK(length >= 0, Error, "narrow(): length must be non-negative.");
  dim = wrap_dim(dim, t->dim());
  const int64_t n = t->sizes[dim];
  FL_CHECK(start >= -n && start <= n, IndexError, "start out of range (expected to be in range of [", -n, ", ", n, "], but got ",
           start, ")");
  if (start < 0) start += n;
  FL_CHECK(start <= n - length, Error, "start (", start, ") + length (", length, ") exceeds dimension size (", n, ").");
  IntList sizes = t->sizes;
  sizes[dim] = length;
  return make_view(t, std::move(sizes), t->strides, t->offset + start * t->strides[dim]);
}

Tensor select_cpu(const Tensor& t, int64_t dim, int64_t index) {
  FL_CHECK(t->dim() > 0, IndexError, "select() cannot be applied to a 0-dim tensor.");
  dim = wrap_dim(dim, t->dim());
  const int64_t n = t->sizes[dim];
  FL_CHECK(index >= -n && index < n, IndexError, "select(): index ", index, " out of range for tensor of size ",
           shape_str(t->sizes), " at dimension ", dim);
  if (index < 0) index += n;
  IntList sizes = t->sizes, strides = t->strides;
  int64_t offset = t->offset + index * strides[dim];
  sizes.erase(sizes.begin() + dim);
  strides.erase(strides.begin() + dim);
  return make_view(t, std::move(sizes), std::move(strides), offset);
}

Tensor diagonal_cpu(const Tensor& t, int64_t offset, int64_t dim1, int64_t dim2) {
  const int64_t nd = t->dim();
  FL_CHECK(nd >= 2, Error, "diagonal dimensions requires at least 2 dimensions, but got a ", nd, "-D tensor");
  int64_t d1 = wrap_dim(dim1, nd), d2 = wrap_dim(dim2, nd);
  FL_CHECK(d1 != d2, Error, "diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  int64_t diag = 0, start = t->offset;
  if (offset >= 0) {
    diag = std::max<int64_t>(std::min(t->sizes[d1], t->sizes[d2] - offset), 0);
    if (diag > 0) start += offset * t->strides[d2];
  } else {
    diag = std::max<int64_t>(std::min(t->sizes[d1] + offset, t->sizes[d2]), 0);
    if (diag > 0) start -= offset * t->strides[d1];
  }
  IntList sizes, strides;
  for (int64_t d = 0; d < nd; ++d) {
    if (d == d1 || d == d2) continue;
    sizes.push_back(t->sizes[d]);
    strides.push_back(t->strides[d]);
  }
  sizes.push_back(diag);
  strides.push_back(t->strides[d1] + t->strides[d2]);
  return make_view(t, std::move(sizes), std::move(strides), start);
}

Tensor as_strided_cpu(const Tensor& t, const IntList& sizes, const IntList& strides, std::optional<int64_t> storage_offset) {
  const int64_t offset = storage_offset ? *storage_offset : t->offset;
  FL_CHECK(sizes.size() == strides.size(), Error, "mismatch in length of strides and shape");
  FL_CHECK(offset >= 0, Error, "Tensor: invalid storage offset ", offset);
  int64_t last = offset;  // largest element index the view can reach
  bool empty_view = false;
  for (size_t d = 0; d < sizes.size(); ++d) {
    FL_CHECK(sizes[d] >= 0, Error, "as_strided: Trying to create tensor with negative dimension ", sizes[d], ": ", shape_str(sizes));
    FL_CHECK(strides[d] >= 0, Error, "as_strided: Negative strides are not supported at the moment, got strides: ", shape_str(strides));
    int64_t span = 0;
    if (sizes[d] == 0) empty_view = true;
    else if (__builtin_mul_overflow(sizes[d] - 1, strides[d], &span) || __builtin_add_overflow(last, span, &last))
      last = INT64_MAX / 16;  // unreachable extent: fails the bounds check below
  }
  const int64_t isz = static_cast<int64_t>(t->itemsize());
  const int64_t have = static_cast<int64_t>(t->storage->nbytes);
  if (!empty_view) {
    FL_CHECK(last < INT64_MAX / 16 && (last + 1) * isz <= have, Error, "setStorage: sizes ", shape_str(sizes), ", strides ", shape_str(strides),
             ", storage offset ", offset, ", and itemsize ", isz, " requiring a storage size of ", (last + 1) * isz,
             " are out of bounds for storage of size ", have);
  }
  return make_view(t, sizes, strides, offset);
}

Tensor unfold_cpu(const Tensor& t, int64_t dim, int64_t size, int64_t step) {
  const int64_t nd = t->dim();
  dim = wrap_dim(dim, nd);
  const int64_t n = nd == 0 ? 1 : t->sizes[dim];
  const int64_t st = nd == 0 ? 1 : t->strides[dim];
  FL_CHECK(size <= n, Error, "maximum size for tensor at dimension ", dim, " is ", n, " but size is ", size);
  FL_CHECK(size >= 0, Error, "size is ", size, " but must be >= 0");
  FL_CHECK(step > 0, Error, "step is ", step, " but must be > 0");
  IntList sizes = t->sizes, strides = t->strides;
  if (nd > 0) {
    sizes[dim] = (n - size) / step + 1;
    strides[dim] = st * step;
  }
  sizes.push_back(size);
  strides.push_back(st);
  return make_view(t, std::move(sizes), std::move(strides), t->offset);
}

}  // namespace fl
