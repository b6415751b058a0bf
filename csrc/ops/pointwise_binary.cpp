// CPU kernels of the binary pointwise ops (the list is in pointwise.h).
#include "../core/warning.h"
#include "../kernels/loops.h"
#include "../kernels/overlap.h"
#include "pointwise.h"
#include "tensor_ops.h"
#include "pointwise_math.h"
#include "pointwise_complex.h"

namespace fl {
namespace {

enum class Rule { ARITH, FLOAT, CMP, INT, LOGICAL };

struct BinaryInfo { const char* name; Rule rule; };
constexpr BinaryInfo kBinaryInfo[] = {
#define FL_X(name, rule, expr, ...) {#name, Rule::rule},
    FL_BINARY_OPS(FL_X)
#undef FL_X
};

template <Rule R, typename T>
constexpr bool allowed() {
  if constexpr (R == Rule::FLOAT) return std::is_floating_point_v<opmath_t<T>>;
  else if constexpr (R == Rule::INT) return std::is_integral_v<T>;
  else return true;
}

template <typename T>
void run_binary(BinaryOp op, const ElementwiseIter& it, Scalar alpha_s) {
  using OM = opmath_t<T>;
  [[maybe_unused]] const OM alpha = alpha_s.to<OM>();
  switch (op) {
#define FL_X(name, rule, expr, ...)                                                                   \
  case BinaryOp::name:                                                                           \
    if constexpr (allowed<Rule::rule, T>()) {                                                    \
      using Out = std::conditional_t<Rule::rule == Rule::CMP || Rule::rule == Rule::LOGICAL, bool, T>; \
      binary_loop<Out, T>(it, [=](OM a, OM b) { return expr; });                                 \
    }                                                                                            \
    break;
    FL_BINARY_OPS(FL_X)
#undef FL_X
  }
}

// x ** e for a Python-number exponent that PyTorch special-cases the same way: multiplies and sqrt
// vectorize, while std::pow costs about 50x more per element (x.pow(2) is everywhere in losses and
// norms). As in PyTorch: 0.5 is sqrt (so pow(-0., 0.5) is -0. here, unlike with a tensor exponent,
// which takes the generic pow), bfloat16 rounds after every operation, and float16 is left to the
// generic std::pow.
template <typename T>
bool run_pow_scalar_exponent(const ElementwiseIter& it, double e) {
  using OM = opmath_t<T>;
  const auto r = [](OM v) { return static_cast<OM>(static_cast<T>(v)); };
  if (e == 2) binary_loop<T, T>(it, [](OM a, OM) { return a * a; });
  else if (e == 3) binary_loop<T, T>(it, [=](OM a, OM) { return r(a * a) * a; });
  else if (e == 0.5) binary_loop<T, T>(it, [](OM a, OM) { return std::sqrt(a); });
  else if (e == -0.5) binary_loop<T, T>(it, [=](OM a, OM) { return OM(1) / r(std::sqrt(a)); });
  else if (e == -1) binary_loop<T, T>(it, [](OM a, OM) { return OM(1) / a; });
  else if (e == -2) binary_loop<T, T>(it, [=](OM a, OM) { return OM(1) / r(a * a); });
  else return false;
  return true;
}

// True when any element of the (integral) tensor satisfies pred.
template <typename Pred>
bool any_of(const Tensor& t, Pred pred) {
  bool found = false;
  FL_DISPATCH_ALL(t->dtype, "check", {
    ElementwiseIter it({t.get()});
    it.for_each([&](char** p, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i)
        if (pred(static_cast<double>(static_cast<opmath_t<scalar_t>>(*reinterpret_cast<const scalar_t*>(p[0] + i * s[0]))))) found = true;
    }, int64_t(1) << 62);
  });
  return found;
}

Tensor binary_cpu(BinaryOp op, const Tensor& a, const Tensor& b, Scalar alpha, const Tensor& out);

// torch's CPU build has three binary kernels for the float8 types: eq, ne and mul (not with a one-element second
// operand: "mul_cpu_reduced_float"). They compute in float, so here the operands widen to float32 and a product
// rounds back once, which is c10's rounding of the float result.
Tensor binary_float8(BinaryOp op, const Tensor& a, const Tensor& b, ScalarType ct, const Tensor& out) {
  const bool mul = op == BinaryOp::mul;
  FL_CHECK(op == BinaryOp::eq || op == BinaryOp::ne || (mul && b->numel != 1), NotImplementedError, "\"",
           mul ? "mul_cpu_reduced_float" : kBinaryInfo[static_cast<int>(op)].name, "\" not implemented for '",
           c10_type_name(ct), "'");
  const auto widen = [ct](const Tensor& t) { return to_dtype(t->dtype == ct ? t : to_dtype(t, ct), ScalarType::Float32); };
  if (!mul) return binary_cpu(op, widen(a), widen(b), Scalar(int64_t(1)), out);
  Tensor r = to_dtype(binary_cpu(op, widen(a), widen(b), Scalar(int64_t(1)), Tensor()), ct);
  if (!out) return r;
  check_can_cast(ct, out->dtype, "mul");
  resize_out(out, r->sizes, "mul");
  copy_into(out, r);
  out->bump_version();
  return out;
}

Tensor binary_cpu(BinaryOp op, const Tensor& a, const Tensor& b, Scalar alpha, const Tensor& out) {
  const BinaryInfo& info = kBinaryInfo[static_cast<int>(op)];
  ScalarType ct = result_type(a, b);
  if (is_float8(ct)) return binary_float8(op, a, b, ct, out);
  ScalarType out_dtype = ct;
  switch (info.rule) {
    case Rule::FLOAT: if (!is_floating(ct) && !is_complex(ct)) ct = out_dtype = default_dtype(); break;
    case Rule::CMP: case Rule::LOGICAL: out_dtype = ScalarType::Bool; break;
    case Rule::INT:
      FL_CHECK(!is_floating(ct) && !is_complex(ct), NotImplementedError, "\"", info.name, "_cpu\" not implemented for '", c10_type_name(ct), "'");
      break;
    case Rule::ARITH: break;
  }
  if (op == BinaryOp::sub && (a->dtype == ScalarType::Bool || b->dtype == ScalarType::Bool)) {
    throw Error(str_cat("Subtraction, the `-` operator, with ",
                        a->dtype == b->dtype ? "two bool tensors" : "a bool tensor",
                        " is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."));
  }
  if (!is_floating(ct) && !is_complex(ct)) {
    if ((op == BinaryOp::div_trunc || op == BinaryOp::div_floor || op == BinaryOp::remainder || op == BinaryOp::fmod) &&
        ct != ScalarType::Bool && any_of(b, [](double v) { return v == 0; }))
      throw Error("ZeroDivisionError");
    if (op == BinaryOp::pow && ct != ScalarType::Bool && any_of(b, [](double v) { return v < 0; }))
      throw Error("Integers to negative integer powers are not allowed.");
  }
  IntList shape = a->sizes == b->sizes ? a->sizes : broadcast_shapes(a->sizes, b->sizes, info.name);
  Tensor ca = a->dtype == ct ? a : to_dtype(a, ct);
  Tensor cb = b->dtype == ct ? b : to_dtype(b, ct);

  FL_CHECK(!(out && out == a && shape != a->sizes), Error, info.name, ": output with shape ", shape_str(a->sizes),
           " doesn't match the broadcast shape ", shape_str(shape));
  Tensor result;
  if (out) {
    check_can_cast(out_dtype, out->dtype, info.name);
    resize_out(out, shape, info.name);
    result = out->dtype == out_dtype ? out : empty(shape, out_dtype);
  } else {
    result = (a->sizes == shape && !a->contiguous) ? empty_like(a, out_dtype) : empty(shape, out_dtype);
  }
  check_no_partial_overlap(result, ca);
  check_no_partial_overlap(result, cb);
  ElementwiseIter it({result.get(), ca.get(), cb.get()}, info.name);
  const bool scalar_exponent = op == BinaryOp::pow && is_floating(ct) && b->wrapped_number;
  if (is_complex(ct)) {
    FL_DISPATCH_COMPLEX(ct, info.name, {
      if (!run_binary_complex<typename scalar_t::value_type>(op, it, alpha.to<scalar_t>())) throw_no_complex(info.name, ct);
    });
  } else {
  FL_DISPATCH_ALL(ct, info.name, {
    if constexpr (std::is_floating_point_v<opmath_t<scalar_t>> && !std::is_same_v<scalar_t, Half>) {
      if (!(scalar_exponent && run_pow_scalar_exponent<scalar_t>(it, item(cb).to_double())))
        run_binary<scalar_t>(op, it, alpha);
    } else {
      run_binary<scalar_t>(op, it, alpha);
    }
  });
  }
  if (out) {
    if (result != out) copy_into(out, result);
    out->bump_version();
    return out;
  }
  return result;
}

}  // namespace

