// mm, bmm, addmm, baddbmm (one GEMM driver for all four) and the matmul composite.
#include "matmul.h"

#include <optional>
#include <type_traits>

#include "../core/gil.h"
#include "../kernels/blas.h"
#include "activation.h"
#include "pointwise.h"
#include "views.h"

namespace fl {
namespace {

std::string dims_str(const IntList& s) {
  std::string r;
  for (size_t i = 0; i < s.size(); ++i) r += (i ? "x" : "") + std::to_string(s[i]);
  return r;
}

void check_same_dtype(const char* op, const Tensor& a, const Tensor& b) {
  FL_CHECK(a->dtype == b->dtype, Error, op, ": expected mat1 and mat2 to have the same dtype, but got: ",
           c10_type_name(a->dtype), " != ", c10_type_name(b->dtype));
  FL_CHECK(a->dtype != ScalarType::Bool, NotImplementedError, "\"addmm_impl_cpu_\" not implemented for 'Bool'");
}

// out[i] = beta * out[i] + alpha * a[i] @ b[i] over 3-D operands (batch, rows, cols), then `ep` (float32
// only, batch 1) on every element of out. `out` is a fresh contiguous tensor; when beta != 0 it already
// holds the addend, unless `row` (float32, batch 1: see bias_row) is the addend, broadcast over the rows.
void gemm_into(const Tensor& out, const Tensor& a, const Tensor& b, Scalar alpha, Scalar beta,
               const blas::Epilogue& ep = {}, const Tensor& row = nullptr) {
  const int64_t batch = a->sizes[0], m = a->sizes[1], k = a->sizes[2], n = b->sizes[2];
  if (out->numel == 0) return;
  // long products let other Python threads run (Note [GIL release]); short ones keep the lock, whose hand-over
  // would cost more than they do
  std::optional<GilRelease> nogil;
  if (static_cast<double>(batch) * m * n * k >= kGilReleaseWork) nogil.emplace();
  const ScalarType dt = out->dtype;
  // the 16-bit floats, and the float8 types torch's CPU build multiplies (not e8m0fnu): accumulate in float32
  if (dt == ScalarType::Float16 || dt == ScalarType::BFloat16 || (is_float8(dt) && dt != ScalarType::Float8_e8m0fnu)) {
    Tensor of = to_dtype(out, ScalarType::Float32, /*copy=*/true);
    gemm_into(of, to_dtype(a, ScalarType::Float32), to_dtype(b, ScalarType::Float32), alpha, beta);
    copy_into(out, of);
    return;
  }
  auto run = [&](auto tag) {
    using T = decltype(tag);
    blas::Mat<const T> am{a->data<const T>(), a->strides[1], a->strides[2]};
    blas::Mat<const T> bm{b->data<const T>(), b->strides[1], b->strides[2]};
    blas::Mat<T> cm{out->data<T>(), out->strides[1], out->strides[2]};
    const T beta_t = beta.to_complex() == complex<double>(0) ? T(0) : beta.to<T>();
    if constexpr (std::is_same_v<T, float>) {
      if (row) return blas::sgemm_row_addend(m, n, k, alpha.to<T>(), am, bm, beta_t, row->data<const float>(), cm, ep);
      if (ep) return blas::sgemm_epilogue(m, n, k, alpha.to<T>(), am, bm, beta_t, cm, ep);
    }
    blas::gemm_batched<T>(batch, m, n, k, alpha.to<T>(), am, a->strides[0], bm, b->strides[0], beta_t, cm,
                          out->strides[0]);
  };
  switch (dt) {
    case ScalarType::Float32: run(float()); break;
    case ScalarType::Float64: run(double()); break;
    case ScalarType::Int64: run(int64_t()); break;
    case ScalarType::Int32: run(int32_t()); break;
    case ScalarType::Int16: run(int16_t()); break;
    case ScalarType::Int8: run(int8_t()); break;
    case ScalarType::UInt8: run(uint8_t()); break;
    case ScalarType::ComplexFloat: run(complex<float>()); break;
    case ScalarType::ComplexDouble: run(complex<double>()); break;
    default: throw_unsupported_dtype("addmm_impl_cpu_", dt);
  }
}

Tensor as_batch(const Tensor& t) { return make_view(t, {1, t->sizes[0], t->sizes[1]}, {0, t->strides[0], t->strides[1]}, t->offset); }

void check_mm(const char* op, const Tensor& a, const Tensor& b) {
  FL_CHECK(a->dim() == 2, Error, op, ": self must be a matrix, but got a ", a->dim(), "-D tensor");
  FL_CHECK(b->dim() == 2, Error, op, ": mat2 must be a matrix, but got a ", b->dim(), "-D tensor");
  FL_CHECK(a->sizes[1] == b->sizes[0], Error, op, ": mat1 and mat2 shapes cannot be multiplied (",
           dims_str(a->sizes), " and ", dims_str(b->sizes), ")");
  check_same_dtype(op, a, b);
}

void check_bmm(const char* op, const Tensor& a, const Tensor& b) {
  FL_CHECK(a->dim() == 3, Error, op, ": batch1 must be a 3D tensor, but got a ", a->dim(), "-D tensor");
  FL_CHECK(b->dim() == 3, Error, op, ": batch2 must be a 3D tensor, but got a ", b->dim(), "-D tensor");
  FL_CHECK(b->sizes[0] == a->sizes[0] && b->sizes[1] == a->sizes[2], Error, op,
           ": Expected size for first two dimensions of batch2 tensor to be: [", a->sizes[0], ", ", a->sizes[2],
           "] but got: [", b->sizes[0], ", ", b->sizes[1], "].");
  check_same_dtype(op, a, b);
}

// `self` as one contiguous float32 row of n values, when it is the addend of a float32 addmm broadcast over the
// rows (a Linear layer's bias): the GEMM reads it in place instead of a copy into every row of the result.
Tensor bias_row(const Tensor& self, const IntList& sizes, ScalarType dt, Scalar beta) {
  const int64_t n = sizes[1];
  const bool row = self->dtype == ScalarType::Float32 && dt == ScalarType::Float32 && n > 1 && beta.to_double() != 0 &&
                   self->dim() >= 1 && self->sizes.back() == n && self->strides.back() == 1 &&
                   (self->dim() == 1 || (self->dim() == 2 && self->sizes[0] == 1));
  return row ? self : nullptr;
}

// A fresh (sizes) tensor holding `self` broadcast to it, for the add* forms (left empty when `row` will be read
// in its place).
Tensor addend(const char* op, const Tensor& self, const IntList& sizes, ScalarType dt, Scalar beta,
              const Tensor& row = nullptr) {
  FL_CHECK(self->dtype == dt, Error, op, ": expected self and mat2 to have the same dtype, but got: ",
           c10_type_name(self->dtype), " != ", c10_type_name(dt));
  FL_CHECK(broadcast_shapes(self->sizes, sizes, op) == sizes, Error, op, ": the size of self ", shape_str(self->sizes),
           " cannot be broadcast to the result's size ", shape_str(sizes));
  Tensor out = empty(sizes, dt);
  if (beta.to_double() != 0 && !row) copy_into(out, self);
  return out;
}

}  // namespace

Tensor mm_cpu(const Tensor& a, const Tensor& b) {
  check_mm("mm", a, b);
  Tensor out = empty({a->sizes[0], b->sizes[1]}, a->dtype);
  gemm_into(as_batch(out), as_batch(a), as_batch(b), Scalar(int64_t(1)), Scalar(int64_t(0)));
  return out;
}
Tensor bmm_cpu(const Tensor& a, const Tensor& b) {
  check_bmm("bmm", a, b);
  if (is_float8(a->dtype)) throw_unsupported_dtype("bmm", a->dtype);  // torch's CPU build: float8 mm/addmm only
  Tensor out = empty({a->sizes[0], a->sizes[1], b->sizes[2]}, a->dtype);
  gemm_into(out, a, b, Scalar(int64_t(1)), Scalar(int64_t(0)));
  return out;
}
Tensor addmm_cpu(const Tensor& self, const Tensor& a, const Tensor& b, Scalar beta, Scalar alpha) {
  check_mm("addmm", a, b);
  const IntList sizes{a->sizes[0], b->sizes[1]};
  const Tensor row = bias_row(self, sizes, a->dtype, beta);
  Tensor out = addend("addmm", self, sizes, a->dtype, beta, row);
  gemm_into(as_batch(out), as_batch(a), as_batch(b), alpha, beta, {}, row);
  return out;
}
// relu or gelu (use_gelu; erf-based, as PyTorch's CPU kernel) of addmm. float32 runs the activation as the
// GEMM's epilogue, with the activation op's own kernel: the values are addmm's then the activation's bit for
// bit. Other dtypes run addmm, then the activation op (relu of integers: max(x, 0)).
Tensor addmm_activation_cpu(const Tensor& self, const Tensor& a, const Tensor& b, Scalar beta,
                            Scalar alpha, bool use_gelu) {
  check_mm("addmm", a, b);
  const IntList sizes{a->sizes[0], b->sizes[1]};
  const Tensor row = bias_row(self, sizes, a->dtype, beta);
  Tensor out = addend("addmm", self, sizes, a->dtype, beta, row);
  const Activation kind = use_gelu ? Activation::gelu : Activation::relu;
  if (out->dtype == ScalarType::Float32) {
    gemm_into(as_batch(out), as_batch(a), as_batch(b), alpha, beta, blas::Epilogue{activation_inplace_f32, &kind}, row);
    return out;
  }
  gemm_into(as_batch(out), as_batch(a), as_batch(b), alpha, beta);
  if (is_floating(out->dtype) || use_gelu) return activation_op(kind)(out, 0.0, 0.0, 0.0, out);
  return ops::maximum(out, scalar_tensor(Scalar(int64_t(0)), out->dtype), Scalar(int64_t(1)), out);
}
Tensor baddbmm_cpu(const Tensor& self, const Tensor& a, const Tensor& b, Scalar beta, Scalar alpha) {
  check_bmm("baddbmm", a, b);
  if (is_float8(a->dtype)) throw_unsupported_dtype("baddbmm", a->dtype);
  Tensor out = addend("baddbmm", self, {a->sizes[0], a->sizes[1], b->sizes[2]}, a->dtype, beta);
  gemm_into(out, a, b, alpha, beta);
  return out;
}

namespace ops {

Tensor matmul(const Tensor& a, const Tensor& b) {
  const int64_t da = a->dim(), db = b->dim();
  FL_CHECK(da > 0 && db > 0, Error, "both arguments to matmul need to be at least 1D, but they are ", da, "D and ", db, "D");
  // torch reaches dot or mv for a vector on the right, and its CPU build has neither for the float8 types
  if (is_float8(a->dtype) && db == 1) throw_unsupported_dtype(da == 1 ? "dot" : "addmv_impl_cpu", a->dtype);
  if (da == 1 && db == 1) {
    FL_CHECK(a->sizes[0] == b->sizes[0], Error, "inconsistent tensor size, expected tensor [", a->sizes[0],
             "] and src [", b->sizes[0], "] to have the same number of elements, but got ", a->sizes[0], " and ",
             b->sizes[0], " elements respectively");
    return ops::reshape(mm(ops::unsqueeze(a, 0), ops::unsqueeze(b, 1)), {});
  }
  if (da == 2 && db == 1) return ops::squeeze(mm(a, ops::unsqueeze(b, 1)), {1}, false);
  if (da == 1 && db == 2) return ops::squeeze(mm(ops::unsqueeze(a, 0), b), {0}, false);
  if (da == 2 && db == 2) return mm(a, b);
  if (da >= 3 && db <= 2) {
    // Fold a's batch dims into its rows: one GEMM instead of a batch of small ones.
    const int64_t k = a->sizes[da - 1];
    IntList out_sizes(a->sizes.begin(), a->sizes.end() - 1);
    int64_t rows = 1;
    for (int64_t s : out_sizes) rows *= s;
    Tensor r = mm(ops::reshape(a, {rows, k}), db == 1 ? ops::unsqueeze(b, 1) : b);
    if (db == 2) out_sizes.push_back(b->sizes[1]);
    return ops::reshape(r, out_sizes);
  }
  // Broadcast batch dims, then one bmm.
  Tensor a2 = da == 1 ? ops::unsqueeze(a, 0) : a, b2 = db == 1 ? ops::unsqueeze(b, 1) : b;
  const int64_t n = a2->sizes[a2->dim() - 2], k = a2->sizes[a2->dim() - 1];
  const int64_t k2 = b2->sizes[b2->dim() - 2], p = b2->sizes[b2->dim() - 1];
  FL_CHECK(k == k2, Error, "Expected size for first two dimensions of batch2 tensor to be: [", k, "] but got: [", k2,
           "].");
  IntList ba(a2->sizes.begin(), a2->sizes.end() - 2), bb(b2->sizes.begin(), b2->sizes.end() - 2);
  IntList batch = broadcast_shapes(ba, bb, "matmul");
  int64_t nb = 1;
  for (int64_t s : batch) nb *= s;
  auto expanded = [&](const Tensor& t, int64_t r, int64_t c) {
    IntList full = batch;
    full.push_back(r);
    full.push_back(c);
    return ops::reshape(ops::expand(t, full), {nb, r, c});
  };
  Tensor r = bmm(expanded(a2, n, k), expanded(b2, k, p));
  IntList out_sizes = batch;
  if (da > 1) out_sizes.push_back(n);
  if (db > 1) out_sizes.push_back(p);
  return ops::reshape(r, out_sizes);
}

}  // namespace ops
}  // namespace fl
