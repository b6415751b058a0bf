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

FL_DECLARE_OP(uniform_, ::fl::Tensor(const ::fl::Tensor&, double, double, ::fl::Generator*))
FL_DECLARE_OP(normal_, ::fl::Tensor(const ::fl::Tensor&, double, double, ::fl::Generator*))
FL_DECLARE_OP(random_, ::fl::Tensor(const ::fl::Tensor&, int64_t, int64_t, ::fl::Generator*))
FL_DECLARE_OP(bernoulli_, ::fl::Tensor(const ::fl::Tensor&, const ::fl::Tensor&, ::fl::Generator*))
FL_DECLARE_OP(randperm, ::fl::Tensor(int64_t, ::fl::ScalarType, ::fl::Generator*))
FL_DECLARE_OP(multinomial, ::fl::Tensor(const ::fl::Tensor&, int64_t, bool, ::fl::Generator*))
