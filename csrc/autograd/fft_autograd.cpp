// Backward formulas of the torch.fft primitives (declared in csrc/ops/fft.yaml).
#include "../ops/complex.h"
#include "../ops/fft.h"
#include "../ops/views.h"
#include "autograd.h"
#include "formulas.h"

namespace fl::formulas {

// A onesided r2c is a c2c of the real input with the upper half of the spectrum dropped: the gradient fills that
// half with zeros, runs the inverse c2c and keeps the real part.
Tensor fft_r2c_backward(const Tensor& g, const IntList& dim, int64_t normalization, const IntList& in_sizes) {
  const int64_t last = wrap_dim(dim.back(), static_cast<int64_t>(in_sizes.size()), "_fft_r2c");
  const int64_t n = in_sizes[last];
  Tensor full = g;
  if (g->sizes[last] < n) {
    IntList rest = g->sizes;
    rest[last] = n - g->sizes[last];
    full = ops::cat({g, zeros(rest, g->dtype)}, last);
  }
  return ops::real(ops::_fft_c2c(full, dim, normalization, false));
}

// A c2r extends its Hermitian half by conjugate symmetry, so the gradient of each half-spectrum entry whose mirror
// image lies outside the half (indices 1 .. n - half_size) counts twice.
Tensor fft_c2r_backward(const Tensor& g, const IntList& dim, int64_t normalization) {
  const int64_t last = wrap_dim(dim.back(), g->dim(), "_fft_c2r");
  Tensor gi = ops::_fft_r2c(g, dim, normalization, true);
  const int64_t half = gi->sizes[last], doubled = g->sizes[last] - half;
  if (doubled > 0) {
    IntList wsizes(gi->dim(), 1);
    wsizes[last] = half;
    Tensor w = empty(wsizes, to_real_type(gi->dtype));
    fill(w, Scalar(int64_t(1)));
    fill(ops::narrow(w, last, 1, doubled), Scalar(int64_t(2)));
    gi = gi * w;
  }
  return gi;
}

}  // namespace fl::formulas