bool can_cast(ScalarType from, ScalarType to) {
  // PyTorch's canCast: no complex -> non-complex, no float -> integral, no non-bool -> bool
  if (is_complex(from) && !is_complex(to)) return false;
  if (is_floating_point(from) && !is_floating_point(to) && !is_complex(to)) return false;
  if (from != ScalarType::Bool && to == ScalarType::Bool) return false;
  return true;
}

void check_can_cast(ScalarType from, ScalarType to, const char* op) {
  FL_CHECK(can_cast(from, to), Error, op, ": result type ", c10_type_name(from), " can't be cast to the desired output type ",
           c10_type_name(to));
}

void resize_out(const Tensor& out, const IntList& sizes, const char* op) {
  if (out->sizes == sizes) {
    check_no_internal_overlap(out);
    return;
  }
  // as torch's resize_: a tensor in the autograd graph (a leaf that requires grad, or a view of one) keeps its
  // geometry, which its gradient's shape depends on
  FL_CHECK(!(out->requires_grad || (out->autograd && out->autograd->grad_fn)), Error, op,
           "(): cannot resize variables that require grad (out= of shape ", shape_str(out->sizes), ", result of shape ",
           shape_str(sizes), ")");
  if (out->numel > 0)
    warn(str_cat("An output with one or more elements was resized since it had shape ", shape_str(out->sizes),
                 ", which does not match the required output shape ", shape_str(sizes), ". This behavior is deprecated, "
                 "and in a future PyTorch release outputs will not be resized unless they have zero elements. You can "
                 "explicitly reuse an out tensor t by resizing it, inplace, to zero elements with t.resize_(0)."));
  ops::resize_(out, sizes);
}

