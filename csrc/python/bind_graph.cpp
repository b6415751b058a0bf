// Python bindings of graph capture: recording a program at the Tracer key and replaying it.
#include "../core/schema.h"
#include "../graph/trace.h"
#include "python_util.h"

namespace fl::python {
namespace {

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
      .def("run", [](graph::RecordingTracer& r, const std::vector<Tensor>& inputs, const std::vector<int64_t>& ids) {
        std::vector<Tensor> values = r.program().replay(inputs);
        std::vector<Tensor> out;
        out.reserve(ids.size());
        for (int64_t id : ids) {
          FL_CHECK(id >= 0 && id < static_cast<int64_t>(values.size()), IndexError, "run: no value ", id);
          out.push_back(values[id]);
        }
        return out;
      }, py::arg("inputs"), py::arg("ids"), "Replays with `inputs` and returns the values with the given ids.")
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
      .def("set_float_arg", [](graph::RecordingTracer& r, size_t call, size_t arg, double value) {
        auto& calls = r.program().calls;
        FL_CHECK(call < calls.size() && arg < calls[call].args.size() &&
                     std::holds_alternative<double>(calls[call].args[arg]),
                 IndexError, "set_float_arg: call ", call, " has no float argument ", arg);
        calls[call].args[arg] = value;
      }, "Replaces a float argument of a recorded call for the next runs (a graph input such as the lr).");
  m.def("_trace_begin", [](bool forbid_host_reads) {
    FL_CHECK(!thread_state().tracer, Error, "a graph capture is already active on this thread");
    g_recording = std::make_unique<graph::RecordingTracer>(forbid_host_reads);
    thread_state().tracer = g_recording.get();
  }, py::arg("forbid_host_reads") = false);
  m.def("_trace_end", []() {
    FL_CHECK(g_recording && thread_state().tracer == g_recording.get(), Error, "no graph capture is active on this thread");
    thread_state().tracer = nullptr;
    return std::move(g_recording);
  });
}

}  // namespace
}  // namespace fl::python

FL_PY_BINDINGS(50, fl::python::bind)
