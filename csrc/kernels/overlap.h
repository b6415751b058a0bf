// Note [partial overlap] An elementwise kernel writing `out` while reading `in` is safe when the two
// occupy exactly the same memory (an in-place op) or disjoint memory; with a partial overlap some
// inputs would be read after they were overwritten. PyTorch refuses that case with this message, and,
// like PyTorch, the check looks only at dense tensors (strided ones may interleave without overlap).
// The out= of the index and joining ops refuse any overlap with their inputs (check_no_overlap).
#pragma once
#include "../core/tensor.h"

namespace fl {

// As torch's assert_no_internal_overlap: an expanded (stride 0) output would take several results per element.
inline void check_no_internal_overlap(const Tensor& out) {
  for (size_t d = 0; d < out->sizes.size(); ++d)
    FL_CHECK(!(out->sizes[d] > 1 && out->strides[d] == 0), Error,
             "unsupported operation: more than one element of the written-to tensor refers to a single memory "
             "location. Please clone() the tensor before performing the operation.");
}

enum class Overlap { None, Full, Partial };

// As torch's get_overlap_status, for dense tensors only (others: None, as torch's "too hard").
inline Overlap overlap_status(const Tensor& out, const Tensor& in) {
  if (!out || !in || out->storage != in->storage || !out->contiguous || !in->contiguous || out->numel == 0 ||
      in->numel == 0)
    return Overlap::None;
  const int64_t a0 = out->offset * out->itemsize(), a1 = a0 + out->numel * out->itemsize();
  const int64_t b0 = in->offset * in->itemsize(), b1 = b0 + in->numel * in->itemsize();
  if (a0 == b0 && a1 == b1) return Overlap::Full;
  return a1 <= b0 || b1 <= a0 ? Overlap::None : Overlap::Partial;
}

constexpr const char* kOverlapMessage =
    "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory "
    "location. Please clone() the tensor before performing the operation.";

inline void check_no_partial_overlap(const Tensor& out, const Tensor& in) {
  FL_CHECK(overlap_status(out, in) != Overlap::Partial, Error, kOverlapMessage);
}

// As torch's assert_no_overlap (the out= of index and joining ops, which do not read each input element just
// before writing the same one): an exact alias is refused too.
inline void check_no_overlap(const Tensor& out, const Tensor& in) {
  FL_CHECK(overlap_status(out, in) == Overlap::None, Error, kOverlapMessage);
}

}  // namespace fl