void throw_no_complex(const char* op, ScalarType t) {
  const std::string name = op;
  if (name == "maximum" || name == "minimum" || name == "fmax" || name == "fmin")
    throw Error(str_cat(op, " not implemented for complex tensors."));
  if (name == "heaviside") throw Error("heaviside is not yet implemented for complex tensors.");
  if (name == "isposinf" || name == "isneginf") throw Error(str_cat(op, " does not support complex inputs."));
  if (name == "signbit") throw NotImplementedError("signbit is not implemented for complex tensors.");
  if (name == "sign")
    throw NotImplementedError("Unlike NumPy, torch.sign is not intended to support complex numbers. Please use torch.sgn instead.");
  if (name == "floor" || name == "ceil" || name == "trunc" || name == "round" || name == "frac")
    throw NotImplementedError(str_cat(op, " is not supported for complex inputs"));
  throw NotImplementedError(str_cat("\"", op, "_cpu\" not implemented for '", c10_type_name(t), "'"));
}

const char* binary_op_name(BinaryOp op) { return kBinaryInfo[static_cast<int>(op)].name; }

}  // namespace fl

#define FL_X(name, rule, expr, ...)                                                                          \
  FL_DEFINE_OP(name, #name "(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!)? out=None) -> Tensor", \
               ::fl::Tensor(const ::fl::Tensor&, const ::fl::Tensor&, ::fl::Scalar, const ::fl::Tensor&))   \
  FL_REGISTER_KERNEL(name, CPU,                                                                         \
                     [](::fl::DispatchKeySet, const ::fl::Tensor& a, const ::fl::Tensor& b, ::fl::Scalar alpha, \
                        const ::fl::Tensor& out) { return ::fl::binary_cpu(::fl::BinaryOp::name, a, b, alpha, out); })
FL_BINARY_OPS(FL_X)
#undef FL_X

namespace fl {
Tensor binary_op(BinaryOp op, const Tensor& a, const Tensor& b, Scalar alpha, const Tensor& out) {
  using OpT = Op<Tensor(const Tensor&, const Tensor&, Scalar, const Tensor&)>;
  static const OpT* const table[] = {
#define FL_X(name, rule, expr, ...) &ops::name,
      FL_BINARY_OPS(FL_X)
#undef FL_X
  };
  return (*table[static_cast<int>(op)])(a, b, alpha, out);
}
}  // namespace fl
