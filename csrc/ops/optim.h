// Fused optimizer steps: one call updates every parameter of a param group in place (torch.optim's
// single-tensor arithmetic, element by element, so trajectories match PyTorch's). Each op takes the
// params, their grads and one list per state tensor (an empty list for a state the options do not keep);
// step counts (and NAdam's mu_product) are one-element float32 tensors, advanced in place as torch does.
#pragma once
#include <vector>

#include "../core/dispatch.h"

namespace fl {
using TensorList = std::vector<Tensor>;
}  // namespace fl

// The ops declared in optim.yaml (generated: csrc/ops/gen_ops.py).
#include "fl_generated/optim.h"
