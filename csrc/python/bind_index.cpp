// Python bindings of indexing: Tensor.__getitem__/__setitem__ (the Python index is parsed here
// into a view plus advanced index tensors) and the indexing ops of ops/index.h.
#include <algorithm>

#include "../autograd/autograd.h"
#include "../kernels/overlap.h"
#include "../ops/index.h"
#include "../ops/pointwise.h"
#include "../ops/views.h"
#include "../ops/tensor_ops.h"
#include "python_util.h"

namespace fl::python {
namespace {

// `self[index]` split into its basic part (a view of self) and the advanced index tensors that
// apply to the view's dims (null where a dim is taken whole; a k-dim mask covers k dims).
struct ParsedIndex {
  Tensor view;
  TensorList indices;
  bool advanced = false;
};

// Lists, tuples inside the index and numpy arrays become tensors, as torch.tensor would make them.
Tensor sequence_to_tensor(py::handle h) {
  if (py::isinstance<py::sequence>(h) && py::len(h) == 0) return empty({0}, ScalarType::Int64);
  return as_tensor(py::module_::import("flowlike").attr("tensor")(h));
}

enum class Kind { None, Ellipsis, Int, Slice, Bool, Tensor };
struct Item {
  Kind kind;
  int64_t value = 0;  // Int, Bool
  py::handle slice;
  Tensor tensor;
};

Item classify(py::handle h) {
  PyObject* o = h.ptr();
  if (o == Py_None) return {Kind::None};
  if (o == Py_Ellipsis) return {Kind::Ellipsis};
  if (PyBool_Check(o)) return {Kind::Bool, o == Py_True ? 1 : 0};
  if (PySlice_Check(o)) return {Kind::Slice, 0, h};
  Tensor t;
  if (is_tensor(h)) t = as_tensor(h);
  else if (PyList_Check(o) || PyTuple_Check(o) || py::isinstance<py::array>(h)) t = sequence_to_tensor(h);
  if (t) {
    // A 0-dim integer tensor indexes like an int (a view); a 0-dim bool like a Python bool.
    if (t->dim() == 0 && is_integral(t->dtype, false)) return {Kind::Int, item(t).to_int()};
    if (t->dim() == 0 && t->dtype == ScalarType::Bool) return {Kind::Bool, item(t).to_bool() ? 1 : 0};
    FL_CHECK(is_integral(t->dtype, true) && t->dtype != ScalarType::Int8 && t->dtype != ScalarType::Int16, IndexError,
             "tensors used as indices must be long, int, byte or bool tensors");
    return {Kind::Tensor, 0, {}, t};
  }
  FL_CHECK(!PyUnicode_Check(o), TypeError, "new(): invalid data type 'str'");
  int64_t i;
  if (int64_from_python(h, &i)) return {Kind::Int, i};  // (ValueError past int64, as torch)
  Scalar s;
  if (scalar_from_python(h, &s) && s.is_int()) return {Kind::Int, s.v.i};
  if (PyIndex_Check(o)) return {Kind::Int, py::cast<int64_t>(py::reinterpret_steal<py::object>(PyNumber_Index(o)))};
  throw fl::IndexError(str_cat("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices (got ",
                               std::string(py::str(py::type::of(h).attr("__name__"))), ")"));
}

ParsedIndex parse_index(const Tensor& self, py::handle index) {
  std::vector<Item> items;
  if (PyTuple_Check(index.ptr())) {
    for (py::handle h : py::reinterpret_borrow<py::tuple>(index)) items.push_back(classify(h));
  } else {
    items.push_back(classify(index));
  }
  const int64_t ndim = self->dim();
  int64_t consumed = 0;
  bool ellipsis = false;  // PyTorch accepts repeated ellipses; the ones after the first expand to nothing
  for (const Item& it : items) {
    if (it.kind == Kind::Int || it.kind == Kind::Slice) ++consumed;
    else if (it.kind == Kind::Tensor) consumed += is_integral(it.tensor->dtype, false) && it.tensor->dtype != ScalarType::UInt8 ? 1 : it.tensor->dim();
  }
  FL_CHECK(consumed <= ndim, IndexError, "too many indices for tensor of dimension ", ndim);

  ParsedIndex r;
  IntList sizes, strides;
  int64_t offset = self->offset, d = 0;
  int64_t mask_extra = 0;  // a k-dim mask covers k view dims with one entry of `indices`
  // the grad_fn name of PyTorch's last view op (it applies one per item, skipping full slices)
  const char* node_name = "AliasBackward0";
  auto keep_dim = [&] {
    sizes.push_back(self->sizes[d]);
    strides.push_back(self->strides[d]);
    ++d;
  };
  for (const Item& it : items) {
    switch (it.kind) {
      case Kind::Int: {
        int64_t size = self->sizes[d], i = it.value;
        FL_CHECK(i >= -size && i < size, IndexError, "index ", i, " is out of bounds for dimension ", d, " with size ", size);
        offset += (i < 0 ? i + size : i) * self->strides[d];
        ++d;
        node_name = "SelectBackward0";
        break;
      }
      case Kind::Slice: {
        Py_ssize_t start, stop, step;
        if (PySlice_Unpack(it.slice.ptr(), &start, &stop, &step) < 0) throw py::error_already_set();
        FL_CHECK(step > 0, ValueError, "step must be greater than zero");
        Py_ssize_t len = PySlice_AdjustIndices(static_cast<Py_ssize_t>(self->sizes[d]), &start, &stop, step);
        if (!(start == 0 && len == self->sizes[d] && step == 1)) node_name = "SliceBackward0";
        offset += len ? start * self->strides[d] : 0;
        sizes.push_back(len);
        strides.push_back(self->strides[d] * step);
        r.indices.resize(sizes.size() - mask_extra);
        ++d;
        break;
      }
      case Kind::None:
        node_name = "UnsqueezeBackward0";
        sizes.push_back(1);
        strides.push_back(d < ndim ? self->sizes[d] * self->strides[d] : 1);
        r.indices.resize(sizes.size() - mask_extra);
        break;
      case Kind::Ellipsis:
        for (int64_t n = ellipsis ? 0 : ndim - consumed; n > 0; --n) keep_dim();
        ellipsis = true;
        r.indices.resize(sizes.size() - mask_extra);
        break;
      case Kind::Bool: {
        // a new dim of size 1, kept (true) or emptied (false) by an index of zeros
        sizes.push_back(1);
        strides.push_back(0);
        Tensor idx = empty({it.value}, ScalarType::Int64);
        fill(idx, Scalar(int64_t(0)));
        r.indices.resize(sizes.size() - 1 - mask_extra);
        r.indices.push_back(idx);
        r.advanced = true;
        break;
      }
      case Kind::Tensor: {
        const Tensor& t = it.tensor;
        r.indices.resize(sizes.size() - mask_extra);
        r.indices.push_back(t);
        bool mask = t->dtype == ScalarType::Bool || t->dtype == ScalarType::UInt8;
        int64_t k = mask ? t->dim() : 1;
        for (int64_t j = 0; j < k; ++j) keep_dim();
        mask_extra += k - 1;
        r.advanced = true;
        break;
      }
    }
  }
  while (d < ndim) keep_dim();
  // the view is the as_strided op's; with autograd recording its grad_fn is named as PyTorch's
  r.view = ops::as_strided(self, sizes, strides, offset);
  if (self->requires_grad && thread_state().grad_enabled) {
    const auto& fn = autograd::current_grad_fn(r.view);
    if (auto* node = dynamic_cast<autograd::LambdaBackward*>(fn.get()); node && !r.advanced) node->node_name = node_name;
  }
  return r;
}

Tensor getitem(const Tensor& self, py::handle index) {
  ParsedIndex p = parse_index(self, index);
  return p.advanced ? ops::index(p.view, p.indices) : p.view;
}

void setitem(const Tensor& self, py::handle index, py::handle value) {
  autograd::check_inplace(self, is_tensor(value) ? as_tensor(value) : nullptr);
  Tensor v;
  Scalar s;
  int64_t i;
  // an int value is read as int64 by torch's setitem (ValueError past it), any other number as a Scalar
  bool is_number = !is_tensor(value) && (int64_from_python(value, &i) ? (s = Scalar(i), true) : scalar_from_python(value, &s));
  if (is_number) {
    v = scalar_tensor(s, self->dtype);
  } else {
    FL_CHECK(is_tensor(value), TypeError, "can't assign a ", std::string(py::str(py::type::of(value).attr("__name__"))),
             " to a flowlike tensor");
    v = as_tensor(value);
    // leading size-1 dims of the value are dropped, as PyTorch does, before broadcasting
    int64_t lead = 0;
    while (lead < v->dim() && v->sizes[lead] == 1) ++lead;
    if (lead) v = ops::as_strided(v, IntList(v->sizes.begin() + lead, v->sizes.end()), IntList(v->strides.begin() + lead, v->strides.end()), v->offset);
  }
  // x[mask] = scalar, with a mask over self's leading dims, is a masked fill (no nonzero pass)
  if (v->dim() == 0 && is_tensor(index) && as_tensor(index)->dtype == ScalarType::Bool) {
    const Tensor& m = as_tensor(index);
    if (m->dim() > 0 && m->dim() <= self->dim() && std::equal(m->sizes.begin(), m->sizes.end(), self->sizes.begin())) {
      IntList ms = m->sizes, mst = m->strides;
      ms.resize(self->dim(), 1);
      mst.resize(self->dim(), 0);
      ops::masked_fill_(self, ops::as_strided(m, ms, mst, m->offset), v);
      return;
    }
  }
  // Basic indexing copies with dtype conversion (copy_); advanced indexing, as PyTorch's index_put_,
  // requires a tensor value of self's dtype.
  ParsedIndex p = parse_index(self, index);
  if (p.advanced) {
    // x[bool_mask] = 0-dim tensor is a masked fill in PyTorch, which converts the value
    if (v->dim() == 0 && is_tensor(index) && as_tensor(index)->dtype == ScalarType::Bool) v = to_dtype(v, self->dtype);
    ops::index_put_(p.view, p.indices, v, false);
    return;
  }
  // (a float8 number is copied as the scalar tensor, as torch does: fill_ would check its range)
  if (is_number && !is_float8(self->dtype)) ops::fill_(p.view, s);
  else ops::copy_(p.view, v->storage == self->storage ? clone(v) : v);
}

// ---- helpers for the op bindings ---------------------------------------------------------------
// out= of nonzero and take_along_dim, by the one convention (flowlike._out.write_out): of exactly the result's dtype.
Tensor write_out(const Tensor& result, const Tensor& out, const char* op) {
  if (!out) return result;
  check_no_internal_overlap(out);  // (torch's index ops check it before resizing)
  static py::object* convention = new py::object(py::module_::import("flowlike._out").attr("write_out"));
  return py::cast<Tensor>((*convention)(out, result, op, py::arg("exact_dtype") = true));
}

// None reaches these helpers as an empty handle (see Note [required tensors] in core/dispatch.h); they read the
// tensors before any op does, so they check first.
void require_tensors(const char* op, std::initializer_list<std::pair<const char*, const Tensor*>> args) {
  for (auto& [name, t] : args)
    FL_CHECK(*t, TypeError, op, "(): argument '", name, "' must be Tensor, not NoneType");
}

py::object nonzero(const Tensor& self, const Tensor& out, bool as_tuple) {
  if (as_tuple) return py::tuple(py::cast(ops::where_true(self)));
  return py::cast(write_out(ops::nonzero(self), out, "nonzero"));
}

// take_along_dim: indices and input broadcast against each other except along `dim`, then gather. Along a dim,
// torch takes the indices modulo its size (so -1 is the last element).
Tensor take_along_dim(const Tensor& self, const Tensor& indices, py::handle dim_h) {
  require_tensors("take_along_dim", {{"input", &self}, {"indices", &indices}});
  FL_CHECK(indices->dtype == ScalarType::Int64, Error, "torch.take_along_dim(): dtype of indices should be Long but got ",
           c10_type_name(indices->dtype));
  if (dim_h.is_none()) {
    Tensor flat = contiguous(self), idx = contiguous(indices);
    return ops::gather(ops::as_strided(flat, {self->numel}, {1}, flat->offset), 0, ops::as_strided(idx, {idx->numel}, {1}, idx->offset), false);
  }
  FL_CHECK(self->dim() == indices->dim(), Error, "torch.take_along_dim(): input and indices should have the same number of dimensions, but got ",
           self->dim(), " dimensions for input, and ", indices->dim(), " dimensions for indices");
  // an int as torch's parser reads it (ValueError past int64); an index-like object (a 0-dim integer tensor) through
  // __index__; TypeError for anything else, bool included
  int64_t dim;
  if (!int64_from_python(dim_h, &dim)) {
    FL_CHECK(!PyBool_Check(dim_h.ptr()) && PyIndex_Check(dim_h.ptr()), TypeError,
             "take_along_dim(): argument 'dim' must be int, not ", std::string(py::str(py::type::of(dim_h).attr("__name__"))));
    py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(dim_h.ptr()));
    if (!index) throw py::error_already_set();
    FL_CHECK(int64_from_python(index, &dim), TypeError, "take_along_dim(): argument 'dim' must be int");
  }
  dim = wrap_dim(dim, self->dim(), "take_along_dim");
  IntList a = self->sizes, b = indices->sizes;
  if (self->dim()) a[dim] = b[dim] = 1;
  IntList shape = broadcast_shapes(a, b, "take_along_dim");
  IntList ss = shape, is = shape;
  if (self->dim()) { ss[dim] = self->sizes[dim]; is[dim] = indices->sizes[dim]; }
  Tensor idx = indices;
  if (idx->numel) {
    const int64_t n = self->dim() ? self->sizes[dim] : 1;
    FL_CHECK(n != 0, Error, "ZeroDivisionError");  // (torch's message: its remainder by the empty dim's size)
    idx = ops::remainder(idx, wrap_scalar(Scalar(n)), Scalar(int64_t(1)), nullptr);
  }
  // (self through ops::expand, which records the broadcast for autograd)
  return ops::gather(self->sizes == ss ? self : ops::expand(self, ss), dim,
                     index_detail::expand_to(idx, is, "take_along_dim"), false);
}

void bind(py::module_& m, TensorClass& cls) {
  cls.def("__getitem__", &getitem, py::arg("indices"));
  cls.def("__setitem__", &setitem, py::arg("indices"), py::arg("value"));
  auto none = py::none();
  const auto out_kw = py::arg("out").none(true) = py::none();

  m.def("take_along_dim", [](const Tensor& self, const Tensor& indices, py::handle dim, const Tensor& out) {
    return write_out(take_along_dim(self, indices, dim), out, "take_along_dim");
  }, py::arg("input"), py::arg("indices"), py::arg("dim") = none, py::kw_only(), out_kw,
     "Gathers `input` at `indices` along `dim` (broadcasting the other dims), or from the flattened input.");
  cls.def("take_along_dim", &take_along_dim, py::arg("indices"), py::arg("dim") = none);
  m.def("nonzero", &nonzero, py::arg("input"), py::kw_only(), out_kw, py::arg("as_tuple") = false,
        "Indices of the nonzero elements: an [n, ndim] int64 tensor, or a tuple of 1-D tensors with as_tuple.");
  cls.def("nonzero", [](const Tensor& self, bool as_tuple) { return nonzero(self, nullptr, as_tuple); }, py::kw_only(),
          py::arg("as_tuple") = false);
}

}  // namespace
}  // namespace fl::python

FL_PY_BINDINGS(40, fl::python::bind)
