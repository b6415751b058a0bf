// The dispatcher.
//
// Note [Dispatch order]
// Every op is an `Op<Sig>` object holding one kernel slot per dispatch key. A call computes the
// keys that apply (Tracer when a graph capture is active on this thread, Autograd when grad mode
// is on and a tensor argument requires grad, then the device key) and runs the first key that
// has a kernel. That kernel receives the remaining key set and re-dispatches below itself with
// `op.redispatch(keys, ...)`, so the autograd kernel records its node and then calls the device
// kernel, and the tracer records the call and then lets it run.
//
// Ops are declared once, with their schema, in csrc/ops/*.h lists (FL_DECLARE_OP); kernels
// register against that declaration from their own translation unit (FL_REGISTER_KERNEL).
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tensor.h"

namespace fl {

enum class DispatchKey : uint8_t { Tracer = 0, Autograd = 1, CPU = 2, CUDA = 3, NumKeys = 4 };
constexpr int kNumDispatchKeys = static_cast<int>(DispatchKey::NumKeys);
const char* dispatch_key_name(DispatchKey k);

struct DispatchKeySet {
  uint8_t bits = 0;
  bool has(DispatchKey k) const { return bits & (1u << static_cast<int>(k)); }
  DispatchKeySet with(DispatchKey k) const { return {static_cast<uint8_t>(bits | (1u << static_cast<int>(k)))}; }
  DispatchKeySet without(DispatchKey k) const { return {static_cast<uint8_t>(bits & ~(1u << static_cast<int>(k)))}; }
};

// Per-thread state read by dispatch: grad mode and the active graph tracer.
struct ThreadState {
  bool grad_enabled = true;
  bool inference_mode = false;
  void* tracer = nullptr;  // set by graph capture
};
ThreadState& thread_state();

struct OpInfo {
  const char* name;
  const char* schema;
  const bool* has_kernel;  // kNumDispatchKeys flags
};
std::vector<OpInfo>& op_registry();

namespace detail {
inline bool needs_grad(const Tensor& t) { return t && t->requires_grad; }
inline bool needs_grad(const std::vector<Tensor>& ts) {
  for (auto& t : ts) if (t && t->requires_grad) return true;
  return false;
}
template <typename T> inline bool needs_grad(const T&) { return false; }

// Note [required tensors] The bindings let None through as an empty Tensor (that is how `Tensor?` arguments
// arrive); for an argument the schema declares `Tensor` (not `Tensor?`) that is a TypeError, raised here at the
// door of every op instead of a null dereference in its kernel. required_tensor_mask() parses the schema once
// per op: bit i is set when argument i is a required Tensor (0 when the schema's arity is not `arity`).
uint64_t required_tensor_mask(const char* schema, size_t arity);
[[noreturn]] void throw_none_tensor(const char* op, const char* schema, size_t index);
template <typename T> inline bool is_null_tensor(const T& v) {
  if constexpr (std::is_same_v<std::decay_t<T>, Tensor>) return !v;
  else return false;
}
}  // namespace detail

template <typename Sig> class Op;

template <typename R, typename... Args>
class Op<R(Args...)> {
 public:
  using Kernel = R (*)(DispatchKeySet, Args...);

  // constexpr, so ops are constant-initialized before any kernel registrar runs
  constexpr Op(const char* name, const char* schema) : name_(name), schema_(schema) {}
  OpInfo info() const { return OpInfo{name_, schema_, has_}; }
  const char* name() const { return name_; }
  const char* schema() const { return schema_; }

  void register_kernel(DispatchKey k, Kernel fn) {
    kernels_[static_cast<int>(k)] = fn;
    has_[static_cast<int>(k)] = true;
  }

  R operator()(Args... args) const {
    if constexpr (sizeof...(Args) > 0 && sizeof...(Args) <= 64) {
      uint64_t mask = required_.load(std::memory_order_relaxed);
      if (mask == kUnparsed) {
        mask = detail::required_tensor_mask(schema_, sizeof...(Args));
        required_.store(mask, std::memory_order_relaxed);
      }
      if (mask) {
        size_t i = 0;
        ((((mask >> i) & 1) && detail::is_null_tensor(args) ? detail::throw_none_tensor(name_, schema_, i) : void(), ++i), ...);
      }
    }
    DispatchKeySet ks{static_cast<uint8_t>(1u << static_cast<int>(DispatchKey::CPU))};
    const ThreadState& st = thread_state();
    if (st.tracer) ks = ks.with(DispatchKey::Tracer);
    if (st.grad_enabled && (detail::needs_grad(args) || ...)) ks = ks.with(DispatchKey::Autograd);
    return redispatch(ks, std::forward<Args>(args)...);
  }

  R redispatch(DispatchKeySet ks, Args... args) const {
    for (int k = 0; k < kNumDispatchKeys; ++k) {
      if (!(ks.bits & (1u << k))) continue;
      if (Kernel fn = kernels_[k]) return fn(ks.without(static_cast<DispatchKey>(k)), std::forward<Args>(args)...);
    }
    throw NotImplementedError(str_cat("Could not run '", name_, "' with the keys given: no kernel registered"));
  }

 private:
  static constexpr uint64_t kUnparsed = ~uint64_t(0);
  const char* name_;
  const char* schema_;
  mutable std::atomic<uint64_t> required_{kUnparsed};  // Note [required tensors]
  Kernel kernels_[kNumDispatchKeys] = {};
  bool has_[kNumDispatchKeys] = {};
};

struct OpListed {
  explicit OpListed(OpInfo info) { op_registry().push_back(info); }
};

// Registers `fn` as op's kernel for `key` at load time.
template <typename OpT>
struct KernelRegistrar {
  KernelRegistrar(OpT& op, DispatchKey key, typename OpT::Kernel fn) { op.register_kernel(key, fn); }
};

}  // namespace fl

#define FL_CONCAT_(a, b) a##b
#define FL_CONCAT(a, b) FL_CONCAT_(a, b)
// In a header: `FL_DECLARE_OP(add, Tensor(const Tensor&, const Tensor&))` declares `fl::ops::add`.
#define FL_DECLARE_OP(name, ...) namespace fl::ops { extern ::fl::Op<__VA_ARGS__> name; }
// In exactly one .cpp: `FL_DEFINE_OP(add, "add(Tensor self, Tensor other) -> Tensor", Tensor(...))`.
#define FL_DEFINE_OP(name, schema, ...)                       \
  namespace fl::ops { ::fl::Op<__VA_ARGS__> name(#name, schema); } \
  static ::fl::OpListed FL_CONCAT(fl_listed_##name##_, __LINE__)(::fl::ops::name.info());
// In a kernel .cpp: registers `fn` (taking DispatchKeySet first) for `key`.
#define FL_REGISTER_KERNEL(name, key, fn) \
  static ::fl::KernelRegistrar<std::remove_reference_t<decltype(::fl::ops::name)>> FL_CONCAT(fl_reg_##name##_, __LINE__)(::fl::ops::name, ::fl::DispatchKey::key, fn);
