// The dispatcher.
//
// Note [Dispatch order]
// Every op is an `Op<Sig>` object holding one kernel slot per dispatch key. A call computes the
// keys that apply and runs them in order:
//   Tracer    when a graph capture is active on this thread: generic for every op (no per-op
//             code), it boxes the arguments, runs the call below with the tracer paused (so the
//             ops a kernel calls internally are part of this op, not separate records) and hands
//             the boxed call and its results to the tracer (Note [Tracer]);
//   Autograd  when grad mode is on and a tensor argument requires grad: the op's autograd kernel
//             records its node and re-dispatches below itself with `op.redispatch(keys, ...)`;
//   Conjugate when a tensor argument has the conjugate bit (Note [The conjugate bit]);
//   CPU       the device kernel (CUDA later).
// A key in the set with no kernel is an error naming the op and the key, unless the op declared
// that key a fallthrough (FL_REGISTER_FALLTHROUGH: Autograd for ops whose outputs never require
// grad, such as comparisons, argmax or random fills).
//
// Ops are declared once, with their schema, in csrc/ops/*.h lists (FL_DECLARE_OP); kernels
// register against that declaration from their own translation unit (FL_REGISTER_KERNEL). Each op
// also has a boxed calling form (OpInfo::boxed, over core/ivalue.h's Stack) produced from its C++
// signature: the tracer, the replay and kernels registered from Python use it.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "ivalue.h"
#include "tensor.h"

