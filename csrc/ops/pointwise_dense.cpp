#include "pointwise_dense.h"

#include <algorithm>
#include <cmath>

#include "../kernels/vec_math.h"

namespace fl {

bool has_unary_dense_f32(UnaryOp op) {
  switch (op) {
#define FL_X(name, ...) case UnaryOp::name:
    FL_DENSE_UNARY(FL_X)
#undef FL_X
    return true;
    default: return false;
  }
}

// Blocks of 256 elements: the vectorized expression when every input of the block lies in the op's range (the
// common case), else element by element. Each element's input is read before its output is written, so out may
// alias in (the in-place ops).
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) void unary_dense_f32(UnaryOp op, float* out,
                                                                                     const float* in, int64_t n) {
  switch (op) {
#define FL_X(name, expr, lo, hi, libm_expr)                                          \
  case UnaryOp::name:                                                                \
    for (int64_t b = 0; b < n; b += 256) {                                           \
      const int64_t e = std::min(n, b + 256);                                        \
      /* an int flag: GCC vectorizes this scan well; a min/max reduction here took longer than the exps */ \
      int outside = 0;                                                               \
      for (int64_t i = b; i < e; ++i) outside |= (in[i] < (lo) || in[i] > (hi)) ? 1 : 0; \
      if (!outside) {                                                                \
        for (int64_t i = b; i < e; ++i) { const float x = in[i]; out[i] = expr; }    \
      } else {                                                                       \
        for (int64_t i = b; i < e; ++i) {                                            \
          const float x = in[i];                                                     \
          out[i] = (x < (lo) || x > (hi)) ? libm_expr : expr;                        \
        }                                                                            \
      }                                                                              \
    }                                                                                \
    return;
    FL_DENSE_UNARY(FL_X)
#undef FL_X
    default: return;
  }
}

}  // namespace fl
