// Python bindings of the complex-number ops (ops/complex.h); flowlike/_complex.py gives them torch's
// signatures, the Tensor methods and the real/imag properties.
#include "../ops/complex.h"
#include "python_util.h"

namespace fl::python {
namespace {

void bind(py::module_& m, TensorClass&) {
  m.def("_conj", [](const Tensor& t) { return ops::conj(t); });
  m.def("_resolve_conj", [](const Tensor& t) { return ops::resolve_conj(t); });
  m.def("_conj_physical", [](const Tensor& t) { return ops::conj_physical(t); });
  m.def("_view_as_real", [](const Tensor& t) { return ops::view_as_real(t); });
  m.def("_view_as_complex", [](const Tensor& t) { return ops::view_as_complex(t); });
  m.def("_real", [](const Tensor& t) { return ops::real(t); });
  m.def("_imag", [](const Tensor& t) { return ops::imag(t); });
  m.def("_complex", [](const Tensor& re, const Tensor& im) { return ops::complex(re, im); });
}

}  // namespace
}  // namespace fl::python

FL_PY_BINDINGS(50, fl::python::bind)
