// Bindings of the nn primitives (the activation list, fused attention) as `_C._<name>`;
// flowlike/nn/_functional_*.py gives them PyTorch's signatures.
#include <cmath>

#include "../ops/activation.h"
#include "../ops/attention.h"
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
  m.def("_scaled_dot_product_attention", [](const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                                            double dropout_p, bool is_causal, py::handle scale, bool gqa, py::handle gen) {
    const double s = scale.is_none() ? std::nan("") : py::cast<double>(scale);
    Generator* g = gen.is_none() ? nullptr : py::cast<Generator*>(gen);
    return std::get<0>(ops::scaled_dot_product_attention(q, k, v, mask, dropout_p, is_causal, s, gqa, g));
  }, py::arg("query"), py::arg("key"), py::arg("value"), py::arg("attn_mask").none(true), py::arg("dropout_p"),
     py::arg("is_causal"), py::arg("scale").none(true), py::arg("enable_gqa"), py::arg("generator").none(true));
}

}  // namespace
}  // namespace fl::python

FL_PY_BINDINGS(78, fl::python::bind)
