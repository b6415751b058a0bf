// Indexing ops: advanced indexing (index / index_put_), gather/scatter, index_*, masked_*, take,
// nonzero and where. Each op is declared once here; kernels live in index.cpp and
// index_scatter.cpp, bindings (including Tensor.__getitem__/__setitem__) in python/bind_index.cpp.
//
// Note [Indexing by offsets]
// The indexing kernels are one of two byte-moving loops over the elementwise engine: a gather
// `out[i] = *(src_i + off[i])` or a scatter `*(dst_i + off[i]) (op)= val[i]`, where src_i/dst_i walk
// a restrided view of the indexed tensor (stride 0 along the indexed dims) and `off` holds the
// element offsets computed (and bounds-checked) from the index tensors before anything is written.
// Copies move bytes by element size, so only the reducing scatters dispatch over dtypes.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "../core/dispatch.h"

namespace fl {

using TensorList = std::vector<Tensor>;

enum class ScatterReduce : int8_t { None, Add, Mul, Mean, Max, Min };

namespace index_detail {
// A broadcast view of `t` with the given sizes (stride 0 along expanded dims).
Tensor expand_to(const Tensor& t, const IntList& sizes, const char* op);
// Loops of Note [Indexing by offsets]; `offsets` is int64, broadcastable to out/dst.
void gather_by_offsets(const Tensor& out, const Tensor& src, const Tensor& offsets);
void scatter_by_offsets(const Tensor& dst, const Tensor& values, const Tensor& offsets, ScatterReduce r);
// RuntimeError unless `index` is int32 or int64.
void check_index_dtype(const Tensor& index, const char* op);
// Adds `index * stride` into `offsets` (int64, index broadcast to it) after checking each value lies
// in [0, size) ([-size, size) with `wrap`, negatives counting from the end); calls `fail(value)`
// with the first bad value instead of writing anything wrong.
void add_offsets(const Tensor& offsets, const Tensor& index, int64_t size, int64_t stride, bool wrap,
                 const std::function<void(int64_t)>& fail);
Tensor zeros_offsets(const IntList& sizes);
// `offsets` viewed with `sizes`: its dims at [first, first + offsets.dim()), stride 0 elsewhere.
Tensor offsets_view(const Tensor& offsets, const IntList& sizes, int64_t first);
// Bool (or uint8) masks of `indices` replaced by the int64 positions of their true elements.
TensorList expand_masks(const Tensor& self, const TensorList& indices);
}  // namespace index_detail

// A fresh copy of self broadcast with mask: what masked_fill / masked_scatter write into.
Tensor broadcast_copy(const Tensor& self, const Tensor& mask, const char* op);

// The geometry of `self[indices]` (indices as for ops::index): the result's sizes, self's strides
// laid out on them (0 along the broadcast index dims, which start at `first`) and the checked
// element offsets viewed on the result's sizes.
struct AdvancedIndex {
  AdvancedIndex(const Tensor& self, const TensorList& indices, const char* op);
  IntList bshape, result_sizes, restrides;
  int64_t first = 0;
  Tensor offsets;
};

}  // namespace fl

// The ops declared in index.yaml (generated: csrc/ops/gen_ops.py).
#include "fl_generated/index.h"
