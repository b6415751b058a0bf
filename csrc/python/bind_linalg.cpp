// `_C._LinAlgError` (a RuntimeError subclass, as torch._C._LinAlgError) for fl::LinAlgError. The torch.linalg
// primitives' faces come from linalg.yaml; flowlike/linalg.py builds the public torch.linalg surface on them.
#include "../ops/linalg.h"
#include "python_util.h"

namespace fl::python {
namespace {

void bind(py::module_& m, TensorClass&) { py::register_exception<LinAlgError>(m, "_LinAlgError", PyExc_RuntimeError); }

}  // namespace
}  // namespace fl::python

FL_PY_BINDINGS(72, fl::python::bind)
