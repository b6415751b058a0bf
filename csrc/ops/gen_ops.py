"""The op generator: one declaration per op (csrc/ops/<family>.yaml) -> its C++ declaration, definition,
kernel registration, autograd kernel and Python face (as torchgen does from native_functions.yaml and
derivatives.yaml). Run by the CMake build:

    python gen_ops.py OUT_DIR FAMILY.yaml...

writes OUT_DIR/fl_generated/<family>.h (the `fl::ops::<name>` declarations and the kernels' declarations,
included by csrc/ops/<family>.h) and OUT_DIR/fl_generated/<family>.cpp (everything else).

An entry (see the README's "Adding an op"):

    - func: roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor   # the schema, PyTorch's syntax
      cpu: roll_cpu                   # the CPU kernel: a function name (declared here with the op's C++
                                      # signature) or a call over the argument names
      python: [function, method]      # faces: function (_C.<name>), method (Tensor.<name>), private
                                      # (_C._<name>), out (function takes out=), inplace (Tensor.<name>_)
      names: [swapaxes]               # other Python names of the same faces
      doc: A copy of input with ...   # the faces' docstring
      derivatives:                    # one formula per differentiable input, over `grad`, the arguments,
        self: ops::roll(grad, negated(shifts), dims)   # `result` and named results; or
      # derivatives: none             # the op has no gradient (Autograd falls through)
      # autograd: manual              # its Autograd kernel is written by hand (csrc/autograd/)
      # autograd: none                # no Autograd kernel: a call with inputs that require grad is an error
      node: RollBackward0             # the backward node's name (default: torch's rule from the op name)
      fallthrough: [Conjugate]        # dispatch keys the op passes through (it handles conjugate inputs itself)

A formula that reads a tensor argument saves it (a SavedVariable: version-checked, released after backward);
one that reads only `x->sizes`, `x->strides`, `x->dtype`, `x->offset` or `x->numel` keeps just that value.
"""
import os
import re
import sys

import yaml

# ---- schemas --------------------------------------------------------------------------------------------

_ARG = re.compile(r"^(?P<base>\w+)(?:\((?P<alias>\w)(?P<bang>!?)\))?(?P<opt>\?)?(?P<list>\[\d*\])?(?P<lopt>\?)?$")


class Arg:
    def __init__(self, text):
        text = text.split("=", 1)[0].strip()  # (defaults matter to the Python faces only: core/schema.cpp parses them)
        parts = text.rsplit(None, 1)
        self.type, self.name = (parts[0], parts[1]) if len(parts) == 2 else (parts[0], "")
        m = _ARG.match(self.type)
        if not m:
            raise ValueError(f"cannot parse the schema type {self.type!r}")
        self.base = m["base"]
        self.list = bool(m["list"])
        self.optional = bool(m["opt"] or m["lopt"])
        self.writes = bool(m["bang"])

    @property
    def is_tensor(self):
        return self.base == "Tensor" and not self.list

    def cpp(self, result=False):
        """The C++ type of this argument (or result), as ivalue.h's TypeTag expects."""
        b = self.base
        if b == "Tensor":
            return ("TensorList" if result else "const TensorList&") if self.list else ("Tensor" if result else "const Tensor&")
        if b in ("int", "SymInt"):
            if self.list:
                return "const IntList&"
            return "std::optional<int64_t>" if self.optional else "int64_t"
        if b == "float":
            return "const std::vector<double>&" if self.list else "double"
        simple = {"bool": "bool", "Scalar": "Scalar", "ScalarType": "ScalarType", "str": "const std::string&",
                  "Generator": "Generator*"}
        if b in simple and not self.list:
            return simple[b]
        raise ValueError(f"no C++ type for the schema type {self.type!r}")


def _split(text):
    """Splits at top-level commas."""
    out, depth, cur = [], 0, ""
    for c in text:
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        if c == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += c
    if cur.strip():
        out.append(cur)
    return out


class Schema:
    def __init__(self, text):
        self.text = text
        m = re.match(r"^\s*([\w.]+)\s*\((.*)\)\s*->\s*(.*)$", text)
        if not m:
            raise ValueError(f"cannot parse the schema {text!r}")
        self.name, _, self.overload = m[1].partition(".")
        self.args = [Arg(part) for part in _split(m[2]) if part.strip() != "*"]
        rets = m[3].strip()
        if rets.startswith("("):
            rets = rets[1:-1]
        self.returns = [Arg(r) for r in _split(rets)]

    def cpp_result(self):
        if not self.returns:
            return "void"
        if len(self.returns) == 1:
            return self.returns[0].cpp(result=True)
        return "std::tuple<" + ", ".join(r.cpp(result=True) for r in self.returns) + ">"

    def cpp_signature(self):
        return f"{self.cpp_result()}({', '.join(a.cpp() for a in self.args)})"


