// flowlike._C: the module, the Tensor class and the argument conversions every binding uses.
#include <algorithm>

#include "../core/allocator.h"
#include "../core/gil.h"
#include "../core/warning.h"
#include "python_util.h"

namespace fl::python {

// ---- binder registry ------------------------------------------------------------------------
std::vector<std::pair<int, std::function<void(py::module_&, TensorClass&)>>>& binders() {
  static auto* b = new std::vector<std::pair<int, std::function<void(py::module_&, TensorClass&)>>>();
  return *b;
}
Binder::Binder(int order, std::function<void(py::module_&, TensorClass&)> fn) { binders().emplace_back(order, std::move(fn)); }

// ---- dtype objects ----------------------------------------------------------------------------
namespace {

struct DType {
  ScalarType type;
};

// Leaked on purpose: they must outlive the interpreter's own teardown.
py::object* g_dtypes = new py::object[kNumScalarTypes];
py::object& g_size_cls = *new py::object();
py::object& g_cpu_device = *new py::object();

}  // namespace

PyTypeObject* g_tensor_type = nullptr;

py::object dtype_object(ScalarType t) { return g_dtypes[static_cast<int>(t)]; }

bool is_dtype_object(py::handle h) { return py::isinstance<DType>(h); }

ScalarType dtype_from_object(py::handle h) {
  if (!py::isinstance<DType>(h)) {
    throw py::type_error(str_cat("expected a dtype (e.g. flowlike.float32), but got ", std::string(py::str(py::type::of(h).attr("__name__")))));
  }
  return h.cast<const DType&>().type;
}

py::object size_object(const IntList& sizes) {
  py::tuple t(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) t[i] = py::int_(sizes[i]);
  return g_size_cls ? g_size_cls(t) : py::object(t);
}

py::object cpu_device_object() { return g_cpu_device; }

bool is_tensor(py::handle h) { return g_tensor_type && PyObject_TypeCheck(h.ptr(), g_tensor_type); }

// ---- numbers ----------------------------------------------------------------------------------
bool scalar_from_python(py::handle h, Scalar* out) {
  PyObject* o = h.ptr();
  if (PyBool_Check(o)) { *out = Scalar(o == Py_True); return true; }
  if (PyLong_Check(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow) {
      // torch reads an int past int64 as uint64, so past uint64 (or below int64) Python's own OverflowError
      // ("int too big to convert", "can't convert negative int to unsigned") reaches the caller
      if (PyLong_AsUnsignedLongLong(o) == static_cast<unsigned long long>(-1) && PyErr_Occurred())
        throw py::error_already_set();
      // [2^63, 2^64): torch's uint64 Scalar; flowlike's Scalar has no unsigned kind
      throw Error(str_cat("Overflow when unpacking long: ", std::string(py::str(h))));
    }
    *out = Scalar(static_cast<int64_t>(v));
    return true;
  }
  if (PyFloat_Check(o)) { *out = Scalar(PyFloat_AS_DOUBLE(o)); return true; }
  if (PyComplex_Check(o)) { *out = Scalar(complex<double>(PyComplex_RealAsDouble(o), PyComplex_ImagAsDouble(o))); return true; }
  // numpy scalars and 0-d arrays behave like the Python number they hold
  if (py::isinstance<py::array>(h) ? py::cast<py::array>(h).ndim() == 0 : PyObject_HasAttrString(o, "dtype") && !is_tensor(h)) {
    py::object item = py::reinterpret_steal<py::object>(PyObject_CallMethod(o, "item", nullptr));
    if (!item) { PyErr_Clear(); return false; }
    return scalar_from_python(item, out);
  }
  return false;
}

py::object scalar_to_python(const Scalar& s) {
  if (s.is_bool()) return py::bool_(s.v.b);
  if (s.is_int()) return py::int_(s.v.i);
  if (s.is_complex()) return py::reinterpret_steal<py::object>(PyComplex_FromDoubles(s.v.d, s.im));
  return py::float_(s.v.d);
}

bool try_tensor_or_number(py::handle h, Tensor* out) {
  if (is_tensor(h)) {
    *out = as_tensor(h);
    return true;
  }
  Scalar s;
  if (!scalar_from_python(h, &s)) return false;
  *out = wrap_scalar(s);
  return true;
}

Tensor tensor_or_number(py::handle h, const char* op, const char* argname) {
  Tensor t;
  if (try_tensor_or_number(h, &t)) return t;
  throw py::type_error(str_cat(op, "(): argument '", argname, "' must be Tensor or Number, not ",
                               std::string(py::str(py::type::of(h).attr("__name__")))));
}

bool int64_from_python(py::handle h, int64_t* out) {
  PyObject* o = h.ptr();
  if (!PyLong_Check(o) || PyBool_Check(o)) return false;
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
  FL_CHECK(!overflow, ValueError, "Overflow when unpacking long long");  // (torch's parser, for any int argument)
  *out = v;
  return true;
}

IntList int_list(py::handle h, const char* op, const char* argname) {
  IntList out;
  if (is_tensor(h)) {
    const Tensor& t = as_tensor(h);
    FL_CHECK(t->dim() <= 1 && !is_floating_point(t->dtype), TypeError, op, "(): argument '", argname, "' must be a sequence of ints");
    Tensor c = to_dtype(contiguous(t), ScalarType::Int64);
    out.assign(c->data<int64_t>(), c->data<int64_t>() + c->numel);
    return out;
  }
  if (!py::isinstance<py::sequence>(h) || py::isinstance<py::str>(h)) {
    int64_t v;
    if (int64_from_python(h, &v)) return {v};
    Scalar s;
    if (scalar_from_python(h, &s) && s.is_int()) return {s.v.i};
    throw py::type_error(str_cat(op, "(): argument '", argname, "' must be tuple of ints, not ",
                                 std::string(py::str(py::type::of(h).attr("__name__")))));
  }
  int64_t position = 0;
  for (py::handle item : py::reinterpret_borrow<py::sequence>(h)) {
    ++position;
    int64_t v;
    try {
      if (int64_from_python(item, &v)) {
        out.push_back(v);
        continue;
      }
    } catch (const ValueError& e) {
      throw TypeError(str_cat(op, "(): argument '", argname, "' failed to unpack the object at pos ", position,
                              " with error \"", e.what(), "\""));
    }
    Scalar s;
    if (is_tensor(item)) {
      const Tensor& t = as_tensor(item);
      FL_CHECK(t->numel == 1 && !is_floating_point(t->dtype), TypeError, op, "(): argument '", argname, "' must be tuple of ints, but found element of type Tensor");
      out.push_back(fl::item(t).to_int());
      continue;
    }
    if (!scalar_from_python(item, &s) || !s.is_int()) {
      throw py::type_error(str_cat(op, "(): argument '", argname, "' must be tuple of ints, but found element of type ",
                                   std::string(py::str(py::type::of(item).attr("__name__")))));
    }
    out.push_back(s.v.i);
  }
  return out;
}

IntList shape_from_args(py::args args, const char* op) {
  if (args.size() == 1 && !PyLong_Check(args[0].ptr())) return int_list(args[0], op, "size");
  return int_list(args, op, "size");
}

}  // namespace fl::python

