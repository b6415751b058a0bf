// Fused optimizer steps: one call updates every parameter of a param group in place (torch.optim's
// single-tensor arithmetic, element by element, so trajectories match PyTorch's).
#pragma once
#include <vector>

#include "../core/dispatch.h"

FL_DECLARE_OP(_fused_sgd_, void(const std::vector<::fl::Tensor>&, const std::vector<::fl::Tensor>&,
                                const std::vector<::fl::Tensor>&, double, double, double, double, bool, bool, bool))
FL_DECLARE_OP(_fused_adam_, void(const std::vector<::fl::Tensor>&, const std::vector<::fl::Tensor>&,
                                 const std::vector<::fl::Tensor>&, const std::vector<::fl::Tensor>&,
                                 const std::vector<::fl::Tensor>&, const std::vector<::fl::Tensor>&, double, double,
                                 double, double, double, bool, bool, bool))
