// Python bindings of the pointwise ops: functions, Tensor methods, in-place forms and operators,
// all produced from the op lists in ops/pointwise.h.
#include "../ops/pointwise.h"
#include "python_util.h"

namespace fl::python {
namespace {

bool takes_alpha(BinaryOp op) { return op == BinaryOp::add || op == BinaryOp::sub; }

// Ops whose PyTorch signatures take only tensors (no Scalar overload) for `other`.
bool tensor_only(BinaryOp op) {
  switch (op) {
    case BinaryOp::maximum: case BinaryOp::minimum: case BinaryOp::fmax: case BinaryOp::fmin: case BinaryOp::atan2:
    case BinaryOp::hypot: case BinaryOp::logaddexp: case BinaryOp::logaddexp2: case BinaryOp::nextafter:
    case BinaryOp::heaviside: case BinaryOp::logical_and: case BinaryOp::logical_or: case BinaryOp::logical_xor:
    case BinaryOp::gcd: case BinaryOp::lcm: case BinaryOp::igamma: case BinaryOp::igammac:
      return true;
    default:
      return false;
  }
}

// Ops whose PyTorch signatures accept a number as `input` (torch.pow(2, t), torch.add(2, 3)); the others raise
// TypeError for it.
bool number_input_ok(BinaryOp op, bool other_is_tensor) {
  switch (op) {
    case BinaryOp::add: case BinaryOp::sub: case BinaryOp::mul: case BinaryOp::div: case BinaryOp::div_trunc:
    case BinaryOp::div_floor:
      return true;
    case BinaryOp::remainder: case BinaryOp::pow: case BinaryOp::xlogy: case BinaryOp::bitwise_and:
    case BinaryOp::bitwise_or: case BinaryOp::bitwise_xor: case BinaryOp::bitwise_left_shift:
    case BinaryOp::bitwise_right_shift: case BinaryOp::special_zeta:
      return other_is_tensor;
    default:
      return false;
  }
}

Tensor call_binary(BinaryOp op, py::handle a, py::handle b, Scalar alpha, const Tensor& out) {
  const char* name = binary_op_name(op);
  if (tensor_only(op) && (!is_tensor(a) || !is_tensor(b))) {
    throw py::type_error(str_cat(name, "(): argument '", is_tensor(a) ? "other" : "input", "' must be Tensor, not ",
                                 std::string(py::str(py::type::of(is_tensor(a) ? b : a).attr("__name__")))));
  }
  if (!is_tensor(a) && !number_input_ok(op, is_tensor(b))) {
    throw py::type_error(str_cat(name, "(): argument 'input' (position 1) must be Tensor, not ",
                                 std::string(py::str(py::type::of(a).attr("__name__")))));
  }
  return binary_op(op, tensor_or_number(a, name, "input"), tensor_or_number(b, name, "other"), alpha, out);
}

Scalar alpha_of(py::handle h) {
  Scalar s(int64_t(1));
  if (!h.is_none()) FL_CHECK(scalar_from_python(h, &s), TypeError, "argument 'alpha' must be Number");
  return s;
}

py::object not_implemented() { return py::reinterpret_borrow<py::object>(Py_NotImplemented); }

void bind_binary(py::module_& m, TensorClass& cls, BinaryOp op) {
  const char* name = binary_op_name(op);
  std::string inplace = std::string(name) + "_";
  if (takes_alpha(op)) {
    m.def(name, [op](py::handle a, py::handle b, py::handle alpha, const Tensor& out) {
      return call_binary(op, a, b, alpha_of(alpha), out);
    }, py::arg("input"), py::arg("other"), py::kw_only(), py::arg("alpha") = 1, py::arg("out").none(true) = py::none());
    cls.def(name, [op](py::handle self, py::handle b, py::handle alpha) {
      return call_binary(op, self, b, alpha_of(alpha), nullptr);
    }, py::arg("other"), py::kw_only(), py::arg("alpha") = 1);
    cls.def(inplace.c_str(), [op](const Tensor& self, py::handle b, py::handle alpha) {
      return binary_op(op, self, tensor_or_number(b, binary_op_name(op), "other"), alpha_of(alpha), self);
    }, py::arg("other"), py::kw_only(), py::arg("alpha") = 1);
  } else {
    m.def(name, [op](py::handle a, py::handle b, const Tensor& out) {
      return call_binary(op, a, b, Scalar(int64_t(1)), out);
    }, py::arg("input"), py::arg("other"), py::kw_only(), py::arg("out").none(true) = py::none());
    cls.def(name, [op](py::handle self, py::handle b) { return call_binary(op, self, b, Scalar(int64_t(1)), nullptr); },
            py::arg("other"));
    cls.def(inplace.c_str(), [op](const Tensor& self, py::handle b) {
      return call_binary(op, py::cast(self), b, Scalar(int64_t(1)), self);
    }, py::arg("other"));
  }
}

void bind_operator(TensorClass& cls, const char* dunder, BinaryOp op, bool reflected) {
  // Operators return NotImplemented for operands that are neither tensors nor numbers.
  cls.def(dunder, [op, reflected](py::handle self, py::handle other) -> py::object {
    if (!is_tensor(self))  // Tensor.__radd__(2, t): the descriptor called on a non-tensor, as Python's own types
      throw py::type_error(str_cat("descriptor for 'Tensor' objects doesn't apply to a '",
                                   std::string(py::str(py::type::of(self).attr("__name__"))), "' object"));
    Tensor o;
    if (!try_tensor_or_number(other, &o)) return not_implemented();
    const Tensor s = as_tensor(self);
    return py::cast(reflected ? binary_op(op, o, s, Scalar(int64_t(1)), nullptr) : binary_op(op, s, o, Scalar(int64_t(1)), nullptr));
  }, py::is_operator());
}

void bind_inplace_operator(TensorClass& cls, const char* dunder, BinaryOp op) {
  cls.def(dunder, [op](py::handle self, py::handle other) -> py::object {
    Tensor o;
    if (!try_tensor_or_number(other, &o)) return not_implemented();
    const Tensor s = as_tensor(self);
    binary_op(op, s, o, Scalar(int64_t(1)), s);
    return py::reinterpret_borrow<py::object>(self);
  }, py::is_operator());
}

BinaryOp division_op(py::handle rounding_mode) {
  if (rounding_mode.is_none()) return BinaryOp::div;
  std::string mode = py::str(rounding_mode);
  if (mode == "trunc") return BinaryOp::div_trunc;
  if (mode == "floor") return BinaryOp::div_floor;
  throw fl::ValueError(str_cat("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '", mode, "'"));
}

void bind_division(py::module_& m, TensorClass& cls) {
  for (const char* name : {"div", "divide"}) {
    m.def(name, [](py::handle a, py::handle b, py::handle mode, const Tensor& out) {
      return call_binary(division_op(mode), a, b, Scalar(int64_t(1)), out);
    }, py::arg("input"), py::arg("other"), py::kw_only(), py::arg("rounding_mode") = py::none(),
       py::arg("out").none(true) = py::none());
    cls.def(name, [](py::handle self, py::handle b, py::handle mode) {
      return call_binary(division_op(mode), self, b, Scalar(int64_t(1)), nullptr);
    }, py::arg("other"), py::kw_only(), py::arg("rounding_mode") = py::none());
    cls.def((std::string(name) + "_").c_str(), [](const Tensor& self, py::handle b, py::handle mode) {
      return call_binary(division_op(mode), py::cast(self), b, Scalar(int64_t(1)), self);
    }, py::arg("other"), py::kw_only(), py::arg("rounding_mode") = py::none());
  }
}

void bind(py::module_& m, TensorClass& cls) {
  bind_division(m, cls);
  py::list names;  // the functions bound here, for flowlike's namespace (flowlike/_ops.py)
  names.append("div");
#define FL_X(name, rule, expr, ...)                                                                                   \
  if (BinaryOp::name != BinaryOp::div && BinaryOp::name != BinaryOp::div_trunc && BinaryOp::name != BinaryOp::div_floor) { \
    bind_binary(m, cls, BinaryOp::name);                                                                              \
    names.append(#name);                                                                                              \
  }
  FL_BINARY_OPS(FL_X)
#undef FL_X
#define FL_X(name, rule, expr, ...)                                                                            \
  m.def(#name, [](const Tensor& a, const Tensor& out) { return unary_op(UnaryOp::name, a, out); },         \
        py::arg("input"), py::kw_only(), py::arg("out").none(true) = py::none());                         \
  cls.def(#name, [](const Tensor& a) { return unary_op(UnaryOp::name, a, nullptr); });                    \
  cls.def(#name "_", [](const Tensor& a) { return unary_op(UnaryOp::name, a, a); });                      \
  names.append(#name);
  FL_UNARY_OPS(FL_X)
#undef FL_X
  m.attr("_pointwise_ops") = py::tuple(names);

  struct Dunder { const char* name; BinaryOp op; };
  const Dunder forward[] = {{"__add__", BinaryOp::add}, {"__sub__", BinaryOp::sub}, {"__mul__", BinaryOp::mul},
                            {"__truediv__", BinaryOp::div}, {"__floordiv__", BinaryOp::div_floor},
                            {"__mod__", BinaryOp::remainder}, {"__pow__", BinaryOp::pow},
                            {"__and__", BinaryOp::bitwise_and}, {"__or__", BinaryOp::bitwise_or},
                            {"__xor__", BinaryOp::bitwise_xor}, {"__lshift__", BinaryOp::bitwise_left_shift},
                            {"__rshift__", BinaryOp::bitwise_right_shift}, {"__eq__", BinaryOp::eq},
                            {"__ne__", BinaryOp::ne}, {"__lt__", BinaryOp::lt}, {"__le__", BinaryOp::le},
                            {"__gt__", BinaryOp::gt}, {"__ge__", BinaryOp::ge}};
  for (const Dunder& d : forward) bind_operator(cls, d.name, d.op, false);
  const Dunder reflected[] = {{"__radd__", BinaryOp::add}, {"__rsub__", BinaryOp::sub}, {"__rmul__", BinaryOp::mul},
                              {"__rtruediv__", BinaryOp::div}, {"__rfloordiv__", BinaryOp::div_floor},
                              {"__rmod__", BinaryOp::remainder}, {"__rpow__", BinaryOp::pow},
                              {"__rand__", BinaryOp::bitwise_and}, {"__ror__", BinaryOp::bitwise_or},
                              {"__rxor__", BinaryOp::bitwise_xor}, {"__rlshift__", BinaryOp::bitwise_left_shift},
                              {"__rrshift__", BinaryOp::bitwise_right_shift}};
  for (const Dunder& d : reflected) bind_operator(cls, d.name, d.op, true);
  const Dunder inplace[] = {{"__iadd__", BinaryOp::add}, {"__isub__", BinaryOp::sub}, {"__imul__", BinaryOp::mul},
                            {"__itruediv__", BinaryOp::div}, {"__ifloordiv__", BinaryOp::div_floor},
                            {"__imod__", BinaryOp::remainder}, {"__ipow__", BinaryOp::pow},
                            {"__iand__", BinaryOp::bitwise_and}, {"__ior__", BinaryOp::bitwise_or},
                            {"__ixor__", BinaryOp::bitwise_xor}, {"__ilshift__", BinaryOp::bitwise_left_shift},
                            {"__irshift__", BinaryOp::bitwise_right_shift}};
  for (const Dunder& d : inplace) bind_inplace_operator(cls, d.name, d.op);
  cls.def("__neg__", [](const Tensor& a) { return unary_op(UnaryOp::neg, a, nullptr); });
  cls.def("__abs__", [](const Tensor& a) { return unary_op(UnaryOp::abs, a, nullptr); });
  cls.def("__invert__", [](const Tensor& a) {
    FL_CHECK(!is_floating(a->dtype) && !is_complex(a->dtype), TypeError,
             "~ (operator.invert) is only implemented on integer and Boolean-type tensors");
    return unary_op(UnaryOp::bitwise_not, a, nullptr);
  });
}

}  // namespace
}  // namespace fl::python

FL_PY_BINDINGS(10, fl::python::bind)
