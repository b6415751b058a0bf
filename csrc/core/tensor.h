// Tensor and storage.
//
// Note [Views and version counters]
// A view is a TensorImpl with its own sizes/strides/offset over the *same* StorageImpl and the
// *same* VersionCounter as its base. Every in-place write bumps the shared counter, so autograd
// can tell that a tensor it saved was modified through any alias. `detach()` shares both;
// `.data`-style aliases get a fresh counter.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "dtype.h"
#include "error.h"
#include "scalar.h"

namespace fl {

using IntList = std::vector<int64_t>;

enum class DeviceType : int8_t { CPU, CUDA };
struct Device {
  DeviceType type = DeviceType::CPU;
  int8_t index = -1;
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
};

struct StorageImpl {
  void* data = nullptr;
  size_t nbytes = 0;
  size_t capacity = 0;             // block size from the allocator; 0 when memory is external
  std::shared_ptr<void> external;  // keeps foreign memory (numpy, buffers, dlpack) alive
  Device device;
  bool resizable = true;

  // From this thread's allocation planner when one is installed and serves the request, else from the caching
  // allocator (heap_allocate).
  static std::shared_ptr<StorageImpl> allocate(size_t nbytes);
  static std::shared_ptr<StorageImpl> heap_allocate(size_t nbytes);
  static std::shared_ptr<StorageImpl> wrap(void* data, size_t nbytes, std::shared_ptr<void> owner);
  // Grows the buffer in place (keeping contents); only for storages we own.
  void resize(size_t new_nbytes);
  ~StorageImpl();
};

// A thread's allocations can be served by a planner: a captured program's run places its intermediate tensors in
// one arena planned ahead (Note [Memory plan] in csrc/graph/memory_plan.h).
struct AllocationPlanner {
  virtual ~AllocationPlanner() = default;
  // Storage for `nbytes`, or nullptr to leave the request to the caching allocator.
  virtual std::shared_ptr<StorageImpl> allocate(size_t nbytes) = 0;
};
namespace detail { extern thread_local AllocationPlanner* allocation_planner; }

struct VersionCounter { std::atomic<uint32_t> version{0}; };

struct TensorImpl;
using Tensor = std::shared_ptr<TensorImpl>;
// Capture epochs: each graph capture begins a new epoch (begin_capture_epoch), and a tensor notes
// the epoch it was made in, so a capture tells the tensors that existed before it began (its
// inputs) from the ones made during it, each of which must come out of a recorded op. (A plain
// load per tensor, where a creation counter would be an atomic add.)
namespace detail { extern std::atomic<uint64_t> capture_epoch; }
inline uint64_t current_capture_epoch() { return detail::capture_epoch.load(std::memory_order_relaxed); }
uint64_t begin_capture_epoch();
namespace autograd { struct Node; }

// Per-tensor autograd state (csrc/autograd): a non-leaf has grad_fn, the node that produced it
// (this tensor being its output `output_nr`); a leaf that requires grad accumulates into `grad`
// through its grad_accumulator node.
struct AutogradMeta {
  Tensor grad;
  std::shared_ptr<autograd::Node> grad_fn;
  std::weak_ptr<autograd::Node> grad_accumulator;
  uint32_t output_nr = 0;
  // The version counter's value when grad_fn was set; a view whose counter has moved since gets a
  // regenerated grad_fn (Note [Views of a base written in place] in csrc/autograd/inplace_autograd.cpp).
  uint32_t attr_version = 0;
  bool retains_grad = false;
  // A leaf's Tensor.register_hook hooks (id, fn; fn may return a replacement gradient or null) and
  // register_post_accumulate_grad_hook hooks, both run by its AccumulateGrad in registration order.
  // (A non-leaf's hooks live on its grad_fn: Node::pre_hooks.)
  std::vector<std::pair<uint64_t, std::function<Tensor(const Tensor&)>>> leaf_hooks;
  std::vector<std::pair<uint64_t, std::function<void(const Tensor&)>>> post_accumulate_hooks;
};

struct TensorImpl {
  std::shared_ptr<StorageImpl> storage;
  IntList sizes;
  IntList strides;  // in elements
  int64_t offset = 0;  // in elements
  int64_t numel = 1;
  ScalarType dtype = ScalarType::Float32;
  bool requires_grad = false;
  bool contiguous = true;
  // A Python number turned into a 0-dim tensor: it takes part in type promotion as a scalar.
  bool wrapped_number = false;
  // Made by make_view: aliases another tensor's memory (autograd refuses in-place writes into
  // views of tensors that require grad until it can rebase the base's history).
  bool is_view = false;
  // The conjugate bit (Note [The conjugate bit] in csrc/core/dispatch.h): the values are the complex
  // conjugates of the memory's.
  bool conj = false;
  // Made while inference mode was on (or a view of such a tensor): Tensor.is_inference().
  bool inference = false;
  // The tensor a view was made from, followed to the root (see Note [In-place writes into views]
  // in csrc/autograd/inplace_autograd.cpp). Weak: a view does not keep its base alive, and once the
  // base is gone nobody can observe its history.
  std::weak_ptr<TensorImpl> view_base;
  std::shared_ptr<VersionCounter> version;
  // A view: the version counter's value when it was made (Note [Views of a base written in place]).
  uint32_t view_version = 0;
  std::unique_ptr<AutogradMeta> autograd;
  uint64_t epoch = current_capture_epoch();

