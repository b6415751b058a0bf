#include "trace.h"

#include <algorithm>
#include <chrono>

#include "../ops/tensor_ops.h"
#include "../ops/views.h"

namespace fl::graph {
namespace {
auto geometry(const Tensor& t) { return std::make_tuple(t->storage.get(), t->offset, t->sizes, t->strides, t->dtype); }
}  // namespace

RecordingTracer::RecordingTracer(bool forbid) : forbid_host_reads(forbid), start_epoch_(begin_capture_epoch()) {}

void check_host_read(const char* what) {
  auto* r = dynamic_cast<RecordingTracer*>(thread_state().tracer);
  FL_CHECK(!(r && r->forbid_host_reads), Error, "Tensor.", what, "() reads a tensor's value on the host while nn.Graph "
           "captures build(): the value would be fixed in the program. Keep the computation in tensor ops (torch.where "
           "instead of an if on a tensor), or read the value from the graph's outputs.");
}

void RecordingTracer::remember(const Tensor& t, int64_t id) {
  if (id >= static_cast<int64_t>(program_.value_meta.size())) program_.value_meta.resize(id + 1);
  program_.value_meta[id] = {t->sizes, t->strides, t->dtype, t->wrapped_number};
  program_.seen.push_back(t);
  program_.ids[t.get()] = id;
  program_.by_geometry[geometry(t)] = id;
}

int64_t RecordingTracer::input_id(const Tensor& t, const char* op, size_t arg, bool constant) {
  auto it = program_.ids.find(t.get());
  if (it != program_.ids.end()) return it->second;
  auto alias = program_.by_geometry.find(geometry(t));
  if (alias != program_.by_geometry.end() && !constant) {
    program_.seen.push_back(t);
    program_.ids[t.get()] = alias->second;
    return alias->second;
  }
  const int64_t id = program_.num_values++;
  if (constant) {
    TracerPause pause;
    GradModeGuard no_grad(false);
    program_.constants.emplace_back(id, ops::clone(t));
  } else if (t->epoch < start_epoch_) {
    TracerPause pause;
    GradModeGuard no_grad(false);
    program_.input_ids.push_back(id);
    program_.inputs.push_back(t);
    program_.input_values.push_back(ops::clone(t));
  } else {
    program_.holes.push_back(str_cat(op, "(): argument ", arg, ", a tensor of shape ", shape_str(t->sizes),
                                     " made during the capture without passing the dispatcher"));
  }
  remember(t, id);
  return id;
}

int64_t RecordingTracer::result_id(const Tensor& t) {
  auto it = program_.ids.find(t.get());
  if (it != program_.ids.end()) return it->second;  // an in-place op's self, or an op returning its input
  const int64_t id = program_.num_values++;
  remember(t, id);
  return id;
}

void RecordingTracer::enter(const OpInfo& op, const Stack& args) {
  const bool lifts = op.op == &ops::lift_fresh;
  std::vector<std::vector<int64_t>> ids(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    if (auto* t = std::get_if<Tensor>(&args[i])) {
      ids[i].push_back(input_id(*t, op.name, i, lifts));
    } else if (auto* l = std::get_if<TensorList>(&args[i])) {
      for (const Tensor& e : *l) ids[i].push_back(e ? input_id(e, op.name, i, false) : -1);
    }
  }
  pending_ids_.push_back(std::move(ids));
}

void RecordingTracer::abandon(const OpInfo&) { pending_ids_.pop_back(); }

void RecordingTracer::record(const OpInfo& op, Stack&& args, const Stack& results) {
  Call call{op, std::move(args), std::move(pending_ids_.back()), {}};
  pending_ids_.pop_back();
  for (IValue& v : call.args) {  // the tensors are referred to by id (empty slots, filled by each run)
    if (auto* t = std::get_if<Tensor>(&v)) t->reset();
    else if (auto* l = std::get_if<TensorList>(&v)) *l = TensorList(l->size());
  }
  for (const IValue& r : results) {
    std::vector<int64_t> ids;
    for_each_tensor(r, [&](const Tensor& t) { ids.push_back(result_id(t)); });
    call.result_ids.push_back(std::move(ids));
  }
  program_.calls.push_back(std::move(call));
}

int64_t Program::value_of(const Tensor& t) const {
  auto it = ids.find(t.get());
  return it == ids.end() ? -1 : it->second;
}

std::vector<Tensor> Program::replay(std::vector<Tensor> replacements) const {
  if (replacements.empty())
    for (const Tensor& v : input_values) replacements.push_back(ops::clone(v));
  std::vector<Tensor> values(num_values);
  FL_CHECK(replacements.size() == input_ids.size(), Error, "replay: expected ", input_ids.size(), " inputs, got ",
           replacements.size());
  for (size_t i = 0; i < input_ids.size(); ++i) values[input_ids[i]] = replacements[i];
  execute(values, nullptr);
  return values;
}

std::vector<Tensor> Program::run(std::vector<Tensor> replacements, const std::vector<int64_t>& wanted) const {
  FL_CHECK(replacements.size() == input_ids.size(), Error, "run: expected ", input_ids.size(), " inputs, got ",
           replacements.size());
  for (int64_t id : wanted) FL_CHECK(id >= 0 && id < num_values, IndexError, "run: no value ", id);
  const auto& last_use = liveness(wanted);
  std::vector<Tensor> values(num_values);
  for (size_t i = 0; i < input_ids.size(); ++i) values[input_ids[i]] = std::move(replacements[i]);
  if (!plan_memory) {
    execute(values, &last_use);
  } else if (memory_plan_ && memory_plan_->planned() && memory_plan_wanted_ == wanted &&
             memory_plan_version_ == version_) {
    MemoryPlan::Run planned(*memory_plan_);
    execute(values, &last_use);
  } else {  // the first run of what the calls now are: recorded, and planned from
    memory_plan_ = std::make_shared<MemoryPlan>();
    memory_plan_wanted_ = wanted;
    memory_plan_version_ = version_;
    MemoryPlan::Recording recording(*memory_plan_);
    execute(values, &last_use);
  }
  std::vector<Tensor> out;
  out.reserve(wanted.size());
  for (int64_t id : wanted) out.push_back(values[id]);
  return out;
}

const std::vector<std::vector<int64_t>>& Program::liveness(const std::vector<int64_t>& wanted) const {
  if (!liveness_.empty() && liveness_wanted_ == wanted) return liveness_;
  // the call after which each value is read no more (never for inputs and wanted values)
  // (a group's members read and make their values at the group's position: Note [Fused groups])
  std::vector<int64_t> last(num_values, -1);
  for (size_t c = 0; c < calls.size(); ++c) {
    const int64_t g = group_of(c), at = g < 0 ? static_cast<int64_t>(c) : groups[g].calls.back();
    for (const auto& ids : calls[c].arg_ids)
      for (int64_t id : ids) if (id >= 0) last[id] = std::max(last[id], at);
    for (const auto& ids : calls[c].result_ids)
      for (int64_t id : ids) last[id] = std::max(last[id], at);
  }
  for (int64_t id : input_ids) last[id] = -1;
  for (int64_t id : wanted) last[id] = -1;
  std::vector<std::vector<int64_t>> last_use(calls.size());
  for (int64_t id = 0; id < num_values; ++id) if (last[id] >= 0) last_use[last[id]].push_back(id);
  liveness_wanted_ = wanted;
  liveness_ = std::move(last_use);
  return liveness_;
}

void Program::release_capture_state() {
  seen = {};
  ids = {};
  by_geometry = {};
  inputs = {};
  input_values = {};
}

void Program::changed() {
  ++version_;
  liveness_.clear();
}

void Program::remove_calls(std::vector<int64_t> indices) {
  FL_CHECK(groups.empty(), Error, "remove_calls: the program has fusion groups");
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  for (auto it = indices.rbegin(); it != indices.rend(); ++it) {
    FL_CHECK(*it >= 0 && *it < static_cast<int64_t>(calls.size()), IndexError, "remove_calls: no call ", *it);
    calls.erase(calls.begin() + *it);
  }
  changed();
}

void Program::set_tensor_arg(size_t call, size_t arg, int64_t index, int64_t id) {
  FL_CHECK(call < calls.size() && arg < calls[call].args.size(), IndexError, "set_tensor_arg: call ", call,
           " has no argument ", arg);
  FL_CHECK(group_of(call) < 0, Error, "set_tensor_arg: call ", call, " belongs to a fusion group");
  FL_CHECK(id >= 0 && id < num_values, IndexError, "set_tensor_arg: no value ", id);
  Call& c = calls[call];
  if (index < 0) {
    FL_CHECK(!std::holds_alternative<TensorList>(c.args[arg]), Error, "set_tensor_arg: argument ", arg, " of ",
             c.op.name, " is a tensor list: give the element");
    c.args[arg] = Tensor();
    c.arg_ids[arg] = {id};
  } else {
    FL_CHECK(std::holds_alternative<TensorList>(c.args[arg]) && index < static_cast<int64_t>(c.arg_ids[arg].size()),
             IndexError, "set_tensor_arg: argument ", arg, " of ", c.op.name, " has no element ", index);
    c.arg_ids[arg][index] = id;
  }
  changed();
}

void Program::fold(size_t call, bool shared) {
  FL_CHECK(call < calls.size(), IndexError, "fold: no call ", call);
  std::vector<Tensor> values(num_values);
  for (const auto& [id, t] : constants) values[id] = t;
  for (const auto& ids : calls[call].arg_ids)
    for (int64_t id : ids)
      FL_CHECK(id < 0 || values[id], ValueError, "fold: ", calls[call].op.name, " reads %", id, ", not a constant");
  TracerPause pause;
  GradModeGuard no_grad(false);
  Stack out;
  run_call(call, values, out);
  for (const auto& ids : calls[call].result_ids)
    for (int64_t id : ids) {
      // an in-place call's result is a constant already, updated in place above
      if (std::none_of(constants.begin(), constants.end(), [&](const auto& c) { return c.first == id; }))
        constants.emplace_back(id, values[id]);
      if (shared) shared_constants.insert(id);
      else shared_constants.erase(id);
    }
}

void Program::add_group(FusedGroup g) {
  FL_CHECK(!g.calls.empty() && (g.kernel || g.replacement), ValueError, "fusion group ", g.name,
           ": no calls or no kernel");
  group_of_.resize(calls.size(), -1);
  for (size_t i = 0; i < g.calls.size(); ++i) {
    const int64_t c = g.calls[i];
    FL_CHECK(c >= 0 && c < static_cast<int64_t>(calls.size()) && (i == 0 || c > g.calls[i - 1]) && group_of_[c] < 0,
             ValueError, "fusion group ", g.name, ": call ", c, " is out of range, out of order or in another group");
  }
  for (const auto* ids : {&g.inputs, &g.outputs})
    for (int64_t id : *ids)
      FL_CHECK(id >= 0 && id < num_values && id < static_cast<int64_t>(value_meta.size()), ValueError, "fusion group ",
               g.name, ": no value ", id);
  for (int64_t c : g.calls) group_of_[c] = static_cast<int64_t>(groups.size());
  groups.push_back(std::move(g));
  changed();
}

void Program::clear_groups() {
  groups.clear();
  group_of_.clear();
  changed();
}

void Program::run_call(size_t ci, std::vector<Tensor>& values, Stack& out) const { run_call(calls[ci], values, out); }

void Program::run_call(const Call& c, std::vector<Tensor>& values, Stack& out) const {
  Stack& args = c.args;
  auto set_tensors = [&](bool fill) {
    for (size_t i = 0; i < args.size(); ++i) {
      if (c.arg_ids[i].empty()) continue;
      if (auto* l = std::get_if<TensorList>(&args[i])) {
        for (size_t j = 0; j < l->size(); ++j)
          (*l)[j] = fill && c.arg_ids[i][j] >= 0 ? values[c.arg_ids[i][j]] : Tensor();
      } else {
        std::get<Tensor>(args[i]) = fill ? values[c.arg_ids[i][0]] : Tensor();
      }
    }
  };
  set_tensors(true);
  out.clear();
  try {
    c.op.boxed(c.op.op, args, out);
  } catch (...) {
    set_tensors(false);
    throw;
  }
  set_tensors(false);
  for (size_t r = 0; r < out.size() && r < c.result_ids.size(); ++r) {
    size_t j = 0;
    for_each_tensor(out[r], [&](const Tensor& t) { if (j < c.result_ids[r].size()) values[c.result_ids[r][j++]] = t; });
  }
}

void Program::run_group(const FusedGroup& g, std::vector<Tensor>& values, Stack& out) const {
  // the kernel indexes with the capture's geometry: any other input geometry runs the members instead
  bool same = true;
  for (int64_t id : g.inputs) {
    const Tensor& t = values[id];
    const ValueMeta& m = value_meta[id];
    same = same && t && t->dtype == m.dtype && t->sizes == m.sizes;
    for (size_t d = 0; same && d < m.sizes.size(); ++d) same = m.sizes[d] == 1 || t->strides[d] == m.strides[d];
  }
  if (!same) {
    ++unfused_group_runs;
    for (int64_t c : g.calls) run_call(static_cast<size_t>(c), values, out);
    return;
  }
  if (g.replacement) {
    run_call(*g.replacement, values, out);
    // a replacement for `addmm -> view -> activation` makes the GEMM's 2-D result: the view it skipped
    for (int64_t id : g.outputs)
      if (values[id]->sizes != value_meta[id].sizes) values[id] = ops::view(values[id], value_meta[id].sizes);
    return;
  }
  std::vector<char*> data;
  data.reserve(g.outputs.size() + g.inputs.size());
  for (int64_t id : g.outputs) {
    const ValueMeta& m = value_meta[id];
    values[id] = ops::empty_strided(m.sizes, m.strides, m.dtype);
    data.push_back(values[id]->data_ptr());
  }
  for (int64_t id : g.inputs) data.push_back(values[id]->data_ptr());
  sync_num_threads();  // the generated kernel's OpenMP loop runs no op first (Note [Thread count])
  g.kernel(data.data());
}

void Program::execute(std::vector<Tensor>& values, const std::vector<std::vector<int64_t>>* last_use) const {
  FL_CHECK(holes.empty(), Error, "replay: the program has ", holes.size(), " holes; the first: ", holes[0]);
  TracerPause pause;
  GradModeGuard no_grad(false);
  for (const auto& [id, data] : constants) values[id] = shared_constants.count(id) ? data : ops::clone(data);
  Stack out;
  if (profile) call_ns.resize(calls.size());
  for (size_t ci = 0; ci < calls.size(); ++ci) {
    const int64_t g = group_of(ci);
    const auto start = profile ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    if (g < 0) run_call(ci, values, out);
    else if (groups[g].calls.back() == static_cast<int64_t>(ci)) run_group(groups[g], values, out);
    else continue;  // a member of a group that runs later
    if (profile) call_ns[ci] += (std::chrono::steady_clock::now() - start).count();
    if (last_use) {
      out.clear();
      for (int64_t id : (*last_use)[ci]) values[id].reset();
    }
  }
}

}  // namespace fl::graph
