// The autograd graph and engine.
//
// Note [Saved tensors and cycles]
// A node keeps what its backward needs as SavedVariables. A saved *input* holds the tensor. A
// saved *output* holds an alias without autograd state plus a weak reference to its grad_fn
// (which is the saving node itself), so `result -> grad_fn -> saved result` is not a cycle; the
// alias is re-attached to the node on unpack, so double backward sees the real history.
// Every SavedVariable remembers the version counter value at save time and refuses to unpack
// after an in-place change (PyTorch's "modified by an inplace operation" error).
#pragma once
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "../core/dispatch.h"

namespace fl::autograd {

using TensorList = std::vector<Tensor>;

struct Node;
// A hook on the gradient flowing into output `output_nr` of a node (Tensor.register_hook on a
// non-leaf); it may return a replacement gradient, or null to keep it.
struct TensorHook {
  uint32_t output_nr;
  uint64_t id;
  std::function<Tensor(const Tensor&)> fn;
};
uint64_t next_hook_id();

struct Edge {
  std::shared_ptr<Node> fn;
  uint32_t input_nr = 0;
  bool valid() const { return fn != nullptr; }
};

struct Node : std::enable_shared_from_this<Node> {
  std::vector<Edge> next_edges;
  uint64_t sequence_nr;
  // Non-leaf outputs that called retain_grad(): (output_nr, tensor) get the gradient as .grad.
  std::vector<std::pair<uint32_t, std::weak_ptr<TensorImpl>>> retained_grads;
  std::vector<TensorHook> pre_hooks;
  // Anomaly mode: where the forward op that made this node was called from.
  std::string forward_trace;
  Node();
  virtual ~Node();
  // grads[i] is the gradient of forward output i (undefined when nothing flowed into it);
  // returns one gradient per next edge (undefined where there is none).
  virtual TensorList apply(TensorList&& grads) = 0;
  virtual std::string name() const = 0;
  // Drops saved tensors once backward no longer needs them (retain_graph=False).
  virtual void release_saved() {}

 private:
  // The link of the destruction queue (Note [Deep graphs]), so that queueing needs no memory.
  std::shared_ptr<Node> dying_next_;
};

// Note [Deep graphs] A chain of a million nodes (y = y + 1 in a loop) would destroy itself recursively, each node
// dropping the last reference to the next, and overflow the stack. As torch's deleteNode: the nodes a dying node
// owns alone are queued and destroyed one at a time by the outermost destructor. The queue is a list linked through
// the queued nodes themselves, so it never allocates: with memory exhausted a growing queue would fail, and falling
// back to recursion overflowed the stack.
inline Node::~Node() {
  thread_local std::shared_ptr<Node>* queue = nullptr;  // the list's head, while an outermost destructor runs
  std::shared_ptr<Node> head;
  const bool outermost = queue == nullptr;
  if (outermost) queue = &head;
  for (Edge& e : next_edges) {
    if (!e.fn || e.fn.use_count() != 1) continue;
    e.fn->dying_next_ = std::move(*queue);
    *queue = std::move(e.fn);
  }
  if (!outermost) return;
  while (head) {
    std::shared_ptr<Node> n = std::move(head);
    head = std::move(n->dying_next_);
    n.reset();  // its destructor queues its own edges here instead of recursing
  }
  queue = nullptr;
}

// Note [Saved tensor hooks]
// autograd.graph.saved_tensors_hooks(pack, unpack): while a pack hook is active, a SavedVariable
// keeps only what pack returned, and unpack turns it back into a tensor in backward (no version
// check then: the tensor may be a different one, as in PyTorch).
struct PackedTensor {
  virtual ~PackedTensor() = default;
  virtual Tensor unpack() const = 0;
};
using PackHook = std::function<std::shared_ptr<PackedTensor>(const Tensor&)>;
std::vector<PackHook>& saved_tensor_pack_hooks();  // this thread's stack; the innermost is last

// Anomaly mode (autograd.detect_anomaly): nodes record the forward call's stack, and the engine
// names the node whose backward returned NaN.
bool& anomaly_enabled();
std::function<std::string()>& anomaly_capture_trace();

class SavedVariable {
 public:
  SavedVariable() = default;
  SavedVariable(const Tensor& t, bool is_output);
  Tensor unpack(const std::shared_ptr<Node>& saver) const;
  void reset() { data_.reset(); packed_.reset(); released_ = true; }
  bool defined() const { return data_ != nullptr || packed_ != nullptr || released_; }

