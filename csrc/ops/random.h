// Randomness: a counter-based Philox4x32-10 generator (seed + offset), so that any stream position
// can be computed without running the ones before it (parallel kernels, graph replay).
#pragma once
#include <mutex>

#include "../core/dispatch.h"

namespace fl {

struct Generator {
  uint64_t seed = 67280421310721ULL;
  uint64_t offset = 0;  // in 128-bit Philox blocks
  std::mutex mu;
  // Reserves `blocks` Philox blocks and returns the first block's counter.
  uint64_t reserve(uint64_t blocks) {
    std::lock_guard<std::mutex> g(mu);
    uint64_t start = offset;
    offset += blocks;
    return start;
  }
};
Generator& default_generator();

}  // namespace fl

// The ops declared in random.yaml (generated: csrc/ops/gen_ops.py).
#include "fl_generated/random.h"
