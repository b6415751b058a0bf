#include "dispatch.h"

#include <omp.h>

namespace fl {

thread_local ThreadState detail::tls_thread_state;

std::atomic<int> detail::g_num_threads{0};

void detail::apply_num_threads(int n) {
  if (n > 0) omp_set_num_threads(n);
  tls_thread_state.omp_threads = n;
}

void set_num_threads(int n) {
  detail::g_num_threads.store(n, std::memory_order_relaxed);
  sync_num_threads();
}

int get_num_threads() {
  const int n = detail::g_num_threads.load(std::memory_order_relaxed);
  return n > 0 ? n : omp_get_max_threads();
}

std::vector<OpInfo>& op_registry() {
  static std::vector<OpInfo>* r = new std::vector<OpInfo>();
  return *r;
}

const char* dispatch_key_name(DispatchKey k) {
  static const char* names[] = {"Tracer", "Autograd", "Conjugate", "CPU", "CUDA"};
  return names[static_cast<int>(k)];
}

namespace detail {
void missing_kernel(const char* op, DispatchKey key) {
  if (key == DispatchKey::Autograd)
    throw NotImplementedError(str_cat("the derivative for '", op, "' is not implemented: the op has no ",
                                      "Autograd kernel and is not declared non-differentiable"));
  throw NotImplementedError(str_cat("Could not run '", op, "' with arguments from the '", dispatch_key_name(key),
                                    "' backend: no kernel is registered for it"));
}
void bad_boxed_call(const char* op, size_t expected, size_t got) {
  throw TypeError(str_cat(op, "(): the boxed call got ", got, " arguments, expected ", expected));
}
}  // namespace detail

}  // namespace fl
