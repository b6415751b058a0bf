// The generic binding of every declared op, produced from its parsed schema (core/schema.h):
// `flowlike._C._ops.<name>(*args, **kwargs)` binds the arguments by the schema's names, order,
// keyword-only marker and defaults, converts them to the boxed form by the C++ signature's types,
// and calls the op through the dispatcher. No per-op binding code.
#include <algorithm>
#include <memory>
#include <unordered_map>

#include "../core/schema.h"
#include "../kernels/overlap.h"
#include "../ops/random.h"
#include "python_util.h"

#include <structmember.h>  // (after Python.h)

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

IValue to_ivalue(const OpInfo& op, const SchemaArg& a, const std::string& tag, py::handle h, const char* face,
                 const char* key, size_t position) {
  // (the names are made only for an error: this runs on every call of a face)
  const char* name = face ? face : op.name;
  const char* arg = key ? key : a.name.c_str();
  auto bad_arg = [&]() {
    // torch's names: Number for Scalar, int for SymInt, no `?` of an optional; the position of an argument passed
    // by position
    std::string type = a.base == "Scalar" ? "Number" : a.base == "SymInt" && a.type.find('[') == std::string::npos ? "int" : a.type;
    if (!type.empty() && type.back() == '?') type.pop_back();
    throw TypeError(str_cat(name, "(): argument '", arg, "'", position ? str_cat(" (position ", position, ")") : std::string(),
                            " must be ", type, ", not ", std::string(py::str(py::type::of(h).attr("__name__")))));
  };
  const bool none = h.is_none();
  if (tag == "Tensor") {
    if (none && !a.optional) bad_arg();  // (as torch's parser, before any later argument is read)
    if (none) return IValue();
    if (!is_tensor(h)) bad_arg();
    return as_tensor(h);
  }
  if (tag == "Tensor[]") {
    // as torch's parser: a tuple or list (not a tensor, which is iterable too) of tensors; None only in `Tensor?[]`
    if (!position)
      while (op_schema(op).args[position].name != a.name) ++position;
    else
      --position;
    FL_CHECK(!is_tensor(h) && (PyList_Check(h.ptr()) || PyTuple_Check(h.ptr())), TypeError, name, "(): argument '",
             arg, "' (position ", position + 1, ") must be tuple of Tensors, not ",
             std::string(py::str(py::type::of(h).attr("__name__"))));
    const bool optional = a.type.find('?') != std::string::npos;
    TensorList l;
    for (py::handle e : h) {
      FL_CHECK(is_tensor(e) || (optional && e.is_none()), TypeError, "expected Tensor as element ", l.size(),
               " in argument ", position, ", but got ", std::string(py::str(py::type::of(e).attr("__name__"))));
      l.push_back(e.is_none() ? Tensor() : as_tensor(e));
    }
    return l;
  }
  if (tag == "int?" && none) return IValue();
  if (tag == "ScalarType") return none ? ScalarType::NumTypes : dtype_from_object(h);
  if (tag == "Generator?") return none ? static_cast<Generator*>(nullptr) : py::cast<Generator*>(h);
  if (tag == "int[]" && none && a.optional) return IntList{};  // `int[]? dim=None`: every dim
  if (none) bad_arg();
  if (tag == "int[]") return int_list(h, name, arg);
  int64_t i;
  if ((tag == "int" || tag == "int?") && int64_from_python(h, &i)) return i;  // (ValueError past int64, as torch)
  if (tag == "float[]") return py::cast<std::vector<double>>(h);
  if (tag == "str") return py::cast<std::string>(h);
  Scalar s;
  if (!scalar_from_python(h, &s)) bad_arg();
  if (tag == "Scalar") return s;
  if (tag == "bool") {
    if (!s.is_bool()) bad_arg();
    return s.to_bool();
  }
  if (tag == "int" || tag == "int?") {
    if (!s.is_int()) bad_arg();
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

// A dtype default in schema syntax (`ScalarType dtype=long`): torch's C type names, or a dtype's own name.
std::optional<ScalarType> dtype_default(const std::string& text) {
  static const std::pair<const char*, ScalarType> c_names[] = {
      {"long", ScalarType::Int64}, {"int", ScalarType::Int32},  {"float", ScalarType::Float32},
      {"double", ScalarType::Float64}, {"half", ScalarType::Float16}};
  for (const auto& [name, t] : c_names)
    if (text == name) return t;
  for (int i = 0; i < kNumScalarTypes; ++i)
    if (text == dtype_name(static_cast<ScalarType>(i))) return static_cast<ScalarType>(i);
  return std::nullopt;
}

py::object to_python(const IValue& v) {
  if (auto* t = std::get_if<Tensor>(&v)) return py::cast(*t);
  if (auto* l = std::get_if<TensorList>(&v)) {  // a tuple, as torch's Tensor[] results (where(condition), split)
    py::tuple out(l->size());
    for (size_t i = 0; i < l->size(); ++i) out[i] = (*l)[i] ? py::cast((*l)[i]) : py::none();
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
// How a face converts an argument: the common kinds directly, the rest through to_ivalue.
enum class ArgKind : uint8_t { Tensor, Int, Bool, Float, Scalar, IntList, Dtype, Other };

struct FaceArg {
  std::string key;  // the Python keyword
  const SchemaArg* schema;
  std::string tag;  // the C++ type (ivalue.h's TypeTag)
  ArgKind kind;
  bool sized_list;  // `int[1]`: a bare int is a list
  std::optional<IValue> default_value;
  size_t slot;  // its position in the schema (a method binds `self` first, wherever the schema has it)
};

struct Face {
  const OpInfo* op;
  std::string name;  // as the caller sees it, for errors
  std::vector<FaceArg> args;
  bool method = false, out = false, varargs_ints = false;
  bool exact_out = false;  // out= of exactly the result's dtype (torch's index ops)
};

Face make_face(const OpInfo& op, const std::string& name, bool method, bool out) {
  const Schema& schema = op_schema(op);
  const std::string mismatch = schema_mismatch(op);
  FL_CHECK(mismatch.empty(), Error, op.name, ": schema and C++ signature disagree: ", mismatch);
  Face f{&op, name, {}, method, out, false};
  for (size_t i = 0; i < schema.args.size(); ++i) {
    const SchemaArg& a = schema.args[i];
    const std::string tag = op.arg_types[i];
    const ArgKind kind = tag == "Tensor" ? ArgKind::Tensor : tag == "int" ? ArgKind::Int : tag == "bool" ? ArgKind::Bool
                         : tag == "float" ? ArgKind::Float : tag == "Scalar" ? ArgKind::Scalar : tag == "int[]" ? ArgKind::IntList
                         : tag == "ScalarType" ? ArgKind::Dtype : ArgKind::Other;
    const bool sized = a.type.size() > 2 && a.type[a.type.size() - 2] != '[';
    FaceArg fa{a.name == "self" && !method ? "input" : a.name, &a, tag, kind, sized, std::nullopt, i};
    if (a.default_value) {
      // a default the C++ type cannot carry (None for a plain float) leaves the argument required
      if (tag == "ScalarType" && *a.default_value != "None") {
        const std::optional<ScalarType> dt = dtype_default(*a.default_value);
        FL_CHECK(dt, Error, op.name, ": no dtype named '", *a.default_value, "' (the default of '", a.name, "')");
        fa.default_value = *dt;
      } else {
        try {
          fa.default_value = to_ivalue(op, a, fa.tag, default_value(*a.default_value));
        } catch (const std::exception&) {
        }
      }
    }
    f.args.push_back(std::move(fa));
  }
  // a method is called on `self` (the schema's `self`, where.self's second argument, or else its first)
  auto self = std::find_if(f.args.begin(), f.args.end(), [](const FaceArg& a) { return a.schema->name == "self"; });
  if (method && self != f.args.end()) std::rotate(f.args.begin(), self, self + 1);
  FL_CHECK(!method || (!f.args.empty() && f.args[0].tag == "Tensor"), Error, op.name, ": a method face needs a Tensor first");
  size_t positional = 0;
  for (size_t i = method ? 1 : 0; i < f.args.size(); ++i) positional += !f.args[i].schema->kwarg_only;
  f.varargs_ints = positional == 1 && f.args[method ? 1 : 0].tag == "int[]";
  return f;
}

// `position`: the argument's 1-based position in the face; `positional`: whether the caller passed it by position.
IValue convert(const Face& f, const FaceArg& a, size_t position, bool positional, py::handle value) {
  PyObject* o = value.ptr();
  switch (a.kind) {
    case ArgKind::Tensor:
      if (is_tensor(value)) return as_tensor(value);
      break;
    case ArgKind::Int:
      if (PyLong_CheckExact(o)) {
        int overflow = 0;
        const long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (!overflow) return int64_t(v);
      }
      break;
    case ArgKind::Bool:
      if (PyBool_Check(o)) return o == Py_True;
      break;
    case ArgKind::Float:
      if (PyFloat_CheckExact(o)) return PyFloat_AS_DOUBLE(o);
      break;
    case ArgKind::Scalar: {
      Scalar s;
      if (scalar_from_python(value, &s)) return s;
      break;
    }
    case ArgKind::IntList:
      // as torch's parser: a bare int is a list only for a sized type (`int[1]`) or as a varargs face's ints
      if (PyLong_Check(o) && !a.sized_list && !f.varargs_ints)
        throw TypeError(str_cat(f.name, "(): argument '", a.key, "' (position ", position, ") must be tuple of ints, not int"));
      if (PyTuple_CheckExact(o) || PyList_CheckExact(o)) {  // the common case read directly: a tuple of ints
        const Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
        PyObject** items = PySequence_Fast_ITEMS(o);
        IntList l(n);
        Py_ssize_t i = 0;
        for (int overflow = 0; i < n && PyLong_CheckExact(items[i]); ++i) {
          l[i] = PyLong_AsLongLongAndOverflow(items[i], &overflow);
          if (overflow) break;
        }
        if (i == n) return l;
        break;  // (int_list reads the rest and raises torch's errors)
      }
      if (f.varargs_ints && PyLong_CheckExact(o)) {  // x.view(n): the spread-out ints, one of them
        int overflow = 0;
        const long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (!overflow) return IntList{v};
        throw TypeError(str_cat(f.name, "(): argument '", a.key, "' failed to unpack the object at pos 1 with error "
                                "\"Overflow when unpacking long long\""));
      }
      break;
    case ArgKind::Dtype:
      if (o == Py_None) return a.default_value ? *a.default_value : ScalarType::NumTypes;  // `ScalarType? dtype=None`
      break;
    case ArgKind::Other:
      break;
  }
  return to_ivalue(*f.op, *a.schema, a.tag, value, f.name.c_str(), a.key.c_str(), positional ? position : 0);
}

// The numpy spellings torch's parser also accepts for these argument names (python_arg_parser's
// numpy_compatibility_arg_names): sum(x, axis=0, keepdims=True).
const std::vector<const char*>& numpy_aliases(const std::string& key) {
  static const std::vector<const char*> none, dim{"axis"}, keepdim{"keepdims"}, input{"x", "a", "x1"}, other{"x2"};
  return key == "dim" ? dim : key == "keepdim" ? keepdim : key == "input" ? input : key == "other" ? other : none;
}

// Binds a call's arguments (vectorcall form: `nargs` positional, then the values of the names in `kwnames`) by
// the face's schema (Note [Op faces]) and runs the op.
py::object call_face(const Face& f, PyObject* const* args, size_t nargs, PyObject* kwnames) {
  const OpInfo& op = *f.op;
  const size_t first = f.method ? 1 : 0;  // a method's self is args[0]
  const size_t nkw = kwnames ? static_cast<size_t>(PyTuple_GET_SIZE(kwnames)) : 0;
  py::object spread;  // x.view(2, 3) as x.view((2, 3)); null otherwise
  if (f.varargs_ints && nargs > first + 1) {
    py::tuple ints(nargs - first);
    for (size_t j = first; j < nargs; ++j) ints[j - first] = py::reinterpret_borrow<py::object>(args[j]);
    spread = std::move(ints);
  }
  const size_t npos = spread ? first + 1 : nargs;
  auto positional = [&](size_t j) -> PyObject* { return spread && j == first ? spread.ptr() : args[j]; };
  auto keyword_named = [&](const char* key) -> PyObject* {
    for (size_t j = 0; j < nkw; ++j)
      if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, j), key) == 0) return args[nargs + j];
    return nullptr;
  };
  auto keyword = [&](const std::string& key) -> PyObject* {
    PyObject* v = keyword_named(key.c_str());
    for (const char* alias : numpy_aliases(key)) v = v ? v : keyword_named(alias);
    return v;
  };
  FL_CHECK(nargs >= first, TypeError, f.name, "() needs a Tensor to be called on");
  Stack stack(f.args.size());
  size_t next = first, used_kwargs = 0;
  for (size_t i = 0; i < f.args.size(); ++i) {
    const FaceArg& a = f.args[i];
    PyObject* value = nullptr;
    const bool by_position = i >= first && next < npos && !a.schema->kwarg_only;
    if (i < first) {
      value = args[0];
    } else if (by_position) {
      value = positional(next++);
      FL_CHECK(!nkw || !keyword(a.key), TypeError, f.name, "() got multiple values for argument '", a.key, "'");
    } else if (nkw && (value = keyword(a.key))) {
      ++used_kwargs;
    } else {
      FL_CHECK(a.default_value, TypeError, f.name, "() missing required argument '", a.key, "' (position ", i + 1 - first, ")");
      stack[a.slot] = *a.default_value;
      continue;
    }
    if (value == Py_None && a.kind == ArgKind::IntList && a.default_value && !a.schema->optional) {
      stack[a.slot] = *a.default_value;  // None takes a list's default, as torch's parser
      continue;
    }
    stack[a.slot] = convert(f, a, i + 1 - first, by_position, value);
  }
  FL_CHECK(next == npos, TypeError, f.name, "() takes ", next - first, " positional arguments but ", npos - first, " were given");
  PyObject* out_arg = nullptr;
  if (f.out && nkw && (out_arg = keyword_named("out"))) ++used_kwargs;
  if (used_kwargs != nkw) {
    for (size_t j = 0; j < nkw; ++j) {
      const std::string key = py::str(PyTuple_GET_ITEM(kwnames, j));
      bool known = f.out && key == "out";
      for (size_t i = first; i < f.args.size(); ++i) {
        known = known || f.args[i].key == key;
        for (const char* alias : numpy_aliases(f.args[i].key)) known = known || key == alias;
      }
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
  if (!out_arg || out_arg == Py_None) return result;
  if (f.exact_out && is_tensor(out_arg)) check_no_internal_overlap(as_tensor(out_arg));  // (torch's index ops, first)
  py::list inputs;
  for (const IValue& v : stack) for_each_tensor(v, [&](const Tensor& t) { inputs.append(py::cast(t)); });
  static py::object* write_out = new py::object(py::module_::import("flowlike._out").attr("write_out"));
  return (*write_out)(py::handle(out_arg), result, f.name, py::arg("exact_dtype") = f.exact_out,
                      py::arg("inputs") = py::tuple(inputs));
}

// Note [Overloads]
// Several declarations of one name (fill_.Scalar / fill_.Tensor, view / view.dtype) make one face, as PyTorch's
// python_arg_parser: the overloads are tried in declaration order (those taking a Scalar after the others, as
// torchgen sorts them, since a tensor is not a number here), the first whose arguments bind by Python type runs;
// when none does, the one overload the argument count and keywords fit raises its own error, else a TypeError
// lists the candidate signatures. A face of one declaration binds directly (call_face).
struct Overloads {
  std::vector<Face> faces;
  std::string doc;
};

// Whether `o` has the Python type face argument `a` takes (the check only: convert() reads it).
bool accepts(const Face& f, const FaceArg& a, PyObject* o) {
  if (o == Py_None) return a.schema->optional || (a.kind == ArgKind::IntList && a.default_value);
  auto is_int = [](PyObject* v) { return !PyBool_Check(v) && (PyLong_Check(v) || PyIndex_Check(v)); };
  switch (a.kind) {
    case ArgKind::Tensor: return is_tensor(o);
    case ArgKind::Int: return is_int(o);
    case ArgKind::Bool: return PyBool_Check(o);
    case ArgKind::Float: return PyFloat_Check(o) || PyLong_Check(o);
    case ArgKind::IntList: {
      // an int (for `int[1]` or spread out), a tuple or list of ints, or a tensor of them (int_list reads it)
      if (!PyTuple_Check(o) && !PyList_Check(o)) return is_tensor(o) || ((a.sized_list || f.varargs_ints) && is_int(o));
      for (py::handle e : py::reinterpret_borrow<py::sequence>(o))
        if (!is_int(e.ptr())) return false;
      return true;
    }
    case ArgKind::Scalar: {
      Scalar s;
      return !is_tensor(o) && scalar_from_python(o, &s);
    }
    case ArgKind::Dtype: return is_dtype_object(o);
    case ArgKind::Other: break;
  }
  if (a.tag == "str") return PyUnicode_Check(o);
  if (a.tag == "Tensor[]" || a.tag == "float[]") return PyTuple_Check(o) || PyList_Check(o);
  if (a.tag == "Generator?") return py::isinstance<Generator>(o);
  return true;  // (converted, or refused, by to_ivalue)
}

// Whether `key` names an argument of the face (or its out=), by a name or a numpy alias.
bool known_keyword(const Face& f, PyObject* key) {
  if (f.out && PyUnicode_CompareWithASCIIString(key, "out") == 0) return true;
  for (size_t i = f.method ? 1 : 0; i < f.args.size(); ++i) {
    if (PyUnicode_CompareWithASCIIString(key, f.args[i].key.c_str()) == 0) return true;
    for (const char* alias : numpy_aliases(f.args[i].key))
      if (PyUnicode_CompareWithASCIIString(key, alias) == 0) return true;
  }
  return false;
}

// How a call's arguments meet a face: whether their count and keywords fit it (torch's "plausible" signature)
// and whether they also bind by type.
struct Fit {
  bool plausible = false, binds = false;
};

Fit fit(const Face& f, PyObject* const* args, size_t nargs, PyObject* kwnames) {
  const size_t first = f.method ? 1 : 0, nkw = kwnames ? static_cast<size_t>(PyTuple_GET_SIZE(kwnames)) : 0;
  if (nargs < first) return {};
  for (size_t j = 0; j < nkw; ++j)
    if (!known_keyword(f, PyTuple_GET_ITEM(kwnames, j))) return {};
  // (spread out only from an int first, as torch's parser: x.view((3,), 2) fits no overload)
  const bool spread = f.varargs_ints && nargs > first + 1 && !PyBool_Check(args[first]) &&
                      (PyLong_Check(args[first]) || PyIndex_Check(args[first]));
  size_t slots = 0;
  for (size_t i = first; i < f.args.size(); ++i) slots += !f.args[i].schema->kwarg_only;
  if ((spread ? 1 : nargs - first) > slots) return {};
  Fit r{true, true};
  size_t next = first;
  for (size_t i = first; i < f.args.size() && r.binds; ++i) {
    const FaceArg& a = f.args[i];
    if (!a.schema->kwarg_only && next < nargs) {
      if (spread) {  // x.view(2, 3): every positional argument is one of the ints
        for (; next < nargs; ++next) r.binds = r.binds && accepts(f, a, args[next]);
        continue;
      }
      r.binds = accepts(f, a, args[next++]);
      continue;
    }
    PyObject* value = nullptr;
    for (size_t j = 0; j < nkw && !value; ++j) {
      PyObject* key = PyTuple_GET_ITEM(kwnames, j);
      if (PyUnicode_CompareWithASCIIString(key, a.key.c_str()) == 0) value = args[nargs + j];
      for (const char* alias : numpy_aliases(a.key))
        if (!value && PyUnicode_CompareWithASCIIString(key, alias) == 0) value = args[nargs + j];
    }
    r.binds = value ? accepts(f, a, value) : a.default_value.has_value();
  }
  return r;
}

// torch's name of a schema type in a signature it lists.
std::string python_type_name(const FaceArg& a) {
  if (a.kind == ArgKind::IntList) return "tuple of ints";
  if (a.kind == ArgKind::Scalar) return "Number";
  if (a.tag == "ScalarType") return "torch.dtype";
  if (a.tag == "Generator?") return "torch.Generator";
  if (a.tag == "Tensor[]") return "tuple of Tensors";
  if (a.tag == "float[]") return "tuple of floats";
  return a.schema->base == "SymInt" ? "int" : a.schema->base;
}

std::string type_name_of(py::handle h) {
  return is_tensor(h) ? "Tensor" : std::string(py::str(py::type::of(h).attr("__name__")));
}

// torch's "received an invalid combination of arguments" TypeError (python_arg_parser's format_invalid_args).
[[noreturn]] void no_overload(const Overloads& o, PyObject* const* args, size_t nargs, PyObject* kwnames) {
  const Face& f0 = o.faces[0];
  const size_t first = f0.method ? 1 : 0, nkw = kwnames ? static_cast<size_t>(PyTuple_GET_SIZE(kwnames)) : 0;
  std::string got = "(";
  for (size_t j = first; j < nargs; ++j) got += (j > first ? ", " : "") + type_name_of(args[j]);
  for (size_t j = nkw; j-- > 0;) {  // (torch lists the keywords last to first)
    if (nargs > first) got += ", ";
    got += std::string(py::str(PyTuple_GET_ITEM(kwnames, j))) + "=" + type_name_of(args[nargs + j]);
    if (nargs == first) got += ", ";
  }
  std::string msg = str_cat(f0.name, "() received an invalid combination of arguments - got ", got, "), but expected one of:\n");
  for (const Face& f : o.faces) {
    std::string sig;
    bool kw = false;
    for (size_t i = first; i < f.args.size(); ++i) {
      const FaceArg& a = f.args[i];
      if (i > first) sig += ", ";
      if (a.schema->kwarg_only && !kw) { sig += "*, "; kw = true; }
      sig += python_type_name(a) + " " + a.key;
      if (a.schema->default_value) sig += " = " + *a.schema->default_value;
    }
    msg += " * (" + sig + ")\n";
  }
  throw TypeError(msg);
}

py::object call_overloaded(const Overloads& o, PyObject* const* args, size_t nargs, PyObject* kwnames) {
  const Face* plausible = nullptr;
  size_t n_plausible = 0;
  for (const Face& f : o.faces) {
    const Fit r = fit(f, args, nargs, kwnames);
    if (r.binds) return call_face(f, args, nargs, kwnames);
    if (r.plausible) plausible = &f, ++n_plausible;
  }
  if (n_plausible == 1) return call_face(*plausible, args, nargs, kwnames);  // its own error, as torch's
  no_overload(o, args, nargs, kwnames);
}

// `_C._call_op(name, *args, **kwargs)`: any declared op by name, bound as its function face.
py::object call_op(const std::string& name, py::args args, py::kwargs kwargs) {
  static std::unordered_map<std::string, Face>* faces = new std::unordered_map<std::string, Face>();
  auto it = faces->find(name);
  if (it == faces->end()) it = faces->emplace(name, make_face(find_op(name), name, false, false)).first;
  std::vector<PyObject*> flat;
  flat.reserve(args.size() + (kwargs ? kwargs.size() : 0));
  for (py::handle a : args) flat.push_back(a.ptr());
  py::tuple names(kwargs ? kwargs.size() : 0);
  size_t j = 0;
  if (kwargs)
    for (auto item : kwargs) {
      names[j++] = py::reinterpret_borrow<py::object>(item.first);
      flat.push_back(item.second.ptr());
    }
  return call_face(it->second, flat.data(), args.size(), j ? names.ptr() : nullptr);
}

// A face as a Python object: a vectorcall callable (no argument tuple or dict is built per call) that is also a
// method descriptor, so `x.flip(0)` calls it with x first and no bound method in between, as CPython's own
// method descriptors. `__text_signature__` lets inspect.signature read the schema's arguments.
struct FaceObject {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  Overloads* faces;
  PyObject* name;
  PyObject* doc;
  PyObject* signature;
};

PyObject* face_vectorcall(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  try {
    const Overloads& o = *reinterpret_cast<FaceObject*>(self)->faces;
    const size_t nargs = PyVectorcall_NARGS(nargsf);
    if (o.faces.size() == 1) return call_face(o.faces[0], args, nargs, kwnames).release().ptr();
    return call_overloaded(o, args, nargs, kwnames).release().ptr();
  } catch (...) {
    py::detail::try_translate_exceptions();
    return nullptr;
  }
}

PyObject* face_get(PyObject* self, PyObject* obj, PyObject*) {
  if (!obj || !reinterpret_cast<FaceObject*>(self)->faces->faces[0].method) return Py_NewRef(self);
  return PyMethod_New(self, obj);
}

PyObject* face_getattr_name(PyObject* self, void*) { return Py_NewRef(reinterpret_cast<FaceObject*>(self)->name); }
PyObject* face_getattr_doc(PyObject* self, void*) { return Py_NewRef(reinterpret_cast<FaceObject*>(self)->doc); }
PyObject* face_getattr_signature(PyObject* self, void*) { return Py_NewRef(reinterpret_cast<FaceObject*>(self)->signature); }

PyGetSetDef face_getset[] = {
    {"__name__", face_getattr_name, nullptr, nullptr, nullptr},
    {"__qualname__", face_getattr_name, nullptr, nullptr, nullptr},
    {"__doc__", face_getattr_doc, nullptr, nullptr, nullptr},
    {"__text_signature__", face_getattr_signature, nullptr, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyTypeObject* face_type() {
  static PyTypeObject* type = [] {
    static PyType_Slot slots[] = {{Py_tp_call, reinterpret_cast<void*>(PyVectorcall_Call)},
                                  {Py_tp_descr_get, reinterpret_cast<void*>(face_get)},
                                  {Py_tp_getset, face_getset},
                                  {0, nullptr}};
    static PyMemberDef members[] = {
        {"__vectorcalloffset__", T_PYSSIZET, offsetof(FaceObject, vectorcall), READONLY, nullptr},
        {nullptr, 0, 0, 0, nullptr}};
    static PyType_Slot all[] = {slots[0], slots[1], slots[2], {Py_tp_members, members}, {0, nullptr}};
    static PyType_Spec spec = {"flowlike._C.op_face", sizeof(FaceObject), 0,
                               Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR, all};
    PyObject* t = PyType_FromSpec(&spec);
    if (!t) throw py::error_already_set();
    return reinterpret_cast<PyTypeObject*>(t);
  }();
  return type;
}

std::string face_signature(const Face& f);

py::object make_face_object(Overloads* faces, const std::string& attr, const std::string& doc) {
  FaceObject* o = PyObject_New(FaceObject, face_type());
  if (!o) throw py::error_already_set();
  o->vectorcall = face_vectorcall;
  o->faces = faces;  // faces live as long as the module
  o->name = py::str(attr).release().ptr();
  o->doc = doc.empty() ? Py_NewRef(Py_None) : py::str(doc).release().ptr();
  // one signature only: inspect.signature cannot show overloads (as torch's, which have none)
  o->signature = faces->faces.size() == 1 ? py::str(face_signature(faces->faces[0])).release().ptr() : Py_NewRef(Py_None);
  return py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(o));
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

// `(input, dims=[], *, out=None)`: the face's signature, which inspect.signature and help() read
// (`__text_signature__`; a method's self is `$self`).
std::string face_signature(const Face& f) {
  std::string sig = "(";
  bool kw = false;
  for (size_t i = 0; i < f.args.size(); ++i) {
    const FaceArg& a = f.args[i];
    if (i) sig += ", ";
    if (f.method && i == 0) { sig += "$self"; continue; }
    if (a.schema->kwarg_only && !kw) { sig += "*, "; kw = true; }
    sig += a.key;
    if (a.schema->default_value) {
      const std::string& d = *a.schema->default_value;
      const bool literal = d.front() == '\'' || d.front() == '"' || d.front() == '[' || d == "None" || d == "True" ||
                           d == "False";
      // a text signature holds literals only: a dtype default shows as None, which the face takes as the default
      sig += "=" + (a.kind == ArgKind::Dtype ? std::string("None") : literal ? d : std::string(py::repr(default_value(d))));
    }
  }
  if (f.out) sig += kw ? ", out=None" : ", *, out=None";
  return sig + ")";
}

// Binds every declared face (Note [Op faces]); the declarations of one name make one face (Note [Overloads]); a
// name bound twice otherwise is an error at import.
void bind_faces(py::module_& m, TensorClass& cls) {
  py::list inplace, functions;
  // (scope, Python name) -> its overloads, in declaration order
  std::vector<std::tuple<py::handle, std::string, Overloads*>> bound;
  for (const OpFace& decl : op_faces()) {
    const OpInfo& op = find_op(decl.op);
    std::vector<std::string> faces = split_names(decl.faces), names = split_names(decl.names);
    names.insert(names.begin(), op_schema(op).name);  // (the overload name is not part of the Python name)
    auto has = [&](const char* k) { return std::find(faces.begin(), faces.end(), k) != faces.end(); };
    for (const std::string& name : names) {
      auto define = [&](py::handle scope, const std::string& attr, bool method) {
        // (each overload has its own out=: torch's where(condition) has none, where(condition, input, other) one)
        Face face = make_face(op, name, method, (has("out") || has("out_exact")) && !method);
        face.exact_out = has("out_exact");
        for (auto& [s, a, o] : bound)
          if (s.is(scope) && a == attr) {
            o->faces.push_back(std::move(face));
            return false;
          }
        FL_CHECK(!py::hasattr(scope, attr.c_str()) || (method && !cls.attr("__dict__").contains(attr.c_str())), Error,
                 "the Python face '", attr, "' of op ", decl.op, " is bound twice");
        bound.emplace_back(scope, attr, new Overloads{{std::move(face)}, decl.doc});
        return true;
      };
      if (has("function") && define(m, name, false)) functions.append(name);
      if (has("private")) define(m, name[0] == '_' ? name : "_" + name, false);  // (_fft_c2c stays _fft_c2c)
      if (has("method")) define(cls, name, true);
      if (has("inplace") && !inplace.contains(name)) inplace.append(name);
    }
  }
  for (auto& [scope, attr, o] : bound) {
    // the overloads taking a Scalar last: a 0-dim tensor binds to a Tensor overload first, as torchgen sorts them
    std::stable_partition(o->faces.begin(), o->faces.end(), [](const Face& f) {
      return std::none_of(f.args.begin(), f.args.end(), [](const FaceArg& a) { return a.kind == ArgKind::Scalar; });
    });
    scope.attr(attr.c_str()) = make_face_object(o, attr, o->doc);
  }
  // the in-place forms are written once in Python (flowlike._out.inplace_method) over the methods above
  m.attr("_inplace_faces") = inplace;
  m.attr("_function_faces") = functions;  // flowlike.<name> (flowlike/_ops.py)
}

void bind(py::module_& m, TensorClass&) {
  m.def("_call_op", &call_op, py::arg("name"),
        "Calls a declared op by name through the dispatcher, its arguments bound by its schema.");
  m.def("_check_out_overlap", [](const Tensor& out, const TensorList& inputs, const TensorList& partial) {
    for (const Tensor& t : inputs) check_no_overlap(out, t);
    for (const Tensor& t : partial) check_no_partial_overlap(out, t);
  }, py::arg("out"), py::arg("inputs"), py::arg("partial"),
     "torch's assert_no_overlap of out with each of `inputs` and assert_no_partial_overlap with each of `partial`.");
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
