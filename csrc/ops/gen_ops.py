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
                                      # (_C._<name>), out (function takes out=), out_exact (out= of exactly
                                      # the result's dtype, as torch's index ops), inplace (Tensor.<name>_)
      names: [swapaxes]               # other Python names of the same faces
      doc: A copy of input with ...   # the faces' docstring
      derivatives:                    # one formula per differentiable input, over `grad`, the arguments,
        self: ops::roll(grad, negated(shifts), dims)   # `result` and named results; or
      # derivatives: none             # the op has no gradient (Autograd falls through)
      # autograd: none                # no Autograd kernel: a call with inputs that require grad is an error
      # autograd: error "<message>"   # a call with inputs that require grad raises RuntimeError(message)
      # autograd: composite           # with a gradient to compute, runs `composite:` (a call over the argument
      # composite: f(self, ...)       # names: the unfused ops, each recording its own backward), as torch's
      #                               # CompositeImplicitAutograd; without one, the `cpu:` kernel (a fused one)
      node: RollBackward0             # the backward node's name (default: torch's rule from the op name)
      output_differentiability: [true, false]   # which results have gradients (with grads[i] formulas)
      absent: {Q: mode == "r"}        # results not computed (empty) when a condition over the arguments holds: the
                                      # node gets no output for them, and the formulas see them undefined
      fallthrough: [Conjugate]        # dispatch keys the op passes through (it handles conjugate inputs itself)

With several results, formulas over `grad` make only the first result differentiable (the others, such as
indices, are kept by value when read). Formulas over `grads[i]` or `grad_<result name>` (undefined where no
gradient arrived) give the node one output per result; the results they read are saved as outputs.

A formula that reads a tensor argument saves it (a SavedVariable: version-checked, released after backward);
one that reads only `x->sizes`, `x->strides`, `x->dtype`, `x->offset` or `x->numel` keeps just that value. A tensor
that only some inputs' formulas read whole is saved only when one of those inputs requires grad (as torchgen).
A formula for a Tensor[] input (the only differentiable one then) returns a TensorList, one gradient per tensor;
formulas read a Tensor[] argument's metadata as `to_args_sizes(ts)` / `to_args_scalartypes(ts)` (kept by value).
`A, B: f(...)` is a joint formula: one call gives those inputs' gradients (a TensorList in the key's order), run
once when one of them is wanted; `grad_input_mask[i]` says whether the i-th is.

