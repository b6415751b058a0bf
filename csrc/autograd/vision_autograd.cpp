// The vision ops' backward helpers and formulas (vision.yaml names them).
// pad and upsample are linear, so their backward ops are linear too and each one's derivative is the forward op
// again (double backward). grid_sampler_backward's grad_input is linear in grad_output, which gives its derivatives;
// those of its grad_grid come from grid_sampler_double_backward, and the derivatives of that (third and
// higher, as torch's) from a composite of differentiable ops that flowlike/nn/_grid_sample.py registers.
#include "../ops/pointwise.h"
#include "../ops/views.h"
#include "../ops/vision.h"
#include "autograd.h"
#include "formulas.h"

namespace fl::formulas {

const char* pad_node_name(int64_t mode) {
  switch (static_cast<PadMode>(mode)) {
    case PadMode::Reflect: return "ReflectionPadBackward0";
    case PadMode::Replicate: return "ReplicationPadBackward0";
    case PadMode::Circular: return "CircularPadBackward0";
    default: return "ConstantPadNdBackward0";
  }
}

const char* upsample_node_name(int64_t mode, size_t nd) {
  switch (static_cast<UpsampleMode>(mode)) {
    case UpsampleMode::Linear:
      return nd == 1 ? "UpsampleLinear1DBackward0" : nd == 2 ? "UpsampleBilinear2DBackward0" : "UpsampleTrilinear3DBackward0";
    case UpsampleMode::Cubic: return "UpsampleBicubic2DBackward0";
    case UpsampleMode::Area: return "AdaptiveAvgPoolBackward0";
    case UpsampleMode::NearestExact: return "UpsampleNearestExactBackward0";
    default: return "UpsampleNearestBackward0";
  }
}

// embedding_dense_backward is linear in its gradient; the derivative reads the rows back, none for padding_idx
// (PyTorch's embedding_dense_double_backward, which ignores scale_grad_by_freq too).
Tensor embedding_dense_double_backward(const Tensor& gg, const Tensor& indices, int64_t padding_idx) {
  Tensor rows = ops::embedding(gg, indices, -1, false);
  if (padding_idx >= 0)
    rows = where(ops::unsqueeze(bin(BinaryOp::eq, indices, wrap_scalar(Scalar(padding_idx))), -1), num(0.0), rows);
  return rows;
}

}  // namespace fl::formulas

namespace fl::autograd {
namespace {

GridSamplerThirdDerivative& third_derivative() {
  static GridSamplerThirdDerivative* f = new GridSamplerThirdDerivative();  // (set once from Python, never freed)
  return *f;
}

}  // namespace

void set_grid_sampler_third_derivative(GridSamplerThirdDerivative f) { third_derivative() = std::move(f); }

}  // namespace fl::autograd

namespace fl::formulas {

// grad_input = A(grid)^T g is linear in g: for <gg, grad_input> = <A(grid) gg, g>, the derivative for g is the
// sampling of gg and the one for grid is the grid gradient of that sampling (upstream g). The derivatives of
// <gg_grid, grad_grid> come from grid_sampler_double_backward.
TensorList grid_sampler_backward_backward(const Tensor& gg_input, const Tensor& gg_grid, const Tensor& g,
                                          const Tensor& input, const Tensor& grid, int64_t interp, int64_t padding,
                                          bool align, const std::array<bool, 3>& mask) {
  TensorList r(3);
  if (gg_input) {
    r[0] = ops::grid_sampler(gg_input, grid, interp, padding, align);
    if (mask[2]) r[2] = ops::grid_sampler_backward(g, gg_input, grid, interp, padding, align, false)[1];
  }
  if (gg_grid) {
    TensorList d = ops::grid_sampler_double_backward(g, input, grid, gg_grid, interp, padding, align);
    for (int i = 0; i < 3; ++i) r[i] = r[i] ? r[i] + d[i] : d[i];
  }
  return r;
}

// The derivatives of grid_sampler_double_backward's three outputs for its four inputs: the registered composite
// recomputes them from the saved inputs under autograd (so its results carry history for one more order).
TensorList grid_sampler_double_backward_backward(const TensorList& grads, const Tensor& g, const Tensor& input,
                                                 const Tensor& grid, const Tensor& gg_grid, int64_t interp,
                                                 int64_t padding, bool align) {
  if (!autograd::third_derivative()) not_implemented("grid_sampler_double_backward");
  TensorList r = autograd::third_derivative()({g, input, grid, gg_grid}, grads, interp, padding, align);
  r.resize(4);
  return r;
}

}  // namespace fl::formulas
