// Collectives over a process group as ops (torch's _c10d_functional in-place forms), so that a graph capture
// records them: an nn.Graph training step of a DistributedDataParallel model holds its gradient all-reduce as calls
// of its program (Note [Collectives as ops]).
#pragma once
#include <memory>
#include <string>

#include "../core/dispatch.h"

namespace fl {

// Note [Collectives as ops]
// The ops name a collective; the communication itself belongs to the engine that flowlike.distributed starts (MPI
// through mpi4py), which installs itself here when a process group is created and removes itself when the groups
// are destroyed. The core stays free of any MPI dependency, and the engine's checks (a rank that died, the group's
// timeout) apply to the collectives a program runs exactly as to eager ones. Groups are named as torch names them
// (ProcessGroup.group_name), so a recorded call stays meaningful while its group lives.
struct CollectiveBackend {
  virtual ~CollectiveBackend() = default;
  virtual void all_reduce(const Tensor& t, const std::string& reduce_op, const std::string& group_name) = 0;
  virtual void broadcast(const Tensor& t, int64_t src, const std::string& group_name) = 0;
};
// Installs the engine (nullptr removes it).
void set_collective_backend(std::shared_ptr<CollectiveBackend> backend);

}  // namespace fl

// The ops declared in collective.yaml (generated: csrc/ops/gen_ops.py).
#include "fl_generated/collective.h"
