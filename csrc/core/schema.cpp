#include "schema.h"

#include <cctype>
#include <map>
#include <mutex>

namespace fl {
namespace {

class Parser {
 public:
  explicit Parser(const std::string& s) : s_(s) {}

  Schema schema() {
    Schema out;
    out.name = ident();
    if (eat('.')) out.overload = ident();
    expect('(');
    bool kwarg_only = false;
    while (!eat(')')) {
      if (!out.args.empty() || kwarg_only) expect(',');
      if (eat('*')) { kwarg_only = true; continue; }
      SchemaArg a = arg(true);
      a.kwarg_only = kwarg_only;
      out.args.push_back(std::move(a));
    }
    expect('-');
    expect('>');
    if (eat('(')) {
      while (!eat(')')) {
        if (!out.returns.empty()) expect(',');
        out.returns.push_back(arg(false));
      }
    } else {
      out.returns.push_back(arg(false));
    }
    skip_space();
    if (pos_ != s_.size()) fail("unexpected text after the returns");
    return out;
  }

 private:
  SchemaArg arg(bool named) {
    SchemaArg a;
    a.base = ident();
    a.type = a.base;
    if (eat('(')) {  // alias annotation
      skip_space();
      FL_CHECK(pos_ < s_.size() && std::isalpha(static_cast<unsigned char>(s_[pos_])), Error, where(), "alias set letter expected");
      a.alias = s_[pos_++];
      a.writes = eat('!');
      expect(')');
    }
    if (eat('?')) { a.optional = true; a.type += "?"; }
    if (eat('[')) {
      a.list = true;
      a.type += "[";
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) a.type += s_[pos_++];
      expect(']');
      a.type += "]";
      if (eat('?')) { a.optional = true; a.type += "?"; }
    }
    skip_space();
    if (named || (pos_ < s_.size() && std::isalpha(static_cast<unsigned char>(s_[pos_])))) a.name = ident();
    if (named && eat('=')) a.default_value = default_text();
    return a;
  }

  // A default value: up to the next ',' or ')' outside brackets and quotes.
  std::string default_text() {
    skip_space();
    size_t start = pos_;
    int depth = 0;
    char quote = 0;
    for (; pos_ < s_.size(); ++pos_) {
      char c = s_[pos_];
      if (quote) { if (c == quote) quote = 0; continue; }
      if (c == '\'' || c == '"') quote = c;
      else if (c == '[' || c == '(') ++depth;
      else if ((c == ']' || c == ')') && depth > 0) --depth;
      else if ((c == ',' || c == ')') && depth == 0) break;
    }
    std::string v = s_.substr(start, pos_ - start);
    while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.pop_back();
    FL_CHECK(!v.empty(), Error, where(), "default value expected");
    return v;
  }

  std::string ident() {
    skip_space();
    size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
    FL_CHECK(pos_ > start, Error, where(), "a name expected");
    return s_.substr(start, pos_ - start);
  }
  bool eat(char c) {
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == c) { ++pos_; return true; }
    return false;
  }
  void expect(char c) { if (!eat(c)) fail(std::string("'") + c + "' expected"); }
  void skip_space() { while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_; }
  std::string where() const { return str_cat("schema \"", s_, "\", at ", pos_, ": "); }
  [[noreturn]] void fail(const std::string& what) const { throw Error(where() + what); }

  const std::string& s_;
  size_t pos_ = 0;
};

// Whether a schema type may be carried by the C++ type named by `tag` (ivalue.h's TypeTag).
bool compatible(const SchemaArg& a, const std::string& tag) {
  const std::string& b = a.base;
  if (b == "Tensor") return tag == (a.list ? "Tensor[]" : "Tensor");
  if (a.list) return (b == "int" || b == "SymInt") ? tag == "int[]" : b == "float" ? tag == "float[]" : false;
  if (b == "int" || b == "SymInt") return tag == "int" || (a.optional && tag == "int?");
  if (b == "float") return tag == "float";
  if (b == "bool" || b == "Scalar" || b == "ScalarType" || b == "str") return tag == (b == "str" ? "str" : b);
  if (b == "Generator") return tag == "Generator?";
  return false;
}

}  // namespace

Schema parse_schema(const std::string& text) { return Parser(text).schema(); }

std::vector<OpFace>& op_faces() {
  static std::vector<OpFace>* faces = new std::vector<OpFace>();
  return *faces;
}

const Schema& op_schema(const OpInfo& op) {
  static std::mutex mu;
  static std::map<const void*, Schema>* parsed = new std::map<const void*, Schema>();
  std::lock_guard<std::mutex> g(mu);
  auto it = parsed->find(op.op);
  if (it == parsed->end()) it = parsed->emplace(op.op, parse_schema(op.schema)).first;
  return it->second;
}

namespace detail {
// Note [required tensors] in dispatch.h. A defaulted Tensor counts as optional, as `Tensor?`.
uint64_t required_tensor_mask(const char* schema, size_t arity) {
  const Schema s = parse_schema(schema);
  if (s.args.size() != arity || arity > 64) return 0;
  uint64_t mask = 0;
  for (size_t i = 0; i < arity; ++i) {
    const SchemaArg& a = s.args[i];
    if (a.base == "Tensor" && !a.optional && !a.list && !a.default_value) mask |= uint64_t(1) << i;
  }
  return mask;
}

uint64_t written_tensor_mask(const char* schema, size_t arity) {
  const Schema s = parse_schema(schema);
  if (s.args.size() != arity || arity > 64) return 0;
  uint64_t mask = 0;
  for (size_t i = 0; i < arity; ++i)
    if (s.args[i].base == "Tensor" && s.args[i].writes) mask |= uint64_t(1) << i;
  return mask;
}

void throw_none_tensor(const char* op, const char* schema, size_t index) {
  const Schema s = parse_schema(schema);
  const std::string name = index < s.args.size() ? s.args[index].name : "?";
  throw TypeError(str_cat(op, "(): argument '", name, "' (position ", index + 1, ") must be Tensor, not NoneType"));
}
}  // namespace detail

std::string schema_mismatch(const OpInfo& op) {
  const Schema& s = op_schema(op);
  auto letters = [](const std::string& n) {
    std::string r;
    for (char c : n) if (c != '_' && c != '.') r += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return r;
  };
  if (letters(op.name).rfind(letters(s.name), 0) != 0)
    return str_cat("the schema names '", s.name, "', the op is '", op.name, "'");
  if (static_cast<int>(s.args.size()) != op.num_args)
    return str_cat("the schema has ", s.args.size(), " arguments, the C++ signature ", op.num_args);
  for (int i = 0; i < op.num_args; ++i)
    if (!compatible(s.args[i], op.arg_types[i]))
      return str_cat("argument ", i, " '", s.args[i].name, "' is ", s.args[i].type, " in the schema, ", op.arg_types[i],
                     " in C++");
  const int n_returns = static_cast<int>(s.returns.size());
  if (n_returns != op.num_results)
    return str_cat("the schema returns ", n_returns, " values, the C++ signature ", op.num_results);
  for (int i = 0; i < op.num_results; ++i)
    if (!compatible(s.returns[i], op.result_types[i]))
      return str_cat("result ", i, " is ", s.returns[i].type, " in the schema, ", op.result_types[i], " in C++");
  return {};
}

}  // namespace fl
