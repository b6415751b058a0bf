// Bindings of the matrix products (ops/matmul.h) as `_C.<name>`.
#include "../ops/matmul.h"
#include "python_util.h"

namespace fl::python {
namespace {

Scalar number(py::handle h, const char* op, const char* arg) {
  Scalar s;
  FL_CHECK(scalar_from_python(h, &s), TypeError, op, "(): argument '", arg, "' must be Number, not ",
           std::string(py::str(h.get_type().attr("__name__"))));
  return s;
}

void bind(py::module_& m, TensorClass&) {
  m.def("_mm", [](const Tensor& a, const Tensor& b) { return ops::mm(a, b); });
  m.def("_bmm", [](const Tensor& a, const Tensor& b) { return ops::bmm(a, b); });
  m.def("_matmul", [](const Tensor& a, const Tensor& b) { return ops::matmul(a, b); });
  m.def("_addmm", [](const Tensor& s, const Tensor& a, const Tensor& b, py::handle beta, py::handle alpha) {
    return ops::addmm(s, a, b, number(beta, "addmm", "beta"), number(alpha, "addmm", "alpha"));
  });
  m.def("_addmm_activation", [](const Tensor& s, const Tensor& a, const Tensor& b, py::handle beta, py::handle alpha,
                                bool use_gelu) {
    return ops::_addmm_activation(s, a, b, number(beta, "_addmm_activation", "beta"),
                                  number(alpha, "_addmm_activation", "alpha"), use_gelu);
  });
  m.def("_baddbmm", [](const Tensor& s, const Tensor& a, const Tensor& b, py::handle beta, py::handle alpha) {
    return ops::baddbmm(s, a, b, number(beta, "baddbmm", "beta"), number(alpha, "baddbmm", "alpha"));
  });
}

}  // namespace
}  // namespace fl::python

FL_PY_BINDINGS(70, fl::python::bind)
