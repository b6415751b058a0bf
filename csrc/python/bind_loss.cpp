// Bindings of the loss kernels (ops/loss.h) as `_C._<name>` primitives with fixed signatures;
// flowlike/nn/_functional_loss.py parses PyTorch's arguments on top of them.
#include "../ops/loss.h"
#include "python_util.h"

namespace fl::python {
namespace {

Tensor opt_tensor(py::handle h) { return h.is_none() ? Tensor() : as_tensor(h); }

void bind(py::module_& m, TensorClass&) {
  m.def("_nll_loss", [](const Tensor& self, const Tensor& target, py::handle weight, int64_t reduction, int64_t ignore_index) {
    return std::get<0>(ops::nll_loss(self, target, opt_tensor(weight), reduction, ignore_index));
  });
  m.def("_cross_entropy_loss", [](const Tensor& self, const Tensor& target, py::handle weight, int64_t reduction,
                                  int64_t ignore_index, double label_smoothing) {
    return std::get<0>(ops::cross_entropy_loss(self, target, opt_tensor(weight), reduction, ignore_index, label_smoothing));
  });
  m.def("_binary_cross_entropy", [](const Tensor& self, const Tensor& target) { return ops::binary_cross_entropy(self, target); });
  m.def("_binary_cross_entropy_with_logits", [](const Tensor& self, const Tensor& target, py::handle pos_weight) {
    return ops::binary_cross_entropy_with_logits(self, target, opt_tensor(pos_weight));
  });
  m.def("_ctc_loss", [](const Tensor& log_probs, const Tensor& targets, const IntList& input_lengths,
                        const IntList& target_lengths, int64_t blank, bool zero_infinity) {
    return std::get<0>(ops::ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity));
  });
}

}  // namespace
}  // namespace fl::python

FL_PY_BINDINGS(80, fl::python::bind)
