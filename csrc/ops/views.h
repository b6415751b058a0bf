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
// narrow.Tensor's start: the value of a 0-dim integer tensor (RuntimeError for any other).
int64_t narrow_start(const Tensor& start);
}  // namespace fl

// The ops declared in views.yaml (generated: csrc/ops/gen_ops.py).
#include "fl_generated/views.h"
