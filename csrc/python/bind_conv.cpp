// Bindings of convolution, fold/unfold and pooling (ops/conv.h, ops/pool.h) as `_C._<name>`; the
// torch.nn.functional signatures are parsed in flowlike/nn/_functional_conv.py.
#include "../ops/conv.h"
#include "../ops/pool.h"
#include "python_util.h"

namespace fl::python {
namespace {

Tensor optional_tensor(py::handle h) { return h.is_none() ? nullptr : as_tensor(h); }
py::tuple pair(const TensorPair& r) { return py::make_tuple(std::get<0>(r), std::get<1>(r)); }

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
  m.def("_max_pool", [](const Tensor& x, const IntList& k, const IntList& s, const IntList& p, const IntList& d,
                        bool ceil) { return pair(ops::max_pool(x, k, s, p, d, ceil)); });
  m.def("_avg_pool",
        [](const Tensor& x, const IntList& k, const IntList& s, const IntList& p, bool ceil, bool include_pad,
           int64_t divisor) { return ops::avg_pool(x, k, s, p, ceil, include_pad, divisor); });
  m.def("_adaptive_avg_pool", [](const Tensor& x, const IntList& out) { return ops::adaptive_avg_pool(x, out); });
  m.def("_adaptive_max_pool", [](const Tensor& x, const IntList& out) { return pair(ops::adaptive_max_pool(x, out)); });
  m.def("_plane_scatter", [](const Tensor& v, const Tensor& idx, const IntList& plane, bool accumulate) {
    return ops::plane_scatter(v, idx, plane, accumulate);
  });
}

}  // namespace
}  // namespace fl::python

FL_PY_BINDINGS(74, fl::python::bind)
