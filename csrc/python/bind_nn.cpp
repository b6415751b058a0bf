// Bindings of the activation list's primitives as `_C._<name>`; flowlike/nn/_functional_*.py gives them PyTorch's
// signatures.
#include "../ops/activation.h"
#include "python_util.h"

namespace fl::python {
namespace {

void bind(py::module_& m, TensorClass&) {
  py::dict kinds;
  for (int k = 0; k < static_cast<int>(Activation::NumActivations); ++k) kinds[activation_name(static_cast<Activation>(k))] = k;
  m.attr("_activation_kinds") = kinds;
  m.def("_activation", [](const Tensor& x, int64_t kind, double a, double b, double c, bool inplace) {
    return activation_op(activation_kind(kind))(x, a, b, c, inplace ? x : nullptr);
  });
}

}  // namespace
}  // namespace fl::python

FL_PY_BINDINGS(78, fl::python::bind)
