// Bindings of convolution and fold/unfold (ops/conv.h) as `_C._<name>`; the
// torch.nn.functional signatures are parsed in flowlike/nn/_functional_conv.py.
#include "../ops/conv.h"
#include "python_util.h"

namespace fl::python {
namespace {

Tensor optional_tensor(py::handle h) { return h.is_none() ? nullptr : as_tensor(h); }

void bind(py::module_& m, TensorClass&) {
  m.def("_convolution",
        [](const Tensor& input, const Tensor& weight, py::handle bias, const IntList& stride, const IntList& padding,
           const IntList& dilation, bool transposed, const IntList& output_padding, int64_t groups) {
          return ops::convolution(input, weight, optional_tensor(bias), stride, padding, dilation, transposed,
                                  output_padding, groups);
        });
  m.def("_im2col", [](const Tensor& x, const IntList& k, const IntList& d, const IntList& p, const IntList& s) {
    return ops::im2col(x, k, d, p, s);
  });
  m.def("_col2im", [](const Tensor& x, const IntList& out, const IntList& k, const IntList& d, const IntList& p,
                      const IntList& s) { return ops::col2im(x, out, k, d, p, s); });
}

}  // namespace
}  // namespace fl::python

FL_PY_BINDINGS(74, fl::python::bind)
