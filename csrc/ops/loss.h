// Loss functions with C++ kernels: the fused cross_entropy / nll_loss family, the two binary cross
// entropies and CTC. The other losses of torch.nn.functional are Python composites of
// differentiable ops (flowlike/nn/_functional_loss.py). Kernels: loss_nll.cpp, loss_binary.cpp,
// loss_ctc.cpp; declarations (schemas, derivatives, Python faces): loss.yaml; backward formulas:
// autograd/loss_autograd.cpp.
//
// Note [Class-dim geometry]
// nll_loss and cross_entropy take input (C), (N, C) or (N, C, d1, ..., dk) and a target of class
// indices shaped like the input without its class dim. Both view the input as (N, C, S) with
// S = d1 * ... * dk and the target as (N, S), so one kernel covers every rank: for S == 1 a row of C
// classes is contiguous; for S > 1 the kernel walks a C x S slab with the S positions innermost.
#pragma once
#include "../kernels/vec_math.h"
#include <algorithm>
#include <cmath>
#include <cstring>
#include <tuple>

#include "../core/dispatch.h"

namespace fl {

// PyTorch's reduction enum (ATen's Reduction.h).
enum class LossReduction : int64_t { None = 0, Mean = 1, Sum = 2 };

}  // namespace fl

// The loss kernels are built for float and double only; float16/bfloat16 inputs compute in float.
#define FL_DISPATCH_FLOAT_DOUBLE(TYPE, NAME, ...)                                           \
  switch (TYPE) {                                                                          \
    FL_DTYPE_CASE(Float32, float, __VA_ARGS__) FL_DTYPE_CASE(Float64, double, __VA_ARGS__) \
    default: ::fl::throw_unsupported_dtype(NAME, TYPE);                                    \
  }

// ---- vectorizable math for the loss kernels (csrc/kernels/vec_math.h) ----------------------------
namespace fl { namespace loss_math = vmath; }

#include "fl_generated/loss.h"  // the ops, declared in loss.yaml
