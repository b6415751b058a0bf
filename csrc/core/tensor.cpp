#include "tensor.h"

#include <cstdlib>
#include <cstring>

#include "allocator.h"
#include "dispatch.h"

namespace fl {

// ---- storage ------------------------------------------------------------------------------
namespace detail { thread_local AllocationPlanner* allocation_planner = nullptr; }

std::shared_ptr<StorageImpl> StorageImpl::allocate(size_t nbytes) {
  if (AllocationPlanner* planner = detail::allocation_planner)
    if (auto s = planner->allocate(nbytes)) return s;
  return heap_allocate(nbytes);
}

std::shared_ptr<StorageImpl> StorageImpl::heap_allocate(size_t nbytes) {
  auto s = std::make_shared<StorageImpl>();
  s->data = CPUAllocator::get().allocate(nbytes, &s->capacity);
  s->nbytes = nbytes;
  return s;
}

std::shared_ptr<StorageImpl> StorageImpl::wrap(void* data, size_t nbytes, std::shared_ptr<void> owner) {
  auto s = std::make_shared<StorageImpl>();
  s->data = data;
  s->nbytes = nbytes;
  s->external = std::move(owner);
  s->resizable = false;
  return s;
}

void StorageImpl::resize(size_t new_nbytes) {
  if (new_nbytes <= nbytes) { nbytes = new_nbytes; return; }
  FL_CHECK(resizable, Error, "Trying to resize storage that is not resizable");
  if (new_nbytes > capacity) {
    size_t cap = 0;
    void* p = CPUAllocator::get().allocate(new_nbytes, &cap);
    if (nbytes) std::memcpy(p, data, nbytes);
    if (capacity) CPUAllocator::get().free(data, capacity);
    data = p;
    capacity = cap;
  }
  nbytes = new_nbytes;
}

StorageImpl::~StorageImpl() {
  if (capacity && data) CPUAllocator::get().free(data, capacity);
}

// ---- tensor -------------------------------------------------------------------------------
void TensorImpl::refresh() {
  numel = 1;
  for (int64_t s : sizes) numel *= s;
  contiguous = true;
  int64_t expected = 1;
  for (int64_t d = dim() - 1; d >= 0; --d) {
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) { contiguous = false; break; }
    expected *= sizes[d];
  }
}

IntList contiguous_strides(const IntList& sizes) {
  IntList st(sizes.size());
  int64_t acc = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    st[d] = acc;
    acc *= std::max<int64_t>(sizes[d], 1);
  }
  return st;
}

std::string shape_str(const IntList& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

int64_t numel_of(const IntList& sizes, const char* op) {
  int64_t n = 1;
  for (int64_t s : sizes) {
    FL_CHECK(s >= 0, Error, op, "(): Trying to create tensor with negative dimension ", s, ": ", shape_str(sizes));
    if (s != 0 && n > (int64_t(1) << 62) / s) throw Error(str_cat(op, "(): tensor of size ", shape_str(sizes), " is too large"));
    n *= s;
  }
  return n;
}

std::atomic<uint64_t> detail::capture_epoch{0};
uint64_t begin_capture_epoch() { return detail::capture_epoch.fetch_add(1, std::memory_order_relaxed) + 1; }

Tensor make_tensor(std::shared_ptr<StorageImpl> storage, IntList sizes, IntList strides, int64_t offset, ScalarType dtype) {
  auto t = std::make_shared<TensorImpl>();
  t->storage = std::move(storage);
  t->sizes = std::move(sizes);
  t->strides = std::move(strides);
  t->offset = offset;
  t->dtype = dtype;
  t->version = std::make_shared<VersionCounter>();
  t->inference = thread_state().inference_mode;
  t->refresh();
  return t;
}

Tensor make_view(const Tensor& base, IntList sizes, IntList strides, int64_t offset) {
  auto t = std::make_shared<TensorImpl>();
  t->storage = base->storage;
  t->sizes = std::move(sizes);
  t->strides = std::move(strides);
  t->offset = offset;
  t->dtype = base->dtype;
  t->version = base->version;
  t->view_version = base->version->version.load(std::memory_order_relaxed);
  t->is_view = true;
  t->conj = base->conj;
  t->inference = base->inference || thread_state().inference_mode;
  Tensor root = base->view_base.lock();
  t->view_base = root ? root : base;
  t->refresh();
  return t;
}

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  int64_t n = std::max<int64_t>(ndim, 1);  // a 0-dim tensor accepts dim 0 and -1
  if (dim < -n || dim >= n) {
    throw IndexError(str_cat(op ? op : "", op ? ": " : "", "Dimension out of range (expected to be in range of [", -n, ", ", n - 1,
                             "], but got ", dim, ")"));
  }
  return dim < 0 ? dim + n : dim;
}

IntList broadcast_shapes(const IntList& a, const IntList& b, const char* op) {
  size_t n = std::max(a.size(), b.size());
  IntList out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da == db || db == 1) out[i] = da;
    else if (da == 1) out[i] = db;
    else
      throw Error(str_cat(op ? op : "", op ? ": " : "", "The size of tensor a (", da, ") must match the size of tensor b (", db,
                          ") at non-singleton dimension ", i, "; shapes ", shape_str(a), " and ", shape_str(b)));
  }
  return out;
}

