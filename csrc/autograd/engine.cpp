// The backward engine, saved variables, gradient accumulation and sum_to.
#include <atomic>
#include <cctype>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "../kernels/loops.h"
#include "../ops/pointwise.h"
#include "../ops/reduce.h"
#include "../ops/views.h"
#include "autograd.h"

namespace fl::autograd {

namespace {
std::atomic<uint64_t> g_next_sequence_nr{0};

Tensor add_grads(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::add, a, b, Scalar(int64_t(1)), nullptr); }

// Tensor.register_hook hooks: a non-leaf's live on the node, a leaf's on its AutogradMeta.
void run_tensor_hooks(Node* node, TensorList& grads) {
  auto apply = [](Tensor& g, const std::function<Tensor(const Tensor&)>& fn) {
    if (!g) return;
    Tensor r = fn(g);
    if (r) g = r;
  };
  for (const TensorHook& h : std::vector(node->pre_hooks))
    if (h.output_nr < grads.size()) apply(grads[h.output_nr], h.fn);
  if (auto* acc = dynamic_cast<AccumulateGrad*>(node)) {
    Tensor var = acc->variable.lock();
    if (var && var->autograd && !grads.empty())
      for (auto& h : std::vector(var->autograd->leaf_hooks)) apply(grads[0], h.second);
  }
}

void check_no_nan(Node* node, const TensorList& out) {
  for (size_t i = 0; i < out.size(); ++i) {
    const Tensor& g = out[i];
    if (!g || !is_floating(g->dtype)) continue;
    Tensor any_nan = unary_op(UnaryOp::isnan, g, nullptr);
    bool found = false;
    FL_DISPATCH_ALL(any_nan->dtype, "anomaly", {
      Tensor c = contiguous(any_nan);
      const scalar_t* p = c->data<scalar_t>();
      for (int64_t k = 0; k < c->numel && !found; ++k) found = static_cast<bool>(p[k]);
    });
    FL_CHECK(!found, Error, "Function '", node->name(), "' returned nan values in its ", i, "th output.",
             node->forward_trace.empty() ? std::string() : "\nTraceback of forward call that caused the error:\n" + node->forward_trace);
  }
}

// A node with no inputs that hands the initial gradients to the outputs' edges.
struct GraphRoot : Node {
  TensorList grads;
  TensorList apply(TensorList&&) override { return grads; }
  std::string name() const override { return "GraphRoot"; }
};

// Note [Only the needed nodes run] As torch's exec_info: with `inputs` given (autograd.grad, backward(inputs=)),
// a node runs only when it lies on a path from the outputs to an input, so the engine stops at the inputs and
// never reaches the rest of their history (hooks there do not fire; a node with no formula at that order is not
// called). An input's own node is reached (its gradient is captured, its hooks run) but runs only when it leads
// to another input, or, for backward(inputs=), to accumulate. Without inputs every reachable node runs.
class NeededNodes {
 public:
  NeededNodes(Node* root, const std::vector<Edge>& input_edges, bool accumulate) {
    if (input_edges.empty()) return;
    all_ = false;
    for (const Edge& e : input_edges)
      if (e.valid()) targets_.insert(e.fn.get());
    // Post-order without recursion (graphs can be a million nodes deep): a node's children are settled first.
    std::vector<std::pair<Node*, size_t>> stack{{root, 0}};
    runs_[root] = false;
    while (!stack.empty()) {
      Node* n = stack.back().first;
      size_t& i = stack.back().second;
      if (i < n->next_edges.size()) {
        Node* c = n->next_edges[i++].fn.get();
        if (c && runs_.emplace(c, false).second) stack.emplace_back(c, 0);
        continue;
      }
      bool run = n == root || (accumulate && targets_.count(n));
      for (const Edge& e : n->next_edges) run = run || (e.valid() && reached(e.fn.get()));
      runs_[n] = run;
      stack.pop_back();
    }
  }
  // Whether `n` is popped from the ready queue at all (its hooks run, its gradient may be captured).
  bool reached(Node* n) const { return all_ || targets_.count(n) || runs(n); }
  // Whether `n`'s backward is called.
  bool runs(Node* n) const {
    if (all_) return true;
    auto it = runs_.find(n);
    return it != runs_.end() && it->second;
  }

