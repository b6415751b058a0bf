// Vision and embedding ops of torch.nn.functional: padding, interpolation, grid sampling and the
// embedding lookup, each with a dedicated backward op (the heavy kernels, as PyTorch's
// *_backward ops), declared in vision.yaml. Kernels compute float16/bfloat16 in float32. The grid sampler's autograd
// kernels are in autograd/vision_autograd.cpp; the Python surface
// (argument parsing, PyTorch's checks and messages) is flowlike/nn/_functional_vision.py.
#pragma once
#include <functional>

#include "../core/dispatch.h"

namespace fl {

using TensorList = std::vector<Tensor>;

enum class PadMode : int8_t { Constant = 0, Reflect = 1, Replicate = 2, Circular = 3 };
// Interpolation modes of interpolate: Linear covers linear/bilinear/trilinear (separable), Cubic
// is bicubic, Area is adaptive average pooling.
enum class UpsampleMode : int8_t { Nearest = 0, NearestExact = 1, Linear = 2, Cubic = 3, Area = 4 };
enum class GridInterp : int8_t { Bilinear = 0, Nearest = 1, Bicubic = 2 };
enum class GridPadding : int8_t { Zeros = 0, Border = 1, Reflection = 2 };

// PyTorch's cubic convolution weights (A = -0.75) for the four taps around t in [0, 1) (bicubic
// interpolate and grid_sample).
template <typename T>
void cubic_coefficients(T* c, T t) {
  const T A = T(-0.75);
  auto conv1 = [&](T x) { return ((A + 2) * x - (A + 3)) * x * x + 1; };
  auto conv2 = [&](T x) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; };
  c[0] = conv2(t + 1);
  c[1] = conv1(t);
  c[2] = conv1(1 - t);
  c[3] = conv2((1 - t) + 1);
}

}  // namespace fl

namespace fl::autograd {
// (saved {grad_output, input, grid, gg_grid}, grads of grid_sampler_double_backward's three outputs, interp, padding,
// align) -> grads of its four inputs: the third derivative of grid_sample (vision_autograd.cpp), set from Python.
using GridSamplerThirdDerivative =
    std::function<TensorList(const TensorList&, const TensorList&, int64_t, int64_t, bool)>;
void set_grid_sampler_third_derivative(GridSamplerThirdDerivative f);
}  // namespace fl::autograd
// The ops declared in vision.yaml (generated: csrc/ops/gen_ops.py).
#include "fl_generated/vision.h"
