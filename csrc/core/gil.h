// Note [GIL release] Long kernels (the matrix products, convolutions) let other Python threads run while
// they compute: a GilRelease in scope hands Python's global interpreter lock back for its lifetime when
// this thread holds it, and takes it again at the end. The core does not know Python: the bindings install
// the two hooks (module.cpp); without them, on a thread that does not hold the lock, or inside another
// GilRelease, it does nothing. A kernel doing this touches no Python object (warnings take the lock back
// themselves) and runs after its autograd recording, which calls Python hooks.
#pragma once

namespace fl {

struct GilHooks {
  void* (*release)() = nullptr;     // hands the lock back if this thread holds it; returns what restore needs
  void (*restore)(void*) = nullptr;  // takes it again (given release's result, which may be null)
};
void set_gil_hooks(GilHooks hooks);

// The work (multiply-adds) from which a kernel releases the lock: about 0.1 ms, well above the hand-over's cost.
constexpr double kGilReleaseWork = 1 << 18;

class GilRelease {
 public:
  GilRelease();
  ~GilRelease();
  GilRelease(const GilRelease&) = delete;
  GilRelease& operator=(const GilRelease&) = delete;

 private:
  void* state_ = nullptr;
};

}  // namespace fl
