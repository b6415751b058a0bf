// DLPack exchange (__dlpack__, __dlpack_device__, from_dlpack): zero-copy sharing with numpy and
// any other framework that speaks DLPack.
#include "../ops/tensor_ops.h"
#include "python_util.h"

namespace fl::python {
namespace {

// The DLPack 0.8 ABI (dlpack.h), declared here to avoid a dependency for six structs.
struct DLDevice { int32_t device_type; int32_t device_id; };
struct DLDataType { uint8_t code; uint8_t bits; uint16_t lanes; };
struct DLTensor {
  void* data; DLDevice device; int32_t ndim; DLDataType dtype; int64_t* shape; int64_t* strides; uint64_t byte_offset;
};
struct DLManagedTensor { DLTensor dl_tensor; void* manager_ctx; void (*deleter)(DLManagedTensor*); };
// DLPack 1.0 adds a version and flags (numpy imports only these as writable).
struct DLPackVersion { uint32_t major; uint32_t minor; };
struct DLManagedTensorVersioned {
  DLPackVersion version; void* manager_ctx; void (*deleter)(DLManagedTensorVersioned*); uint64_t flags; DLTensor dl_tensor;
};
enum : uint8_t { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4, kDLBool = 6, kDLFloat8_e4m3fn = 10 };
// DLPack 1.1's float8 codes, from kDLFloat8_e4m3fn (10) on.
constexpr ScalarType kDLFloat8Types[] = {ScalarType::Float8_e4m3fn, ScalarType::Float8_e4m3fnuz, ScalarType::Float8_e5m2,
                                         ScalarType::Float8_e5m2fnuz, ScalarType::Float8_e8m0fnu};
constexpr int32_t kDLCPU = 1;

struct Exported {
  Tensor tensor;  // keeps storage alive
  IntList shape, strides;
  DLManagedTensor managed;
  DLManagedTensorVersioned versioned;
};

DLDataType dl_dtype(ScalarType t) {
  uint8_t bits = static_cast<uint8_t>(element_size(t) * 8);
  switch (t) {
    case ScalarType::Bool: return {kDLBool, 8, 1};
    case ScalarType::UInt8: return {kDLUInt, 8, 1};
    case ScalarType::BFloat16: return {kDLBfloat, 16, 1};
    default:
      for (uint8_t i = 0; i < 5; ++i)
        if (kDLFloat8Types[i] == t) return {static_cast<uint8_t>(kDLFloat8_e4m3fn + i), 8, 1};
      return {static_cast<uint8_t>(is_floating(t) ? kDLFloat : kDLInt), bits, 1};
  }
}

ScalarType from_dl_dtype(DLDataType d) {
  FL_CHECK(d.lanes == 1, TypeError, "from_dlpack: vector dtypes (lanes=", d.lanes, ") are not supported");
  switch (d.code) {
    case kDLBool: return ScalarType::Bool;
    case kDLUInt: FL_CHECK(d.bits == 8, TypeError, "from_dlpack: unsupported unsigned integer of ", int(d.bits), " bits"); return ScalarType::UInt8;
    case kDLInt:
      switch (d.bits) { case 8: return ScalarType::Int8; case 16: return ScalarType::Int16; case 32: return ScalarType::Int32; case 64: return ScalarType::Int64; }
      break;
    case kDLFloat:
      switch (d.bits) { case 16: return ScalarType::Float16; case 32: return ScalarType::Float32; case 64: return ScalarType::Float64; }
      break;
    case kDLBfloat: if (d.bits == 16) return ScalarType::BFloat16; break;
  }
  if (d.code >= kDLFloat8_e4m3fn && d.code < kDLFloat8_e4m3fn + 5 && d.bits == 8) return kDLFloat8Types[d.code - kDLFloat8_e4m3fn];
  throw fl::TypeError(str_cat("from_dlpack: unsupported DLPack dtype code ", int(d.code), " with ", int(d.bits), " bits"));
}

template <typename M>
void release_capsule(PyObject* cap, const char* name) {
  // Only a capsule nobody consumed still owns the tensor.
  if (PyCapsule_IsValid(cap, name)) {
    auto* m = static_cast<M*>(PyCapsule_GetPointer(cap, name));
    if (m && m->deleter) m->deleter(m);
  } else {
    PyErr_Clear();
  }
}

py::capsule to_dlpack(const Tensor& t, bool versioned) {
  auto* e = new Exported{t, t->sizes, t->strides, {}, {}};
  DLTensor dl;
  dl.data = t->data_ptr();
  dl.device = {kDLCPU, 0};
  dl.ndim = static_cast<int32_t>(t->dim());
  dl.dtype = dl_dtype(t->dtype);
  dl.shape = e->shape.data();
  dl.strides = e->strides.data();
  dl.byte_offset = 0;
  if (versioned) {
    e->versioned = {{1, 0}, e, [](DLManagedTensorVersioned* m) { delete static_cast<Exported*>(m->manager_ctx); }, 0, dl};
    return py::capsule(&e->versioned, "dltensor_versioned",
                       [](PyObject* cap) { release_capsule<DLManagedTensorVersioned>(cap, "dltensor_versioned"); });
  }
  e->managed = {dl, e, [](DLManagedTensor* m) { delete static_cast<Exported*>(m->manager_ctx); }};
  return py::capsule(&e->managed, "dltensor", [](PyObject* cap) { release_capsule<DLManagedTensor>(cap, "dltensor"); });
}

Tensor from_dlpack(py::object obj) {
  py::object cap = obj;
  if (py::hasattr(obj, "__dlpack__")) {
    if (is_tensor(obj)) return as_tensor(obj);
    try {
      cap = obj.attr("__dlpack__")(py::arg("max_version") = py::make_tuple(1, 0));
    } catch (py::error_already_set& e) {
      if (!e.matches(PyExc_TypeError)) throw;
      cap = obj.attr("__dlpack__")();  // a producer that predates DLPack 1.0
    }
  }
  const bool versioned = PyCapsule_IsValid(cap.ptr(), "dltensor_versioned");
  FL_CHECK(versioned || PyCapsule_IsValid(cap.ptr(), "dltensor"), TypeError,
           "from_dlpack: expected an object with __dlpack__ or an unconsumed DLPack capsule");
  void* raw = PyCapsule_GetPointer(cap.ptr(), versioned ? "dltensor_versioned" : "dltensor");
  const DLTensor& dl = versioned ? static_cast<DLManagedTensorVersioned*>(raw)->dl_tensor : static_cast<DLManagedTensor*>(raw)->dl_tensor;
  FL_CHECK(dl.device.device_type == kDLCPU, Error, "from_dlpack: only CPU tensors can be imported (device type ",
           dl.device.device_type, ")");
  ScalarType dt = from_dl_dtype(dl.dtype);
  IntList sizes(dl.shape, dl.shape + dl.ndim);
  IntList strides = dl.strides ? IntList(dl.strides, dl.strides + dl.ndim) : contiguous_strides(sizes);
  int64_t extent = 1;
  for (int i = 0; i < dl.ndim; ++i) {
    FL_CHECK(strides[i] >= 0, Error, "from_dlpack: negative strides are not supported");
    if (sizes[i] == 0) { extent = 0; break; }
    extent += (sizes[i] - 1) * strides[i];
  }
  std::shared_ptr<void> owner(raw, [versioned](void* p) {
    if (versioned) {
      auto* mt = static_cast<DLManagedTensorVersioned*>(p);
      if (mt->deleter) mt->deleter(mt);
    } else {
      auto* mt = static_cast<DLManagedTensor*>(p);
      if (mt->deleter) mt->deleter(mt);
    }
  });
  PyCapsule_SetName(cap.ptr(), versioned ? "used_dltensor_versioned" : "used_dltensor");
  auto storage = StorageImpl::wrap(static_cast<char*>(dl.data) + dl.byte_offset, extent * element_size(dt), std::move(owner));
  return make_tensor(std::move(storage), std::move(sizes), std::move(strides), 0, dt);
}

void bind(py::module_& m, TensorClass& cls) {
  cls.def("__dlpack__", [](const Tensor& t, py::kwargs kw) {
    FL_CHECK(!t->requires_grad, Error, "Can't export tensors that require gradient, use tensor.detach()");
    bool versioned = false;
    if (kw.contains("max_version") && !kw["max_version"].is_none())
      versioned = py::cast<py::tuple>(kw["max_version"])[0].cast<int>() >= 1;
    return to_dlpack(t, versioned);
  });
  cls.def("__dlpack_device__", [](const Tensor&) { return py::make_tuple(kDLCPU, 0); });
  m.def("from_dlpack", [](py::object ext) { return ops::lift_fresh(from_dlpack(ext)); }, py::arg("ext_tensor"),
        "A tensor sharing memory with a DLPack-exporting object.");
}

}  // namespace
}  // namespace fl::python

FL_PY_BINDINGS(60, fl::python::bind)
