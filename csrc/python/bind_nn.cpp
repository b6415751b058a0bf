// Bindings of the nn primitives (native_layer_norm, native_batch_norm, the activation list) as
// `_C._<name>`; flowlike/nn/_functional_*.py gives them PyTorch's signatures.
#include "../ops/activation.h"
#include "../ops/nn_norm.h"
#include "python_util.h"

namespace fl::python {
namespace {


void bind(py::module_& m, TensorClass&) {
  m.def("_layer_norm", [](const Tensor& x, const IntList& shape, const Tensor& w, const Tensor& b, double eps, bool rms) {
    return std::get<0>(ops::native_layer_norm(x, shape, w, b, eps, rms));
  }, py::arg("input"), py::arg("normalized_shape"), py::arg("weight").none(true), py::arg("bias").none(true),
     py::arg("eps"), py::arg("rms"));
  m.def("_batch_norm", [](const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& rm, const Tensor& rv,
                          bool training, double momentum, double eps) {
    return std::get<0>(ops::native_batch_norm(x, w, b, rm, rv, training, momentum, eps));
  }, py::arg("input"), py::arg("weight").none(true), py::arg("bias").none(true), py::arg("running_mean").none(true),
     py::arg("running_var").none(true), py::arg("training"), py::arg("momentum"), py::arg("eps"));
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
