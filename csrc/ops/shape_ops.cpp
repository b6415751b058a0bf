// CPU kernels of the shape ops that make new memory. Each is a few strided copies (copy_into)
// between views of the input and of the output, so there is one copy kernel to keep fast.
#include <algorithm>

#include "pointwise.h"  // c10_type_name
#include "reduce.h"
#include "views.h"

namespace fl {
namespace {

// An internal view of `t` whose `dim` runs backwards. Negative strides never reach the user;
// the elementwise engine walks them like any other stride.
Tensor reversed(const Tensor& t, int64_t dim) {
  IntList strides = t->strides;
  int64_t offset = t->offset;
  if (t->sizes[dim] > 0) offset += (t->sizes[dim] - 1) * strides[dim];
  strides[dim] = -strides[dim];
  return make_view(t, t->sizes, std::move(strides), offset);
}

Tensor narrowed(const Tensor& t, int64_t dim, int64_t start, int64_t length) {
  IntList sizes = t->sizes;
  sizes[dim] = length;
  return make_view(t, std::move(sizes), t->strides, t->offset + start * t->strides[dim]);
}

}  // namespace

Tensor cat_cpu(const std::vector<Tensor>& ts, int64_t dim) {
  FL_CHECK(!ts.empty(), ValueError, "torch.cat(): expected a non-empty list of Tensors");
  // Legacy rule: 1-D empty tensors are skipped whatever the other shapes are.
  auto skipped = [](const Tensor& t) { return t->dim() == 1 && t->numel == 0; };
  std::vector<const TensorImpl*> all;
  const TensorImpl* ref = nullptr;
  for (size_t i = 0; i < ts.size(); ++i) {
    FL_CHECK(ts[i]->dim() > 0, Error, "zero-dimensional tensor (at position ", i, ") cannot be concatenated");
    all.push_back(ts[i].get());
    if (!ref && !skipped(ts[i])) ref = ts[i].get();
  }
  ScalarType dtype = result_type(all);
  if (!ref) return empty({0}, dtype);
  const int64_t nd = ref->dim();
  dim = wrap_dim(dim, nd);
  IntList out_sizes = ref->sizes;
  out_sizes[dim] = 0;
  for (size_t i = 0; i < ts.size(); ++i) {
    const Tensor& t = ts[i];
    if (skipped(t)) continue;
    FL_CHECK(t->dim() == nd, Error, "Tensors must have same number of dimensions: got ", nd, " and ", t->dim());
    for (int64_t d = 0; d < nd; ++d) {
      FL_CHECK(d == dim || t->sizes[d] == ref->sizes[d], Error, "Sizes of tensors must match except in dimension ", dim,
               ". Expected size ", ref->sizes[d], " but got size ", t->sizes[d], " for tensor number ", i, " in the list.");
    }
    out_sizes[dim] += t->sizes[dim];
  }
  Tensor out = empty(out_sizes, dtype);
  int64_t pos = 0;
  for (const Tensor& t : ts) {
    if (skipped(t)) continue;
    if (t->sizes[dim] > 0) copy_into(narrowed(out, dim, pos, t->sizes[dim]), t);
    pos += t->sizes[dim];
  }
  return out;
}

std::vector<bool> dim_mask(const IntList& dims, int64_t nd, const char* op) {
  std::vector<bool> mask(std::max<int64_t>(nd, 1), false);
  for (int64_t d : dims) {
    int64_t w = wrap_dim(d, nd);
    FL_CHECK(!mask[w], Error, op, ": dim ", w, " appears multiple times in the list of dims");
    mask[w] = true;
  }
  return mask;
}

Tensor flip_cpu(const Tensor& t, const IntList& dims) {
  if (is_float8(t->dtype)) throw_unsupported_dtype("flip_cpu", t->dtype);  // as torch's CPU build
  std::vector<bool> mask = dim_mask(dims, t->dim(), "flip");
  Tensor src = t;
  for (int64_t d = 0; d < t->dim(); ++d)
    if (mask[d]) src = reversed(src, d);
  Tensor out = empty_like(t, t->dtype);
  copy_into(out, src);
  return out;
}

// Rolls one dim of `t` into `out` (same shape): two block copies.
void roll_dim(const Tensor& out, const Tensor& t, int64_t dim, int64_t shift) {
  const int64_t n = t->sizes[dim];
  shift = n == 0 ? 0 : ((shift % n) + n) % n;
  if (shift == 0) { copy_into(out, t); return; }
  copy_into(narrowed(out, dim, shift, n - shift), narrowed(t, dim, 0, n - shift));
  copy_into(narrowed(out, dim, 0, shift), narrowed(t, dim, n - shift, shift));
}

Tensor roll_cpu(const Tensor& t, const IntList& shifts, const IntList& dims) {
  FL_CHECK(!shifts.empty(), Error, "`shifts` required");
  if (dims.empty()) {
    FL_CHECK(shifts.size() == 1, Error, "shifts and dimensions must align. shifts: ", shifts.size(), ", dims:0");
    Tensor flat = empty({t->numel}, t->dtype);
    Tensor src = empty(t->sizes, t->dtype);
    copy_into(src, t);
    roll_dim(flat, make_view(src, {t->numel}, {1}, 0), 0, shifts[0]);
    return make_view(flat, t->sizes, contiguous_strides(t->sizes), 0);
  }
  FL_CHECK(shifts.size() == dims.size(), Error, "shifts and dimensions must align. shifts: ", shifts.size(), ", dims:", dims.size());
  FL_CHECK(t->dim() > 0, IndexError, "Dimension specified as ", dims[0], " but tensor has no dimensions");
  Tensor cur = t;
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = wrap_dim(dims[i], t->dim());
    Tensor out = empty(t->sizes, t->dtype);
    if (t->dim() == 0) copy_into(out, cur);
    else roll_dim(out, cur, d, shifts[i]);
    cur = out;
  }
  return cur;
}

