// Shared pieces of the Python bindings: the Tensor class handle, dtype objects, conversion of
// Python arguments (numbers, dtypes, shapes) and registration of binding functions.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <functional>

#include "../core/dispatch.h"
#include "../core/schema.h"

namespace py = pybind11;

namespace fl::python {

using TensorClass = py::class_<TensorImpl, std::shared_ptr<TensorImpl>>;

// Each binding file registers a function that adds its names to the module.
struct Binder {
  Binder(int order, std::function<void(py::module_&, TensorClass&)> fn);
};
std::vector<std::pair<int, std::function<void(py::module_&, TensorClass&)>>>& binders();

// The Python dtype object for a scalar type (one instance per type, so `is` works).
py::object dtype_object(ScalarType t);
ScalarType dtype_from_object(py::handle h);  // TypeError when not a flowlike dtype
bool is_dtype_object(py::handle h);
// Python-side classes the C++ layer constructs (flowlike.Size, flowlike.device("cpu")).
py::object size_object(const IntList& sizes);
py::object cpu_device_object();

bool is_tensor(py::handle h);
inline Tensor as_tensor(py::handle h) { return py::cast<Tensor>(h); }

// A Python number (bool, int, float, numpy scalar) as a Scalar; false when h is not a number.
bool scalar_from_python(py::handle h, Scalar* out);
// The declared op of that name (ValueError when there is none), and a Python value as the boxed argument of C++
// type `tag` for its schema argument `a` (bind_ops.cpp).
const OpInfo& find_op(const std::string& name);
IValue to_ivalue(const OpInfo& op, const SchemaArg& a, const std::string& tag, py::handle h);
py::object scalar_to_python(const Scalar& s);
// A tensor argument or a number wrapped as a 0-dim tensor that promotes as a Python scalar.
// Throws TypeError naming `op` for anything else; the try_ form returns false instead.
Tensor tensor_or_number(py::handle h, const char* op, const char* argname);
bool try_tensor_or_number(py::handle h, Tensor* out);

// A shape given as ints, a tuple/list/Size, or a single sequence: size(2, 3) or size((2, 3)).
IntList shape_from_args(py::args args, const char* op);
IntList int_list(py::handle h, const char* op, const char* argname);

}  // namespace fl::python

#define FL_PY_BINDINGS(order, fn) \
  static ::fl::python::Binder FL_CONCAT(fl_binder_, __LINE__)(order, fn);
