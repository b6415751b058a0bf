// The vision ops' backward helpers (vision.yaml names them) and the grid sampler backward ops' hand-written autograd
// kernels (nodes with several outputs).
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
// grad_input = A(grid)^T g is linear in g: for <gg, grad_input> = <A(grid) gg, g>, the derivative for g
// is the sampling of gg and the one for grid is the grid gradient of that sampling (upstream g). The
// derivatives of <gg_grid, grad_grid> come from grid_sampler_double_backward.
struct GridSamplerBackwardBackward : Node {
  SavedVariable g, input, grid;
  int64_t interp, padding;
  bool align;
  std::string name() const override { return "GridSamplerBackwardBackward0"; }
  void release_saved() override { g.reset(); input.reset(); grid.reset(); }
  TensorList apply(TensorList&& grads) override {
    Tensor gg_input = grads.size() > 0 ? grads[0] : nullptr, gg_grid = grads.size() > 1 ? grads[1] : nullptr;
    TensorList r(3);
    auto self = shared_from_this();
    Tensor gv = g.unpack(self), gridv = grid.unpack(self);
    if (gg_input) {
      r[0] = ops::grid_sampler(gg_input, gridv, interp, padding, align);
      if (should_compute_output(2))
        r[2] = ops::grid_sampler_backward(gv, gg_input, gridv, interp, padding, align, false)[1];
    }
    if (gg_grid) {
      using namespace formulas;
      TensorList d = ops::grid_sampler_double_backward(gv, input.unpack(self), gridv, gg_grid, interp, padding, align);
      for (int i = 0; i < 3; ++i) r[i] = r[i] ? r[i] + d[i] : d[i];
    }
    return r;
  }
};
}  // namespace

FL_REGISTER_KERNEL(grid_sampler_backward, Autograd, ([](DispatchKeySet ks, const Tensor& g, const Tensor& input,
                                                       const Tensor& grid, int64_t interp, int64_t padding, bool align,
                                                       bool input_grad) {
  TensorList r = redispatch_no_grad(ops::grid_sampler_backward, ks, g, input, grid, interp, padding, align, input_grad);
  auto node = std::make_shared<GridSamplerBackwardBackward>();
  node->g = SavedVariable(g, false);
  node->input = SavedVariable(input, false);
  node->grid = SavedVariable(grid, false);
  node->interp = interp;
  node->padding = padding;
  node->align = align;
  node->next_edges = {gradient_edge(g), gradient_edge(input), gradient_edge(grid)};
  for (size_t i = 0; i < r.size(); ++i)
    if (r[i]) set_history(r[i], node, static_cast<uint32_t>(i));
  return r;
}))

namespace {
GridSamplerThirdDerivative& third_derivative() {
  static GridSamplerThirdDerivative* f = new GridSamplerThirdDerivative();  // (set once from Python, never freed)
  return *f;
}

// The derivatives of grid_sampler_double_backward's three outputs for its four inputs: the registered composite
// recomputes them from the saved inputs under autograd (so its results carry history for one more order).
struct GridSamplerDoubleBackwardBackward : Node {
  SavedVariable g, input, grid, gg_grid;
  int64_t interp, padding;
  bool align;
  std::string name() const override { return "GridSamplerDoubleBackwardBackward0"; }
  void release_saved() override { g.reset(); input.reset(); grid.reset(); gg_grid.reset(); }
  TensorList apply(TensorList&& grads) override {
    if (!third_derivative()) formulas::not_implemented("grid_sampler_double_backward");
    auto self = shared_from_this();
    grads.resize(3);
    TensorList r = third_derivative()({g.unpack(self), input.unpack(self), grid.unpack(self), gg_grid.unpack(self)},
                                      grads, interp, padding, align);
    r.resize(4);
    return r;
  }
};
}  // namespace

void set_grid_sampler_third_derivative(GridSamplerThirdDerivative f) { third_derivative() = std::move(f); }

FL_REGISTER_KERNEL(grid_sampler_double_backward, Autograd, ([](DispatchKeySet ks, const Tensor& g, const Tensor& input,
                                                              const Tensor& grid, const Tensor& gg_grid, int64_t interp,
                                                              int64_t padding, bool align) {
  TensorList r =
      redispatch_no_grad(ops::grid_sampler_double_backward, ks, g, input, grid, gg_grid, interp, padding, align);
  auto node = std::make_shared<GridSamplerDoubleBackwardBackward>();
  node->g = SavedVariable(g, false);
  node->input = SavedVariable(input, false);
  node->grid = SavedVariable(grid, false);
  node->gg_grid = SavedVariable(gg_grid, false);
  node->interp = interp;
  node->padding = padding;
  node->align = align;
  node->next_edges = {gradient_edge(g), gradient_edge(input), gradient_edge(grid), gradient_edge(gg_grid)};
  for (size_t i = 0; i < r.size(); ++i)
    if (r[i]) set_history(r[i], node, static_cast<uint32_t>(i));
  return r;
}))

}  // namespace fl::autograd
