// CPU kernels of the complex-number ops (ops/complex.h).
#include "complex.h"

#include "../kernels/copy.h"
#include "../kernels/loops.h"
#include "pointwise.h"
#include "tensor_ops.h"

namespace fl {

namespace detail {
Tensor resolve_conj(const Tensor& t) { return ops::resolve_conj(t); }
void copy_back_conj(const Tensor& dst, const Tensor& resolved) { ops::copy_(dst, resolved); }
}  // namespace detail

// An alias of t with the conjugate bit set to `conj`: the same memory read the other way.
static Tensor with_conj_bit(const Tensor& t, bool conj) {
  Tensor v = make_view(t, t->sizes, t->strides, t->offset);
  v->conj = conj;
  return v;
}

Tensor conj_cpu(const Tensor& t) {
  return is_complex(t->dtype) ? with_conj_bit(t, !t->conj) : t;
}

Tensor resolve_conj_cpu(const Tensor& t) {
  if (!t->conj) return t;
  Tensor out = empty_like(t, t->dtype);
  copy_kernel(out, t);  // conjugates: out has no bit
  return out;
}

Tensor conj_physical_cpu(const Tensor& t) {
  Tensor out = empty_like(t, t->dtype);
  copy_kernel(out, is_complex(t->dtype) ? with_conj_bit(t, !t->conj) : t);
  return out;
}

// The (..., 2) real view of complex memory (the conjugate bit is the caller's business).
static Tensor real_pairs(const Tensor& t) {
  IntList sizes = t->sizes, strides = t->strides;
  for (int64_t& s : strides) s *= 2;
  sizes.push_back(2);
  strides.push_back(1);
  Tensor v = make_view(t, std::move(sizes), std::move(strides), t->offset * 2);
  v->dtype = to_real_type(t->dtype);
  v->conj = false;
  v->refresh();
  return v;
}

Tensor view_as_real_cpu(const Tensor& t) {
  FL_CHECK(!t->conj, Error, "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the conjugate "
           "tensor so you can view it as real, use self.resolve_conj()");
  FL_CHECK(is_complex(t->dtype), Error, "view_as_real is only supported for complex tensors");
  return real_pairs(t);
}

Tensor view_as_complex_cpu(const Tensor& t) {
  FL_CHECK(t->dtype == ScalarType::Float32 || t->dtype == ScalarType::Float64 || t->dtype == ScalarType::Float16, Error,
           "view_as_complex is only supported for floating point tensors, but got a tensor of scalar type: ",
           c10_type_name(t->dtype));
  FL_CHECK(t->dtype != ScalarType::Float16, NotImplementedError,
           "view_as_complex: complex32 (ComplexHalf) tensors are not supported by flowlike");
  FL_CHECK(t->dim() != 0, Error, "Input tensor must have one or more dimensions");
  FL_CHECK(t->sizes.back() == 2, Error, "Tensor must have a last dimension of size 2");
  FL_CHECK(t->strides.back() == 1, Error, "Tensor must have a last dimension with stride 1");
  IntList sizes(t->sizes.begin(), t->sizes.end() - 1), strides(t->strides.begin(), t->strides.end() - 1);
  for (int64_t& s : strides) {
    FL_CHECK(s % 2 == 0, Error, "Tensor must have a stride divisible by 2 for all but last dimension");
    s /= 2;
  }
  FL_CHECK(t->offset % 2 == 0, Error, "Tensor must have a storage_offset divisible by 2");
  Tensor v = make_view(t, std::move(sizes), std::move(strides), t->offset / 2);
  v->dtype = to_complex_type(t->dtype);
  v->refresh();
  return v;
}

// One component of complex memory as a strided real view.
static Tensor component(const Tensor& t, int64_t which) {
  Tensor pairs = real_pairs(t);
  IntList sizes(pairs->sizes.begin(), pairs->sizes.end() - 1), strides(pairs->strides.begin(), pairs->strides.end() - 1);
  return make_view(pairs, std::move(sizes), std::move(strides), pairs->offset + which);
}

Tensor real_cpu(const Tensor& t) { return is_complex(t->dtype) ? component(t, 0) : t; }

Tensor imag_cpu(const Tensor& t) {
  FL_CHECK(is_complex(t->dtype), Error, "imag is not implemented for tensors with non-complex dtypes.");
  Tensor im = component(t, 1);
  // torch gives a view with its negative bit here; flowlike has no such bit, so the conjugate's imaginary part
  // is new memory
  return t->conj ? ops::neg(im, nullptr) : im;
}

Tensor complex_cpu(const Tensor& re, const Tensor& im) {
  auto floating = [](ScalarType t) { return t == ScalarType::Float32 || t == ScalarType::Float64; };
  FL_CHECK(floating(re->dtype) && floating(im->dtype), Error,
           "Expected both inputs to be Half, Float or Double tensors but got ", c10_type_name(re->dtype), " and ",
           c10_type_name(im->dtype));
  FL_CHECK(re->dtype == im->dtype, Error, "Expected object of scalar type ", c10_type_name(re->dtype),
           " but got scalar type ", c10_type_name(im->dtype), " for second argument");
  Tensor out = empty(broadcast_shapes(re->sizes, im->sizes, "complex"), to_complex_type(re->dtype));
  ElementwiseIter it({out.get(), re.get(), im.get()}, "complex");
  FL_DISPATCH_FLOATING(re->dtype, "complex", {
    binary_loop<complex<scalar_t>, scalar_t>(it, [](scalar_t a, scalar_t b) { return complex<scalar_t>(a, b); });
  });
  return out;
}

}  // namespace fl
