// Python face of autograd: grad_fn nodes, requires_grad/grad/is_leaf, backward, autograd.grad and
// grad mode.
#include <algorithm>

#include "../autograd/autograd.h"
#include "python_util.h"

namespace fl::python {
namespace {

using autograd::AccumulateGrad;
using autograd::Node;
using autograd::TensorList;

// The backward node of a Python autograd.Function: calls backward(ctx, *grads) with the saved
// tensors unpacked (version-checked) into ctx, and routes the returned gradients to the inputs.
struct PyFunctionNode : Node {
  std::string node_name;
  py::object ctx, backward;
  std::vector<autograd::SavedVariable> saved;
  std::vector<int> edge_of_arg;  // forward argument -> edge index, -1 for non-tensors
  std::vector<IntList> input_sizes;  // per edge
  std::vector<IntList> out_sizes;
  std::vector<ScalarType> out_dtypes;
  bool materialize = true;

  std::string name() const override { return node_name; }
  void release_saved() override {
    for (auto& v : saved) v.reset();
  }
  TensorList apply(TensorList&& grads) override {
    py::gil_scoped_acquire gil;
    py::tuple args(out_sizes.size() + 1);
    args[0] = ctx;
    for (size_t i = 0; i < out_sizes.size(); ++i) {
      Tensor g = i < grads.size() ? grads[i] : nullptr;
      if (!g && materialize) {
        g = empty(out_sizes[i], out_dtypes[i]);
        fill(g, Scalar(int64_t(0)));
      }
      args[i + 1] = g ? py::cast(g) : py::none();
    }
    py::tuple values(saved.size());
    auto self = shared_from_this();
    for (size_t i = 0; i < saved.size(); ++i) {
      Tensor t = saved[i].unpack(self);
      values[i] = t ? py::cast(t) : py::none();
    }
    ctx.attr("_fl_saved_values") = values;
    py::object result = backward(*args);
    py::delattr(ctx, "_fl_saved_values");
    py::tuple res = py::isinstance<py::tuple>(result) ? py::tuple(result) : py::make_tuple(result);
    size_t n = edge_of_arg.size();
    bool extra_nones = res.size() > n;
    for (size_t i = n; i < res.size(); ++i) extra_nones = extra_nones && res[i].is_none();
    FL_CHECK(res.size() == n || extra_nones, Error, "function ", node_name,
             " returned an incorrect number of gradients (expected ", n, ", got ", res.size(), ")");
    TensorList out(next_edges.size());
    for (size_t i = 0; i < n; ++i) {
      py::handle r = res[i];
      if (r.is_none()) continue;
      FL_CHECK(edge_of_arg[i] >= 0, Error, "function ", node_name, " returned a gradient different than None at position ",
               i + 1, ", but the corresponding forward input was not a Variable");
      FL_CHECK(is_tensor(r), TypeError, "function ", node_name, " returned a gradient of type ",
               std::string(py::str(r.get_type().attr("__name__"))), " at position ", i + 1, ", expected a Tensor or None");
      int e = edge_of_arg[i];
      Tensor g = as_tensor(r);
      const IntList& want = input_sizes[e];
      if (g->sizes != want) {
        bool expandable = g->sizes.size() >= want.size();
        for (size_t d = 0; expandable && d < want.size(); ++d) {
          int64_t gs = g->sizes[g->sizes.size() - want.size() + d];
          expandable = want[d] == gs || want[d] == 1;
        }
        FL_CHECK(expandable, Error, "Function ", node_name,
                 " returned an invalid gradient at index ", i, " - got ", shape_str(g->sizes),
                 " but expected shape compatible with ", shape_str(want));
        g = autograd::sum_to(g, want);
      }
      out[e] = g;
    }
    return out;
  }
};

struct PyPackedTensor : autograd::PackedTensor {
  py::object packed, unpack_fn;
  Tensor unpack() const override {
    py::gil_scoped_acquire gil;
    py::object t = unpack_fn(packed);
    FL_CHECK(is_tensor(t), TypeError, "Output of saved tensor unpack_hook expected to be a Tensor but got result of type ",
             std::string(py::str(t.get_type().attr("__name__"))));
    return as_tensor(t);
  }
  ~PyPackedTensor() override {
    py::gil_scoped_acquire gil;
    packed = py::object();
    unpack_fn = py::object();
  }
};

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
  py::class_<AccumulateGrad, Node, std::shared_ptr<AccumulateGrad>>(
      m, "AccumulateGrad", "The node that accumulates a leaf's gradient into its .grad (a graph's sink).")
      .def_property_readonly("variable", [](const AccumulateGrad& n) -> py::object {
        Tensor t = n.variable.lock();
        return t ? py::cast(t) : py::none();
      }, "The leaf tensor this node accumulates into (None once it is freed).");

