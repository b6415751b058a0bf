// Bindings of the torch.linalg primitives (ops/linalg.h) as `_C._linalg_<name>`, and
// `_C._LinAlgError` (a RuntimeError subclass, as torch._C._LinAlgError) for fl::LinAlgError.
// flowlike/linalg.py builds the public torch.linalg surface on these.
#include "../ops/linalg.h"
#include "python_util.h"

namespace fl::python {
namespace {

void bind(py::module_& m, TensorClass&) {
  py::register_exception<LinAlgError>(m, "_LinAlgError", PyExc_RuntimeError);
  m.def("_linalg_inv_ex", [](const Tensor& A, bool check) { return ops::linalg_inv_ex(A, check); });
  m.def("_linalg_lu_factor_ex", [](const Tensor& A, bool pivot, bool check) { return ops::linalg_lu_factor_ex(A, pivot, check); });
  m.def("_lu_pivots_to_permutation", [](const Tensor& piv, int64_t m, py::handle dtype) {
    return ops::lu_pivots_to_permutation(piv, m, dtype_from_object(dtype));
  });
  m.def("_linalg_solve_ex", [](const Tensor& A, const Tensor& B, bool check) { return ops::linalg_solve_ex(A, B, check); });
  m.def("_linalg_det", [](const Tensor& A) { return ops::linalg_det(A); });
  m.def("_linalg_slogdet", [](const Tensor& A) { return ops::linalg_slogdet(A); });
  m.def("_linalg_cholesky_ex", [](const Tensor& A, bool upper, bool check) { return ops::linalg_cholesky_ex(A, upper, check); });
  m.def("_linalg_solve_triangular", [](const Tensor& A, const Tensor& B, bool upper, bool left, bool unit) {
    return ops::linalg_solve_triangular(A, B, upper, left, unit);
  });
  m.def("_linalg_qr", [](const Tensor& A, const std::string& mode) { return ops::linalg_qr(A, mode); });
  m.def("_linalg_eigh", [](const Tensor& A, const std::string& uplo, bool compute_v) { return ops::linalg_eigh(A, uplo, compute_v); });
  m.def("_linalg_eig", [](const Tensor& A, bool compute_v) { return ops::linalg_eig(A, compute_v); });
  m.def("_linalg_svd", [](const Tensor& A, bool full, bool compute_uv) { return ops::linalg_svd(A, full, compute_uv); });
  m.def("_linalg_lstsq", [](const Tensor& A, const Tensor& B, double rcond, const std::string& driver) {
    return ops::linalg_lstsq(A, B, rcond, driver);
  });
}

}  // namespace
}  // namespace fl::python

FL_PY_BINDINGS(72, fl::python::bind)
