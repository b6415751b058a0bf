// View ops (results alias their input: same storage, same version counter; see
// Note [Views and version counters] in core/tensor.h) and the shape ops that make new memory
// with strided copies (cat, flip, roll, repeat, tril/triu). Composites of these (split, chunk,
// flatten, stack, meshgrid, ...) are written once in flowlike/_views.py.
//
// Note [View ops]
// A view op only computes sizes/strides/offset and calls make_view; it never touches data. So
// (1) results alias their input's storage and version counter, (2) reshape/flatten are views
// exactly when PyTorch's computeStride finds strides (compute_view_strides), else a fresh copy
// with its own counter, and (3) internal helpers may build views with negative strides (flip)
// but no op returns one to the user.
#pragma once
#include "../core/dispatch.h"

namespace fl {
// PyTorch's computeStride: strides that let `sizes` view memory laid out as (old_sizes,
// old_strides), or false when some new dim would span two non-contiguous chunks.
bool compute_view_strides(const IntList& old_sizes, const IntList& old_strides, const IntList& sizes, IntList* strides);
// Resolves one -1 in `shape` against `numel` (PyTorch's infer_size); RuntimeError when impossible.
IntList infer_size(const IntList& shape, int64_t numel);
// tril (lower) or triu: the kernel of both declarations.
Tensor tri_cpu(const Tensor& t, int64_t k, bool lower);
}  // namespace fl

// The ops declared in views.yaml (generated: csrc/ops/gen_ops.py).
#include "fl_generated/views.h"

// -- views --
FL_DECLARE_OP(view, ::fl::Tensor(const ::fl::Tensor&, const ::fl::IntList&))
FL_DECLARE_OP(view_dtype, ::fl::Tensor(const ::fl::Tensor&, ::fl::ScalarType))
FL_DECLARE_OP(reshape, ::fl::Tensor(const ::fl::Tensor&, const ::fl::IntList&))
FL_DECLARE_OP(permute, ::fl::Tensor(const ::fl::Tensor&, const ::fl::IntList&))
FL_DECLARE_OP(transpose, ::fl::Tensor(const ::fl::Tensor&, int64_t, int64_t))
FL_DECLARE_OP(expand, ::fl::Tensor(const ::fl::Tensor&, const ::fl::IntList&))
// squeeze(self, dims, all): all=true squeezes every size-1 dim and ignores dims.
FL_DECLARE_OP(squeeze, ::fl::Tensor(const ::fl::Tensor&, const ::fl::IntList&, bool))
FL_DECLARE_OP(unsqueeze, ::fl::Tensor(const ::fl::Tensor&, int64_t))
// slice(self, dim, start, end, step): Python's clamped slicing, step > 0.
FL_DECLARE_OP(slice, ::fl::Tensor(const ::fl::Tensor&, int64_t, int64_t, int64_t, int64_t))
FL_DECLARE_OP(narrow, ::fl::Tensor(const ::fl::Tensor&, int64_t, int64_t, int64_t))
FL_DECLARE_OP(select, ::fl::Tensor(const ::fl::Tensor&, int64_t, int64_t))
FL_DECLARE_OP(diagonal, ::fl::Tensor(const ::fl::Tensor&, int64_t, int64_t, int64_t))
FL_DECLARE_OP(as_strided, ::fl::Tensor(const ::fl::Tensor&, const ::fl::IntList&, const ::fl::IntList&, int64_t))
FL_DECLARE_OP(unfold, ::fl::Tensor(const ::fl::Tensor&, int64_t, int64_t, int64_t))
// -- new memory --
FL_DECLARE_OP(cat, ::fl::Tensor(const std::vector<::fl::Tensor>&, int64_t))
