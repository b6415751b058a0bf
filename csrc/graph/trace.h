// Recording a program at the Tracer key, and replaying it through the boxed calls.
//
// Note [Capture identity]
// A recorded call refers to tensors by value id. A tensor met for the first time is
//   - the same value as a known tensor with the same storage and geometry (an alias made outside
//     any op, such as the autograd engine's saved-output alias: same memory, same value);
//   - a program input when it existed before the capture began (an older epoch: parameters,
//     optimizer state, data);
//   - a constant when it enters through lift_fresh (host data);
//   - otherwise a *hole*: a tensor made during the capture without passing the dispatcher. A
//     program with holes cannot be replayed; `holes` names the op that read each one.
// An in-place op's result is its `self`, so it keeps self's id and the replay mutates the same
// replayed tensor, reproducing aliasing and in-place order exactly. The capture keeps every tensor
// it met alive, so no address is reused while it runs.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_set>
#include <unordered_map>
#include <vector>

#include "../core/dispatch.h"
#include "memory_plan.h"

namespace fl::graph {

struct Call {
  OpInfo op;
  // Tensors removed (their ids in arg_ids). A run fills the tensors in place for the call and
  // empties them again, so a run copies no arguments (a program runs on one thread at a time).
  mutable Stack args;
  std::vector<std::vector<int64_t>> arg_ids;   // per argument: ids of its tensors (-1: a null in a list)
  std::vector<std::vector<int64_t>> result_ids;
};

// Sizes, strides and dtype of a value as the capture made it (wrapped: a Python number turned into a tensor).
struct ValueMeta {
  IntList sizes, strides;
  ScalarType dtype = ScalarType::Float32;
  bool wrapped = false;
};

// Note [Fused groups]
// A fusion group replaces some of a program's calls (pointwise chains found by flowlike.codegen) with one
// generated kernel. It runs at the position of its last member: a member's inputs exist by then (they existed at
// the member's own, earlier position), and the grouping pass only makes a group whose results are read, outside
// it, after that position. The kernel was generated for the capture's geometry (sizes, strides, dtypes) of the
// group's inputs and outputs; a run whose inputs differ from it runs the member calls instead, at the same
// position, so results never depend on whether the kernel ran. Outputs are allocated with the capture's strides,
// so later views see the layout eager made.
// A group may instead run one op that computes what its members compute (a GEMM or convolution with its
// activation as the epilogue): `replacement`, whose results are the group's outputs (viewed with their captured
// sizes where the group also replaced a view between the op and the activation).
using FusedKernel = void (*)(char** data);  // data: the outputs' then the inputs' data pointers
struct Call;
struct FusedGroup {
  std::string name;
  std::vector<int64_t> calls;            // ascending call indices; the group runs at the last
  std::vector<int64_t> inputs, outputs;  // value ids
  FusedKernel kernel = nullptr;
  std::shared_ptr<Call> replacement;     // or this call
};

struct Program {
  std::vector<Call> calls;
  std::vector<int64_t> input_ids;              // the value id of each input
  std::vector<Tensor> inputs;                  // the capture-time tensors of the inputs
  std::vector<Tensor> input_values;            // copies of the inputs as the capture first read them
  std::vector<std::pair<int64_t, Tensor>> constants;
  std::unordered_set<int64_t> shared_constants;  // constants no call writes and no run hands back: not copied per run
  std::vector<std::string> holes;
  int64_t num_values = 0;
  std::vector<ValueMeta> value_meta;           // per value id, at capture
  std::vector<FusedGroup> groups;             // Note [Fused groups]
  mutable int64_t unfused_group_runs = 0;     // group runs whose inputs differed from the kernel's geometry
  // When profile is on, runs add each call's (or group's, at its last call) wall time in ns to call_ns.
  bool profile = false;
  mutable std::vector<int64_t> call_ns;