 private:
  bool all_ = true;
  std::unordered_set<Node*> targets_;
  std::unordered_map<Node*, bool> runs_;
};

// The node the engine runs on this thread, with its run's needed nodes (for should_compute_output); a backward
// run inside a node's apply (a Python Function's backward calling autograd.grad) saves and restores it.
struct Running {
  Node* node = nullptr;
  const NeededNodes* needed = nullptr;
};
thread_local Running t_running;

struct RunningGuard {
  Running saved = t_running;
  RunningGuard(Node* node, const NeededNodes* needed) { t_running = {node, needed}; }
  ~RunningGuard() { t_running = saved; }
};
}  // namespace

bool should_compute_output(size_t i) {
  const Running& r = t_running;
  FL_CHECK(r.node, Error, "should_compute_output: no backward node is running on this thread");
  if (i >= r.node->next_edges.size() || !r.node->next_edges[i].valid()) return false;
  return r.needed->reached(r.node->next_edges[i].fn.get());
}

Node::Node() : sequence_nr(g_next_sequence_nr.fetch_add(1, std::memory_order_relaxed)) {
  if (anomaly_enabled() && anomaly_capture_trace()) forward_trace = anomaly_capture_trace()();
}

uint64_t next_hook_id() {
  static std::atomic<uint64_t> id{1};
  return id.fetch_add(1, std::memory_order_relaxed);
}

std::vector<PackHook>& saved_tensor_pack_hooks() {
  thread_local std::vector<PackHook> hooks;
  return hooks;
}

bool& anomaly_enabled() {
  static bool on = false;
  return on;
}
std::function<std::string()>& anomaly_capture_trace() {
  static std::function<std::string()> capture;
  return capture;
}

SavedVariable::SavedVariable(const Tensor& t, bool is_output) : is_output_(is_output) {
  if (!t) return;
  if (!saved_tensor_pack_hooks().empty()) {  // see Note [Saved tensor hooks]
    // The hook runs with no hooks active: what it computes is not packed again (no recursion).
    std::vector<PackHook> active;
    active.swap(saved_tensor_pack_hooks());
    struct Restore {
      std::vector<PackHook>& a;
      ~Restore() { a.swap(saved_tensor_pack_hooks()); }
    } restore{active};
    packed_ = active.back()(t);
    return;
  }
  version_ = t->version->version.load();
  if (is_output) {
    data_ = make_view(t, t->sizes, t->strides, t->offset);  // no autograd state: see the Note
  } else {
    data_ = t;
  }
}

Tensor SavedVariable::unpack(const std::shared_ptr<Node>& saver) const {
  if (released_) {
    throw Error("Trying to backward through the graph a second time (or directly access saved tensors after they have "
                "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
                "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
                "if you need to access saved tensors after calling backward.");
  }
  if (packed_) return packed_->unpack();
  if (!data_) return nullptr;
  uint32_t now = data_->version->version.load();
  if (now != version_) {
    throw Error(str_cat("one of the variables needed for gradient computation has been modified by an inplace operation: [torch.",
                        c10_type_name(data_->dtype), "Tensor ", shape_str(data_->sizes), "], which is ",
                        is_output_ ? str_cat("output 0 of ", saver->name()) : std::string("an input of ") + saver->name(),
                        ", is at version ", now, "; expected version ", version_,
                        " instead. Hint: the backtrace further above shows the operation that failed to compute its "
                        "gradient. The variable in question was changed in there or anywhere later. Good luck!"));
  }
  if (!is_output_ || !thread_state().grad_enabled) return data_;
  // create_graph: give the output its history back so the backward formula is differentiable
  Tensor t = make_view(data_, data_->sizes, data_->strides, data_->offset);
  set_history(t, saver, 0);
  return t;
}

