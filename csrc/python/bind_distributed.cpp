// `_C._set_collective_backend(engine)`: flowlike.distributed's communication engine serves the collective ops
// (ops/collective.h, Note [Collectives as ops]); `engine.all_reduce(tensor, reduce_op, group_name)` and
// `engine.broadcast(tensor, src, group_name)` run them.
#include "../ops/collective.h"
#include "python_util.h"

namespace fl::python {
namespace {

class PythonCollectiveBackend final : public CollectiveBackend {
 public:
  explicit PythonCollectiveBackend(py::object engine) : engine_(std::move(engine)) {}
  ~PythonCollectiveBackend() override {
    if (!Py_IsInitialized()) {  // destroyed with the other statics at process exit, after the interpreter ended
      engine_.release();
      return;
    }
    py::gil_scoped_acquire gil;
    engine_ = py::object();
  }
  void all_reduce(const Tensor& t, const std::string& reduce_op, const std::string& group_name) override {
    py::gil_scoped_acquire gil;
    engine_.attr("all_reduce")(t, reduce_op, group_name);
  }
  void broadcast(const Tensor& t, int64_t src, const std::string& group_name) override {
    py::gil_scoped_acquire gil;
    engine_.attr("broadcast")(t, src, group_name);
  }

 private:
  py::object engine_;
};

void bind(py::module_& m, TensorClass&) {
  m.def("_set_collective_backend", [](py::object engine) {
    set_collective_backend(engine.is_none() ? nullptr : std::make_shared<PythonCollectiveBackend>(std::move(engine)));
  }, py::arg("engine"), "Installs the engine that runs the collective ops (None removes it).");
}

}  // namespace
}  // namespace fl::python

FL_PY_BINDINGS(86, fl::python::bind)