An in-place write (first argument `Tensor(a!) self`, returned) needs a formula for `self`, the gradient of self's
value before the write. In its formulas `self` read whole is that old value (a clone made before the write, only
when a formula reading it can run) and `result` the written tensor; the node is recorded on self, and a view's
base gets the write's history (Note [In-place writes into views]).
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

    @property
    def is_tensor_list(self):
        return self.base == "Tensor" and self.list and not self.optional

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

    def __init__(self, op, schema, formulas, node, output_differentiability=None, absent=None):
        self.op, self.schema, self.node = op, schema, node or _camel(op) + "Backward0"
        by_name = {a.name: a for a in schema.args}
        self.formulas = {str(k): str(v).strip() for k, v in formulas.items()}
        # `a, b: f(...)` is one formula for several inputs (torch's joint formulas: one backward kernel call for
        # all): a TensorList of their gradients in that order, undefined where grad_input_mask (one flag per input
        # named) says none is wanted
        self.formula_of, self.joint = {}, {}
        for key, text in self.formulas.items():
            names = [n.strip() for n in key.split(",")]
            for name in names:
                if name not in by_name or by_name[name].base != "Tensor":
                    raise ValueError(f"{op}: the derivative names '{name}', which is not a Tensor argument")
                self.formula_of[name] = text
                if len(names) > 1:
                    self.joint[name] = names
        self.inputs = [a for a in schema.args if a.name in self.formula_of]  # the edges, in schema order
        # a Tensor[] input (cat's tensors): its formula returns one gradient per tensor, an edge each
        self.list_input = any(a.list for a in self.inputs)
        if self.list_input and len(self.inputs) > 1:
            raise ValueError(f"{op}: a Tensor[] input with a formula must be the only differentiable input")
        self.out_names = [r.name or f"result{i}" for i, r in enumerate(schema.returns)]
        body = " ".join(self.formulas.values())
        grads_read = re.search(r"(?<![\w.>:])grads\[", body) is not None
        # a Tensor[] result (the only one): the node has one output per tensor of the list, grads[i] its gradient
        self.list_result = len(schema.returns) == 1 and schema.returns[0].is_tensor_list
        if schema.returns[0].base != "Tensor" or (schema.returns[0].list and not (self.list_result and grads_read)):
            raise ValueError(f"{op}: a generated derivative needs a Tensor as the first result (or a Tensor[] as the "
                             f"only one, with formulas over grads[i])")
        if self.list_result and self._uses(body, "result"):
            raise ValueError(f"{op}: the formulas of a Tensor[] result read its gradients, not the result")
        # Several differentiable results: the formulas read grads[i] or grad_<result name> (undefined where no
        # gradient arrived), and the node has one output per result.
        self.multi_grad = self.list_result or len(schema.returns) > 1 and (
            grads_read or any(self._uses(body, "grad_" + n) for n in self.out_names))
        diff = output_differentiability or [r.is_tensor or self.list_result for r in schema.returns]
        if len(diff) != len(schema.returns) or any(d and not (r.is_tensor or self.list_result)
                                                   for d, r in zip(diff, schema.returns)):
            raise ValueError(f"{op}: output_differentiability needs one true/false per result, true only for a Tensor")
        if output_differentiability and not self.multi_grad:
            raise ValueError(f"{op}: output_differentiability needs formulas over grads[i] or grad_<result name>")
        self.differentiable = diff
        # An in-place write (`Tensor(a!) self` returned): `self` in a formula is its value before the write
        self.inplace = schema.args[0].writes and schema.args[0].is_tensor and schema.returns[0].writes
        if self.inplace and (len(schema.returns) > 1 or schema.args[0].name not in self.formula_of):
            raise ValueError(f"{op}: an in-place write returns only self and has a formula for self's old value")
        self.absent = {str(k): str(v) for k, v in (absent or {}).items()}
        if any(n not in self.out_names or not diff[self.out_names.index(n)] for n in self.absent) or (
                self.absent and not self.multi_grad):
            raise ValueError(f"{op}: `absent:` names differentiable results of formulas over grads[i] or grad_<result>")

    def _uses(self, text, name):
        return re.search(rf"(?<![\w.>:]){re.escape(name)}\b", text) is not None

    def _reads(self, body, name):
        """Whether the formulas read tensor `name` whole (so it is saved), and which metadata fields they read."""
        metas = set(re.findall(rf"(?<![\w.>:]){name}->(\w+)", body))
        bare = re.sub(rf"(?<![\w.>:]){name}->(?:{'|'.join(_META)})\b", "", body)
        return self._uses(bare, name) or not metas <= set(_META), metas

    def code(self):
        if self.inplace:
            return self._inplace_code()
        return self._multi_code() if self.multi_grad else self._single_code()

    def _header(self):
        s = self.schema
        params = ", ".join(f"{a.cpp()} {a.name}" for a in s.args)
        argnames = ", ".join(a.name for a in s.args)
        first = "std::get<0>(out_)" if len(s.returns) > 1 else "out_"
        head = [f"FL_REGISTER_KERNEL({self.op}, Autograd, ([](DispatchKeySet ks, {params}) -> {s.cpp_result()} {{",
                f"  auto out_ = redispatch_no_grad(ops::{self.op}, ks, {argnames});"]
        # (a Tensor[]'s tensors may be undefined: the formulas run only for those that get gradients)
        return head if self.list_result else head + [f"  if (!is_differentiable({first}->dtype)) return out_;"]

    def _arguments_read(self, body, captures, renames):
        """Sorts the arguments the formulas read: tensors read whole are returned (to be saved); other
        arguments, and the metadata fields of tensors read only for those, are captured by value."""
        saved, self._save_if = [], {}
        for a in self.schema.args:
            if not self._uses(body, a.name):
                continue
            if a.base == "Tensor" and a.list:
                # to_args_sizes(ts) / to_args_scalartypes(ts): the tensors' metadata, kept by value
                for m in sorted(set(re.findall(rf"\bto_args_(sizes|scalartypes)\({a.name}\)", body))):
                    captures.append(f"{a.name}_args_{m} = to_args_{m}({a.name})")
                    renames[f"to_args_{m}({a.name})"] = f"{a.name}_args_{m}"
                if not self._uses(re.sub(rf"\bto_args_\w+\({a.name}\)", "", body), a.name):
                    continue
            if not a.is_tensor:
                captures.append(a.name)
                continue
            whole, metas = self._reads(body, a.name)
            if whole:
                saved.append(a.name)
                readers = [i.name for i in self.inputs if self._reads(self.formula_of[i.name], a.name)[0]]
                if len(readers) < len(self.inputs):
                    # as torchgen: saved only when an input whose formula reads it requires grad (mm's mat1 only for
                    # mat2's gradient); the metadata the other formulas read is kept by value
                    self._save_if[a.name] = " || ".join(f"requires_grad({r})" for r in readers)
                    self._keep_metadata(a.name, a.name, metas, captures, renames, a.optional)
            else:
                self._keep_metadata(a.name, a.name, metas, captures, renames, a.optional)
        return saved

    def _saved_values(self, saved):
        """What record_saved/record_multi save: each tensor of `saved`, or an undefined one where not needed."""
        return ", ".join(f"{self._save_if[n]} ? {n} : Tensor()" if n in self._save_if else n for n in saved)

    @staticmethod
    def _keep_metadata(name, source, metas, captures, renames, optional=False):
        for m in sorted(metas):
            # (an absent optional tensor, never read by the formulas then, keeps an empty value)
            value = f"{source} ? {source}->{m} : decltype({source}->{m}){{}}" if optional else f"{source}->{m}"
            captures.append(f"{name}_{m} = {value}")
            renames[f"{name}->{m}"] = f"{name}_{m}"

    def _gradients(self, renames):
        """The returned gradient per input; with several inputs, only those that lead to what backward wants."""
        outs, joints, number = [], [], {}
        index = {a.name: i for i, a in enumerate(self.inputs)}
        if self.list_input:  # the formula's TensorList is the node's outputs
            f = self.formula_of[self.inputs[0].name]
            for k, v in renames.items():
                f = f.replace(k, v)
            return f"return {f};"
        for a in self.inputs:
            f = self.formula_of[a.name]
            for k, v in renames.items():
                f = f.replace(k, v)
            f = "formulas::not_implemented(\"" + self.op + "\")" if f == "not_implemented" else f
            names = self.joint.get(a.name)
            if names:
                key = tuple(names)
                if key not in number:  # the joint formula runs once, when one of its inputs wants a gradient
                    number[key] = j = len(joints)
                    mask = ", ".join(f"should_compute_output({index[n]})" for n in names)
                    wanted = " || ".join(f"grad_input_mask[{i}]" for i in range(len(names)))
                    joints.append(f"TensorList joint{j}_({len(names)}); {{ const std::array<bool, {len(names)}> "
                                  f"grad_input_mask{{{mask}}}; if ({wanted}) joint{j}_ = {f}; }}")
                outs.append(f"joint{number[key]}_[{names.index(a.name)}]")
            else:
                outs.append(f"should_compute_output({len(outs)}) ? {f} : Tensor()" if len(self.inputs) > 1 else f)
        return " ".join(joints + ["return TensorList{" + ", ".join(outs) + "};"])

    def _node_name(self):
        return f'"{self.node}"' if re.fullmatch(r"\w+", self.node) else self.node

    def _edges(self):
        if self.list_input:
            return f"gradient_edges({self.inputs[0].name})"
        return ", ".join(f"gradient_edge({a.name})" for a in self.inputs)

    def _multi_code(self):
        """A MultiOutputBackward with one output per result. Differentiable results that the formulas read are
        saved as outputs (no cycle through the node); non-differentiable ones (indices) are kept by value."""
        body = " ".join(self.formulas.values())
        captures, renames, saved_outs, unpack_outs = [], {}, [], []
        saved = self._arguments_read(body, captures, renames)
        for i, n in enumerate(self.out_names):
            used = [x for x in dict.fromkeys([n] + (["result"] if i == 0 else [])) if self._uses(body, x)]
            if not used:
                continue
            if not self.differentiable[i]:
                captures.extend(f"{x} = std::get<{i}>(out_)" for x in used)
                continue
            unpack_outs.extend(f"const Tensor& {x} = saved_[{len(saved) + len(saved_outs)}];" for x in used)
            saved_outs.append(str(i))
        unpack = [f"const Tensor& {n} = saved_[{i}];" for i, n in enumerate(saved)] + unpack_outs
        unpack += [f"const Tensor& grad_{n} = grads[{i}];" for i, n in enumerate(self.out_names)
                   if self._uses(body, "grad_" + n)]
        outputs = "out_" if self.list_result else "{" + ", ".join(
            ("Tensor()" if not d else f"{self.absent[n]} ? Tensor() : std::get<{i}>(out_)" if n in self.absent
             else f"std::get<{i}>(out_)") for i, (n, d) in enumerate(zip(self.out_names, self.differentiable))) + "}"
        lam = (f"[{', '.join(captures)}](const TensorList& grads, const TensorList& saved_) {{ "
               f"{' '.join(unpack)} {self._gradients(renames)} }}")
        return "\n".join(self._header() + [
            f"  record_multi({self._node_name()}, {{{self._edges()}}}, {outputs}, {{{self._saved_values(saved)}}}, "
            f"{{{', '.join(saved_outs)}}}, {lam});", "  return out_;", "}))"])

    def _inplace_code(self):
        """An in-place write (torchgen's in-place kernels): checks the write, keeps self's old gradient edge (and a
        clone of its old value where a formula that can run reads it whole), writes without grad, records the node
        on self, then rebases a view's history on its base (Note [In-place writes into views])."""
        s = self.schema
        me = s.args[0].name
        body = " ".join(self.formulas.values())
        captures, renames = [], {}
        saved = self._arguments_read(body, captures, renames)
        save_result, metas = self._reads(body, "result")
        if not save_result:
            self._keep_metadata("result", me, metas, captures, renames)
        params = ", ".join(f"{a.cpp()} {a.name}" for a in s.args)
        call = f"redispatch_no_grad(ops::{self.op}, ks, {', '.join(a.name for a in s.args)})"
        others = " || ".join(f"requires_grad({a.name})" for a in self.inputs if a.name != me) or "false"
        lines = [f"FL_REGISTER_KERNEL({self.op}, Autograd, ([](DispatchKeySet ks, {params}) -> {s.cpp_result()} {{",
                 f"  if (!inplace_needs_grad({me}, {others})) return {call};",
                 f"  check_inplace_write({me});"]
        if me in saved:  # the old value: a clone made before the write, only when a formula reading it can run
            cond = self._save_if.pop(me, None)
            clone = f"copy_before_write({me})"
            lines.append(f"  Tensor {me}_old_ = {f'{cond} ? {clone} : Tensor()' if cond else clone};")
            saved[saved.index(me)] = me + "_old_"
        lines += [f"  Edge {me}_edge_ = gradient_edge({me});", f"  {call};"]
        unpack = [f"const Tensor& {me if n == me + '_old_' else n} = saved_[{i}];" for i, n in enumerate(saved)]
        if save_result:
            unpack.append(f"const Tensor& result = saved_[{len(saved)}];")
        edges = ", ".join(f"{me}_edge_" if a.name == me else f"gradient_edge({a.name})" for a in self.inputs)
        cap, ret = ", ".join(captures), self._gradients(renames)
        if saved or save_result:
            lam = f"[{cap}](const Tensor& grad, const TensorList& saved_) {{ {' '.join(unpack)} {ret} }}"
            rec = (f"record_saved({self._node_name()}, {me}, {{{edges}}}, {{{self._saved_values(saved)}}}, "
                   f"{str(save_result).lower()}, {lam})")
        else:
            rec = f"record_lambda({self._node_name()}, {me}, {{{edges}}}, [{cap}](const Tensor& grad) {{ {ret} }})"
        return "\n".join(lines + [f"  {rec};", f"  rebase_view_history({me});", f"  return {me};", "}))"])

    def _single_code(self):
        """A node for the first result (the others, such as indices, have no gradient)."""
        s = self.schema
        multi = len(s.returns) > 1
        body = " ".join(self.formulas.values())
        primary = "result" if not multi else self.out_names[0]
        first = "std::get<0>(out_)" if multi else "out_"
        captures, renames = [], {}
        saved = self._arguments_read(body, captures, renames)
        whole, metas = self._reads(body, "result")
        save_result = whole or (multi and self._uses(body, primary))
        if not save_result:
            self._keep_metadata("result", first, metas, captures, renames)
        for i, n in enumerate(self.out_names[1:], 1):  # other results (indices): kept by value
            if self._uses(body, n):
                captures.append(f"{n} = std::get<{i}>(out_)")
        lines = self._header()
        if not multi and not any(a.writes for a in s.args):
            # an op that hands back one of its inputs (conj of a real tensor) is the identity: nothing to record
            same = " || ".join(f"out_ == {a.name}" for a in s.args if a.is_tensor)
            if same:
                lines.append(f"  if ({same}) return out_;")
        unpack = [f"const Tensor& {n} = saved_[{i}];" for i, n in enumerate(saved)]
        if save_result:
            unpack.append(f"const Tensor& {'result' if not multi else primary} = saved_[{len(saved)}];")
            if multi and self._uses(body, "result"):
                unpack.append(f"const Tensor& result = {primary};")
        cap = ", ".join(captures)
        ret = self._gradients(renames)
        node = self._node_name()
        if saved or save_result:
            lam = f"[{cap}](const Tensor& grad, const TensorList& saved_) {{ {' '.join(unpack)} {ret} }}"
            rec = f"record_saved({node}, {first}, {{{self._edges()}}}, {{{self._saved_values(saved)}}}, {str(save_result).lower()}, {lam})"
        else:
            lam = f"[{cap}](const Tensor& grad) {{ {ret} }}"
            rec = f"record_lambda({node}, {first}, {{{self._edges()}}}, {lam})"
        lines.append(f"  {first} = {rec};" if multi else f"  return {rec};")
        if multi:
            lines.append("  return out_;")
        lines.append("}))")
        return "\n".join(lines)


