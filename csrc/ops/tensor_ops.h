// The ops every other op, binding and backward formula builds on: factories, constants, copies, casts, fills and
// aliases, declared in tensor_ops.yaml (generated: csrc/ops/gen_ops.py). The core's helpers of the same names
// (fl::empty, fl::clone, fl::copy_into, ... in core/tensor.h) call these ops, so a tensor made or written anywhere
// passes the dispatcher (Note [Dispatch order]) and a graph capture sees it.
#pragma once
#include "../core/dispatch.h"

namespace fl {
// torch's warning when a user's cast or copy drops imaginary parts (internal conversions take ops::real instead).
void warn_discarding_imag(ScalarType from, ScalarType to);
}  // namespace fl

#include "fl_generated/tensor_ops.h"
