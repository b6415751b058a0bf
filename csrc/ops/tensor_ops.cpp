// CPU kernels of the factory, copy, cast, fill and alias ops (tensor_ops.h), and the core helpers
// of the same names that call them. Their autograd kernels are generated from tensor_ops.yaml.
#include "tensor_ops.h"

#include <algorithm>
#include <cstring>

#include "../core/warning.h"
#include "../kernels/copy.h"

namespace fl {

Tensor empty_cpu(const IntList& sizes, ScalarType dtype) {
  int64_t n = numel_of(sizes);
  FL_CHECK(n <= (int64_t(1) << 62) / int64_t(element_size(dtype)), Error, "empty(): tensor of size ", shape_str(sizes),
           " needs more memory than can be addressed");
  return make_tensor(StorageImpl::allocate(n * element_size(dtype)), sizes, contiguous_strides(sizes), 0, dtype);
}

Tensor empty_strided_cpu(const IntList& sizes, const IntList& strides, ScalarType dtype) {
  FL_CHECK(sizes.size() == strides.size(), Error, "empty_strided: mismatch in length of strides and shape");
  int64_t extent = 1;
  for (size_t d = 0; d < sizes.size(); ++d) {
    FL_CHECK(sizes[d] >= 0, Error, "empty_strided: negative dimension ", sizes[d]);
    if (sizes[d] == 0) { extent = 0; break; }
    FL_CHECK(strides[d] >= 0, Error, "empty_strided: negative strides are not supported, got ", shape_str(strides));
    int64_t span;
    FL_CHECK(!__builtin_mul_overflow(sizes[d] - 1, strides[d], &span) && !__builtin_add_overflow(extent, span, &extent) &&
                 extent <= (int64_t(1) << 62) / int64_t(element_size(dtype)),
             Error, "empty_strided: sizes ", shape_str(sizes), " and strides ", shape_str(strides), " are too large");
  }
  return make_tensor(StorageImpl::allocate(extent * element_size(dtype)), sizes, strides, 0, dtype);
}

Tensor empty_like_cpu(const Tensor& like, ScalarType dtype) {
  // Keep a dense non-contiguous layout (e.g. a transposed matrix) as PyTorch's preserve_format.
  if (!like->contiguous && like->dim() > 1) {
    std::vector<int64_t> perm(like->dim());
    for (int64_t i = 0; i < like->dim(); ++i) perm[i] = i;
    std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) { return like->strides[a] > like->strides[b]; });
    IntList st(like->dim());
    int64_t acc = 1;
    bool dense = true;
    for (int64_t i = like->dim() - 1; i >= 0; --i) {
      st[perm[i]] = acc;
      if (like->strides[perm[i]] != acc && like->sizes[perm[i]] != 1) dense = false;
      acc *= std::max<int64_t>(like->sizes[perm[i]], 1);
    }
    if (dense) return empty_strided_cpu(like->sizes, st, dtype);
  }
  return empty_cpu(like->sizes, dtype);
}

Tensor scalar_tensor_cpu(Scalar s, ScalarType dtype, bool wrapped) {
  Tensor t = empty_cpu({}, dtype);
  fill_kernel(t, s);
  t->wrapped_number = wrapped;
  return t;
}

Tensor clone_cpu(const Tensor& t) {
  Tensor out = empty_like_cpu(t, t->dtype);
  copy_kernel(out, t);
  return out;
}

// Row-major, unlike clone (which keeps a dense permuted layout): callers read the data linearly.
Tensor contiguous_cpu(const Tensor& t) {
  if (t->contiguous) return t;
  Tensor out = empty_cpu(t->sizes, t->dtype);
  copy_kernel(out, t);
  return out;
}

// torch's warning when a user's cast or copy drops imaginary parts (internal conversions take ops::real instead).
void warn_discarding_imag(ScalarType from, ScalarType to) {
  if (is_complex(from) && !is_complex(to)) warn("Casting complex values to real discards the imaginary part");
}

Tensor to_copy_cpu(const Tensor& t, ScalarType dtype, bool copy) {
  if (t->dtype == dtype && !copy) return t;
  warn_discarding_imag(t->dtype, dtype);
  Tensor out = empty_like_cpu(t, dtype);
  copy_kernel(out, t);
  return out;
}

Tensor resize_cpu(const Tensor& self, const IntList& sizes) {
  if (self->sizes == sizes) return self;
  const int64_t n = numel_of(sizes, "resize_");
  int64_t bytes = 0;
  FL_CHECK(!__builtin_add_overflow(self->offset, n, &bytes) &&
               !__builtin_mul_overflow(bytes, static_cast<int64_t>(self->itemsize()), &bytes),
           Error, "resize_: storage size calculation overflowed with sizes=", shape_str(sizes));
  if (static_cast<size_t>(bytes) > self->storage->nbytes) {
    if (self->storage->resizable) {
      self->storage->resize(bytes);
    } else {  // foreign memory (numpy, DLPack) cannot grow: self moves to a storage of its own holding the old bytes
      auto grown = StorageImpl::allocate(bytes);
      std::memcpy(grown->data, self->storage->data, self->storage->nbytes);
      self->storage = std::move(grown);
    }
  }
  self->sizes = sizes;
  self->strides = contiguous_strides(sizes);
  self->refresh();
  return self;
}

