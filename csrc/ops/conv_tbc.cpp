// conv_tbc (declared in conv.yaml): one GEMM per kernel tap, each over the time steps whose input lies inside
// the padded range, accumulated onto the bias.
#include "conv.h"
#include "matmul.h"
#include "reduce.h"
#include "tensor_ops.h"
#include "views.h"

namespace fl {

Tensor conv_tbc_cpu(const Tensor& self, const Tensor& weight, const Tensor& bias, int64_t pad) {
  FL_CHECK(self->dim() == 3, Error, "Input must have 3 dims: time, batch, in_channel");
  FL_CHECK(weight->dim() == 3, Error, "Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.");
  FL_CHECK(bias->dim() == 1, Error, "Bias must be 1-D");
  const int64_t time = self->sizes[0], batch = self->sizes[1], in_ch = self->sizes[2];
  const int64_t width = weight->sizes[0], out_ch = weight->sizes[2];
  FL_CHECK(in_ch == weight->sizes[1], Error, "Input dim 2 (input channels) is not == dim 1 in the weight tensor");
  FL_CHECK(out_ch == bias->sizes[0], Error, "Bias size must equal dim 2 in the weight tensor (output channels).");
  int64_t out_len;  // time + 2 pad - width + 1, refused where it overflows
  FL_CHECK(!__builtin_mul_overflow(pad, int64_t(2), &out_len) && !__builtin_add_overflow(out_len, time - width + 1, &out_len),
           Error, "conv_tbc: pad ", pad, " makes the output length overflow");
  FL_CHECK(out_len >= 0, Error, "Trying to create tensor with negative dimension ", out_len, ": [", out_len, ", ", batch,
           ", ", out_ch, "]");
  Tensor out = ops::contiguous(ops::expand(ops::reshape(bias, {1, 1, out_ch}), {out_len, batch, out_ch}));
  Tensor rows = ops::reshape(out, {out_len * batch, out_ch});
  for (int64_t k = 0; k < width; ++k) {
    // output step t reads input step t + k - pad
    const int64_t lo = std::max<int64_t>(0, pad - k), hi = std::min<int64_t>(out_len, time + pad - k);
    if (lo >= hi) continue;
    Tensor in = ops::reshape(ops::narrow(self, 0, lo + k - pad, hi - lo), {(hi - lo) * batch, in_ch});
    ops::_accumulate_into(ops::narrow(rows, 0, lo * batch, (hi - lo) * batch), ops::mm(in, ops::select(weight, 0, k)));
  }
  return out;
}

}  // namespace fl
