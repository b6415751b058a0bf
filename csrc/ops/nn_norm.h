// Normalization primitives: one fused row kernel for layer_norm and rms_norm, one per-channel kernel
// for batch_norm (group_norm and instance_norm are Python composites over them and the reductions).
#pragma once
#include <tuple>

#include "../core/dispatch.h"

#include "fl_generated/nn_norm.h"  // the ops, declared in nn_norm.yaml
