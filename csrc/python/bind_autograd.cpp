// Python face of autograd: grad_fn nodes, requires_grad/grad/is_leaf, backward, autograd.grad and
// grad mode.
#include "../autograd/autograd.h"
#include "python_util.h"

namespace fl::python {
namespace {

using autograd::Node;
using autograd::TensorList;

TensorList tensor_list(py::handle h) {
  TensorList out;
  if (h.is_none()) return out;
  if (is_tensor(h)) return {as_tensor(h)};
  for (py::handle x : h) out.push_back(x.is_none() ? nullptr : as_tensor(x));
  return out;
}

void bind(py::module_& m, TensorClass& cls) {
  py::class_<Node, std::shared_ptr<Node>>(m, "Node", "A backward function in the autograd graph (Tensor.grad_fn).")
      .def("name", &Node::name)
      .def_property_readonly("next_functions", [](const Node& n) {
        py::tuple out(n.next_edges.size());
        for (size_t i = 0; i < n.next_edges.size(); ++i) {
          const auto& e = n.next_edges[i];
          out[i] = py::make_tuple(e.fn ? py::cast(e.fn) : py::none(), e.input_nr);
        }
        return out;
      })
      .def_property_readonly("_sequence_nr", [](const Node& n) { return n.sequence_nr; })
      .def("__repr__", [](const Node& n) { return "<" + n.name() + " object>"; });

  cls.def_property("requires_grad", [](const Tensor& t) { return t->requires_grad; }, [](const Tensor& t, bool r) {
        FL_CHECK(!r || is_floating(t->dtype), Error, "only Tensors of floating point and complex dtype can require gradients");
        FL_CHECK(r || !t->autograd || !t->autograd->grad_fn, Error,
                 "you can only change requires_grad flags of leaf variables. If you want to use a computed variable in a "
                 "subgraph that doesn't require differentiation use var_no_grad = var.detach().");
        t->requires_grad = r;
      })
      .def_property_readonly("grad_fn", [](const Tensor& t) -> py::object {
        if (!t->autograd || !t->autograd->grad_fn) return py::none();
        return py::cast(t->autograd->grad_fn);
      })
      .def_property_readonly("is_leaf", [](const Tensor& t) { return !t->autograd || !t->autograd->grad_fn; })
      .def_property_readonly("output_nr", [](const Tensor& t) { return t->autograd ? t->autograd->output_nr : 0u; })
      .def_property_readonly("retains_grad", [](const Tensor& t) { return t->autograd && t->autograd->retains_grad; })
      .def("retain_grad", [](const Tensor& t) {
        FL_CHECK(t->requires_grad, Error, "can't retain_grad on Tensor that has requires_grad=False");
        if (!t->autograd || !t->autograd->grad_fn || t->autograd->retains_grad) return;
        t->autograd->retains_grad = true;
        t->autograd->grad_fn->retained_grads.emplace_back(t->autograd->output_nr, t);
      })
      .def_property("grad", [](const Tensor& t) -> py::object {
        if (!t->autograd || !t->autograd->grad) return py::none();
        return py::cast(t->autograd->grad);
      }, [](const Tensor& t, const Tensor& g) {
        if (g) {
          FL_CHECK(g->sizes == t->sizes, Error, "assigned grad has data of a different size");
          FL_CHECK(g->dtype == t->dtype, Error, "assigned grad has data of a different type");
        }
        t->meta().grad = g;
      });

  m.def("_run_backward", [](py::handle outputs, py::handle grads, bool keep_graph, bool create_graph, py::handle inputs,
                            bool allow_unused, bool accumulate) {
    TensorList ins = tensor_list(inputs);
    TensorList res = autograd::run_backward(tensor_list(outputs), tensor_list(grads), keep_graph, create_graph, ins,
                                            allow_unused, accumulate);
    py::tuple out(res.size());
    for (size_t i = 0; i < res.size(); ++i) out[i] = res[i] ? py::cast(res[i]) : py::none();
    return out;
  });
  m.def("is_grad_enabled", []() { return thread_state().grad_enabled; }, "Whether gradient recording is on for this thread.");
  m.def("_set_grad_enabled", [](bool on) { thread_state().grad_enabled = on; });
  m.def("is_inference_mode_enabled", []() { return thread_state().inference_mode; });
  m.def("_set_inference_mode", [](bool on) { thread_state().inference_mode = on; });
}

}  // namespace
}  // namespace fl::python

FL_PY_BINDINGS(5, fl::python::bind)