using namespace fl;
using namespace fl::python;

PYBIND11_MODULE(_C, m) {
  m.doc() = "flowlike's C++ core: tensors, the dispatcher and CPU kernels";
  // Note [GIL release] (core/gil.h): only a thread that holds the lock hands it back
  fl::set_gil_hooks({[]() -> void* { return PyGILState_Check() ? PyEval_SaveThread() : nullptr; },
                     [](void* state) { PyEval_RestoreThread(static_cast<PyThreadState*>(state)); }});
  fl::set_warning_handler([](const std::string& message) {  // a UserWarning at the Python caller's line
    py::gil_scoped_acquire gil;
    if (PyErr_WarnEx(PyExc_UserWarning, message.c_str(), 1) < 0) throw py::error_already_set();
  });

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const fl::IndexError& e) {
      PyErr_SetString(PyExc_IndexError, e.what());
    } catch (const fl::TypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const fl::ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const fl::NotImplementedError& e) {
      PyErr_SetString(PyExc_NotImplementedError, e.what());
    } catch (const std::bad_alloc& e) {  // as torch's allocator: out of memory is a RuntimeError
      PyErr_SetString(PyExc_RuntimeError, (std::string("not enough memory: ") + e.what()).c_str());
    } catch (const std::length_error& e) {  // a std::vector asked for more than it can hold
      PyErr_SetString(PyExc_RuntimeError, (std::string("not enough memory: ") + e.what()).c_str());
    }
  });

  py::class_<DType>(m, "dtype", "A tensor element type, e.g. flowlike.float32.")
      .def_property_readonly("is_floating_point", [](const DType& d) { return is_floating_point(d.type); })
      .def_property_readonly("is_complex", [](const DType& d) { return is_complex(d.type); })
      .def_property_readonly("is_signed", [](const DType& d) { return is_signed(d.type); })
      .def_property_readonly("itemsize", [](const DType& d) { return element_size(d.type); })
      .def("to_real", [](const DType& d) { return dtype_object(to_real_type(d.type)); })
      .def("to_complex", [](const DType& d) -> py::object {
        FL_CHECK(is_floating(d.type) || is_complex(d.type), Error, "Unknown Complex ScalarType for ", c10_type_name(d.type));
        return dtype_object(to_complex_type(d.type));
      })
      .def("__repr__", [](const DType& d) { return std::string("torch.") + dtype_name(d.type); })
      .def("__reduce__", [](const DType& d) { return py::str(dtype_name(d.type)); })
      .def("__hash__", [](const DType& d) { return static_cast<int>(d.type) + 7919; })
      .def("_index", [](const DType& d) { return static_cast<int>(d.type); });
  for (int i = 0; i < kNumScalarTypes; ++i) {
    g_dtypes[i] = py::cast(DType{static_cast<ScalarType>(i)}, py::return_value_policy::move);
    m.attr(dtype_name(static_cast<ScalarType>(i))) = g_dtypes[i];
  }

  TensorClass tensor(m, "Tensor", py::dynamic_attr(), "A multi-dimensional array with autograd support, as torch.Tensor.");
  g_tensor_type = reinterpret_cast<PyTypeObject*>(tensor.ptr());

  m.def("_set_python_classes", [](py::object size_cls, py::object cpu_device) {
    g_size_cls = size_cls;
    g_cpu_device = cpu_device;
  });

  std::stable_sort(binders().begin(), binders().end(), [](auto& a, auto& b) { return a.first < b.first; });
  for (auto& b : binders()) b.second(m, tensor);

  // Memory statistics of the caching CPU allocator.
  m.def("_memory_stats", []() {
    MemoryStats s = CPUAllocator::get().stats();
    py::dict d;
    d["allocated_bytes.all.current"] = s.allocated;
    d["allocated_bytes.all.peak"] = s.max_allocated;
    d["reserved_bytes.all.current"] = s.reserved;
    d["reserved_bytes.all.peak"] = s.max_reserved;
    d["num_alloc_retries"] = 0;
    d["num_allocs"] = s.num_allocs;
    d["num_cache_hits"] = s.num_cache_hits;
    return d;
  });
  m.def("_empty_cache", []() { CPUAllocator::get().empty_cache(); });
  m.def("_reset_peak_memory_stats", []() { CPUAllocator::get().reset_peak_stats(); });
  m.def("_op_registry", []() {
    py::list out;
    for (const OpInfo& info : op_registry()) {
      py::list keys;
      for (int k = 0; k < kNumDispatchKeys; ++k)
        if (info.has_kernel[k]) keys.append(dispatch_key_name(static_cast<DispatchKey>(k)));
        else if (info.fallthrough[k]) keys.append(std::string(dispatch_key_name(static_cast<DispatchKey>(k))) + "(fallthrough)");
      out.append(py::make_tuple(info.name, info.schema, keys));
    }
    return out;
  });
}