namespace fl {

enum class DispatchKey : uint8_t { Tracer = 0, Autograd = 1, Conjugate = 2, CPU = 3, CUDA = 4, NumKeys = 5 };
constexpr int kNumDispatchKeys = static_cast<int>(DispatchKey::NumKeys);
const char* dispatch_key_name(DispatchKey k);

struct DispatchKeySet {
  uint8_t bits = 0;
  bool has(DispatchKey k) const { return bits & (1u << static_cast<int>(k)); }
  DispatchKeySet with(DispatchKey k) const { return {static_cast<uint8_t>(bits | (1u << static_cast<int>(k)))}; }
  DispatchKeySet without(DispatchKey k) const { return {static_cast<uint8_t>(bits & ~(1u << static_cast<int>(k)))}; }
};

// Runs an op from a stack of arguments, pushing its results.
using BoxedFn = void (*)(const void* op, const Stack& args, Stack& results);

struct OpInfo {
  const char* name;
  const char* schema;
  const bool* has_kernel;   // kNumDispatchKeys flags
  const bool* fallthrough;  // kNumDispatchKeys flags
  const void* op;           // the Op object, for `boxed`
  BoxedFn boxed;
  // the schema types of the C++ signature (ivalue.h's TypeTag), checked against the parsed schema
  int num_args;
  const char* const* arg_types;
  int num_results;
  const char* const* result_types;
};
std::vector<OpInfo>& op_registry();

// Note [Tracer]
// A graph capture installs a Tracer on its thread. Each op called while it is installed, from
// Python bindings, the autograd engine, backward formulas or optimizer steps, reaches `enter` with
// its boxed arguments before it runs (so the tracer sees an in-place op's inputs as they were)
// and `record` with its results after it returned. Ops that kernels call internally are not seen:
// the tracer is paused below the Tracer key.
// A kernel that makes a tensor the program needs later (an autograd kernel's copy of a value it is
// about to overwrite, which the backward reads) makes it under TraceAsCaller: that call is recorded
// as the program's own, before the op that made it. Calls nest: enter and record pair up inside
// out, and an op that throws reaches `abandon` instead of `record`.
struct Tracer {
  virtual ~Tracer() = default;
  virtual void enter(const OpInfo& op, const Stack& args) = 0;
  virtual void record(const OpInfo& op, Stack&& args, const Stack& results) = 0;
  virtual void abandon(const OpInfo& op) = 0;
};

// Per-thread state read by dispatch: grad mode and the active graph tracer.
struct ThreadState {
  bool grad_enabled = true;
  bool inference_mode = false;
  Tracer* tracer = nullptr;  // set by graph capture
  Tracer* paused_tracer = nullptr;  // the tracer while a TracerPause holds it off
  int omp_threads = 0;  // the process-wide thread count last applied to this thread (Note [Thread count])
};
namespace detail {
// Read by every op call. initial-exec: a thread-pointer-relative load, where the default model for a
// Python extension module would call __tls_get_addr each time (the module's TLS block is tiny).
extern thread_local ThreadState tls_thread_state __attribute__((tls_model("initial-exec")));
}  // namespace detail
inline ThreadState& thread_state() { return detail::tls_thread_state; }

// Note [Thread count]
// torch.set_num_threads is per process, but libgomp's omp_set_num_threads sets only the calling thread's
// nthreads ICV: a thread started later would run its parallel regions with the default team. So the count
// is kept process-wide (0 until set_num_threads is called) and each thread applies it to its own ICV at the
// entry of every op call and fused-kernel run, when it differs from what the thread applied last (a relaxed
// load and a compare per call).
namespace detail {
extern std::atomic<int> g_num_threads;
void apply_num_threads(int n);
}  // namespace detail
inline void sync_num_threads() {
  const int n = detail::g_num_threads.load(std::memory_order_relaxed);
  if (n != detail::tls_thread_state.omp_threads) detail::apply_num_threads(n);
}
void set_num_threads(int n);  // OpenMP's count for the whole process (OpenBLAS has its own: blas::set_num_threads)
int get_num_threads();

// RAII switch of grad mode for this thread.
struct GradModeGuard {
  bool prev;
  explicit GradModeGuard(bool enabled) : prev(thread_state().grad_enabled) { thread_state().grad_enabled = enabled; }
  ~GradModeGuard() { thread_state().grad_enabled = prev; }
};

// Clears the thread's tracer for a scope (the calls below the Tracer key).
struct TracerPause {
  Tracer* saved;
  Tracer* saved_paused;
  TracerPause() : saved(thread_state().tracer), saved_paused(thread_state().paused_tracer) {
    if (saved) thread_state().paused_tracer = saved;
    thread_state().tracer = nullptr;
  }
  ~TracerPause() { thread_state().tracer = saved; thread_state().paused_tracer = saved_paused; }
};

// Records the calls of a scope inside a kernel as the program's own (Note [Tracer]).
struct TraceAsCaller {
  Tracer* saved;
  TraceAsCaller() : saved(thread_state().tracer) { if (!saved) thread_state().tracer = thread_state().paused_tracer; }
  ~TraceAsCaller() { thread_state().tracer = saved; }
};

namespace autograd {
// A view that does not require grad, of a base written in place with history since the view was made:
// the view takes that history (Note [Views of a base written in place]) and true is returned.
bool view_gained_grad(const Tensor& view);
}  // namespace autograd

// Note [The conjugate bit]
// `conj()` of a complex tensor is a view with TensorImpl::conj set: its values are the conjugates of the
// memory's, as torch's. Only the ops that declare the Conjugate key a fallthrough see such a tensor: the view
// ops (make_view carries the bit, so a view of a conjugate view is one), conj/resolve_conj, and the copy kernel
// (which conjugates when the two bits differ). For every other op the Conjugate key runs a generic fallback
// (torch's conjugateFallback): each conjugate argument is replaced by a resolved copy, and an argument the op
// writes (`Tensor(a!)`) is written back through copy_ afterwards, so no kernel needs to know the bit exists.
namespace detail {
inline bool has_conj(const Tensor& t) { return t && t->conj; }
inline bool has_conj(const std::vector<Tensor>& ts) {
  for (auto& t : ts) if (t && t->conj) return true;
  return false;
}
template <typename T> inline bool has_conj(const T&) { return false; }
Tensor resolve_conj(const Tensor& t);  // ops::resolve_conj
void copy_back_conj(const Tensor& dst, const Tensor& resolved);  // ops::copy_ into a conjugate tensor
template <typename T> inline void write_back_conj(const T& orig, const T& resolved) {
  if constexpr (std::is_same_v<T, Tensor>) if (has_conj(orig)) copy_back_conj(orig, resolved);
}
template <typename T> inline void original_for(Tensor& r, const T& orig, const T& resolved) {
  if constexpr (std::is_same_v<T, Tensor>) if (r == resolved && has_conj(orig)) r = orig;
}
template <typename T> inline T resolved_arg(const T& v) {
  if constexpr (std::is_same_v<T, Tensor>) return has_conj(v) ? resolve_conj(v) : v;
  else if constexpr (std::is_same_v<T, std::vector<Tensor>>) {
    if (!has_conj(v)) return v;
    std::vector<Tensor> out(v.size());
    for (size_t i = 0; i < v.size(); ++i) out[i] = has_conj(v[i]) ? resolve_conj(v[i]) : v[i];
    return out;
  } else return v;
}
uint64_t written_tensor_mask(const char* schema, size_t arity);  // bit i: argument i is a `Tensor(a!)`

inline bool needs_grad(const Tensor& t) {
  return t && (t->requires_grad || (t->is_view && autograd::view_gained_grad(t)));
}
inline bool needs_grad(const std::vector<Tensor>& ts) {
  for (auto& t : ts) if (t && t->requires_grad) return true;
  return false;
}
template <typename T> inline bool needs_grad(const T&) { return false; }
[[noreturn]] void missing_kernel(const char* op, DispatchKey key);
[[noreturn]] void bad_boxed_call(const char* op, size_t expected, size_t got);

// Note [required tensors] The bindings let None through as an empty Tensor (that is how `Tensor?` arguments
// arrive); for an argument the schema declares `Tensor` (not `Tensor?`) that is a TypeError, raised here at the
// door of every op instead of a null dereference in its kernel. required_tensor_mask() parses the schema once
// per op: bit i is set when argument i is a required Tensor (schema.cpp; 0 for a schema that does not list `arity` arguments).
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
  OpInfo info() const {
    return OpInfo{name_, schema_, has_, fallthrough_, this, &Op::call_boxed, sizeof...(Args), kArgTypes,
                  ResultTags<R>::size, ResultTags<R>::names};
  }
  const char* name() const { return name_; }
  const char* schema() const { return schema_; }

