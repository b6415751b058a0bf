// Bindings of the vision and embedding ops (ops/vision.h) as `_C._<name>`; the PyTorch-facing
// argument handling is in flowlike/nn/_functional_vision.py.
#include "../ops/vision.h"
#include "python_util.h"

namespace fl::python {
namespace {

void bind(py::module_& m, TensorClass&) {
  m.def("_pad", [](const Tensor& t, const IntList& pad, int64_t mode, double value) { return ops::pad(t, pad, mode, value); });
  m.def("_upsample", [](const Tensor& t, const IntList& size, int64_t mode, bool align, const std::vector<double>& scales) {
    return ops::upsample(t, size, mode, align, scales);
  });
  m.def("_grid_sampler", [](const Tensor& input, const Tensor& grid, int64_t interp, int64_t padding, bool align) {
    return ops::grid_sampler(input, grid, interp, padding, align);
  });
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
  m.def("_embedding", [](const Tensor& weight, const Tensor& indices, int64_t padding_idx, bool scale_grad_by_freq) {
    return ops::embedding(weight, indices, padding_idx, scale_grad_by_freq);
  });
}

}  // namespace
}  // namespace fl::python

FL_PY_BINDINGS(76, fl::python::bind)
