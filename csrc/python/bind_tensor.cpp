// Tensor attributes, conversions (numpy, Python numbers, lists) and memory-level methods.
#include <cstring>

#include "../autograd/autograd.h"
#include "../graph/trace.h"
#include "../ops/complex.h"
#include "../ops/pointwise.h"
#include "../ops/tensor_ops.h"
#include "../ops/views.h"
#include "python_util.h"

namespace fl::python {
namespace {

py::dtype numpy_dtype(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return py::dtype("bool");
    case ScalarType::UInt8: return py::dtype("uint8");
    case ScalarType::Int8: return py::dtype("int8");
    case ScalarType::Int16: return py::dtype("int16");
    case ScalarType::Int32: return py::dtype("int32");
    case ScalarType::Int64: return py::dtype("int64");
    case ScalarType::Float16: return py::dtype("float16");
    case ScalarType::Float32: return py::dtype("float32");
    case ScalarType::Float64: return py::dtype("float64");
    case ScalarType::ComplexFloat: return py::dtype("complex64");
    case ScalarType::ComplexDouble: return py::dtype("complex128");
    default: throw fl::TypeError(str_cat("Got unsupported ScalarType ", c10_type_name(t)));
  }
}

ScalarType scalar_type_of_numpy(const py::dtype& d) {
  char kind = d.kind();
  size_t size = d.itemsize();
  if (kind == 'b') return ScalarType::Bool;
  if (kind == 'u' && size == 1) return ScalarType::UInt8;
  if (kind == 'i') {
    switch (size) { case 1: return ScalarType::Int8; case 2: return ScalarType::Int16; case 4: return ScalarType::Int32; case 8: return ScalarType::Int64; }
  }
  if (kind == 'f') {
    switch (size) { case 2: return ScalarType::Float16; case 4: return ScalarType::Float32; case 8: return ScalarType::Float64; }
  }
  if (kind == 'c' && size == 8) return ScalarType::ComplexFloat;
  if (kind == 'c' && size == 16) return ScalarType::ComplexDouble;
  throw fl::TypeError(str_cat("can't convert np.ndarray of type ", std::string(py::str(d)),
                              ". The only supported types are: float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint8, and bool."));
}

// A tensor viewing the numpy array's memory; the array stays alive while the storage does.
Tensor from_numpy(py::array arr) {
  ScalarType dt = scalar_type_of_numpy(arr.dtype());
  const int64_t isz = static_cast<int64_t>(element_size(dt));
  IntList sizes(arr.ndim()), strides(arr.ndim());
  int64_t hi = 0;
  for (py::ssize_t d = 0; d < arr.ndim(); ++d) {
    sizes[d] = arr.shape(d);
    int64_t sb = arr.strides(d);
    if (sb < 0)
      throw fl::ValueError("At least one stride in the given numpy array is negative, and tensors with negative strides are not currently supported. (You can probably work around this by making a copy of your array  with array.copy().) ");
    FL_CHECK(sb % isz == 0, ValueError, "given numpy array strides not a multiple of the element byte size. Copy the numpy array to reallocate the memory.");
    strides[d] = sb / isz;
    if (sizes[d] > 0) hi += (sizes[d] - 1) * sb;
  }
  PyObject* owner = arr.ptr();
  Py_INCREF(owner);
  std::shared_ptr<void> keep(owner, [](void* o) {
    py::gil_scoped_acquire g;
    Py_DECREF(static_cast<PyObject*>(o));
  });
  size_t nbytes = arr.size() == 0 ? 0 : static_cast<size_t>(hi + isz);
  auto storage = StorageImpl::wrap(const_cast<void*>(arr.data()), nbytes, std::move(keep));
  return make_tensor(std::move(storage), std::move(sizes), std::move(strides), 0, dt);
}

// A numpy array viewing the tensor's memory (kept alive through a capsule holding the storage).
py::array to_numpy(const Tensor& t) {
  py::dtype dt = numpy_dtype(t->dtype);
  std::vector<py::ssize_t> shape(t->sizes.begin(), t->sizes.end()), strides(t->dim());
  for (int64_t d = 0; d < t->dim(); ++d) strides[d] = t->strides[d] * static_cast<int64_t>(t->itemsize());
  auto* keep = new std::shared_ptr<StorageImpl>(t->storage);
  py::capsule cap(keep, [](void* p) { delete static_cast<std::shared_ptr<StorageImpl>*>(p); });
  return py::array(dt, shape, strides, t->data_ptr(), cap);
}

py::object tolist_rec(const Tensor& t, int64_t dim, const char* p) {
  if (dim == t->dim()) {
    Scalar s;
    FL_DISPATCH_STORAGE(t->dtype, "tolist", {
      s = scalar_of(conj_if(*reinterpret_cast<const scalar_t*>(p), t->conj));
    });
    return scalar_to_python(s);
  }
  py::list out(t->sizes[dim]);
  int64_t step = t->strides[dim] * static_cast<int64_t>(t->itemsize());
  for (int64_t i = 0; i < t->sizes[dim]; ++i) out[i] = tolist_rec(t, dim + 1, p + i * step);
  return out;
}

void bind(py::module_& m, TensorClass& cls) {
  m.def("from_numpy", [](py::array arr) { return ops::lift_fresh(from_numpy(arr)); }, py::arg("ndarray"),
        "Creates a tensor that shares memory with a numpy array.");
  // from_numpy without lift_fresh: a capture sees a hole (tests/test_capture_replay.py checks that it does)
  m.def("_from_numpy_unlifted", &from_numpy);
  m.def("_empty", [](const IntList& sizes, py::handle dtype) { return empty(sizes, dtype_from_object(dtype)); });
  m.def("_empty_strided", [](const IntList& sizes, const IntList& strides, py::handle dtype) {
    return empty_strided(sizes, strides, dtype_from_object(dtype));
  });
  m.def("_scalar_tensor", [](py::handle value, py::handle dtype) {
    Scalar s;
    FL_CHECK(scalar_from_python(value, &s), TypeError, "expected a number");
    return ops::scalar_tensor(s, dtype_from_object(dtype), false);
  });
  m.def("_wrap_scalar", [](py::handle value) {
    Scalar s;
    FL_CHECK(scalar_from_python(value, &s), TypeError, "expected a number");
    return wrap_scalar(s);  // through ops::scalar_tensor
  });
  m.def("get_default_dtype", []() { return dtype_object(default_dtype()); }, "The default floating point dtype.");
  m.def("_set_default_dtype", [](py::handle d) { set_default_dtype(dtype_from_object(d)); });
  m.def("promote_types", [](py::handle a, py::handle b) {
    return dtype_object(promote_types(dtype_from_object(a), dtype_from_object(b)));
  }, py::arg("type1"), py::arg("type2"), "The smallest dtype to which both dtypes can be converted.");
  m.def("can_cast", [](py::handle a, py::handle b) { return fl::can_cast(dtype_from_object(a), dtype_from_object(b)); },
        py::arg("from_"), py::arg("to"), "Whether a cast is allowed under PyTorch's casting rules.");
  m.def("result_type", [](py::handle a, py::handle b) {
    Tensor ta = tensor_or_number(a, "result_type", "tensor1"), tb = tensor_or_number(b, "result_type", "tensor2");
    return dtype_object(result_type(ta, tb));
  }, py::arg("tensor1"), py::arg("tensor2"), "The dtype an arithmetic op on the two arguments produces.");

  // torch.Tensor(...) legacy constructor: Tensor(), Tensor(*sizes), Tensor(data), Tensor(tensor).
  cls.def(py::init([](py::args args) -> Tensor {
    if (args.size() == 0) return empty({0}, default_dtype());
    if (args.size() == 1 && is_tensor(args[0])) {
      Tensor src = as_tensor(args[0]);
      return make_view(src, src->sizes, src->strides, src->offset);
    }
    if (args.size() == 2 && is_tensor(args[0]) && py::isinstance<py::str>(args[1]) &&
        args[1].cast<std::string>() == "__as_subclass__") {  // Tensor.as_subclass: an alias in the autograd graph
      Tensor src = as_tensor(args[0]);
      return ops::view(src, src->sizes);
    }
    bool all_ints = true;
    for (py::handle a : args) all_ints = all_ints && PyLong_Check(a.ptr()) && !PyBool_Check(a.ptr());
    if (all_ints) return empty(int_list(args, "Tensor", "size"), default_dtype());
    FL_CHECK(args.size() == 1, TypeError, "Tensor(): expected a sequence of ints or a single data argument");
    py::object made = py::module_::import("flowlike._creation").attr("tensor")(args[0], py::arg("dtype") = dtype_object(default_dtype()));
    Tensor t = as_tensor(made);
    return make_view(t, t->sizes, t->strides, t->offset);
  }));
  cls.def_property_readonly("dtype", [](const Tensor& t) { return dtype_object(t->dtype); })
      .def_property_readonly("shape", [](const Tensor& t) { return size_object(t->sizes); })
      .def_property_readonly("device", [](const Tensor&) { return cpu_device_object(); })
      .def_property_readonly("ndim", [](const Tensor& t) { return t->dim(); })
      .def_property_readonly("is_cuda", [](const Tensor&) { return false; })
      .def_property_readonly("is_cpu", [](const Tensor&) { return true; })
      .def_property_readonly("is_sparse", [](const Tensor&) { return false; })
      .def_property_readonly("is_quantized", [](const Tensor&) { return false; })
      .def_property_readonly("is_meta", [](const Tensor&) { return false; })
      .def_property_readonly("itemsize", [](const Tensor& t) { return t->itemsize(); })
      .def_property_readonly("nbytes", [](const Tensor& t) { return t->numel * static_cast<int64_t>(t->itemsize()); })
      .def_property_readonly("_version", [](const Tensor& t) { return t->version->version.load(); })
      .def_property_readonly("_is_wrapped_number", [](const Tensor& t) { return t->wrapped_number; })
      .def("is_conj", [](const Tensor& t) { return t->conj; })
      .def("is_complex", [](const Tensor& t) { return is_complex(t->dtype); })
      .def("dim", [](const Tensor& t) { return t->dim(); })
      .def("ndimension", [](const Tensor& t) { return t->dim(); })
      .def("numel", [](const Tensor& t) { return t->numel; })
      .def("nelement", [](const Tensor& t) { return t->numel; })
      .def("element_size", [](const Tensor& t) { return t->itemsize(); })
      .def("size", [](const Tensor& t, py::object dim) -> py::object {
        if (dim.is_none()) return size_object(t->sizes);
        return py::int_(t->dim() == 0 ? (wrap_dim(dim.cast<int64_t>(), 0), int64_t(1)) : t->sizes[wrap_dim(dim.cast<int64_t>(), t->dim())]);
      }, py::arg("dim") = py::none())
      .def("stride", [](const Tensor& t, py::object dim) -> py::object {
        if (dim.is_none()) {
          py::tuple out(t->dim());
          for (int64_t i = 0; i < t->dim(); ++i) out[i] = py::int_(t->strides[i]);
          return out;
        }
        return py::int_(t->dim() == 0 ? (wrap_dim(dim.cast<int64_t>(), 0), int64_t(1)) : t->strides[wrap_dim(dim.cast<int64_t>(), t->dim())]);
      }, py::arg("dim") = py::none())
      .def("storage_offset", [](const Tensor& t) { return t->offset; })
      .def("is_contiguous", [](const Tensor& t, py::object) { return t->contiguous; }, py::arg("memory_format") = py::none())
      .def("data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t->data_ptr()); })
      .def("_storage_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t->storage->data); })
      .def("_storage_nbytes", [](const Tensor& t) { return t->storage->nbytes; })
      .def("_is_view_of", [](const Tensor& a, const Tensor& b) { return a->storage == b->storage; })
      .def("item", [](const Tensor& t) {
        graph::check_host_read("item");
        return scalar_to_python(item(t));
      })
      .def("tolist", [](const Tensor& t) {
        graph::check_host_read("tolist");
        return tolist_rec(t, 0, t->data_ptr());
      })
      .def("numpy", [](const Tensor& t, bool force) {
        graph::check_host_read("numpy");
        FL_CHECK(force || !t->requires_grad, Error,
                 "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.");
        FL_CHECK(force || !t->conj, Error,
                 "Can't call numpy() on Tensor that has conjugate bit set. Use tensor.resolve_conj().numpy() instead.");
        return to_numpy(force ? ops::resolve_conj(t) : t);
      }, py::arg("force") = false)
      .def("_numpy_unchecked", [](const Tensor& t) {
        graph::check_host_read("numpy");
        return to_numpy(ops::resolve_conj(t));
      })
      .def("contiguous", [](const Tensor& t, py::object) { return ops::contiguous(t); },
           py::arg("memory_format") = py::none())
      .def("clone", [](const Tensor& t, py::object) { return ops::clone(t); }, py::arg("memory_format") = py::none())
      .def("_to_dtype", [](const Tensor& t, py::handle dtype, bool copy) {
        return ops::_to_copy(t, dtype_from_object(dtype), copy);
      })
      .def("copy_", [](const Tensor& self, py::handle src, bool) {
        return ops::copy_(self, tensor_or_number(src, "copy_", "src"));
      }, py::arg("src"), py::arg("non_blocking") = false)
      // A 1-D uint8 tensor over the bytes [start, start + length) of t's storage (length -1: to its end), which
      // is then its whole storage: the storage itself when that is all of it, else a new one sharing the
      // memory (as torch's storage slices; the sliced storage can no longer grow). Backs flowlike.UntypedStorage.
      .def("_storage_bytes", [](const Tensor& t, int64_t start, int64_t length) {
        int64_t nbytes = static_cast<int64_t>(t->storage->nbytes);
        FL_CHECK(start >= 0 && start <= nbytes && length >= -1, IndexError, "storage slice from ", start,
                 " of length ", length, " out of range for storage of ", nbytes, " bytes");
        if (length < 0) length = nbytes - start;
        FL_CHECK(start + length <= nbytes, IndexError, "storage slice [", start, ", ", start + length,
                 ") out of range for storage of ", nbytes, " bytes");
        auto storage = t->storage;
        if (start != 0 || length != nbytes) {
          storage = StorageImpl::wrap(static_cast<char*>(t->storage->data) + start, length, t->storage);
          t->storage->resizable = false;  // a reallocation would leave the slice pointing at freed memory
        }
        return make_tensor(storage, {length}, {1}, 0, ScalarType::UInt8);
      }, py::arg("start") = 0, py::arg("length") = -1)
      .def("is_inference", [](const Tensor& t) { return t->inference; })
      .def("detach_", [](const Tensor& t) {
        // as torch: a leaf that does not require grad; a view cannot leave its base's history in place
        FL_CHECK(!t->is_view, Error, "Can't detach views in-place. Use detach() instead.");
        if (t->autograd) {
          t->autograd->grad_fn.reset();
          t->autograd->output_nr = 0;
        }
        t->requires_grad = false;
        return t;
      })
      .def("_set_data", [](const Tensor& self, const Tensor& src) {
        // torch's `t.data = src`: self takes src's memory, geometry and dtype, and keeps its identity,
        // autograd state (requires_grad, grad, hooks) and version counter (Module._apply relies on it
        // so that optimizers keep holding the converted parameters).
        FL_CHECK(!self->requires_grad || is_differentiable(src->dtype), Error,
                 "data set to a tensor that requires gradients must be floating point or complex dtype");
        if (self->dtype != src->dtype || self->sizes != src->sizes) {
          // the cached gradient accumulator was made for the old metadata (as torch's set_data)
          if (self->autograd) self->autograd->grad_accumulator.reset();
        }
        self->storage = src->storage;
        self->sizes = src->sizes;
        self->strides = src->strides;
        self->offset = src->offset;
        self->dtype = src->dtype;
        self->refresh();
      }, py::arg("data"));
}

}  // namespace
}  // namespace fl::python

FL_PY_BINDINGS(0, fl::python::bind)
