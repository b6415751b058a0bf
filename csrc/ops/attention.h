// Fused scaled dot-product attention (flash-attention style, CPU): the attention matrix is never
// materialized beyond one (query block x key block) tile per thread.
#pragma once
#include <tuple>

#include "../core/dispatch.h"
#include "random.h"

// The ops declared in attention.yaml (generated: csrc/ops/gen_ops.py).
#include "fl_generated/attention.h"