  int64_t dim() const { return static_cast<int64_t>(sizes.size()); }
  size_t itemsize() const { return element_size(dtype); }
  char* data_ptr() const { return static_cast<char*>(storage->data) + offset * static_cast<int64_t>(itemsize()); }
  template <typename T> T* data() const { return reinterpret_cast<T*>(data_ptr()); }
  Device device() const { return storage->device; }
  void bump_version() { version->version.fetch_add(1, std::memory_order_relaxed); }
  // Recomputes numel and the contiguity flag after sizes/strides change.
  void refresh();
  AutogradMeta& meta() { if (!autograd) autograd.reset(new AutogradMeta()); return *autograd; }
};

// ---- construction -------------------------------------------------------------------------
IntList contiguous_strides(const IntList& sizes);
int64_t numel_of(const IntList& sizes, const char* op = "empty");
Tensor empty(const IntList& sizes, ScalarType dtype);
Tensor empty_strided(const IntList& sizes, const IntList& strides, ScalarType dtype);
// A tensor with the same sizes as `like`, dense, keeping its memory layout when it is dense.
Tensor empty_like(const Tensor& like, ScalarType dtype);
Tensor scalar_tensor(Scalar s, ScalarType dtype);
// A Python number as a 0-dim tensor that takes part in type promotion as a scalar.
Tensor wrap_scalar(const Scalar& s);
// A tensor over an existing storage (allocated or wrapping foreign memory), with its own version counter.
Tensor make_tensor(std::shared_ptr<StorageImpl> storage, IntList sizes, IntList strides, int64_t offset, ScalarType dtype);
// An alias of `base` with new geometry: shares storage and version counter.
Tensor make_view(const Tensor& base, IntList sizes, IntList strides, int64_t offset);

// ---- dims and shapes ----------------------------------------------------------------------
// Wraps a possibly negative dim into [0, ndim); IndexError as PyTorch for out of range.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op = nullptr);
IntList broadcast_shapes(const IntList& a, const IntList& b, const char* op = nullptr);
std::string shape_str(const IntList& s);

// ---- basic operations every kernel relies on ------------------------------------------------
Tensor contiguous(const Tensor& t);
Tensor clone(const Tensor& t);
// Copies src into dst (broadcasting src, converting dtype). Does not bump versions.
void copy_into(const Tensor& dst, const Tensor& src);
Tensor to_dtype(const Tensor& t, ScalarType dtype, bool copy = false);
void fill(const Tensor& t, Scalar value);
// A new tensor of zeros (empty, then filled: both ops).
Tensor zeros(const IntList& sizes, ScalarType dtype);
Scalar item(const Tensor& t);

// ---- type promotion -----------------------------------------------------------------------
ScalarType default_dtype();
void set_default_dtype(ScalarType t);
// PyTorch's result_type over tensors: dimensioned tensors beat zero-dim ones, which beat
// wrapped Python numbers, each only raising the category (bool < int < float).
ScalarType result_type(const std::vector<const TensorImpl*>& ts);
inline ScalarType result_type(const Tensor& a, const Tensor& b) { return result_type({a.get(), b.get()}); }

}  // namespace fl
