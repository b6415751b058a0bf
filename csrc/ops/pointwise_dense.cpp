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

// Blocks of 256 elements: the vectorized expression when no element of the block needs libm (the common case),
// else element by element. Each element's input is read before its output is written, so out may alias in
// (the in-place ops).
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) void unary_dense_f32(UnaryOp op, float* out,
                                                                                     const float* in, int64_t n) {
  switch (op) {
#define FL_X(name, expr, use_libm, libm_expr)                                          \
  case UnaryOp::name:                                                                \
    for (int64_t b = 0; b < n; b += 256) {                                           \
      const int64_t e = std::min(n, b + 256);                                        \
      int exact = 0; /* an int flag: GCC vectorizes this scan, not a bool one */       \
      for (int64_t i = b; i < e; ++i) { const float x = in[i]; exact |= (use_libm) ? 1 : 0; } \
      if (!exact) {                                                                  \
        for (int64_t i = b; i < e; ++i) { const float x = in[i]; out[i] = expr; }    \
      } else {                                                                       \
        for (int64_t i = b; i < e; ++i) {                                            \
          const float x = in[i];                                                     \
          out[i] = (use_libm) ? libm_expr : expr;                                    \
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
