// Bindings of the fused optimizer steps (ops/optim.h) as `_C._fused_sgd_` / `_C._fused_adam_`.
#include "../ops/optim.h"
#include "python_util.h"

namespace fl::python {
namespace {

void bind(py::module_& m, TensorClass&) {
  m.def("_fused_sgd_", [](const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                          const std::vector<Tensor>& bufs, double lr, double momentum, double dampening,
                          double weight_decay, bool nesterov, bool maximize, bool is_first_step) {
    ops::_fused_sgd_(params, grads, bufs, lr, momentum, dampening, weight_decay, nesterov, maximize, is_first_step);
  }, py::arg("params"), py::arg("grads"), py::arg("momentum_buffers"), py::kw_only(), py::arg("lr"),
     py::arg("momentum"), py::arg("dampening"), py::arg("weight_decay"), py::arg("nesterov"), py::arg("maximize"),
     py::arg("is_first_step"));
  m.def("_fused_adam_", [](const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                           const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                           const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<Tensor>& steps, double lr,
                           double beta1, double beta2, double weight_decay, double eps, bool amsgrad, bool maximize,
                           bool decoupled_weight_decay) {
    ops::_fused_adam_(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, lr, beta1, beta2, weight_decay,
                      eps, amsgrad, maximize, decoupled_weight_decay);
  }, py::arg("params"), py::arg("grads"), py::arg("exp_avgs"), py::arg("exp_avg_sqs"), py::arg("max_exp_avg_sqs"),
     py::arg("state_steps"), py::kw_only(), py::arg("lr"), py::arg("beta1"), py::arg("beta2"),
     py::arg("weight_decay"), py::arg("eps"), py::arg("amsgrad"), py::arg("maximize"),
     py::arg("decoupled_weight_decay"));
}

}  // namespace
}  // namespace fl::python

FL_PY_BINDINGS(82, fl::python::bind)