# ---- entries --------------------------------------------------------------------------------------------

_FACES = {"function", "method", "private", "out", "out_exact", "inplace"}


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
        autograd = str(e.get("autograd", ""))
        if autograd == "composite":
            if not e.get("composite"):
                raise ValueError(f"{name}: `autograd: composite` needs `composite:`, the call it runs")
            params = ", ".join(f"{a.cpp()} {a.name}" for a in schema.args)
            defs.append(f"FL_REGISTER_KERNEL({name}, Autograd, ([](DispatchKeySet, {params}) -> {schema.cpp_result()} "
                        f"{{ return {e['composite']}; }}))")
        elif autograd == "none":
            pass  # no Autograd kernel: a call that needs one is an error naming the op
        elif autograd.startswith("error "):  # torch's refusal of the op on tensors that require grad (resize_)
            message = autograd[len("error "):].strip().strip('"')
            params = ", ".join(f"{a.cpp()} {a.name}" for a in schema.args)
            defs.append(f"FL_REGISTER_KERNEL({name}, Autograd, ([](DispatchKeySet, {params}) -> {schema.cpp_result()} "
                        f"{{ throw Error({_c_string(message)}); }}))")
        elif d == "none" or (d is None and not any(a.base == "Tensor" for a in schema.args)):
            defs.append(f"FL_REGISTER_FALLTHROUGH({name}, Autograd)")
        elif d is None:
            raise ValueError(f"{name}: say `derivatives:` (a formula per input, or none) or `autograd:`")
        else:
            defs.append(Derivative(name, schema, d, e.get("node"), e.get("output_differentiability"),
                                   e.get("absent")).code())
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