# ---- autograd -------------------------------------------------------------------------------------------

_META = ("sizes", "strides", "dtype", "offset", "numel")


def _camel(name):
    return "".join(p[:1].upper() + p[1:] for p in name.split("_") if p)


class Derivative:
    """The generated Autograd kernel of one entry."""

    def __init__(self, op, schema, formulas, node):
        self.op, self.schema, self.node = op, schema, node or _camel(op) + "Backward0"
        by_name = {a.name: a for a in schema.args}
        for name in formulas:
            if name not in by_name or by_name[name].base != "Tensor":
                raise ValueError(f"{op}: the derivative names '{name}', which is not a Tensor argument")
        self.inputs = [a for a in schema.args if a.name in formulas]  # the edges, in schema order
        self.formulas = {k: str(v).strip() for k, v in formulas.items()}
        self.out_names = [r.name or f"result{i}" for i, r in enumerate(schema.returns)]
        if schema.returns[0].base != "Tensor" or schema.returns[0].list:
            raise ValueError(f"{op}: a generated derivative needs a Tensor as the first result")

    def _uses(self, text, name):
        return re.search(rf"(?<![\w.>:]){re.escape(name)}\b", text) is not None

    def _reads(self, body, name):
        """Whether the formulas read tensor `name` whole (so it is saved), and which metadata fields they read."""
        metas = set(re.findall(rf"(?<![\w.>:]){name}->(\w+)", body))
        bare = re.sub(rf"(?<![\w.>:]){name}->(?:{'|'.join(_META)})\b", "", body)
        return self._uses(bare, name) or not metas <= set(_META), metas

    def code(self):
        s = self.schema
        params = ", ".join(f"{a.cpp()} {a.name}" for a in s.args)
        argnames = ", ".join(a.name for a in s.args)
        multi = len(s.returns) > 1
        body = " ".join(self.formulas.values())
        primary = "result" if not multi else self.out_names[0]
        first = "std::get<0>(out_)" if multi else "out_"
        saved, captures, renames = [], [], {}

        def keep_metadata(name, source, metas):  # the fields a formula reads, captured by value
            for m in sorted(metas):
                captures.append(f"{name}_{m} = {source}->{m}")
                renames[f"{name}->{m}"] = f"{name}_{m}"

        for a in s.args:
            if not self._uses(body, a.name):
                continue
            if not a.is_tensor:
                captures.append(a.name)
                continue
            whole, metas = self._reads(body, a.name)
            if whole:
                saved.append(a.name)
            else:
                keep_metadata(a.name, a.name, metas)
        whole, metas = self._reads(body, "result")
        save_result = whole or (multi and self._uses(body, primary))
        if not save_result:
            keep_metadata("result", first, metas)
        for i, n in enumerate(self.out_names[1:], 1):  # other results (indices): kept by value
            if self._uses(body, n):
                captures.append(f"{n} = std::get<{i}>(out_)")
        lines = [f"FL_REGISTER_KERNEL({self.op}, Autograd, ([](DispatchKeySet ks, {params}) -> {s.cpp_result()} {{",
                 f"  auto out_ = redispatch_no_grad(ops::{self.op}, ks, {argnames});"]
        lines.append(f"  if (!is_differentiable({first}->dtype)) return out_;")
        if not multi and not any(a.writes for a in s.args):
            # an op that hands back one of its inputs (conj of a real tensor) is the identity: nothing to record
            same = " || ".join(f"out_ == {a.name}" for a in s.args if a.is_tensor)
            if same:
                lines.append(f"  if ({same}) return out_;")
        edges = ", ".join(f"gradient_edge({a.name})" for a in self.inputs)
        outs = []
        for a in self.inputs:
            f = self.formulas[a.name]
            for k, v in renames.items():
                f = f.replace(k, v)
            f = "formulas::not_implemented(\"" + self.op + "\")" if f == "not_implemented" else f
            # with several inputs, only the gradients that lead to what backward wants are computed
            outs.append(f"should_compute_output({len(outs)}) ? {f} : Tensor()" if len(self.inputs) > 1 else f)
        unpack = [f"const Tensor& {n} = saved_[{i}];" for i, n in enumerate(saved)]
        if save_result:
            unpack.append(f"const Tensor& {'result' if not multi else primary} = saved_[{len(saved)}];")
            if multi and self._uses(body, "result"):
                unpack.append(f"const Tensor& result = {primary};")
        cap = ", ".join(captures)
        ret = "return TensorList{" + ", ".join(outs) + "};"
        node = f'"{self.node}"' if re.fullmatch(r"\w+", self.node) else self.node
        if saved or save_result:
            lam = f"[{cap}](const Tensor& grad, const TensorList& saved_) {{ {' '.join(unpack)} {ret} }}"
            rec = f"record_saved({node}, {first}, {{{edges}}}, {{{', '.join(saved)}}}, {str(save_result).lower()}, {lam})"
        else:
            lam = f"[{cap}](const Tensor& grad) {{ {ret} }}"
            rec = f"record_lambda({node}, {first}, {{{edges}}}, {lam})"
        lines.append(f"  {first} = {rec};" if multi else f"  return {rec};")
        if multi:
            lines.append("  return out_;")
        lines.append("}))")
        return "\n".join(lines)


