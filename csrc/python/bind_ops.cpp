// The generic binding of every declared op, produced from its parsed schema (core/schema.h):
// `flowlike._C._ops.<name>(*args, **kwargs)` binds the arguments by the schema's names, order,
// keyword-only marker and defaults, converts them to the boxed form by the C++ signature's types,
// and calls the op through the dispatcher. No per-op binding code.
#include <algorithm>
#include <memory>
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
  if (tag == "int[]" && none && a.optional) return IntList{};  // `int[]? dim=None`: every dim
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

// Note [Op faces]
// The Python face of a declared op is produced from its schema, as PyTorch's python_arg_parser does: arguments
// bind by position or by the schema's names (a function's `self` is called `input`), keyword-only ones after
// `*` only by name, missing ones take the schema's default; a method binds `self` to the tensor; when the
// only positional argument left is an int list, the ints may come spread out (x.view(2, 3)); `out=` writes
// the result with flowlike._out.write_out, the one out= convention. Each face keeps its defaults converted
// once, so a call only converts what the caller passed.
struct FaceArg {
  std::string key;  // the Python keyword
  const SchemaArg* schema;
  std::string tag;  // the C++ type (ivalue.h's TypeTag)
  std::optional<IValue> default_value;
};

struct Face {
  const OpInfo* op;
  std::string name;  // as the caller sees it, for errors
  std::vector<FaceArg> args;
  bool method = false, out = false, varargs_ints = false;
};

Face make_face(const OpInfo& op, const std::string& name, bool method, bool out) {
  const Schema& schema = op_schema(op);
  const std::string mismatch = schema_mismatch(op);
  FL_CHECK(mismatch.empty(), Error, op.name, ": schema and C++ signature disagree: ", mismatch);
  Face f{&op, name, {}, method, out, false};
  for (size_t i = 0; i < schema.args.size(); ++i) {
    const SchemaArg& a = schema.args[i];
    FaceArg fa{a.name == "self" && !method ? "input" : a.name, &a, op.arg_types[i], std::nullopt};
    if (a.default_value) {
      // a default the C++ type cannot carry (None for a plain float) leaves the argument required
      try {
        fa.default_value = to_ivalue(op, a, fa.tag, default_value(*a.default_value));
      } catch (const std::exception&) {
      }
    }
    f.args.push_back(std::move(fa));
  }
  FL_CHECK(!method || (!f.args.empty() && f.args[0].tag == "Tensor"), Error, op.name, ": a method face needs a Tensor first");
  size_t positional = 0;
  for (size_t i = method ? 1 : 0; i < f.args.size(); ++i) positional += !f.args[i].schema->kwarg_only;
  f.varargs_ints = positional == 1 && f.args[method ? 1 : 0].tag == "int[]";
  return f;
}

py::object call_face(const Face& f, py::handle self, py::args args, py::kwargs kwargs) {
  const OpInfo& op = *f.op;
  const size_t first = f.method ? 1 : 0;
  py::tuple pos = args;
  if (f.varargs_ints && args.size() > 1) pos = py::make_tuple(args);  // x.view(2, 3) as x.view((2, 3))
  Stack stack(f.args.size());
  if (f.method) stack[0] = to_ivalue(op, *f.args[0].schema, f.args[0].tag, self);
  size_t next = 0, used_kwargs = 0;
  for (size_t i = first; i < f.args.size(); ++i) {
    const FaceArg& a = f.args[i];
    py::handle value;
    if (next < pos.size() && !a.schema->kwarg_only) {
      value = pos[next++];
      FL_CHECK(!kwargs || !kwargs.contains(a.key.c_str()), TypeError, f.name, "() got multiple values for argument '", a.key, "'");
    } else if (kwargs && kwargs.contains(a.key.c_str())) {
      value = kwargs[a.key.c_str()];
      ++used_kwargs;
    } else {
      FL_CHECK(a.default_value, TypeError, f.name, "() missing required argument '", a.key, "' (position ", i + 1 - first, ")");
      stack[i] = *a.default_value;
      continue;
    }
    if (a.tag == "int[]") {
      // as torch's parser: None takes a list's default; a bare int is a list only for a sized type (`int[1]`)
      // or as the spread-out ints of a varargs face
      if (value.is_none() && a.default_value && !a.schema->optional) {
        stack[i] = *a.default_value;
        continue;
      }
      const bool sized = a.schema->type.size() > 2 && a.schema->type[a.schema->type.size() - 2] != '[';
      if (PyLong_Check(value.ptr()) && !sized && !f.varargs_ints)
        throw TypeError(str_cat(f.name, "(): argument '", a.key, "' (position ", i + 1 - first, ") must be tuple of ints, not int"));
    }
    stack[i] = to_ivalue(op, *a.schema, a.tag, value);
  }
  FL_CHECK(next == pos.size(), TypeError, f.name, "() takes ", next, " positional arguments but ", pos.size(), " were given");
  py::object out_arg = py::none();
  if (f.out && kwargs && kwargs.contains("out")) {
    out_arg = kwargs["out"];
    ++used_kwargs;
  }
  if (kwargs && used_kwargs != kwargs.size()) {
    for (auto item : kwargs) {
      const std::string key = py::str(item.first);
      bool known = f.out && key == "out";
      for (const FaceArg& a : f.args) known = known || a.key == key;
      FL_CHECK(known, TypeError, f.name, "() got an unexpected keyword argument '", key, "'");
    }
  }
  Stack results;
  op.boxed(op.op, stack, results);
  py::object result;
  if (results.size() == 1) {
    result = to_python(results[0]);
  } else if (!results.empty()) {
    py::tuple t(results.size());
    for (size_t i = 0; i < results.size(); ++i) t[i] = to_python(results[i]);
    result = t;
  } else {
    result = py::none();
  }
  if (out_arg.is_none()) return result;
  py::list inputs;
  for (const IValue& v : stack) for_each_tensor(v, [&](const Tensor& t) { inputs.append(py::cast(t)); });
  static py::object* write_out = new py::object(py::module_::import("flowlike._out").attr("write_out"));
  return (*write_out)(out_arg, result, f.name, py::arg("inputs") = py::tuple(inputs));
}