// ---- type promotion -------------------------------------------------------------------------
namespace {
thread_local ScalarType g_default_dtype = ScalarType::Float32;

// PyTorch's promoteTypes lookup table, rows and columns in ScalarType order (the float8 types, which promote with
// themselves only, are left out).
constexpr ScalarType b1 = ScalarType::Bool, u1 = ScalarType::UInt8, i1 = ScalarType::Int8, i2 = ScalarType::Int16,
                     i4 = ScalarType::Int32, i8 = ScalarType::Int64, f2 = ScalarType::Float16, bf = ScalarType::BFloat16,
                     f4 = ScalarType::Float32, f8 = ScalarType::Float64, c4 = ScalarType::ComplexFloat,
                     c8 = ScalarType::ComplexDouble;
// (torch promotes float16 with complex64 to complex64, and float64 with complex64 to complex128)
constexpr ScalarType kPromote[static_cast<int>(ScalarType::Float8_e4m3fn)][static_cast<int>(ScalarType::Float8_e4m3fn)] = {
    /*b1*/ {b1, u1, i1, i2, i4, i8, f2, bf, f4, f8, c4, c8},
    /*u1*/ {u1, u1, i2, i2, i4, i8, f2, bf, f4, f8, c4, c8},
    /*i1*/ {i1, i2, i1, i2, i4, i8, f2, bf, f4, f8, c4, c8},
    /*i2*/ {i2, i2, i2, i2, i4, i8, f2, bf, f4, f8, c4, c8},
    /*i4*/ {i4, i4, i4, i4, i4, i8, f2, bf, f4, f8, c4, c8},
    /*i8*/ {i8, i8, i8, i8, i8, i8, f2, bf, f4, f8, c4, c8},
    /*f2*/ {f2, f2, f2, f2, f2, f2, f2, f4, f4, f8, c4, c8},
    /*bf*/ {bf, bf, bf, bf, bf, bf, f4, bf, f4, f8, c4, c8},
    /*f4*/ {f4, f4, f4, f4, f4, f4, f4, f4, f4, f8, c4, c8},
    /*f8*/ {f8, f8, f8, f8, f8, f8, f8, f8, f8, f8, c8, c8},
    /*c4*/ {c4, c4, c4, c4, c4, c4, c4, c4, c4, c8, c4, c8},
    /*c8*/ {c8, c8, c8, c8, c8, c8, c8, c8, c8, c8, c8, c8},
};
}  // namespace

ScalarType default_dtype() { return g_default_dtype; }
void set_default_dtype(ScalarType t) {
  FL_CHECK(t == ScalarType::Float32 || t == ScalarType::Float64 || t == ScalarType::Float16 || t == ScalarType::BFloat16, TypeError,
           "only floating-point types are supported as the default type");
  g_default_dtype = t;
}

ScalarType promote_types(ScalarType a, ScalarType b) {
  if (a == b) return a;
  FL_CHECK(!is_float8(a) && !is_float8(b), Error, "Promotion for Float8 Types is not supported, attempted to promote ",
           c10_type_name(a), " and ", c10_type_name(b));
  return kPromote[static_cast<int>(a)][static_cast<int>(b)];
}

const char* dtype_name(ScalarType t) {
  static const char* names[] = {"bool",          "uint8",       "int8",            "int16",           "int32",
                                "int64",         "float16",     "bfloat16",        "float32",         "float64",
                                "complex64",     "complex128",  "float8_e4m3fn",   "float8_e5m2",     "float8_e4m3fnuz",
                                "float8_e5m2fnuz", "float8_e8m0fnu"};
  static_assert(sizeof(names) / sizeof(names[0]) == kNumScalarTypes);
  return names[static_cast<int>(t)];
}

const char* c10_type_name(ScalarType t) {
  static const char* names[] = {"Bool",          "Byte",        "Char",            "Short",           "Int",
                                "Long",          "Half",        "BFloat16",        "Float",           "Double",
                                "ComplexFloat",  "ComplexDouble", "Float8_e4m3fn", "Float8_e5m2",     "Float8_e4m3fnuz",
                                "Float8_e5m2fnuz", "Float8_e8m0fnu"};
  static_assert(sizeof(names) / sizeof(names[0]) == kNumScalarTypes);
  return names[static_cast<int>(t)];
}

void throw_unsupported_dtype(const char* op, ScalarType t) {
  throw NotImplementedError(str_cat("\"", op, "\" not implemented for '", c10_type_name(t), "'"));
}

ScalarType result_type(const std::vector<const TensorImpl*>& ts) {
  // Three priority classes, as in PyTorch's ResultTypeState.
  bool has[3] = {false, false, false};
  ScalarType st[3] = {ScalarType::Bool, ScalarType::Bool, ScalarType::Bool};
  for (const TensorImpl* t : ts) {
    int cls = t->wrapped_number ? 2 : (t->dim() == 0 ? 1 : 0);
    ScalarType dt = t->dtype;
    if (cls == 2) {
      // a Python float participates as the default dtype, a complex as its complex counterpart, an int as int64
      if (is_floating(dt)) dt = g_default_dtype;
      else if (is_complex(dt)) dt = to_complex_type(g_default_dtype);
    }
    st[cls] = has[cls] ? promote_types(st[cls], dt) : dt;
    has[cls] = true;
  }
  // combine(higher, lower): the higher class wins unless the lower one is of a higher category; a floating
  // tensor meeting a complex scalar becomes the complex type of its own precision
  bool have = has[2];
  ScalarType r = st[2];
  for (int cls = 1; cls >= 0; --cls) {
    if (!has[cls]) continue;
    if (have && category(r) > category(st[cls]))
      r = is_complex(r) && is_floating(st[cls]) ? to_complex_type(st[cls]) : promote_types(st[cls], r);
    else
      r = st[cls];
    have = true;
  }
  return r;
}

}  // namespace fl