TensorList AccumulateGrad::apply(TensorList&& grads) {
  Tensor var = variable.lock();
  if (!var || grads.empty() || !grads[0]) return {};
  Tensor g = std::move(grads[0]);
  AutogradMeta& meta = var->meta();
  if (!meta.grad) {
    // keep the incoming buffer only when nothing else can see or reuse it; otherwise a dense copy
    if (thread_state().grad_enabled) {  // create_graph: .grad keeps its history, as a dense tensor
      meta.grad = g->contiguous ? g : record_copy("CloneBackward0", g, contiguous(g));
    } else {
      bool own = g->contiguous && g.use_count() == 1 && g->storage.use_count() == 1;
      meta.grad = own ? g : g->contiguous ? clone(g) : contiguous(g);
    }
  } else if (thread_state().grad_enabled) {
    meta.grad = add_grads(meta.grad, g);
  } else {
    binary_op(BinaryOp::add, meta.grad, g, Scalar(int64_t(1)), meta.grad);
  }
  for (auto& hook : std::vector(meta.post_accumulate_hooks)) hook.second(var);
  return {};
}

Edge gradient_edge(const Tensor& t) {
  if (!t || !t->requires_grad) return {};
  AutogradMeta& meta = t->meta();
  if (current_grad_fn(t)) return {meta.grad_fn, meta.output_nr};
  std::shared_ptr<Node> acc = meta.grad_accumulator.lock();
  if (!acc) {
    auto a = std::make_shared<AccumulateGrad>();
    a->variable = t;
    acc = a;
    meta.grad_accumulator = acc;
  }
  return {acc, 0};
}

void set_history(const Tensor& result, const std::shared_ptr<Node>& node, uint32_t output_nr) {
  result->requires_grad = true;
  AutogradMeta& meta = result->meta();
  meta.grad_fn = node;
  meta.output_nr = output_nr;
  meta.attr_version = result->version->version.load();
}

std::string backward_node_name(const char* op, const char* suffix) {
  std::string n;
  bool up = true;
  for (const char* p = op; *p; ++p) {
    if (*p == '_') { up = true; continue; }
    n += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(*p))) : *p;
    up = false;
  }
  return n + suffix;
}

Tensor sum_to(const Tensor& grad, const IntList& sizes) {
  if (!grad || grad->sizes == sizes) return grad;
  // Through the dispatcher: the reduction engine is parallel and vectorized, and under create_graph
  // the reduction is recorded too.
  IntList dims;
  const size_t lead = grad->sizes.size() - sizes.size();
  for (size_t d = 0; d < grad->sizes.size(); ++d)
    if (d < lead || (sizes[d - lead] == 1 && grad->sizes[d] != 1)) dims.push_back(static_cast<int64_t>(d));
  Tensor r = dims.empty() ? grad : ops::sum(grad, dims, true, ScalarType::NumTypes);
  return ops::reshape(r, sizes);
}

Tensor record_lambda(const char* name, const Tensor& result, std::vector<Edge> edges,
                     std::function<TensorList(const Tensor&)> fn) {
  auto node = std::make_shared<LambdaBackward>();
  node->node_name = name;
  node->fn = std::move(fn);
  node->next_edges = std::move(edges);
  set_history(result, node);
  return result;
}

TensorList SavedBackward::apply(TensorList&& grads) {
  if (grads.empty() || !grads[0]) return TensorList(next_edges.size());
  TensorList tensors;
  tensors.reserve(saved.size());
  auto self = shared_from_this();
  for (auto& s : saved) tensors.push_back(s.unpack(self));
  return fn(grads[0], tensors);
}

Tensor record_saved(const char* name, const Tensor& result, std::vector<Edge> edges, const TensorList& inputs,
                    bool save_result, std::function<TensorList(const Tensor&, const TensorList&)> fn) {
  auto node = std::make_shared<SavedBackward>();
  node->node_name = name;
  node->fn = std::move(fn);
  node->next_edges = std::move(edges);
  for (auto& t : inputs) node->saved.emplace_back(t, false);
  set_history(result, node);
  if (save_result) node->saved.emplace_back(result, true);
  return result;
}

