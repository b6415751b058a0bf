// The binding of the matmul composite (ops/matmul.h; not an op: autograd and captures see the primitives it calls) as
// `_C._matmul`. The primitives' faces come from matmul.yaml.
#include "../ops/matmul.h"
#include "python_util.h"

namespace fl::python {
namespace {

void bind(py::module_& m, TensorClass&) {
  m.def("_matmul", [](const Tensor& a, const Tensor& b) { return ops::matmul(a, b); });
}

}  // namespace
}  // namespace fl::python

FL_PY_BINDINGS(70, fl::python::bind)
