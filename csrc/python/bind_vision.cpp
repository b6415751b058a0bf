// The registration of grid_sample's third derivative (a Python composite, flowlike/nn/_grid_sample.py); the vision
// ops' faces come from vision.yaml.
#include "../ops/vision.h"
#include "python_util.h"

namespace fl::python {
namespace {

void bind(py::module_& m, TensorClass&) {
  m.def("_set_grid_sampler_third_derivative", [](py::function fn) {
    auto* keep = new py::function(std::move(fn));  // never freed: no Python object dies after the interpreter
    autograd::set_grid_sampler_third_derivative([keep](const TensorList& saved, const TensorList& grads, int64_t interp,
                                                       int64_t padding, bool align) {
      py::gil_scoped_acquire gil;
      auto to_py = [](const TensorList& ts) {
        py::list l;
        for (const Tensor& t : ts) l.append(t ? py::cast(t) : py::none());
        return l;
      };
      TensorList out;
      for (py::handle h : (*keep)(to_py(saved), to_py(grads), interp, padding, align))
        out.push_back(h.is_none() ? Tensor() : as_tensor(h));
      return out;
    });
  }, "Registers the third derivative of grid_sample (flowlike/nn/_grid_sample.py).");
}

}  // namespace
}  // namespace fl::python

FL_PY_BINDINGS(76, fl::python::bind)
