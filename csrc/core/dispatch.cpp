#include "dispatch.h"

namespace fl {

thread_local ThreadState detail::tls_thread_state;

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