  // The value id a capture-time tensor had, -1 when the capture never met it.
  int64_t value_of(const Tensor& t) const;
  // Runs the calls with grad mode off, `inputs[i]` standing for input i (copies of input_values
  // when `inputs` is empty); returns every value by id.
  std::vector<Tensor> replay(std::vector<Tensor> inputs) const;
  // Runs the program with `inputs` (as replay) and returns the values `wanted`; every other value is
  // released after its last use, so a run holds no more than the live tensors (an nn.Graph step).
  std::vector<Tensor> run(std::vector<Tensor> inputs, const std::vector<int64_t>& wanted) const;
  // Drops what only the capture needs (the tensors it met, its identity maps, the inputs' copies):
  // a kept program then holds its calls and constants alone. value_of answers -1 afterwards.
  void release_capture_state();
  // Adds a fusion group (checked: its calls exist, belong to no other group, its values exist), or, with
  // groups empty, drops them all: the plan then runs every call.
  void add_group(FusedGroup group);
  void clear_groups();
  // Editing, for the IR passes (graph/passes.py): removes calls (before fusion groups are added); makes argument
  // `arg` of a call outside fusion groups read value `id` (element `index` of a tensor list, or the whole argument
  // with index -1);
  // evaluates a call whose tensors are all constants and adds its results as constants (`shared`: used by every run
  // as they are, since nothing writes or hands them back).
  void remove_calls(std::vector<int64_t> indices);
  void set_tensor_arg(size_t call, size_t arg, int64_t index, int64_t id);
  void fold(size_t call, bool shared);
  // Note [Memory plan]: runs (not replays) place their intermediates in an arena planned from the first run.
  bool plan_memory = true;
  const MemoryPlan* memory_plan() const { return memory_plan_.get(); }
  // The group call c belongs to, -1 when none.
  int64_t group_of(size_t c) const { return c < group_of_.size() ? group_of_[c] : -1; }

  // capture-time identity (Note [Capture identity])
  std::unordered_map<const TensorImpl*, int64_t> ids;
  std::map<std::tuple<const StorageImpl*, int64_t, IntList, IntList, ScalarType>, int64_t> by_geometry;
  std::vector<Tensor> seen;

 private:
  // The liveness of the last run's `wanted` (per call: the values read for the last time there), kept for the
  // next run with the same `wanted` (an nn.Graph plan asks for the same values every step).
  std::vector<int64_t> group_of_;  // per call: its group, -1 when none
  int64_t version_ = 0;            // counts changes to what a run executes (edits, groups)
  void changed();
  mutable std::shared_ptr<MemoryPlan> memory_plan_;
  mutable std::vector<int64_t> memory_plan_wanted_;
  mutable int64_t memory_plan_version_ = -1;
  mutable std::vector<int64_t> liveness_wanted_;
  mutable std::vector<std::vector<int64_t>> liveness_;
  const std::vector<std::vector<int64_t>>& liveness(const std::vector<int64_t>& wanted) const;
  // Runs the calls; with `last_use` (per call: the value ids read for the last time there), each
  // such value is released right after the call.
  void execute(std::vector<Tensor>& values, const std::vector<std::vector<int64_t>>* last_use) const;
  void run_call(size_t c, std::vector<Tensor>& values, Stack& out) const;
  void run_call(const Call& c, std::vector<Tensor>& values, Stack& out) const;
  void run_group(const FusedGroup& g, std::vector<Tensor>& values, Stack& out) const;
};

class RecordingTracer : public Tracer {
 public:
  // forbid_host_reads: item(), tolist() and numpy() raise during the capture (nn.Graph: a value read
  // on the host would be baked into the program).
  explicit RecordingTracer(bool forbid_host_reads = false);
  const bool forbid_host_reads;
  void enter(const OpInfo& op, const Stack& args) override;
  void record(const OpInfo& op, Stack&& args, const Stack& results) override;
  void abandon(const OpInfo& op) override;
  Program& program() { return program_; }

 private:
  int64_t input_id(const Tensor& t, const char* op, size_t arg, bool constant);
  int64_t result_id(const Tensor& t);
  void remember(const Tensor& t, int64_t id);

  uint64_t start_epoch_;
  std::vector<std::vector<std::vector<int64_t>>> pending_ids_;  // per call being made (they nest): argument ids
  Program program_;
};

// Called by the bindings that read tensor values on the host (`what`: "item", "tolist", "numpy"):
// raises when the thread's capture forbids it.
void check_host_read(const char* what);

}  // namespace fl::graph