// As torch: the storage grows when the geometry reaches past its end; self keeps its own version
// counter and bumps it.
Tensor set_cpu(const Tensor& self, const Tensor& source, int64_t offset, const IntList& sizes,
               const IntList& strides) {
  FL_CHECK(offset >= 0, Error, "Tensor: invalid storage offset ", offset);
  FL_CHECK(sizes.size() == strides.size(), Error, "unequal size length (", sizes.size(), ") and stride length (",
           strides.size(), ")");
  int64_t end = 0;  // one past the furthest element the geometry reaches
  bool empty = false, overflow = __builtin_add_overflow(offset, 1, &end);
  for (size_t i = 0; i < sizes.size(); ++i) {
    FL_CHECK(sizes[i] >= 0, Error, "set_: negative size ", sizes[i], " in size ", shape_str(sizes));
    empty = empty || sizes[i] == 0;
    int64_t reach = 0;
    overflow = overflow || strides[i] < 0 || __builtin_mul_overflow(sizes[i] - 1, strides[i], &reach) ||
               __builtin_add_overflow(end, reach, &end);
  }
  int64_t needed = 0;
  FL_CHECK(empty || !(overflow || __builtin_mul_overflow(end, static_cast<int64_t>(self->itemsize()), &needed)),
           Error, "Storage size calculation overflowed with sizes=", shape_str(sizes), " and strides=",
           shape_str(strides));
  if (static_cast<size_t>(needed) > source->storage->nbytes) source->storage->resize(needed);
  self->storage = source->storage;
  self->sizes = sizes;
  self->strides = strides;
  self->offset = offset;
  self->refresh();
  self->bump_version();
  return self;
}

Tensor detach_cpu(const Tensor& t) {
  Tensor a = make_view(t, t->sizes, t->strides, t->offset);
  a->view_base.reset();  // not an autograd view of t
  return a;
}

Tensor lift_fresh_cpu(const Tensor& t) { return t; }

Tensor copy_cpu(const Tensor& self, const Tensor& src) {
  warn_discarding_imag(src->dtype, self->dtype);
  copy_kernel(self, src);
  self->bump_version();
  return self;
}

Tensor fill_cpu(const Tensor& self, Scalar v) {
  check_fill_value(v, self->dtype);
  fill_kernel(self, v);
  self->bump_version();
  return self;
}

Tensor fill_tensor_cpu(const Tensor& self, const Tensor& v) {
  FL_CHECK(v->dim() == 0, Error, "fill_ only supports 0-dimension value tensor but got tensor with ", v->dim(),
           " dimensions.");
  copy_kernel(self, v);
  self->bump_version();
  return self;
}

Tensor zero_cpu(const Tensor& self) {
  fill_kernel(self, Scalar(int64_t(0)));
  self->bump_version();
  return self;
}

Tensor empty(const IntList& sizes, ScalarType dtype) { return ops::empty(sizes, dtype); }
Tensor empty_strided(const IntList& sizes, const IntList& strides, ScalarType dtype) {
  return ops::empty_strided(sizes, strides, dtype);
}
Tensor empty_like(const Tensor& like, ScalarType dtype) { return ops::empty_like(like, dtype); }
Tensor scalar_tensor(Scalar s, ScalarType dtype) { return ops::scalar_tensor(s, dtype, false); }
Tensor wrap_scalar(const Scalar& s) {
  ScalarType dt = s.is_bool()      ? ScalarType::Bool
                  : s.is_int()     ? ScalarType::Int64
                  : s.is_complex() ? ScalarType::ComplexDouble
                                   : ScalarType::Float64;
  return ops::scalar_tensor(s, dt, true);
}
Tensor contiguous(const Tensor& t) { return ops::contiguous(t); }
Tensor clone(const Tensor& t) { return ops::clone(t); }
Tensor to_dtype(const Tensor& t, ScalarType dtype, bool copy) { return ops::_to_copy(t, dtype, copy); }
void copy_into(const Tensor& dst, const Tensor& src) { ops::_copy_into(dst, src); }
void fill(const Tensor& t, Scalar value) { ops::_fill(t, value); }
Tensor zeros(const IntList& sizes, ScalarType dtype) {
  Tensor z = empty(sizes, dtype);
  fill(z, Scalar(int64_t(0)));
  return z;
}

}  // namespace fl
