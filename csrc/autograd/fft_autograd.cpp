// Autograd kernels of the torch.fft primitives (ops/fft.h), with the formulas of PyTorch's derivatives.yaml: each
// transform's adjoint is another transform with the same normalization mode, so the backward is differentiable
// again (double backward) and saves no tensor.
#include "../ops/complex.h"
#include "../ops/fft.h"
#include "../ops/views.h"
#include "autograd.h"
#include "formulas.h"

namespace fl::autograd {
namespace {

using namespace fl::formulas;

Tensor fft_c2c_autograd(DispatchKeySet ks, const Tensor& self, const IntList& dim, int64_t normalization, bool forward) {
  Tensor r = redispatch_no_grad(ops::_fft_c2c, ks, self, dim, normalization, forward);
  return record_lambda("FftC2CBackward0", r, {gradient_edge(self)}, [=](const Tensor& g) {
    return TensorList{ops::_fft_c2c(g, dim, normalization, !forward)};
  });
}

// A onesided r2c is a c2c of the real input with the upper half of the spectrum dropped: the gradient fills that
// half with zeros, runs the inverse c2c and keeps the real part.
Tensor fft_r2c_autograd(DispatchKeySet ks, const Tensor& self, const IntList& dim, int64_t normalization,
                        bool onesided) {
  Tensor r = redispatch_no_grad(ops::_fft_r2c, ks, self, dim, normalization, onesided);
  const int64_t last = wrap_dim(dim.back(), self->dim(), "_fft_r2c");
  const int64_t n = self->sizes[last];
  return record_lambda("FftR2CBackward0", r, {gradient_edge(self)}, [=](const Tensor& g) {
    Tensor full = g;
    if (g->sizes[last] < n) {
      IntList rest = g->sizes;
      rest[last] = n - g->sizes[last];
      full = ops::cat({g, zeros(rest, g->dtype)}, last);
    }
    return TensorList{ops::real(ops::_fft_c2c(full, dim, normalization, false))};
  });
}

// A c2r extends its Hermitian half by conjugate symmetry, so the gradient of each half-spectrum entry whose mirror
// image lies outside the half (indices 1 .. n - half_size) counts twice.
Tensor fft_c2r_autograd(DispatchKeySet ks, const Tensor& self, const IntList& dim, int64_t normalization,
                        int64_t last_dim_size) {
  Tensor r = redispatch_no_grad(ops::_fft_c2r, ks, self, dim, normalization, last_dim_size);
  const int64_t last = wrap_dim(dim.back(), self->dim(), "_fft_c2r");
  return record_lambda("FftC2RBackward0", r, {gradient_edge(self)}, [=](const Tensor& g) {
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
    return TensorList{gi};
  });
}

}  // namespace

FL_REGISTER_KERNEL(_fft_c2c, Autograd, fft_c2c_autograd)
FL_REGISTER_KERNEL(_fft_r2c, Autograd, fft_r2c_autograd)
FL_REGISTER_KERNEL(_fft_c2r, Autograd, fft_c2r_autograd)

}  // namespace fl::autograd
