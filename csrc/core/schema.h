// Op schemas, parsed: the declaration string of each op (FL_DEFINE_OP) in PyTorch's schema syntax,
//   name.overload(Type name=default, *, Type name=default) -> (Type, Type)
// with alias annotations (`Tensor(a!)`: written in place and returned; `Tensor(a)`: a view of it),
// optional types (`Tensor?`) and lists (`int[]`, `int[2]`, `Tensor?[]`).
//
// The parse is checked against the op's C++ signature (schema_mismatch), and drives the generic
// Python binding of every op (python/bind_ops.cpp): names, defaults and keyword-only arguments come
// from here, nowhere else.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "dispatch.h"

namespace fl {

struct SchemaArg {
  std::string name;
  std::string type;                  // as written, without the alias annotation: "Tensor?", "int[2]"
  std::string base;                  // "Tensor", "int", "SymInt", "float", "Scalar", ...
  bool optional = false;             // `?` on the whole type (or on list elements: "Tensor?[]")
  bool list = false;
  char alias = 0;                    // the alias set letter of `Tensor(a)` / `Tensor(a!)`
  bool writes = false;               // `!`
  bool kwarg_only = false;           // after `*`
  std::optional<std::string> default_value;
};

struct Schema {
  std::string name, overload;
  std::vector<SchemaArg> args, returns;
};

// The Python faces of an op, from its declaration (csrc/ops/gen_ops.py's `python:`, `names:` and `doc:`):
// `faces` lists function, method, private, out, inplace; python/bind_ops.cpp binds them at import.
struct OpFace {
  const char* op;
  const char* faces;
  const char* names;  // other Python names of the same faces, comma-separated
  const char* doc;
};
std::vector<OpFace>& op_faces();
struct OpFaceListed {
  OpFaceListed(const char* op, const char* faces, const char* names, const char* doc) {
    op_faces().push_back({op, faces, names, doc});
  }
};

// Throws Error naming the schema and the position of a syntax error.
Schema parse_schema(const std::string& text);
// The parsed schema of a registered op (parsed once).
const Schema& op_schema(const OpInfo& op);
// Empty when the schema agrees with the C++ signature (argument and result counts and types), else
// what differs.
std::string schema_mismatch(const OpInfo& op);

}  // namespace fl
