// Python bindings flowlike.compile needs beyond graph capture's own (bind_graph.cpp).
#include "../graph/trace.h"
#include "python_util.h"

namespace fl::python {
namespace {

void bind(py::module_& m, TensorClass&) {
  // A tensor the autograd engine made outside any op as an alias of a captured value (its saved-output alias)
  // is that value (Note [Capture identity]); the compiled backward reads it from the forward run.
  m.def("_program_value_of", [](graph::RecordingTracer& r, const Tensor& t) -> int64_t {
    const graph::Program& p = r.program();
    const int64_t id = p.value_of(t);
    if (id >= 0) return id;
    auto it = p.by_geometry.find(std::make_tuple(t->storage.get(), t->offset, t->sizes, t->strides, t->dtype));
    return it == p.by_geometry.end() ? -1 : it->second;
  }, py::arg("program"), py::arg("tensor"),
     "The value id of a tensor met during the capture or of an alias of one (same storage and geometry); -1 if none.");
}

}  // namespace
}  // namespace fl::python

FL_PY_BINDINGS(51, fl::python::bind)
