// The generic binding of every declared op, produced from its parsed schema (core/schema.h):
// `flowlike._C._ops.<name>(*args, **kwargs)` binds the arguments by the schema's names, order,
// keyword-only marker and defaults, converts them to the boxed form by the C++ signature's types,
// and calls the op through the dispatcher. No per-op binding code.
#include <unordered_map>

#include "../core/schema.h"
#include "../ops/random.h"
#include "python_util.h"

namespace fl::python {

const OpInfo& find_op(const std::string& name) {
  static std::unordered_map<std::string, const OpInfo*>* by_name = [] {
    auto* m = new std::unordered_map<std::string, const OpInfo*>();
    for (const OpInfo& op : op_registry()) (*m)[op.name] = &op;
    return m;
  }();
  auto it = by_name->find(name);
  FL_CHECK(it != by_name->end(), ValueError, "no op named '", name, "'");
  return *it->second;
}

[[noreturn]] static void bad_arg(const OpInfo& op, const SchemaArg& a, py::handle h) {
  throw TypeError(str_cat(op.name, "(): argument '", a.name, "' must be ", a.type, ", not ",
                          std::string(py::str(py::type::of(h).attr("__name__")))));
}

IValue to_ivalue(const OpInfo& op, const SchemaArg& a, const std::string& tag, py::handle h) {
  const bool none = h.is_none();
  if (tag == "Tensor") {
    if (none) return IValue();
    if (!is_tensor(h)) bad_arg(op, a, h);
    return as_tensor(h);
  }
  if (tag == "Tensor[]") {
    TensorList l;
    for (py::handle e : py::iter(h)) {
      if (!e.is_none() && !is_tensor(e)) bad_arg(op, a, e);
      l.push_back(e.is_none() ? Tensor() : as_tensor(e));
    }
    return l;
  }
  if (tag == "int?" && none) return IValue();
  if (tag == "ScalarType") return none ? ScalarType::NumTypes : dtype_from_object(h);
  if (tag == "Generator?") return none ? static_cast<Generator*>(nullptr) : py::cast<Generator*>(h);
  if (none) bad_arg(op, a, h);
  if (tag == "int[]") return int_list(h, op.name, a.name.c_str());
  if (tag == "float[]") return py::cast<std::vector<double>>(h);
  if (tag == "str") return py::cast<std::string>(h);
  Scalar s;
  if (!scalar_from_python(h, &s)) bad_arg(op, a, h);
  if (tag == "Scalar") return s;
  if (tag == "bool") {
    if (!s.is_bool()) bad_arg(op, a, h);
    return s.to_bool();
  }
  if (tag == "int" || tag == "int?") {
    if (!s.is_int()) bad_arg(op, a, h);
    return s.to_int();
  }
  return s.to_double();  // float
}

namespace {

// The schema's default, written in schema syntax, as a Python value.
py::object default_value(const std::string& text) {
  if (text == "None") return py::none();
  if (text == "True" || text == "False") return py::bool_(text == "True");
  if (text.front() == '\'' || text.front() == '"') return py::str(text.substr(1, text.size() - 2));
  if (text.front() == '[') return py::module_::import("ast").attr("literal_eval")(text);
  if (text.find_first_of(".e") != std::string::npos) return py::float_(std::stod(text));
  return py::int_(std::stoll(text));
}

py::object to_python(const IValue& v) {
  if (auto* t = std::get_if<Tensor>(&v)) return py::cast(*t);
  if (auto* l = std::get_if<TensorList>(&v)) {
    py::list out;
    for (const Tensor& t : *l) out.append(t ? py::cast(t) : py::none());
    return out;
  }
  return py::none();
}

py::object call_op(const std::string& name, py::args args, py::kwargs kwargs) {
  const OpInfo& op = find_op(name);
  const Schema& schema = op_schema(op);
  const std::string mismatch = schema_mismatch(op);
  FL_CHECK(mismatch.empty(), Error, name, ": schema and C++ signature disagree: ", mismatch);
  FL_CHECK(args.size() <= schema.args.size(), TypeError, name, "() takes ", schema.args.size(), " arguments but ",
           args.size(), " were given");
  Stack stack;
  size_t used_kwargs = 0;
  for (size_t i = 0; i < schema.args.size(); ++i) {
    const SchemaArg& a = schema.args[i];
    py::object value;
    if (i < args.size()) {
      FL_CHECK(!a.kwarg_only, TypeError, name, "() got too many positional arguments (", a.name, " is keyword-only)");
      value = py::reinterpret_borrow<py::object>(args[i]);
    } else if (kwargs.contains(a.name.c_str())) {
      value = kwargs[a.name.c_str()];
      ++used_kwargs;
    } else {
      FL_CHECK(a.default_value, TypeError, name, "() missing required argument '", a.name, "'");
      value = default_value(*a.default_value);
    }
    stack.push_back(to_ivalue(op, a, op.arg_types[i], value));
  }
  FL_CHECK(used_kwargs == kwargs.size(), TypeError, name, "() got an unexpected keyword argument");
  Stack out;
  op.boxed(op.op, stack, out);
  if (out.empty()) return py::none();
  if (out.size() == 1) return to_python(out[0]);
  py::tuple t(out.size());
  for (size_t i = 0; i < out.size(); ++i) t[i] = to_python(out[i]);
  return t;
}

void bind(py::module_& m, TensorClass&) {
  m.def("_call_op", &call_op, py::arg("name"),
        "Calls a declared op by name through the dispatcher, its arguments bound by its schema.");
  m.def("_schema_problems", []() {
    py::list out;
    for (const OpInfo& op : op_registry()) {
      std::string why;
      try {
        why = schema_mismatch(op);
      } catch (const std::exception& e) {
        why = e.what();
      }
      if (!why.empty()) out.append(py::make_tuple(op.name, why));
    }
    return out;
  }, "Ops whose schema does not parse or disagrees with the C++ signature: [(name, what differs)].");
  m.def("_op_schema", [](const std::string& name) {
    const Schema& s = op_schema(find_op(name));
    py::list args;
    for (const SchemaArg& a : s.args)
      args.append(py::dict(py::arg("name") = a.name, py::arg("type") = a.type, py::arg("alias") = std::string(a.alias ? 1 : 0, a.alias),
                           py::arg("writes") = a.writes, py::arg("kwarg_only") = a.kwarg_only,
                           py::arg("default") = a.default_value ? py::cast(*a.default_value) : py::none()));
    py::list returns;
    for (const SchemaArg& r : s.returns) returns.append(r.type);
    return py::dict(py::arg("name") = s.name, py::arg("overload") = s.overload, py::arg("args") = args,
                    py::arg("returns") = returns);
  }, py::arg("name"), "The parsed schema of a declared op.");
}

}  // namespace
}  // namespace fl::python

FL_PY_BINDINGS(55, fl::python::bind)