# ---- entries --------------------------------------------------------------------------------------------

_FACES = {"function", "method", "private", "out", "inplace"}


def _listed(v):
    if v is None:
        return []
    return [x.strip() for x in v.split(",")] if isinstance(v, str) else list(v)


def generate(family, doc):
    includes = _listed(doc.get("includes"))
    decls, kernel_decls, op_defs, defs = [], [], [], []
    for e in doc["ops"]:
        schema = Schema(e["func"])
        name = e.get("name", schema.name + ("_" + schema.overload if schema.overload else ""))
        sig = schema.cpp_signature()
        decls.append(f"FL_DECLARE_OP({name}, {sig})")
        op_defs.append(f"FL_DEFINE_OP({name}, {_c_string(schema.text)}, {sig})")
        cpu = e.get("cpu")
        if cpu:
            if re.fullmatch(r"[\w:]+", cpu):
                if "::" not in cpu:
                    kernel_decls.append(f"{schema.cpp_result()} {cpu}({', '.join(a.cpp() for a in schema.args)});")
                call = f"{cpu}({', '.join(a.name for a in schema.args)})"
            else:
                call = cpu
            params = ", ".join(f"{a.cpp()} {a.name}" for a in schema.args)
            defs.append(f"FL_REGISTER_KERNEL({name}, CPU, ([](DispatchKeySet, {params}) -> {schema.cpp_result()} "
                        f"{{ return {call}; }}))")
        d = e.get("derivatives")
        if e.get("autograd") in ("manual", "none"):
            pass  # manual: written in csrc/autograd/; none: a call that needs one is an error naming the op
        elif d == "none" or (d is None and not any(a.base == "Tensor" for a in schema.args)):
            defs.append(f"FL_REGISTER_FALLTHROUGH({name}, Autograd)")
        elif d is None:
            raise ValueError(f"{name}: say `derivatives:` (a formula per input, or none) or `autograd: manual`")
        else:
            defs.append(Derivative(name, schema, d, e.get("node")).code())
        for key in _listed(e.get("fallthrough")):
            defs.append(f"FL_REGISTER_FALLTHROUGH({name}, {key})")
        faces = _listed(e.get("python"))
        bad = set(faces) - _FACES
        if bad:
            raise ValueError(f"{name}: unknown python faces {sorted(bad)}")
        if faces:
            defs.append(f"static ::fl::OpFaceListed fl_face_{name}(\"{name}\", \"{','.join(faces)}\", "
                        f"\"{','.join(_listed(e.get('names')))}\", {_c_string(' '.join(str(e.get('doc', '')).split()))});")
    header = [f"// Generated by csrc/ops/gen_ops.py from csrc/ops/{family}.yaml: do not edit.", "#pragma once",
              '#include "core/dispatch.h"', "", "namespace fl {", *kernel_decls, "}  // namespace fl", "",
              *decls, ""]
    source = [f"// Generated by csrc/ops/gen_ops.py from csrc/ops/{family}.yaml: do not edit.",
              f'#include "fl_generated/{family}.h"', '#include "autograd/autograd.h"', '#include "autograd/formulas.h"',
              '#include "core/schema.h"', *[f'#include "{i}"' for i in includes], "",
              *op_defs, "", "namespace fl::autograd {", "using namespace ::fl::formulas;", "", *defs, "",
              "}  // namespace fl::autograd", ""]
    return "\n".join(header), "\n".join(source)


def _c_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main(out_dir, paths):
    os.makedirs(os.path.join(out_dir, "fl_generated"), exist_ok=True)
    for path in paths:
        family = os.path.splitext(os.path.basename(path))[0]
        with open(path) as f:
            doc = yaml.safe_load(f)
        try:
            header, source = generate(family, doc)
        except ValueError as e:
            sys.exit(f"{path}: {e}")
        for ext, text in (("h", header), ("cpp", source)):
            target = os.path.join(out_dir, "fl_generated", f"{family}.{ext}")
            if not os.path.exists(target) or open(target).read() != text:  # unchanged files keep their mtime
                with open(target, "w") as f:
                    f.write(text)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
