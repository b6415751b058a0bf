// Pooling: max (with indices), average, adaptive average and adaptive max over 1 to 3 spatial
// dims, and the scatter of values to flat plane indices that is max-pooling's backward and
// max_unpool's forward. The number of spatial dims is the length of kernel_size (output_size);
// every dim in front of them is a plane: (C, *spatial) and (N, C, *spatial) are both accepted.
// Indices are flat positions in the input plane, as PyTorch's.
#pragma once
#include <tuple>

#include "../core/dispatch.h"

namespace fl {
using TensorPair = std::tuple<Tensor, Tensor>;
}

// max_pool(input, kernel_size, stride, padding, dilation, ceil_mode) -> (values, indices)
FL_DECLARE_OP(max_pool, ::fl::TensorPair(const ::fl::Tensor&, const ::fl::IntList&, const ::fl::IntList&,
                                         const ::fl::IntList&, const ::fl::IntList&, bool))
// avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override (0: none))
FL_DECLARE_OP(avg_pool, ::fl::Tensor(const ::fl::Tensor&, const ::fl::IntList&, const ::fl::IntList&,
                                     const ::fl::IntList&, bool, bool, int64_t))
// avg_pool_backward(grad_output, input, <avg_pool's parameters>) -> grad_input
FL_DECLARE_OP(avg_pool_backward, ::fl::Tensor(const ::fl::Tensor&, const ::fl::Tensor&, const ::fl::IntList&,
                                              const ::fl::IntList&, const ::fl::IntList&, bool, bool, int64_t))
FL_DECLARE_OP(adaptive_avg_pool, ::fl::Tensor(const ::fl::Tensor&, const ::fl::IntList&))
// adaptive_avg_pool_backward(grad_output, input, output_size) -> grad_input
FL_DECLARE_OP(adaptive_avg_pool_backward, ::fl::Tensor(const ::fl::Tensor&, const ::fl::Tensor&, const ::fl::IntList&))
// adaptive_max_pool(input, output_size) -> (values, indices)
FL_DECLARE_OP(adaptive_max_pool, ::fl::TensorPair(const ::fl::Tensor&, const ::fl::IntList&))
// plane_scatter(values, indices, plane_sizes, accumulate): a zero tensor of shape
// values.shape[:-len(plane_sizes)] + plane_sizes, with values[..., j] added (accumulate: max
// pooling's backward) or written (max_unpool; the last write wins) at flat plane position
// indices[..., j]. RuntimeError for an index outside the plane.
FL_DECLARE_OP(plane_scatter, ::fl::Tensor(const ::fl::Tensor&, const ::fl::Tensor&, const ::fl::IntList&, bool))
