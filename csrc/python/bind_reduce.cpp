// Bindings of the reduction, scan and sorting ops as `_C._<name>` primitives with fixed
// signatures; flowlike/_reduce.py parses PyTorch's overloaded argument forms on top of them.
#include "../ops/reduce.h"
#include "python_util.h"

namespace fl::python {
namespace {

ScalarType opt_dtype(py::handle h) { return h.is_none() ? ScalarType::NumTypes : dtype_from_object(h); }
Tensor opt_tensor(py::handle h) { return h.is_none() ? Tensor() : as_tensor(h); }

void bind(py::module_& m, TensorClass&) {
#define FL_X(name)                                                                                        \
  m.def("_" #name, [](const Tensor& t, const IntList& dims, bool keepdim, py::handle dtype) {             \
    return ops::name(t, dims, keepdim, opt_dtype(dtype));                                                 \
  }, py::arg("input"), py::arg("dim"), py::arg("keepdim"), py::arg("dtype"));
  FL_REDUCE_OPS(FL_X)
#undef FL_X
  m.def("_max_dim", [](const Tensor& t, int64_t d, bool k) { return ops::max_dim(t, d, k); });
  m.def("_min_dim", [](const Tensor& t, int64_t d, bool k) { return ops::min_dim(t, d, k); });
  m.def("_argmax", [](const Tensor& t, std::optional<int64_t> d, bool k) { return ops::argmax(t, d, k); });
  m.def("_argmin", [](const Tensor& t, std::optional<int64_t> d, bool k) { return ops::argmin(t, d, k); });
  m.def("_var_mean", [](const Tensor& t, const IntList& d, double c, bool k) { return ops::var_mean(t, d, c, k); });
  m.def("_norm", [](const Tensor& t, double p, const IntList& d, bool k, py::handle dtype) {
    return ops::norm(t, p, d, k, opt_dtype(dtype));
  });
  m.def("_cumsum", [](const Tensor& t, int64_t d, py::handle dtype) { return ops::cumsum(t, d, opt_dtype(dtype)); });
  m.def("_cumprod", [](const Tensor& t, int64_t d, py::handle dtype) { return ops::cumprod(t, d, opt_dtype(dtype)); });
  m.def("_logcumsumexp", [](const Tensor& t, int64_t d) { return ops::logcumsumexp(t, d); });
  m.def("_cummax", [](const Tensor& t, int64_t d) { return ops::cummax(t, d); });
  m.def("_cummin", [](const Tensor& t, int64_t d) { return ops::cummin(t, d); });
  m.def("_sort", [](const Tensor& t, int64_t d, bool desc, bool stable) { return ops::sort(t, d, desc, stable); });
  m.def("_topk", [](const Tensor& t, int64_t k, int64_t d, bool largest, bool sorted) { return ops::topk(t, k, d, largest, sorted); });
  m.def("_kthvalue", [](const Tensor& t, int64_t k, int64_t d, bool keepdim) { return ops::kthvalue(t, k, d, keepdim); });
  m.def("_median_dim", [](const Tensor& t, int64_t d, bool keepdim, bool nan) { return ops::median_dim(t, d, keepdim, nan); });
  m.def("_median_all", [](const Tensor& t, bool nan) { return ops::median_all(t, nan); });
  m.def("_mode", [](const Tensor& t, int64_t d, bool keepdim) { return ops::mode(t, d, keepdim); });
  m.def("_quantile", [](const Tensor& t, const Tensor& q, std::optional<int64_t> d, bool keepdim, const std::string& interp,
                        bool nan) { return ops::quantile(t, q, d, keepdim, interp, nan); });
  m.def("_unique_flat", [](const Tensor& t, bool consecutive) { return ops::unique_flat(t, consecutive); });
  m.def("_unique_dim", [](const Tensor& t, int64_t d, bool consecutive) { return ops::unique_dim(t, d, consecutive); });
  m.def("_bincount", [](const Tensor& t, py::handle w, int64_t minlength) { return ops::bincount(t, opt_tensor(w), minlength); });
  m.def("_histc", [](const Tensor& t, int64_t bins, double lo, double hi) { return ops::histc(t, bins, lo, hi); });
  m.def("_searchsorted", [](const Tensor& s, const Tensor& v, bool i32, bool right, py::handle sorter) {
    return ops::searchsorted(s, v, i32, right, opt_tensor(sorter));
  });
}

}  // namespace
}  // namespace fl::python

FL_PY_BINDINGS(30, fl::python::bind)
