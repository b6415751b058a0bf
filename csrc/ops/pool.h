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

#include "fl_generated/pool.h"  // the ops, declared in pool.yaml
