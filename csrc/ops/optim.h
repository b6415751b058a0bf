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

FL_DECLARE_OP(_fused_sgd_, void(const ::fl::TensorList&, const ::fl::TensorList&, const ::fl::TensorList&, double,
                                double, double, double, bool, bool, bool))
FL_DECLARE_OP(_fused_adam_, void(const ::fl::TensorList&, const ::fl::TensorList&, const ::fl::TensorList&,
                                 const ::fl::TensorList&, const ::fl::TensorList&, const ::fl::TensorList&, double,
                                 double, double, double, double, bool, bool, bool))
FL_DECLARE_OP(_fused_rmsprop_, void(const ::fl::TensorList&, const ::fl::TensorList&, const ::fl::TensorList&,
                                    const ::fl::TensorList&, const ::fl::TensorList&, const ::fl::TensorList&, double,
                                    double, double, double, double, bool, bool))
FL_DECLARE_OP(_fused_adagrad_, void(const ::fl::TensorList&, const ::fl::TensorList&, const ::fl::TensorList&,
                                    const ::fl::TensorList&, double, double, double, double, bool))
FL_DECLARE_OP(_fused_adadelta_, void(const ::fl::TensorList&, const ::fl::TensorList&, const ::fl::TensorList&,
                                     const ::fl::TensorList&, const ::fl::TensorList&, double, double, double, double,
                                     bool))
FL_DECLARE_OP(_fused_adamax_, void(const ::fl::TensorList&, const ::fl::TensorList&, const ::fl::TensorList&,
                                   const ::fl::TensorList&, const ::fl::TensorList&, double, double, double, double,
                                   double, bool))
FL_DECLARE_OP(_fused_nadam_, void(const ::fl::TensorList&, const ::fl::TensorList&, const ::fl::TensorList&,
                                  const ::fl::TensorList&, const ::fl::TensorList&, const ::fl::TensorList&, double,
                                  double, double, double, double, double, bool, bool))
FL_DECLARE_OP(_fused_radam_, void(const ::fl::TensorList&, const ::fl::TensorList&, const ::fl::TensorList&,
                                  const ::fl::TensorList&, const ::fl::TensorList&, double, double, double, double,
                                  double, bool, bool))
