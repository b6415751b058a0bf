// Python bindings of the view ops whose faces are not generated (views.yaml's header says which and why): expand's
// `implicit`, squeeze(dim=None) and the in-place restrides.
#include "../autograd/autograd.h"
#include "../ops/tensor_ops.h"
#include "../ops/views.h"
#include "python_util.h"

namespace fl::python {
namespace {

// A method's shape given spread out, as one sequence, or by keyword: x.view(2, 3), x.view((2, 3)),
// x.view(size=(2, 3)).
IntList shape_arg(py::args args, py::kwargs kw, const char* op, const char* name) {
  if (kw && kw.size()) {
    FL_CHECK(args.size() == 0 && kw.size() == 1 && kw.contains(name), TypeError, op, "() got an unexpected keyword argument '",
             std::string(py::str(kw.begin()->first)), "'");
    return int_list(kw[name], op, name);
  }
  return shape_from_args(args, op);
}

// Gives `self` the geometry of `view` (the in-place view ops: transpose_, squeeze_, ...).
Tensor restride(const Tensor& self, const Tensor& view) {
  const bool recorded = view->autograd && view->autograd->grad_fn;
  if (recorded) autograd::check_not_leaf_requiring_grad(self);
  self->sizes = view->sizes;
  self->strides = view->strides;
  self->offset = view->offset;
  self->refresh();
  // self's history is now the view op's (its gradient has the new geometry)
  if (recorded) autograd::set_history(self, view->autograd->grad_fn, view->autograd->output_nr);
  return self;
}

void bind(py::module_& m, TensorClass& cls) {
  for (const char* name : {"transpose", "swapaxes", "swapdims"}) {
    cls.def((std::string(name) + "_").c_str(), [](const Tensor& t, int64_t a, int64_t b) { return restride(t, ops::transpose(t, a, b)); },
            py::arg("dim0"), py::arg("dim1"));
  }
  cls.def("expand", [](const Tensor& self, py::args a, py::kwargs kw) {
    if (kw && kw.contains("implicit")) kw.attr("pop")("implicit");
    return ops::expand(self, shape_arg(a, kw, "expand", "size"));
  });
  auto squeeze = [](const Tensor& t, py::handle dim) {
    return dim.is_none() ? ops::squeeze(t, {}, true) : ops::squeeze(t, int_list(dim, "squeeze", "dim"), false);
  };
  m.def("squeeze", squeeze, py::arg("input"), py::arg("dim") = py::none(), "A view of input without its size-1 dims (or the given ones).");
  cls.def("squeeze", squeeze, py::arg("dim") = py::none());
  cls.def("squeeze_", [squeeze](const Tensor& t, py::handle dim) { return restride(t, squeeze(t, dim)); }, py::arg("dim") = py::none());
  cls.def("unsqueeze_", [](const Tensor& t, int64_t d) { return restride(t, ops::unsqueeze(t, d)); }, py::arg("dim"));
  cls.def("as_strided_", [](const Tensor& t, py::handle size, py::handle stride, py::handle off) {
    return restride(t, ops::as_strided(t, int_list(size, "as_strided_", "size"), int_list(stride, "as_strided_", "stride"),
                                       off.is_none() ? std::nullopt : std::optional<int64_t>(int_arg(off, "as_strided_", "storage_offset"))));
  }, py::arg("size"), py::arg("stride"), py::arg("storage_offset") = py::none());
}

}  // namespace
}  // namespace fl::python

FL_PY_BINDINGS(20, fl::python::bind)