// `_C._call_op(name, *args, **kwargs)`: any declared op by name, bound as its function face.
py::object call_op(const std::string& name, py::args args, py::kwargs kwargs) {
  static std::unordered_map<std::string, Face>* faces = new std::unordered_map<std::string, Face>();
  auto it = faces->find(name);
  if (it == faces->end()) it = faces->emplace(name, make_face(find_op(name), name, false, false)).first;
  return call_face(it->second, py::none(), args, kwargs);
}

std::vector<std::string> split_names(const char* text) {
  std::vector<std::string> out;
  std::string cur;
  for (const char* c = text; *c; ++c) {
    if (*c == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += *c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

// `name(input, dims=[], *, out=None)\n--\n\n` + the declaration's doc: Python reads the first part as the
// function's __text_signature__, so inspect.signature and help() show the schema's arguments.
std::string face_doc(const Face& f, const std::string& attr, const char* doc) {
  std::string sig = attr + "(";
  bool kw = false;
  for (size_t i = 0; i < f.args.size(); ++i) {
    const FaceArg& a = f.args[i];
    if (i) sig += ", ";
    if (f.method && i == 0) { sig += "$self"; continue; }
    if (a.schema->kwarg_only && !kw) { sig += "*, "; kw = true; }
    sig += a.key;
    if (a.schema->default_value) {
      const std::string& d = *a.schema->default_value;
      sig += "=" + (d.front() == '\'' || d.front() == '"' || d == "None" || d == "True" || d == "False" || d.front() == '['
                        ? d : std::string(py::repr(default_value(d))));
    }
  }
  if (f.out) sig += kw ? ", out=None" : ", *, out=None";
  return sig + ")\n--\n\n" + doc;
}

// Binds every declared face (Note [Op faces]); a name bound twice is an error at import.
void bind_faces(py::module_& m, TensorClass& cls) {
  py::list inplace, functions;
  for (const OpFace& decl : op_faces()) {
    const OpInfo& op = find_op(decl.op);
    std::vector<std::string> faces = split_names(decl.faces), names = split_names(decl.names);
    names.insert(names.begin(), decl.op);
    auto has = [&](const char* k) { return std::find(faces.begin(), faces.end(), k) != faces.end(); };
    for (const std::string& name : names) {
      auto define = [&](py::handle scope, const std::string& attr, bool method) {
        FL_CHECK(!py::hasattr(scope, attr.c_str()) || (method && !cls.attr("__dict__").contains(attr.c_str())), Error,
                 "the Python face '", attr, "' of op ", decl.op, " is bound twice");
        auto face = std::make_shared<Face>(make_face(op, name, method, has("out") && !method));
        // (doc strings outlive the module: pybind keeps the pointer)
        const char* doc = (new std::string(face_doc(*face, attr, decl.doc)))->c_str();
        py::options plain;
        plain.disable_function_signatures();  // the signature is the doc's first line
        py::cpp_function fn =
            method ? py::cpp_function([face](py::handle self, py::args a, py::kwargs k) { return call_face(*face, self, a, k); },
                                      py::name(attr.c_str()), py::is_method(scope), py::doc(doc))
                   : py::cpp_function([face](py::args a, py::kwargs k) { return call_face(*face, py::none(), a, k); },
                                      py::name(attr.c_str()), py::doc(doc));
        scope.attr(attr.c_str()) = fn;
      };
      if (has("function")) {
        define(m, name, false);
        functions.append(name);
      }
      if (has("private")) define(m, name[0] == '_' ? name : "_" + name, false);  // (_fft_c2c stays _fft_c2c)
      if (has("method")) define(cls, name, true);
      if (has("inplace")) inplace.append(name);
    }
  }
  // the in-place forms are written once in Python (flowlike._out.inplace_method) over the methods above
  m.attr("_inplace_faces") = inplace;
  m.attr("_function_faces") = functions;  // flowlike.<name> (flowlike/_ops.py)
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
FL_PY_BINDINGS(15, fl::python::bind_faces)
