// Autograd kernels of the view and shape ops (ops/views.h). Their backward needs only
// metadata, so they save no tensors. Views with a simple inverse use it (reshape, permute,
// transpose: differentiable again); the others scatter the gradient into a zero buffer laid out
// like the input's memory and read the input's geometry back (as_strided backward).
#include <algorithm>
#include <climits>

#include "../ops/index.h"
#include "../ops/pointwise.h"
#include "../ops/reduce.h"
#include "../ops/tensor_ops.h"
#include "../ops/views.h"

#include "autograd.h"
#include "formulas.h"

namespace fl::autograd {
namespace {
// Whether two indices of a view with these sizes/strides can reach the same element.
bool overlaps(const IntList& sizes, const IntList& strides) {
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size) of the dims that step
  for (size_t d = 0; d < sizes.size(); ++d)
    if (sizes[d] > 1) dims.emplace_back(strides[d] < 0 ? -strides[d] : strides[d], sizes[d]);
  std::sort(dims.begin(), dims.end());
  int64_t reach = 0;  // span covered by the dims so far
  for (auto& [stride, size] : dims) {
    if (stride <= reach) return true;
    reach += stride * (size - 1);
  }
  return false;
}
}  // namespace

Tensor strided_view_backward(const Tensor& g, const IntList& in_sizes, const IntList& in_strides, int64_t in_offset,
                             const IntList& out_sizes, const IntList& out_strides, int64_t out_offset) {
  // The buffer spans the memory of both geometries: an as_strided view may reach storage outside its input (a
  // partial view's base storage, as torch); the gradient written there is not read back by the input.
  int64_t start = INT64_MAX, end = INT64_MIN;  // the memory positions [start, end] both use
  auto cover = [&](const IntList& sizes, const IntList& strides, int64_t offset) {
    int64_t lo = offset, hi = offset;
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (sizes[d] == 0) return;
      (strides[d] < 0 ? lo : hi) += (sizes[d] - 1) * strides[d];
    }
    start = std::min(start, lo);
    end = std::max(end, hi);
  };
  cover(in_sizes, in_strides, in_offset);
  cover(out_sizes, out_strides, out_offset);
  if (start > end) start = end = in_offset;  // both empty
  Tensor buf = empty({end - start + 1}, g->dtype);
  fill(buf, Scalar(int64_t(0)));
  Tensor region = ops::as_strided(buf, out_sizes, out_strides, out_offset - start);
  const bool overlapping = overlaps(out_sizes, out_strides);
  // An input whose elements share memory (an expanded one) reads each memory position back several times: as
  // torch's as_strided_backward, the gradient there is split evenly between them (divided by that count), or
  // the input's own backward (an expand's sum) would count it that many times.
  auto split_shared = [&](const Tensor& b) {
    if (!overlaps(in_sizes, in_strides)) return b;
    const ScalarType ct = to_real_type(g->dtype);  // (a real count: maximum has no complex form)
    Tensor count = empty({b->numel}, ct), one = empty(in_sizes, ct);
    fill(count, Scalar(int64_t(0)));
    fill(one, Scalar(int64_t(1)));
    ops::_accumulate_into(ops::as_strided(count, in_sizes, in_strides, in_offset - start), one);
    return formulas::bin(BinaryOp::div, b, formulas::bin(BinaryOp::maximum, count, wrap_scalar(Scalar(int64_t(1)))));
  };
  if (thread_state().grad_enabled && g->requires_grad) {
    // create_graph: the write is recorded (CopySlices onto buf, or a scatter-add of g at each element's
    // position in buf where windows share elements) and read back through a view op, so this backward
    // is itself differentiable.
    if (overlapping) {
      Tensor ones = empty({buf->numel}, ScalarType::Int64);  // positions 0, 1, ... made by ops, for a capture
      fill(ones, Scalar(int64_t(1)));
      Tensor pos = formulas::bin(BinaryOp::sub, ops::cumsum(ones, 0, ScalarType::Int64), wrap_scalar(Scalar(int64_t(1))));
      Tensor at = contiguous(ops::as_strided(pos, out_sizes, out_strides, out_offset - start));
      buf = ops::scatter_add_(buf, 0, ops::as_strided(at, {at->numel}, {1}, 0), ops::reshape(g, {g->numel}));
    } else {
      copy_into(region, g);
      record_overwrite("torch::autograd::CopyBackwards", region, g);
    }
    Tensor in_view = ops::as_strided(split_shared(buf), in_sizes, in_strides, in_offset - start);
    return record_copy("CloneBackward0", in_view, contiguous(in_view));
  }
  if (overlapping) ops::_accumulate_into(region, g);  // windows that share elements add up
  else copy_into(region, g);  // parallel
  return contiguous(ops::as_strided(split_shared(buf), in_sizes, in_strides, in_offset - start));
}

}  // namespace fl::autograd

namespace fl::formulas {

IntList inverse_permutation(const IntList& dims) {
  IntList inv(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) inv[wrap_dim(dims[i], static_cast<int64_t>(dims.size()))] = static_cast<int64_t>(i);
  return inv;
}

Tensor trace_backward(const Tensor& g, const IntList& in) {
  Tensor eye = empty(in, g->dtype);
  fill(eye, Scalar(int64_t(0)));
  fill(ops::as_strided(eye, {std::min(in[0], in[1])}, {in[1] + 1}, 0), Scalar(int64_t(1)));
  return binary_op(BinaryOp::mul, eye, g, Scalar(int64_t(1)), nullptr);  // differentiable in g
}

Tensor repeat_backward(const Tensor& g, const IntList& in, const IntList& reps) {
  // view the gradient as (r0, s0, r1, s1, ...) and sum over the repeats (differentiable again)
  size_t lead = reps.size() - in.size();
  IntList shape, repeat_dims;
  for (size_t i = 0; i < reps.size(); ++i) {
    repeat_dims.push_back(static_cast<int64_t>(shape.size()));
    shape.push_back(reps[i]);
    shape.push_back(i < lead ? 1 : in[i - lead]);
  }
  return ops::reshape(ops::sum(ops::reshape(g, shape), repeat_dims, false, ScalarType::NumTypes), in);
}

TensorList cat_tensors_backward(const Tensor& g, const std::vector<IntList>& sizes, const std::vector<ScalarType>& dtypes,
                                int64_t dim) {
  TensorList out;
  const int64_t d = wrap_dim(dim, g->dim());
  int64_t off = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const IntList& s = sizes[i];
    if (s.size() == 1 && s[0] == 0 && g->dim() != 1) { out.push_back(zeros({0}, dtypes[i])); continue; }  // skipped legacy empty
    out.push_back(autograd::cast_grad(ops::narrow(g, d, off, s[d]), dtypes[i]));
    off += s[d];
  }
  return out;
}

}  // namespace fl::formulas