TensorList run_backward(const TensorList& outputs, const TensorList& grad_outputs, bool keep_graph, bool create_graph,
                        const TensorList& inputs, bool allow_unused, bool accumulate_into_inputs) {
  auto root = std::make_shared<GraphRoot>();
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& out = outputs[i];
    FL_CHECK(out->requires_grad, Error, "element ", i, " of tensors does not require grad and does not have a grad_fn");
    Tensor g = i < grad_outputs.size() ? grad_outputs[i] : nullptr;
    if (!g) {
      FL_CHECK(out->numel == 1, Error, "grad can be implicitly created only for scalar outputs");
      FL_CHECK(!is_complex(out->dtype), Error, "grad can be implicitly created only for real scalar outputs but got torch.",
               dtype_name(out->dtype));
      g = empty(out->sizes, out->dtype);
      fill(g, Scalar(1.0));
    } else {
      FL_CHECK(g->sizes == out->sizes, Error, "Mismatch in shape: grad_output[", i, "] has a shape of ", shape_str(g->sizes),
               " and output[", i, "] has a shape of ", shape_str(out->sizes), ".");
    }
    root->grads.push_back(g);
    root->next_edges.push_back(gradient_edge(out));
  }

  // Which (node, input slot) pairs are captured for autograd.grad / backward(inputs=...).
  std::vector<Edge> input_edges;
  for (const Tensor& t : inputs) {
    FL_CHECK(t->requires_grad, Error, "One of the differentiated Tensors does not require grad");
    input_edges.push_back(gradient_edge(t));
  }
  TensorList captured(inputs.size());
  const bool capture_only = !inputs.empty() && !accumulate_into_inputs;

  // Count dependencies: how many edges point at each node.
  std::unordered_map<Node*, int> deps;
  {
    std::vector<Node*> stack{root.get()};
    std::unordered_set<Node*> seen{root.get()};
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      for (const Edge& e : n->next_edges) {
        if (!e.valid()) continue;
        deps[e.fn.get()]++;
        if (seen.insert(e.fn.get()).second) stack.push_back(e.fn.get());
      }
    }
  }
  const NeededNodes needed(root.get(), input_edges, accumulate_into_inputs);

  GradModeGuard mode(create_graph);
  auto cmp = [](Node* a, Node* b) { return a->sequence_nr < b->sequence_nr; };
  std::priority_queue<Node*, std::vector<Node*>, decltype(cmp)> ready(cmp);
  std::unordered_map<Node*, TensorList> buffers;
  ready.push(root.get());
  while (!ready.empty()) {
    Node* node = ready.top();
    ready.pop();
    TensorList grads = std::move(buffers[node]);
    buffers.erase(node);
    run_tensor_hooks(node, grads);
    bool run = needed.runs(node);
    for (size_t i = 0; i < input_edges.size(); ++i) {
      if (input_edges[i].fn.get() != node) continue;
      uint32_t k = input_edges[i].input_nr;
      if (k < grads.size() && grads[k]) captured[i] = capture_only || !dynamic_cast<AccumulateGrad*>(node) ? grads[k] : nullptr;
    }
    if (!run) continue;
    for (auto& [k, weak] : node->retained_grads) {
      Tensor t = weak.lock();
      if (!t || k >= grads.size() || !grads[k]) continue;
      AutogradMeta& m = t->meta();
      m.grad = m.grad ? add_grads(m.grad, grads[k]) : clone(grads[k]);
    }
    TensorList out;
    {
      RunningGuard running(node, &needed);
      out = node->apply(std::move(grads));
    }
    if (!keep_graph) node->release_saved();
    if (anomaly_enabled()) check_no_nan(node, out);
    for (size_t i = 0; i < node->next_edges.size(); ++i) {
      const Edge& e = node->next_edges[i];
      if (!e.valid()) continue;
      Node* next = e.fn.get();
      if (!needed.reached(next)) continue;
      if (i < out.size() && out[i]) {
        TensorList& buf = buffers[next];
        if (buf.size() <= e.input_nr) buf.resize(e.input_nr + 1);
        buf[e.input_nr] = buf[e.input_nr] ? add_grads(buf[e.input_nr], out[i]) : out[i];
      }
      if (--deps[next] == 0) ready.push(next);
    }
  }

  if (accumulate_into_inputs) {
    // non-leaf inputs of backward(inputs=...) get their .grad directly
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!captured[i] || !inputs[i]->meta().grad_fn) continue;
      AutogradMeta& m = inputs[i]->meta();
      m.grad = m.grad ? add_grads(m.grad, captured[i]) : captured[i];
    }
    return {};
  }
  if (capture_only) {
    for (size_t i = 0; i < inputs.size(); ++i)
      FL_CHECK(captured[i] || allow_unused, Error,
               "One of the differentiated Tensors appears to not have been used in the graph. Set allow_unused=True if "
               "this is the desired behavior.");
  }
  return captured;
}

}  // namespace fl::autograd
