// Planning a captured program's memory ahead: every intermediate tensor of a run placed in one arena.
//
// Note [Memory plan]
// A run of a captured program makes the same allocations, of the same sizes, in the same order, each time (its
// calls and shapes are fixed). The first run with a given set of wanted values is recorded: each allocation's size
// and lifetime (allocations and frees counted as one clock). The plan then places every allocation freed within
// the run at an offset of one arena, so that two allocations whose lifetimes overlap never share a byte (largest
// first, each at the lowest offset free over its lifetime): buffer reuse by liveness, decided before the run
// instead of by the caching allocator during it. Allocations still alive when the recorded run ended (what the run
// hands back: outputs, new gradients, optimizer state) keep coming from the caching allocator.
// A planned run takes the arena as one block from the caching allocator (so after the first planned run a step
// asks the system for no new memory) and returns it at the end, and serves its k-th request at the k-th offset.
// The plan never trusts the recording blindly: a request of another size than recorded, or whose bytes are shared
// with an allocation that is still alive (a tensor that escaped a run), goes to the caching allocator instead, so
// results never depend on the plan; `fallbacks` counts such requests.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "../core/tensor.h"

namespace fl::graph {

struct MemoryPlanStats {
  int64_t allocations = 0;     // requests in the recorded run
  int64_t planned = 0;         // of those, placed in the arena
  int64_t arena_bytes = 0;     // the arena's size
  int64_t planned_bytes = 0;   // the planned allocations' sizes summed (what the arena packs)
  int64_t kept_bytes = 0;      // allocations alive at the end of the recorded run (from the caching allocator)
  int64_t peak_live_bytes = 0; // the recorded run's peak of live bytes (each freed after its last use)
  int64_t fallbacks = 0;       // requests of the last planned run served by the caching allocator against the plan
};

class MemoryPlan : public AllocationPlanner {
 public:
  // While a Recording lives, this thread's allocations are recorded (served by the caching allocator); its end
  // computes the plan.
  struct Recording {
    explicit Recording(MemoryPlan& plan);
    ~Recording();
    MemoryPlan& plan;
    AllocationPlanner* previous;
    int exceptions;  // in flight when it began: a run that throws is not planned from
  };
  // While a Run lives, this thread's allocations are served by the plan.
  struct Run {
    explicit Run(MemoryPlan& plan);
    ~Run();
    MemoryPlan& plan;
    AllocationPlanner* previous;
  };
  std::shared_ptr<StorageImpl> allocate(size_t nbytes) override;
  bool planned() const { return planned_; }
  MemoryPlanStats stats() const { return stats_; }

 private:
  struct Record { size_t nbytes; int64_t allocated_at, freed_at; };
  struct Shared;  // what the storages handed out refer to (they may outlive the plan)
  void finish_recording();
  std::shared_ptr<Shared> shared_;
  bool recording_ = false, planned_ = false;
  std::vector<size_t> recorded_size_;           // per allocation: the bytes asked for
  std::vector<int64_t> offset_;                 // per allocation: its offset in the arena, -1 when not planned
  std::vector<std::vector<int32_t>> conflicts_; // per planned allocation: the others sharing some of its bytes
  size_t next_ = 0;                             // the index of the next request in this run
  std::shared_ptr<void> arena_;                 // held during a planned run
  MemoryPlanStats stats_;
};

}  // namespace fl::graph