 private:
  Tensor data_;
  std::shared_ptr<PackedTensor> packed_;
  uint32_t version_ = 0;
  bool is_output_ = false;
  bool released_ = false;
  Tensor keep_;  // saved inputs keep their autograd identity
};

// Accumulates incoming gradients into a leaf's .grad.
struct AccumulateGrad : Node {
  std::weak_ptr<TensorImpl> variable;
  TensorList apply(TensorList&& grads) override;
  std::string name() const override { return "torch::autograd::AccumulateGrad"; }
};

using fl::GradModeGuard;

inline bool requires_grad(const Tensor& t) { return t && t->requires_grad; }
// t's grad_fn (null for a leaf), regenerated first when t is a view whose base was written in place
// since t's grad_fn was set (Note [Views of a base written in place]).
const std::shared_ptr<Node>& current_grad_fn(const Tensor& t);
// Where a gradient for `t` must be sent: its grad_fn, its accumulator, or nowhere.
Edge gradient_edge(const Tensor& t);
// One edge per tensor of a Tensor[] input (torch's collect_next_edges).
inline std::vector<Edge> gradient_edges(const TensorList& ts) {
  std::vector<Edge> edges;
  edges.reserve(ts.size());
  for (const Tensor& t : ts) edges.push_back(gradient_edge(t));
  return edges;
}
// Makes `result` an output of `node` (output_nr) that requires grad.
void set_history(const Tensor& result, const std::shared_ptr<Node>& node, uint32_t output_nr = 0);
// Sums `grad` down to `sizes` (undoing broadcasting); returns grad itself when shapes match.
Tensor sum_to(const Tensor& grad, const IntList& sizes);

// Gradient of a view `out` of `in`, for any view geometry (in must not overlap itself).
Tensor strided_view_backward(const Tensor& g, const IntList& in_sizes, const IntList& in_strides, int64_t in_offset,
                             const IntList& out_sizes, const IntList& out_strides, int64_t out_offset);

// After an in-place op gave `self` its new history: when self is a view, its base's history is
// rebased through a CopySlices node and self becomes a view of the new base (see Note [In-place
// writes into views]). A no-op for non-views.
void rebase_view_history(const Tensor& self);
// Records that `self` was overwritten in place with `src` (a backward formula's write into a region of a fresh
// buffer, under create_graph; null src for a constant fill): self's new history is src's, then rebase_view_history.
void record_overwrite(const char* name, const Tensor& self, const Tensor& src);
// Before an in-place write into `self` (with `src`) that must be recorded: PyTorch's errors for a leaf that requires
// grad, or a view of one. check_inplace checks only when inplace_needs_grad.
void check_inplace_write(const Tensor& self);
void check_inplace(const Tensor& self, const Tensor& src);
// `result`, a copy of `src` (clone, contiguous, dtype conversion), made differentiable: the gradient
// flows back converted to src's dtype. Returns result (src itself when no copy was made).
Tensor record_copy(const char* name, const Tensor& src, const Tensor& result);
// The node name torch gives an op's backward: "leaky_relu" -> "LeakyReluBackward0" (suffix "Backward0").
std::string backward_node_name(const char* op, const char* suffix = "Backward0");
// The value `x` has before an autograd kernel overwrites it in place, kept for the backward formula:
// a differentiable clone, recorded in a graph capture as a call of the program (TraceAsCaller in
// core/dispatch.h), since the backward ops read it.
Tensor copy_before_write(const Tensor& x);
// A gradient converted to an input's dtype (null stays null); under create_graph the conversion is
// recorded, so the gradient stays differentiable.
Tensor cast_grad(const Tensor& g, ScalarType dt);
// Whether an in-place write into `self` (with `src`) must be recorded: grad mode on and self,
// src, or self's base requires grad.
// (`others`: whether another input with a gradient formula requires grad)
bool inplace_needs_grad(const Tensor& self, bool others);
inline bool inplace_needs_grad(const Tensor& self, const Tensor& src) { return inplace_needs_grad(self, requires_grad(src)); }

// PyTorch's error for an in-place write into a leaf that requires grad.
void check_not_leaf_requiring_grad(const Tensor& self);

// Runs the kernel below Autograd with recording off.
template <typename OpT, typename... Args>
auto redispatch_no_grad(const OpT& op, DispatchKeySet ks, Args&&... args) {
  GradModeGuard g(false);
  return op.redispatch(ks, std::forward<Args>(args)...);
}

// A node whose backward is a closure over metadata only (views, shape ops): nothing is saved.
struct LambdaBackward : Node {
  std::string node_name;
  std::function<TensorList(const Tensor&)> fn;
  TensorList apply(TensorList&& grads) override {
    if (grads.empty() || !grads[0]) return TensorList(next_edges.size());
    return fn(grads[0]);
  }
  std::string name() const override { return node_name; }
};
// Records `result` as the output of a LambdaBackward with the given edges.
Tensor record_lambda(const char* name, const Tensor& result, std::vector<Edge> edges,
                     std::function<TensorList(const Tensor&)> fn);

// A node whose backward needs tensors: `saved` are SavedVariables (inputs, or the result when
// `save_result` is set: it is appended last), so the version-counter check and the release after
// backward apply. fn(grad, unpacked saved tensors) returns one gradient per edge.
struct SavedBackward : Node {
  std::string node_name;
  std::vector<SavedVariable> saved;
  std::function<TensorList(const Tensor&, const TensorList&)> fn;
  TensorList apply(TensorList&& grads) override;
  std::string name() const override { return node_name; }
  void release_saved() override { for (auto& s : saved) s.reset(); }
};
// Records `result` as the output of a SavedBackward over `edges`, saving `inputs` (and the result
// itself when save_result). Kernels call it after computing `result` with grad mode off.
Tensor record_saved(const char* name, const Tensor& result, std::vector<Edge> edges, const TensorList& inputs,
                    bool save_result, std::function<TensorList(const Tensor&, const TensorList&)> fn);

// A node over several outputs (factorizations, norms with statistics): fn(one gradient per forward output,
// undefined where none arrived; the saved tensors) returns one gradient per edge. Saved outputs are re-attached
// to their own output slot on unpack, so double backward sees their real history.
struct MultiOutputBackward : Node {
  std::string node_name;
  size_t num_outputs = 0;
  std::vector<SavedVariable> saved;
  std::vector<int> saved_output_nr;  // -1 for a saved input
  std::function<TensorList(const TensorList&, const TensorList&)> fn;
  TensorList apply(TensorList&& grads) override;
  std::string name() const override { return node_name; }
  void release_saved() override { for (auto& s : saved) s.reset(); }
};
// Records each defined outputs[i] as output i of a MultiOutputBackward over `edges`, saving `saved_inputs` and
// then the outputs numbered in `saved_outputs` (in that order, as fn receives them).
void record_multi(const char* name, std::vector<Edge> edges, const TensorList& outputs, const TensorList& saved_inputs,
                  const std::vector<int>& saved_outputs, std::function<TensorList(const TensorList&, const TensorList&)> fn);

// Whether the node the engine is running needs to compute the gradient for its next edge i (torch's
// task_should_compute_output): false for an edge with no node, and for one that does not lead to the inputs of
// autograd.grad / backward(inputs=) (Note [Only the needed nodes run]). Only for a node's apply, which only the
// engine calls.
bool should_compute_output(size_t i);

// Runs backward from `outputs` with `grad_outputs`. With `inputs` empty, gradients accumulate
// into leaves' .grad; otherwise the gradients of `inputs` are returned (autograd.grad) and no
// .grad is touched. `accumulate_into_inputs` (backward(inputs=...)) accumulates only into those.
TensorList run_backward(const TensorList& outputs, const TensorList& grad_outputs, bool keep_graph, bool create_graph,
                        const TensorList& inputs, bool allow_unused, bool accumulate_into_inputs);

}  // namespace fl::autograd
