#include "dispatch.h"

#include <string>
#include <vector>

namespace fl {

ThreadState& thread_state() {
  thread_local ThreadState st;
  return st;
}

std::vector<OpInfo>& op_registry() {
  static std::vector<OpInfo>* r = new std::vector<OpInfo>();
  return *r;
}

namespace detail {
namespace {
// The arguments of "name(Tensor self, int[1]? dim=None, *, Tensor(a!)? out=None) -> Tensor", split at top-level commas
// ('*' dropped).
std::vector<std::string> schema_args(const char* schema) {
  std::vector<std::string> out;
  const char* p = schema;
  while (*p && *p != '(') ++p;
  if (!*p) return out;
  ++p;
  int depth = 0;
  std::string cur;
  for (; *p; ++p) {
    char c = *p;
    if ((c == ')' || c == ',') && depth == 0) {
      size_t b = cur.find_first_not_of(' '), e = cur.find_last_not_of(' ');
      std::string a = b == std::string::npos ? "" : cur.substr(b, e - b + 1);
      if (!a.empty() && a != "*") out.push_back(a);
      cur.clear();
      if (c == ')') break;
      continue;
    }
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    cur += c;
  }
  return out;
}
}  // namespace

uint64_t required_tensor_mask(const char* schema, size_t arity) {
  std::vector<std::string> args = schema_args(schema);
  // trailing defaulted arguments the C++ signature leaves out (gather's sparse_grad)
  while (args.size() > arity && args.back().find('=') != std::string::npos) args.pop_back();
  // a schema listing fewer arguments than the C++ signature (median's ignore_nan flag): its leading ones
  if (args.size() > arity) return 0;  // a schema that does not list the C++ arguments one to one: no check
  uint64_t mask = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.rfind("Tensor", 0) != 0) continue;
    size_t type_end = a.find(' ');
    std::string type = a.substr(0, type_end);
    if (type.find('?') != std::string::npos || type.find('[') != std::string::npos) continue;
    if (a.find('=') != std::string::npos) continue;  // a default (None) makes it optional in practice
    mask |= uint64_t(1) << i;
  }
  return mask;
}

void throw_none_tensor(const char* op, const char* schema, size_t index) {
  std::vector<std::string> args = schema_args(schema);
  std::string name = index < args.size() ? args[index].substr(args[index].rfind(' ') + 1) : "?";
  throw TypeError(str_cat(op, "(): argument '", name, "' (position ", index + 1, ") must be Tensor, not NoneType"));
}
}  // namespace detail

const char* dispatch_key_name(DispatchKey k) {
  static const char* names[] = {"Tracer", "Autograd", "CPU", "CUDA"};
  return names[static_cast<int>(k)];
}

}  // namespace fl
