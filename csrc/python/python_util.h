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
// The Python Tensor class (set when the module initializes).
extern PyTypeObject* g_tensor_type;
}  // namespace fl::python

namespace pybind11::detail {
// Tensor arguments (`const Tensor&`) convert on every op call from Python. pybind11's holder caster looks the
// bound type up in its global registry (under a lock) each time; this one reads the holder straight out of a Tensor
// instance (one C++ type: pybind11's simple layout) and leaves everything else (None, foreign objects) and the
// C++ -> Python direction to pybind11's own caster.
template <>
class type_caster<std::shared_ptr<fl::TensorImpl>> {
  using Holder = std::shared_ptr<fl::TensorImpl>;
  using Default = copyable_holder_caster<fl::TensorImpl, Holder>;

 public:
  PYBIND11_TYPE_CASTER(Holder, type_caster_base<fl::TensorImpl>::name);

  bool load(handle src, bool convert) {
    PyTypeObject* t = fl::python::g_tensor_type;
    if (t && PyObject_TypeCheck(src.ptr(), t)) {
      auto* inst = reinterpret_cast<instance*>(src.ptr());
      if (inst->simple_layout && inst->simple_holder_constructed) {
        value = *reinterpret_cast<Holder*>(&inst->simple_value_holder[1]);
        return true;
      }
    }
    Default fallback;
    if (!fallback.load(src, convert)) return false;
    value = static_cast<Holder&>(fallback);
    return true;
  }

  static handle cast(const Holder& src, return_value_policy policy, handle parent) {
    return Default::cast(src, policy, parent);
  }
};
// (pybind11 recognizes a holder by its caster's base class; this caster has none, so say it)
template <>
struct is_holder_type<fl::TensorImpl, std::shared_ptr<fl::TensorImpl>> : std::true_type {};
}  // namespace pybind11::detail


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
// An int past [-2^63, 2^64) raises Python's OverflowError, as torch's Scalar arguments do.
bool scalar_from_python(py::handle h, Scalar* out);
// A Python int (not bool) as int64, as torch's parser reads an int argument: ValueError past int64; false when h
// is not an int.
bool int64_from_python(py::handle h, int64_t* out);
// An int argument of a hand-written binding, as torch's parser reads one: a Python int (ValueError past int64) or
// what has __index__ (numpy ints); anything else is a TypeError naming the op and argument.
inline int64_t int_arg(py::handle h, const char* op, const char* name) {
  int64_t v;
  if (int64_from_python(h, &v)) return v;
  if (PyIndex_Check(h.ptr()) && !PyBool_Check(h.ptr())) {
    py::object i = py::reinterpret_steal<py::object>(PyNumber_Index(h.ptr()));
    if (!i) throw py::error_already_set();
    if (int64_from_python(i, &v)) return v;
  }
  throw TypeError(str_cat(op, "(): argument '", name, "' must be int, not ",
                          std::string(py::str(py::type::of(h).attr("__name__")))));
}
// The declared op of that name (ValueError when there is none), and a Python value as the boxed argument of C++
// type `tag` for its schema argument `a` (bind_ops.cpp). Its TypeErrors name the face `face` (default: the op), the
// argument `key` (default: its schema name) and, for an argument passed by position, its 1-based `position`.
const OpInfo& find_op(const std::string& name);
IValue to_ivalue(const OpInfo& op, const SchemaArg& a, const std::string& tag, py::handle h, const char* face = nullptr,
                 const char* key = nullptr, size_t position = 0);
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
