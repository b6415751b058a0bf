// Bindings of the fused optimizer steps (ops/optim.h) as `_C._fused_sgd_`, `_C._fused_adam_`, ...: tensor lists
// positional, hyperparameters keyword-only, named as in the op schemas.
#include "../ops/optim.h"
#include "python_util.h"

namespace fl::python {
namespace {

// Binds op as `_C.<op name>` with the given argument names (pybind11's py::arg / py::kw_only).
template <typename... Args, typename... Names>
void def_step(py::module_& m, const Op<void(Args...)>& op, const Names&... names) {
  m.def(op.name(), [&op](Args... args) { op(args...); }, names...);
}

void bind(py::module_& m, TensorClass&) {
  using py::arg;
  def_step(m, ops::_fused_sgd_, arg("params"), arg("grads"), arg("momentum_buffers"), py::kw_only(), arg("lr"),
           arg("momentum"), arg("dampening"), arg("weight_decay"), arg("nesterov"), arg("maximize"),
           arg("is_first_step"));
  def_step(m, ops::_fused_adam_, arg("params"), arg("grads"), arg("exp_avgs"), arg("exp_avg_sqs"),
           arg("max_exp_avg_sqs"), arg("state_steps"), py::kw_only(), arg("lr"), arg("beta1"), arg("beta2"),
           arg("weight_decay"), arg("eps"), arg("amsgrad"), arg("maximize"), arg("decoupled_weight_decay"));
  def_step(m, ops::_fused_rmsprop_, arg("params"), arg("grads"), arg("square_avgs"), arg("grad_avgs"),
           arg("momentum_buffers"), arg("state_steps"), py::kw_only(), arg("lr"), arg("alpha"), arg("eps"),
           arg("weight_decay"), arg("momentum"), arg("centered"), arg("maximize"));
  def_step(m, ops::_fused_adagrad_, arg("params"), arg("grads"), arg("state_sums"), arg("state_steps"),
           py::kw_only(), arg("lr"), arg("lr_decay"), arg("weight_decay"), arg("eps"), arg("maximize"));
  def_step(m, ops::_fused_adadelta_, arg("params"), arg("grads"), arg("square_avgs"), arg("acc_deltas"),
           arg("state_steps"), py::kw_only(), arg("lr"), arg("rho"), arg("eps"), arg("weight_decay"),
           arg("maximize"));
  def_step(m, ops::_fused_adamax_, arg("params"), arg("grads"), arg("exp_avgs"), arg("exp_infs"),
           arg("state_steps"), py::kw_only(), arg("lr"), arg("beta1"), arg("beta2"), arg("eps"),
           arg("weight_decay"), arg("maximize"));
  def_step(m, ops::_fused_nadam_, arg("params"), arg("grads"), arg("exp_avgs"), arg("exp_avg_sqs"),
           arg("mu_products"), arg("state_steps"), py::kw_only(), arg("lr"), arg("beta1"), arg("beta2"), arg("eps"),
           arg("weight_decay"), arg("momentum_decay"), arg("decoupled_weight_decay"), arg("maximize"));
  def_step(m, ops::_fused_radam_, arg("params"), arg("grads"), arg("exp_avgs"), arg("exp_avg_sqs"),
           arg("state_steps"), py::kw_only(), arg("lr"), arg("beta1"), arg("beta2"), arg("eps"),
           arg("weight_decay"), arg("decoupled_weight_decay"), arg("maximize"));
}

}  // namespace
}  // namespace fl::python

FL_PY_BINDINGS(82, fl::python::bind)