  // A null `fn` declares a fallthrough.
  void register_kernel(DispatchKey k, Kernel fn) {
    if (!fn) return register_fallthrough(k);
    kernels_[static_cast<int>(k)] = fn;
    has_[static_cast<int>(k)] = true;
  }
  void register_fallthrough(DispatchKey k) { fallthrough_[static_cast<int>(k)] = true; }

  R operator()(Args... args) const {
    if constexpr ((std::is_same_v<std::decay_t<Args>, Tensor> || ...) && sizeof...(Args) <= 64) {
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
    sync_num_threads();
    DispatchKeySet ks{static_cast<uint8_t>(1u << static_cast<int>(DispatchKey::CPU))};
    const ThreadState& st = thread_state();
    if (st.grad_enabled && (detail::needs_grad(args) || ...)) ks = ks.with(DispatchKey::Autograd);
    if ((detail::has_conj(args) || ...)) ks = ks.with(DispatchKey::Conjugate);
    if (st.tracer) return traced(ks, std::forward<Args>(args)...);
    return redispatch(ks, std::forward<Args>(args)...);
  }

  R redispatch(DispatchKeySet ks, Args... args) const {
    for (int k = 0; k < kNumDispatchKeys; ++k) {
      if (!(ks.bits & (1u << k))) continue;
      if (Kernel fn = kernels_[k]) return fn(ks.without(static_cast<DispatchKey>(k)), std::forward<Args>(args)...);
      if (k == static_cast<int>(DispatchKey::Conjugate) && !fallthrough_[k])
        return conj_fallback(ks.without(DispatchKey::Conjugate), std::index_sequence_for<Args...>{}, args...);
      if (!fallthrough_[k]) detail::missing_kernel(name_, static_cast<DispatchKey>(k));
      if (k == static_cast<int>(DispatchKey::Autograd)) {  // nothing to record: run below with grad mode off
        GradModeGuard no_grad(false);
        return redispatch(ks.without(DispatchKey::Autograd), std::forward<Args>(args)...);
      }
    }
    detail::missing_kernel(name_, DispatchKey::CPU);
  }

 private:
  // The generic Tracer kernel (Note [Tracer]).
  R traced(DispatchKeySet ks, Args... args) const {
    Tracer* tracer = thread_state().tracer;
    Stack in;
    in.reserve(sizeof...(Args));
    (in.push_back(box(args)), ...);
    TracerPause pause;
    tracer->enter(info(), in);
    Stack out;
    try {
      if constexpr (std::is_void_v<R>) {
        redispatch(ks, std::forward<Args>(args)...);
        tracer->record(info(), std::move(in), out);
      } else {
        R r = redispatch(ks, std::forward<Args>(args)...);
        push_result(out, r);
        tracer->record(info(), std::move(in), out);
        return r;
      }
    } catch (...) {
      tracer->abandon(info());
      throw;
    }
  }

  // The Conjugate key's generic kernel (Note [The conjugate bit]).
  template <size_t... I>
  R conj_fallback(DispatchKeySet ks, std::index_sequence<I...>, Args... args) const {
    std::tuple<std::decay_t<Args>...> res{detail::resolved_arg(std::decay_t<Args>(args))...};
    uint64_t written = written_.load(std::memory_order_relaxed);
    if (written == kUnparsed) {
      written = sizeof...(Args) <= 64 ? detail::written_tensor_mask(schema_, sizeof...(Args)) : 0;
      written_.store(written, std::memory_order_relaxed);
    }
    auto write_back = [&]() { ((((written >> I) & 1) ? detail::write_back_conj(args, std::get<I>(res)) : void()), ...); };
    if constexpr (std::is_void_v<R>) {
      redispatch(ks, std::get<I>(res)...);
      write_back();
    } else {
      R r = redispatch(ks, std::get<I>(res)...);
      write_back();
      // an in-place op returns the tensor it wrote: the caller's, not the resolved copy
      if constexpr (std::is_same_v<R, Tensor>) ((((written >> I) & 1) ? detail::original_for(r, args, std::get<I>(res)) : void()), ...);
      return r;
    }
  }
  static void call_boxed(const void* self, const Stack& in, Stack& out) {
    const Op* op = static_cast<const Op*>(self);
    if (in.size() != sizeof...(Args)) detail::bad_boxed_call(op->name_, sizeof...(Args), in.size());
    op->call_unboxed(in, out, std::index_sequence_for<Args...>{});
  }
  template <size_t... I>
  void call_unboxed(const Stack& in, Stack& out, std::index_sequence<I...>) const {
    if constexpr (std::is_void_v<R>) (*this)(Unbox<std::decay_t<Args>>::get(in[I])...);
    else push_result(out, (*this)(Unbox<std::decay_t<Args>>::get(in[I])...));
  }

  static constexpr const char* kArgTypes[sizeof...(Args) + 1] = {TypeTag<std::decay_t<Args>>::name..., ""};

  static constexpr uint64_t kUnparsed = ~uint64_t(0);
  const char* name_;
  const char* schema_;
  mutable std::atomic<uint64_t> required_{kUnparsed};  // Note [required tensors]
  mutable std::atomic<uint64_t> written_{kUnparsed};   // the `Tensor(a!)` arguments, for conj_fallback
  Kernel kernels_[kNumDispatchKeys] = {};
  bool has_[kNumDispatchKeys] = {};
  bool fallthrough_[kNumDispatchKeys] = {};
};

struct OpListed {
  explicit OpListed(OpInfo info) { op_registry().push_back(info); }
};

// Registers `fn` as op's kernel for `key` at load time.
template <typename OpT>
struct KernelRegistrar {
  KernelRegistrar(OpT& op, DispatchKey key, typename OpT::Kernel fn) { op.register_kernel(key, fn); }
  KernelRegistrar(OpT& op, DispatchKey key) { op.register_fallthrough(key); }
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
// Declares that `key` has nothing to do for this op: dispatch goes on to the next key.
#define FL_REGISTER_FALLTHROUGH(name, key) \
  static ::fl::KernelRegistrar<std::remove_reference_t<decltype(::fl::ops::name)>> FL_CONCAT(fl_fall_##name##_, __LINE__)(::fl::ops::name, ::fl::DispatchKey::key);