  cls.def_property("requires_grad", [](const Tensor& t) {
        return t->requires_grad || (t->is_view && autograd::view_gained_grad(t));
      }, [](const Tensor& t, bool r) {
        FL_CHECK(!r || is_differentiable(t->dtype), Error, "only Tensors of floating point and complex dtype can require gradients");
        FL_CHECK(r || !t->autograd || !t->autograd->grad_fn, Error,
                 "you can only change requires_grad flags of leaf variables. If you want to use a computed variable in a "
                 "subgraph that doesn't require differentiation use var_no_grad = var.detach().");
        t->requires_grad = r;
      })
      .def_property_readonly("grad_fn", [](const Tensor& t) -> py::object {
        const auto& fn = autograd::current_grad_fn(t);
        return fn ? py::cast(fn) : py::none();
      })
      .def_property_readonly("is_leaf", [](const Tensor& t) { return !autograd::current_grad_fn(t); })
      .def_property_readonly("output_nr", [](const Tensor& t) { return t->autograd ? t->autograd->output_nr : 0u; })
      .def_property_readonly("retains_grad", [](const Tensor& t) { return t->autograd && t->autograd->retains_grad; })
      .def("retain_grad", [](const Tensor& t) {
        FL_CHECK(t->requires_grad, Error, "can't retain_grad on Tensor that has requires_grad=False");
        if (!autograd::current_grad_fn(t) || t->autograd->retains_grad) return;
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
  // ---- custom autograd.Function -----------------------------------------------------------
  m.def("_function_node", [](const std::string& name, py::object ctx, py::object backward, py::sequence args,
                             py::sequence outputs, py::sequence to_save, bool materialize) {
    auto node = std::make_shared<PyFunctionNode>();
    node->node_name = name;
    node->ctx = ctx;
    node->backward = backward;
    node->materialize = materialize;
    for (py::handle a : args) {
      if (is_tensor(a)) {
        Tensor t = as_tensor(a);
        node->edge_of_arg.push_back(static_cast<int>(node->next_edges.size()));
        node->next_edges.push_back(autograd::gradient_edge(t));
        node->input_sizes.push_back(t->sizes);
      } else {
        node->edge_of_arg.push_back(-1);
      }
    }
    TensorList outs;
    for (py::handle o : outputs) outs.push_back(o.is_none() ? nullptr : as_tensor(o));
    for (size_t i = 0; i < outs.size(); ++i) {
      node->out_sizes.push_back(outs[i] ? outs[i]->sizes : IntList{});
      node->out_dtypes.push_back(outs[i] ? outs[i]->dtype : default_dtype());
    }
    for (py::handle h : to_save) {
      Tensor t = h.is_none() ? nullptr : as_tensor(h);
      bool is_output = false;
      for (auto& o : outs) is_output = is_output || (o && o == t);
      node->saved.emplace_back(t, is_output);
    }
    // Outputs get their history after saving, so a saved output is saved as an output.
    for (size_t i = 0; i < outs.size(); ++i)
      if (outs[i] && is_differentiable(outs[i]->dtype)) autograd::set_history(outs[i], node, static_cast<uint32_t>(i));
    return std::static_pointer_cast<Node>(node);
  });

  // ---- hooks -------------------------------------------------------------------------------
  cls.def("_register_grad_hook", [](const Tensor& t, py::function fn) {
    FL_CHECK(t->requires_grad, Error, "cannot register a hook on a tensor that doesn't require gradient");
    uint64_t id = autograd::next_hook_id();
    IntList sizes = t->sizes;
    std::function<Tensor(const Tensor&)> wrapped = [fn, sizes](const Tensor& g) -> Tensor {
      py::object r = fn(g);
      if (r.is_none()) return nullptr;
      FL_CHECK(is_tensor(r), TypeError, "hook returned an object of type ",
               std::string(py::str(r.get_type().attr("__name__"))), ", expected a Tensor or None");
      Tensor out = as_tensor(r);
      FL_CHECK(out->sizes == g->sizes, Error, "hook '", std::string(py::str(fn.attr("__name__"))),
               "' has changed the size of value");
      return out;
    };
    AutogradMeta& meta = t->meta();
    if (autograd::current_grad_fn(t)) meta.grad_fn->pre_hooks.push_back({meta.output_nr, id, std::move(wrapped)});
    else meta.leaf_hooks.emplace_back(id, std::move(wrapped));
    return id;
  });
  cls.def("_register_post_accumulate_hook", [](const Tensor& t, py::function fn) {
    FL_CHECK(t->requires_grad, Error, "cannot register a hook on a tensor that doesn't require gradient");
    FL_CHECK(!t->autograd || !t->autograd->grad_fn, Error,
             "post accumulate grad hooks cannot be registered on non-leaf tensors");
    uint64_t id = autograd::next_hook_id();
    t->meta().post_accumulate_hooks.emplace_back(id, [fn](const Tensor& v) { fn(v); });
    return id;
  });
  cls.def("_remove_hook", [](const Tensor& t, uint64_t id) {
    if (!t->autograd) return;
    AutogradMeta& meta = t->meta();
    auto drop = [id](auto& v) { v.erase(std::remove_if(v.begin(), v.end(), [id](auto& h) { return h.first == id; }), v.end()); };
    drop(meta.leaf_hooks);
    drop(meta.post_accumulate_hooks);
    if (meta.grad_fn) {
      auto& ph = meta.grad_fn->pre_hooks;
      ph.erase(std::remove_if(ph.begin(), ph.end(), [id](auto& h) { return h.id == id; }), ph.end());
    }
  });

  // ---- saved tensor hooks and anomaly mode -----------------------------------------------------
  m.def("_push_saved_tensors_hooks", [](py::function pack, py::function unpack) {
    autograd::saved_tensor_pack_hooks().push_back([pack, unpack](const Tensor& t) {
      auto p = std::make_shared<PyPackedTensor>();
      p->packed = pack(t);
      p->unpack_fn = unpack;
      return std::static_pointer_cast<autograd::PackedTensor>(p);
    });
  });
  m.def("_pop_saved_tensors_hooks", []() {
    FL_CHECK(!autograd::saved_tensor_pack_hooks().empty(), Error, "no saved tensors hooks to pop");
    autograd::saved_tensor_pack_hooks().pop_back();
  });
  m.def("_set_anomaly_enabled", [](bool on) {
    autograd::anomaly_enabled() = on;
    if (on && !autograd::anomaly_capture_trace()) {
      autograd::anomaly_capture_trace() = []() {
        py::gil_scoped_acquire gil;
        py::object stack = py::module_::import("traceback").attr("format_stack")();
        return py::cast<std::string>(py::str("").attr("join")(stack));
      };
    }
  });
  m.def("is_anomaly_enabled", []() { return autograd::anomaly_enabled(); });

  m.def("is_grad_enabled", []() { return thread_state().grad_enabled; }, "Whether gradient recording is on for this thread.");
  m.def("_set_grad_enabled", [](bool on) { thread_state().grad_enabled = on; });
  m.def("is_inference_mode_enabled", []() { return thread_state().inference_mode; });
  m.def("_set_inference_mode", [](bool on) { thread_state().inference_mode = on; });
}

}  // namespace
}  // namespace fl::python

FL_PY_BINDINGS(5, fl::python::bind)
