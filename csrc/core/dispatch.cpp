#include "dispatch.h"

namespace fl {

ThreadState& thread_state() {
  thread_local ThreadState st;
  return st;
}

std::vector<OpInfo>& op_registry() {
  static std::vector<OpInfo>* r = new std::vector<OpInfo>();
  return *r;
}

const char* dispatch_key_name(DispatchKey k) {
  static const char* names[] = {"Tracer", "Autograd", "CPU", "CUDA"};
  return names[static_cast<int>(k)];
}

}  // namespace fl
