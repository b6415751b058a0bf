// The complex-number ops: the conjugate bit (Note [The conjugate bit] in core/dispatch.h), the real/complex
// views and the constructors. Pointwise math on complex tensors runs through the pointwise lists
// (pointwise_complex.h).
#pragma once
#include "../core/dispatch.h"

// The ops declared in complex.yaml (generated: csrc/ops/gen_ops.py).
#include "fl_generated/complex.h"
