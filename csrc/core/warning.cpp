#include "warning.h"

#include <atomic>
#include <cstdio>

namespace fl {
namespace {
std::atomic<WarningHandler> g_handler{nullptr};
}  // namespace

void set_warning_handler(WarningHandler handler) { g_handler.store(handler); }

void warn(const std::string& message) {
  if (WarningHandler h = g_handler.load()) h(message);
  else std::fprintf(stderr, "Warning: %s\n", message.c_str());
}
}  // namespace fl
