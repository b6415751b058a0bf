#include "gil.h"

namespace fl {
namespace {
GilHooks g_hooks;
}  // namespace

void set_gil_hooks(GilHooks hooks) { g_hooks = hooks; }

GilRelease::GilRelease() {
  if (g_hooks.release) state_ = g_hooks.release();
}

GilRelease::~GilRelease() {
  if (state_) g_hooks.restore(state_);
}

}  // namespace fl
