// Bindings of the torch.fft primitives (ops/fft.h) as `_C._fft_c2c`, `_C._fft_r2c`, `_C._fft_c2r`;
// flowlike/fft.py builds torch.fft, stft and istft on them.
#include "../ops/fft.h"
#include "python_util.h"

namespace fl::python {
namespace {

void bind(py::module_& m, TensorClass&) {
  m.def("_fft_c2c", [](const Tensor& self, const IntList& dim, int64_t normalization, bool forward) {
    return ops::_fft_c2c(self, dim, normalization, forward);
  });
  m.def("_fft_r2c", [](const Tensor& self, const IntList& dim, int64_t normalization, bool onesided) {
    return ops::_fft_r2c(self, dim, normalization, onesided);
  });
  m.def("_fft_c2r", [](const Tensor& self, const IntList& dim, int64_t normalization, int64_t last_dim_size) {
    return ops::_fft_c2r(self, dim, normalization, last_dim_size);
  });
}

}  // namespace
}  // namespace fl::python

FL_PY_BINDINGS(84, fl::python::bind)
