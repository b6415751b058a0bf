// Python bindings of graph capture: recording a program at the Tracer key and replaying it.
#include <cstdio>

#include "../core/schema.h"
#include "../graph/trace.h"
#include "../ops/activation_math.h"
#include "../ops/pointwise_list.h"
#include "python_util.h"

namespace fl::python {
namespace {

// A non-tensor argument of a recorded call, as the program listing shows it.
std::string arg_text(const IValue& v) {
  auto number = [](double d) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.8g", d);
    return std::string(buf);
  };
  return std::visit([&](const auto& x) -> std::string {
    using T = std::decay_t<decltype(x)>;
    if constexpr (std::is_same_v<T, IntList>) return shape_str(x);
    else if constexpr (std::is_same_v<T, int64_t>) return std::to_string(x);
    else if constexpr (std::is_same_v<T, double>) return number(x);
    else if constexpr (std::is_same_v<T, bool>) return x ? "True" : "False";
    else if constexpr (std::is_same_v<T, Scalar>)
      return x.is_bool() ? (x.to_int() ? "True" : "False") : x.is_int() ? std::to_string(x.to_int()) : number(x.to_double());
    else if constexpr (std::is_same_v<T, ScalarType>) return x == ScalarType::NumTypes ? "None" : dtype_name(x);
    else if constexpr (std::is_same_v<T, std::string>) return "'" + x + "'";
    else if constexpr (std::is_same_v<T, std::vector<double>>) {
      std::string s;
      for (double d : x) s += (s.empty() ? "" : ", ") + number(d);
      return "[" + s + "]";
    } else if constexpr (std::is_same_v<T, Generator*>) return x ? "<generator>" : "None";
    else return "None";
  }, v);
}

// A non-tensor argument of a recorded call as a Python value (a saved program); tensors are placeholders (None).
py::object arg_object(const IValue& v, const char* op, bool for_saving) {
  return std::visit([&](const auto& x) -> py::object {
    using T = std::decay_t<decltype(x)>;
    if constexpr (std::is_same_v<T, IntList> || std::is_same_v<T, std::vector<double>> ||
                  std::is_same_v<T, std::string>) return py::cast(x);
    else if constexpr (std::is_same_v<T, int64_t>) return py::int_(x);
    else if constexpr (std::is_same_v<T, double>) return py::float_(x);
    else if constexpr (std::is_same_v<T, bool>) return py::bool_(x);
    else if constexpr (std::is_same_v<T, Scalar>) return scalar_to_python(x);
    else if constexpr (std::is_same_v<T, ScalarType>) return x == ScalarType::NumTypes ? py::none() : dtype_object(x);
    else if constexpr (std::is_same_v<T, Generator*>) {
      FL_CHECK(!x || !for_saving, Error, "a program whose ", op, "() draws from an explicit generator cannot be saved");
      return py::none();
    } else return py::none();
  }, v);
}

// A call from plain data (op name, non-tensor arguments, argument ids, result ids), as export() gives it: the op
// found by name, its arguments converted by the op's schema and C++ types, tensors as placeholders each run fills.
graph::Call make_call(const py::tuple& t, int64_t num_values) {
  auto check_id = [&](int64_t id, int64_t lowest) {
    FL_CHECK(id >= lowest && id < num_values, ValueError, "program: value id ", id, " out of range");
  };
  const OpInfo& op = find_op(t[0].cast<std::string>());
  const Schema& s = op_schema(op);
  auto args = t[1].cast<py::list>();
  graph::Call c{op, {}, t[2].cast<std::vector<std::vector<int64_t>>>(), t[3].cast<std::vector<std::vector<int64_t>>>()};
  FL_CHECK(static_cast<int>(args.size()) == op.num_args && c.arg_ids.size() == args.size(), ValueError,
           "program: ", op.name, "() takes ", op.num_args, " arguments, got ", args.size());
  for (const auto& ids : c.arg_ids) for (int64_t id : ids) check_id(id, -1);
  for (const auto& ids : c.result_ids) for (int64_t id : ids) check_id(id, 0);
  for (int i = 0; i < op.num_args; ++i) {
    const std::string tag = op.arg_types[i];
    if (tag == "Tensor") c.args.push_back(Tensor());
    else if (tag == "Tensor[]") c.args.push_back(TensorList(c.arg_ids[i].size()));
    else c.args.push_back(to_ivalue(op, s.args[i], tag, args[i]));
  }
  return c;
}

// The recording tracer installed on each thread, owned here until _trace_end hands it out.
thread_local std::unique_ptr<graph::RecordingTracer> g_recording;

void bind(py::module_& m, TensorClass&) {
  py::class_<graph::RecordingTracer>(m, "_TracedProgram", "A program recorded at the Tracer key (Note [Tracer]).")
      .def("__len__", [](graph::RecordingTracer& r) { return r.program().calls.size(); })
      .def_property_readonly("ops", [](graph::RecordingTracer& r) {
        py::list names;
        for (const graph::Call& c : r.program().calls) names.append(c.op.name);
        return names;
      }, "The name of each recorded call, in order.")
      .def_property_readonly("holes", [](graph::RecordingTracer& r) { return r.program().holes; },
                             "Tensors the program reads that were made during the capture without an op.")
      .def_property_readonly("inputs", [](graph::RecordingTracer& r) { return r.program().inputs; },
                             "The capture-time tensors the program reads as inputs, in order of first use.")
      .def_property_readonly("input_ids", [](graph::RecordingTracer& r) { return r.program().input_ids; },
                             "The value id of each input.")
      .def("release_capture_state", [](graph::RecordingTracer& r) { r.program().release_capture_state(); },
           "Frees what only the capture needed (the tensors it met, the inputs' copies); value_of answers -1 after.")
      .def_property_readonly("num_constants", [](graph::RecordingTracer& r) { return r.program().constants.size(); })
      .def("value_of", [](graph::RecordingTracer& r, const Tensor& t) { return r.program().value_of(t); },
           "The value id of a tensor met during the capture (-1 if never met).")
      .def_property_readonly("input_values", [](graph::RecordingTracer& r) { return r.program().input_values; },
                             "Copies of the inputs as the capture first read them.")
      .def("replay", [](graph::RecordingTracer& r, const std::vector<Tensor>& inputs) {
        std::vector<Tensor> values = r.program().replay(inputs);
        py::list out;
        for (const Tensor& t : values) out.append(t ? py::cast(t) : py::none());
        return out;
      }, py::arg("inputs") = std::vector<Tensor>(),
         "Runs the program through the boxed calls with `inputs` in place of the capture's inputs (by default "
         "copies of `input_values`); returns every value by id.")
      .def("run", [](graph::RecordingTracer& r, std::vector<Tensor> inputs, const std::vector<int64_t>& ids) {
        return r.program().run(std::move(inputs), ids);
      }, py::arg("inputs"), py::arg("ids"),
         "Runs the program with `inputs` and returns the values with the given ids; the others are released after "
         "their last use.")
      .def("listing", [](graph::RecordingTracer& r) {
        // one line per call: "%5: f32[8, 16] = mm(%3, %4)"; non-tensor arguments as values
        const graph::Program& p = r.program();
        auto value = [&](int64_t id) {
          if (id < 0) return std::string("None");
          const graph::ValueMeta& m = p.value_meta.at(id);
          return str_cat("%", id, ": ", dtype_name(m.dtype), shape_str(m.sizes));
        };
        py::list lines;
        for (size_t ci = 0; ci < p.calls.size(); ++ci) {
          const graph::Call& c = p.calls[ci];
          std::string outs, args;
          for (const auto& ids : c.result_ids)
            for (int64_t id : ids) outs += (outs.empty() ? "" : ", ") + value(id);
          for (size_t a = 0; a < c.args.size(); ++a) {
            std::string text;
            if (!c.arg_ids[a].empty()) {
              const bool list = std::holds_alternative<TensorList>(c.args[a]);
              for (int64_t id : c.arg_ids[a]) text += (text.empty() ? "" : ", ") + (id < 0 ? "None" : str_cat("%", id));
              if (list) text = "[" + text + "]";
            } else {
              text = arg_text(c.args[a]);
            }
            args += (args.empty() ? "" : ", ") + text;
          }
          const int64_t g = p.group_of(ci);  // members of a fusion group carry its name
          lines.append(str_cat(g < 0 ? "" : "[" + p.groups[g].name + "] ", outs.empty() ? "" : outs + " = ", c.op.name,
                               "(", args, ")"));
        }
        return lines;
      }, "The program, one line per recorded call, values with their dtype and shape at capture.")
      .def("export", [](graph::RecordingTracer& r, bool for_saving) {
        // the program as plain data: calls (op name, non-tensor arguments, argument ids, result ids), input ids,
        // constants, the number of values and each value's dtype and shape
        const graph::Program& p = r.program();
        py::list calls;
        for (const graph::Call& c : p.calls) {
          py::list args;
          for (const IValue& v : c.args) args.append(arg_object(v, c.op.name, for_saving));
          calls.append(py::make_tuple(c.op.name, args, py::cast(c.arg_ids), py::cast(c.result_ids)));
        }
        py::list constants, meta;
        for (const auto& [id, t] : p.constants) constants.append(py::make_tuple(id, t));
        for (const graph::ValueMeta& m : p.value_meta)
          meta.append(py::make_tuple(py::cast(m.sizes), dtype_object(m.dtype), py::cast(m.strides), m.wrapped));
        return py::make_tuple(calls, py::cast(p.input_ids), constants, p.num_values, meta);
      }, py::arg("for_saving") = true,
         "The program as plain Python data (what _program_from takes back). for_saving=False lists an explicit "
         "generator argument as None instead of refusing (a pass reading the program, not a file).")
      .def("float_args", [](graph::RecordingTracer& r, const std::string& name) {
        py::list found;  // (call index, argument index, value, the ids of the call's first argument's tensors)
        const auto& calls = r.program().calls;
        for (size_t c = 0; c < calls.size(); ++c) {
          const Schema& s = op_schema(calls[c].op);
          for (size_t a = 0; a < s.args.size() && a < calls[c].args.size(); ++a)
            if (s.args[a].name == name && std::holds_alternative<double>(calls[c].args[a]))
              found.append(py::make_tuple(c, a, std::get<double>(calls[c].args[a]), calls[c].arg_ids.at(0)));
        }
        return found;
      }, py::arg("name"), "The float arguments of that name in the recorded calls (an optimizer step's lr).")
      .def_property_readonly("value_meta", [](graph::RecordingTracer& r) {
        py::list meta;
        for (const graph::ValueMeta& m : r.program().value_meta)
          meta.append(py::make_tuple(py::cast(m.sizes), py::cast(m.strides), dtype_object(m.dtype), m.wrapped));
        return meta;
      }, "Per value id: (sizes, strides, dtype, wrapped number) as the capture made it.")
      .def("add_group", [](graph::RecordingTracer& r, std::string name, std::vector<int64_t> calls,
                           std::vector<int64_t> inputs, std::vector<int64_t> outputs, uintptr_t kernel,
                           std::optional<py::tuple> replacement) {
        graph::Program& p = r.program();
        std::shared_ptr<graph::Call> call;
        if (replacement) call = std::make_shared<graph::Call>(make_call(*replacement, p.num_values));
        p.add_group({std::move(name), std::move(calls), std::move(inputs), std::move(outputs),
                     reinterpret_cast<graph::FusedKernel>(kernel), std::move(call)});
      }, py::arg("name"), py::arg("calls"), py::arg("inputs"), py::arg("outputs"), py::arg("kernel") = 0,
         py::arg("replacement") = py::none(),
         "Replaces the calls with one generated kernel (Note [Fused groups]): `kernel` is the address of a "
         "`void(char** data)` function taking the outputs' then the inputs' data pointers; or with one op call, "
         "`replacement` = (op name, non-tensor arguments, argument ids, result ids) as export() lists calls.")
      .def("clear_groups", [](graph::RecordingTracer& r) { r.program().clear_groups(); },
           "Drops every fusion group: the program runs each call again.")
      .def_property_readonly("groups", [](graph::RecordingTracer& r) {
        py::list out;
        for (const graph::FusedGroup& g : r.program().groups)
          out.append(py::make_tuple(g.name, py::cast(g.calls), py::cast(g.inputs), py::cast(g.outputs)));
        return out;
      }, "The fusion groups: (name, call indices, input ids, output ids).")
      .def_property_readonly("unfused_group_runs", [](graph::RecordingTracer& r) { return r.program().unfused_group_runs; },
                             "How many group runs met inputs of another geometry than the kernel's and ran the calls.")
      .def("remove_calls", [](graph::RecordingTracer& r, std::vector<int64_t> calls) {
        r.program().remove_calls(std::move(calls));
      }, py::arg("calls"), "Removes the calls with these indices (an IR pass; before fusion).")
      .def("set_tensor_arg", [](graph::RecordingTracer& r, size_t call, size_t arg, int64_t id, int64_t index) {
        r.program().set_tensor_arg(call, arg, index, id);
      }, py::arg("call"), py::arg("arg"), py::arg("id"), py::arg("index") = -1,
         "Makes argument `arg` of a call read value `id` (element `index` of a tensor list).")
      .def("fold", [](graph::RecordingTracer& r, size_t call, bool shared) { r.program().fold(call, shared); },
           py::arg("call"), py::arg("shared"),
           "Evaluates a call whose tensors are all constants; its results become constants (`shared`: used by every "
           "run as they are, not copied). The call itself stays until removed.")
      .def_property("profile", [](graph::RecordingTracer& r) { return r.program().profile; },
                    [](graph::RecordingTracer& r, bool on) {
                      r.program().profile = on;
                      r.program().call_ns.clear();
                    },
                    "Whether runs time each call (and each fusion group, at its last call); setting it clears the times.")
      .def_property_readonly("call_ns", [](graph::RecordingTracer& r) { return r.program().call_ns; },
                             "Per call: the wall time in ns of the runs since profile was set (a group's at its last call).")
      .def_property("plan_memory", [](graph::RecordingTracer& r) { return r.program().plan_memory; },
                    [](graph::RecordingTracer& r, bool on) { r.program().plan_memory = on; },
                    "Whether runs place their intermediates in an arena planned from the first run (Note [Memory plan]).")
      .def_property_readonly("memory_stats", [](graph::RecordingTracer& r) -> py::object {
        const graph::MemoryPlan* plan = r.program().memory_plan();
        if (!plan || !plan->planned()) return py::none();
        const graph::MemoryPlanStats s = plan->stats();
        return py::dict(py::arg("allocations") = s.allocations, py::arg("planned") = s.planned,
                        py::arg("arena_bytes") = s.arena_bytes, py::arg("planned_bytes") = s.planned_bytes,
                        py::arg("kept_bytes") = s.kept_bytes, py::arg("peak_live_bytes") = s.peak_live_bytes,
                        py::arg("fallbacks") = s.fallbacks);
      }, "The memory plan of the last runs (Note [Memory plan]), None before a run was recorded.")
      .def("set_float_arg", [](graph::RecordingTracer& r, size_t call, size_t arg, double value) {
        auto& calls = r.program().calls;
        FL_CHECK(call < calls.size() && arg < calls[call].args.size() &&
                     std::holds_alternative<double>(calls[call].args[arg]),
                 IndexError, "set_float_arg: call ", call, " has no float argument ", arg);
        calls[call].args[arg] = value;
      }, "Replaces a float argument of a recorded call for the next runs (a graph input such as the lr).");
  m.def("_fusible_ops", [] {
    // the op lists as the fusion pass needs them: each pointwise op's result rule (pointwise_list.h) and the
    // activations (activation_math.h), whose scalar functions csrc/graph/fused_prelude.h expands
    py::dict unary, binary;
#define FL_X(name, rule, ...) unary[#name] = #rule;
    FL_UNARY_OPS(FL_X)
#undef FL_X
#define FL_X(name, rule, ...) binary[#name] = #rule;
    FL_BINARY_OPS(FL_X)
#undef FL_X
    py::list activations;
#define FL_X(name, ...) activations.append(#name);
    FL_ACTIVATIONS(FL_X)
#undef FL_X
    py::dict dense;
#define FL_X(name, expr, lo, hi, ...) dense[#name] = py::make_tuple(double(lo), double(hi));
    FL_DENSE_UNARY(FL_X)
#undef FL_X
    return py::make_tuple(unary, binary, activations, dense);
  }, "(unary ops -> result rule, binary ops -> result rule, activation names, unary ops with a dense float32 form -> "
     "the range (lo, hi) of arguments where that form stands): the ops fusion groups may hold.");
  m.def("_trace_begin", [](bool forbid_host_reads) {
    FL_CHECK(!thread_state().tracer, Error, "a graph capture is already active on this thread");
    g_recording = std::make_unique<graph::RecordingTracer>(forbid_host_reads);
    thread_state().tracer = g_recording.get();
  }, py::arg("forbid_host_reads") = false);
  m.def("_program_from", [](py::list calls, const std::vector<int64_t>& input_ids, py::list constants,
                             int64_t num_values, py::list meta) {
    // a program rebuilt from export()'s data: each call's op found by name, its arguments converted by the op's
    // schema and C++ types, tensor arguments as placeholders that each run fills
    auto tracer = std::make_unique<graph::RecordingTracer>();
    graph::Program& p = tracer->program();
    p.num_values = num_values;
    p.input_ids = input_ids;
    auto check_id = [&](int64_t id) {
      FL_CHECK(id >= -1 && id < num_values, ValueError, "saved program: value id ", id, " out of range");
    };
    for (int64_t id : input_ids) check_id(id);
    for (py::handle item : calls) p.calls.push_back(make_call(item.cast<py::tuple>(), num_values));
    for (py::handle item : constants) {
      auto t = item.cast<py::tuple>();
      const int64_t id = t[0].cast<int64_t>();
      check_id(id);
      p.constants.emplace_back(id, as_tensor(t[1]));
    }
    for (py::handle item : meta) {
      auto t = item.cast<py::tuple>();
      graph::ValueMeta m{t[0].cast<IntList>(), {}, dtype_from_object(t[1]), false};
      if (t.size() >= 4) {  // files saved before strides were kept give sizes and dtype only
        m.strides = t[2].cast<IntList>();
        m.wrapped = t[3].cast<bool>();
      } else {
        m.strides = contiguous_strides(m.sizes);
      }
      p.value_meta.push_back(std::move(m));
    }
    return tracer;
  }, "A program rebuilt from _TracedProgram.export()'s data.");
  m.def("_trace_end", []() {
    FL_CHECK(g_recording && thread_state().tracer == g_recording.get(), Error, "no graph capture is active on this thread");
    thread_state().tracer = nullptr;
    return std::move(g_recording);
  });
}

}  // namespace
}  // namespace fl::python

FL_PY_BINDINGS(50, fl::python::bind)