Tensor repeat_cpu(const Tensor& t, const IntList& repeats) {
  const int64_t nr = static_cast<int64_t>(repeats.size()), nd = t->dim();
  FL_CHECK(nr >= nd, Error, "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
  IntList out_sizes(nr);
  for (int64_t i = 0; i < nr; ++i) {
    FL_CHECK(repeats[i] >= 0, Error, "Trying to create tensor with negative dimension ", repeats[i], ": ", shape_str(repeats));
    int64_t s = i < nr - nd ? 1 : t->sizes[i - (nr - nd)];
    FL_CHECK(!__builtin_mul_overflow(s, repeats[i], &out_sizes[i]), Error, "repeat: tensor of size ", shape_str(t->sizes),
             " repeated ", shape_str(repeats), " is too large");
  }
  Tensor out = empty(out_sizes, t->dtype);
  if (out->numel == 0) return out;
  // Out viewed as (r0, s0, r1, s1, ...); the input expanded over the r dims with stride 0.
  IntList sizes, dst_strides, src_strides;
  IntList out_strides = out->strides;
  for (int64_t i = 0; i < nr; ++i) {
    int64_t od = i - (nr - nd);
    int64_t s = od >= 0 ? t->sizes[od] : 1;
    sizes.insert(sizes.end(), {repeats[i], s});
    dst_strides.insert(dst_strides.end(), {out_strides[i] * s, out_strides[i]});
    src_strides.insert(src_strides.end(), {0, od >= 0 ? t->strides[od] : 0});
  }
  copy_into(make_view(out, sizes, dst_strides, 0), make_view(t, sizes, src_strides, t->offset));
  return out;
}

// tril (lower=true) or triu: copies the input, then zeroes the other triangle row by row.
Tensor tri_cpu(const Tensor& t, int64_t k, bool lower) {
  if (is_float8(t->dtype)) throw_unsupported_dtype(lower ? "tril" : "triu", t->dtype);  // as torch's CPU build
  const char* op = lower ? "tril" : "triu";
  FL_CHECK(t->dim() >= 2, Error, op, ": input tensor must have at least 2 dimensions");
  Tensor out = empty(t->sizes, t->dtype);
  copy_into(out, t);
  const int64_t nd = t->dim(), rows = t->sizes[nd - 2], cols = t->sizes[nd - 1];
  if (out->numel == 0) return out;
  k = std::min(std::max(k, -rows - 1), cols + 1);  // beyond these every row is kept or zeroed: avoids overflow
  IntList sizes(t->sizes.begin(), t->sizes.end() - 2), strides(out->strides.begin(), out->strides.end() - 2);
  sizes.push_back(0);
  strides.push_back(out->strides[nd - 1]);
  for (int64_t i = 0; i < rows; ++i) {
    // tril keeps columns j <= i + k; triu keeps j >= i + k.
    int64_t b = lower ? std::max<int64_t>(0, std::min(cols, i + k + 1)) : 0;
    int64_t e = lower ? cols : std::max<int64_t>(0, std::min(cols, i + k));
    if (b >= e) continue;
    sizes.back() = e - b;
    fill(make_view(out, sizes, strides, i * out->strides[nd - 2] + b * out->strides[nd - 1]), Scalar(int64_t(0)));
  }
  return out;
}

// Sum of the main diagonal of a matrix; integers accumulate to int64 as torch.trace does.
Tensor trace_cpu(const Tensor& t) {
  FL_CHECK(t->dim() == 2, Error, "trace: expected a matrix, but got tensor with dim ", t->dim());
  FL_CHECK(t->dtype != ScalarType::Bool, NotImplementedError, "\"trace\" not implemented for 'Bool'");
  if (is_complex(t->dtype)) return ops::sum(ops::diagonal(t, 0, 0, 1), {}, false, ScalarType::NumTypes);
  const int64_t n = std::min(t->sizes[0], t->sizes[1]), step = t->strides[0] + t->strides[1];
  ScalarType out_dtype = is_floating(t->dtype) ? t->dtype : ScalarType::Int64;
  Tensor out = empty({}, out_dtype);
  FL_DISPATCH_ALL(t->dtype, "trace", {
    const scalar_t* p = t->data<scalar_t>();
    if constexpr (std::is_integral_v<scalar_t>) {
      int64_t acc = 0;
      for (int64_t i = 0; i < n; ++i) acc += static_cast<int64_t>(p[i * step]);
      *out->data<int64_t>() = acc;
    } else {
      double acc = 0;
      for (int64_t i = 0; i < n; ++i) acc += static_cast<double>(static_cast<opmath_t<scalar_t>>(p[i * step]));
      *out->data<scalar_t>() = static_cast<scalar_t>(static_cast<opmath_t<scalar_t>>(acc));
    }
  });
  return out;
}

}  // namespace fl
