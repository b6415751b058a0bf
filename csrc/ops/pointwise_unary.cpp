// CPU kernels of the unary pointwise ops (the list is in pointwise.h).
#include "../kernels/loops.h"
#include "../kernels/overlap.h"
#include "pointwise.h"
#include "pointwise_dense.h"
#include "pointwise_math.h"
#include "pointwise_complex.h"

namespace fl {
namespace {

enum class Rule { FLOAT, SAME, BOOL, INT };
struct UnaryInfo { const char* name; Rule rule; };
constexpr UnaryInfo kUnaryInfo[] = {
#define FL_X(name, rule, expr, ...) {#name, Rule::rule},
    FL_UNARY_OPS(FL_X)
#undef FL_X
};

template <Rule R, typename T>
constexpr bool allowed() {
  if constexpr (R == Rule::FLOAT) return std::is_floating_point_v<opmath_t<T>>;
  else if constexpr (R == Rule::INT) return std::is_integral_v<T>;
  else return true;
}

template <typename T>
void run_unary(UnaryOp op, const ElementwiseIter& it) {
  using OM = opmath_t<T>;
  switch (op) {
#define FL_X(name, rule, expr, ...)                                            \
  case UnaryOp::name:                                                     \
    if constexpr (allowed<Rule::rule, T>()) {                             \
      using Out = std::conditional_t<Rule::rule == Rule::BOOL, bool, T>;  \
      unary_loop<Out, T>(it, [](OM x) { return expr; });                  \
    }                                                                     \
    break;
    FL_UNARY_OPS(FL_X)
#undef FL_X
  }
}

Tensor unary_cpu(UnaryOp op, const Tensor& a, const Tensor& out);

// The unary kernels torch's CPU build has for the float8 types: isnan; abs, except for e8m0fnu (unsigned);
// isinf on e5m2 (the one format with infinities); isfinite on e5m2, and on e8m0fnu, where torch answers true for
// every code, NaN included. The tests run on the exact float32 widening; abs is torch's x < 0 ? -x : x, so it
// clears the sign bit of negative values only (-0 and the NaN codes stay as they are).
Tensor unary_float8(UnaryOp op, const Tensor& a, const Tensor& out) {
  const ScalarType t = a->dtype;
  const char* name = kUnaryInfo[static_cast<int>(op)].name;
  const bool ok = op == UnaryOp::isnan || (op == UnaryOp::abs && t != ScalarType::Float8_e8m0fnu) ||
                  (op == UnaryOp::isinf && t == ScalarType::Float8_e5m2) ||
                  (op == UnaryOp::isfinite && (t == ScalarType::Float8_e5m2 || t == ScalarType::Float8_e8m0fnu));
  FL_CHECK(ok, NotImplementedError, "\"", name, op == UnaryOp::isinf || op == UnaryOp::isfinite ? "" : "_cpu",
           "\" not implemented for '", c10_type_name(t), "'");
  Tensor r;
  if (op == UnaryOp::abs) {
    r = empty_like(a, t);
    ElementwiseIter it({r.get(), a.get()}, name);
    switch (t) {
      FL_DISPATCH_FLOAT8_CASES(it.for_each([](char** p, const int64_t* s, int64_t n) {
        for (int64_t i = 0; i < n; ++i) {
          const uint8_t c = *reinterpret_cast<const uint8_t*>(p[1] + i * s[1]);
          *reinterpret_cast<uint8_t*>(p[0] + i * s[0]) = static_cast<float>(scalar_t::from_bits(c)) < 0 ? c & 0x7f : c;
        }
      }))
      default: throw_unsupported_dtype(name, t);
    }
  } else if (op == UnaryOp::isfinite && t == ScalarType::Float8_e8m0fnu) {
    r = empty_like(a, ScalarType::Bool);
    fill(r, Scalar(true));
  } else {
    return unary_cpu(op, to_dtype(a, ScalarType::Float32), out);
  }
  if (!out) return r;
  check_can_cast(r->dtype, out->dtype, name);
  resize_out(out, r->sizes, name);
  copy_into(out, r);
  out->bump_version();
  return out;
}

Tensor unary_cpu(UnaryOp op, const Tensor& a, const Tensor& out) {
  if (is_float8(a->dtype)) return unary_float8(op, a, out);
  const UnaryInfo& info = kUnaryInfo[static_cast<int>(op)];
  ScalarType ct = a->dtype, out_dtype = a->dtype;
  switch (info.rule) {
    case Rule::FLOAT: if (!is_floating(ct) && !is_complex(ct)) ct = out_dtype = default_dtype(); break;
    case Rule::BOOL: out_dtype = ScalarType::Bool; break;
    case Rule::INT:
      FL_CHECK(!is_floating(ct) && !is_complex(ct), NotImplementedError, "\"", info.name, "_cpu\" not implemented for '", c10_type_name(ct), "'");
      break;
    case Rule::SAME: break;
  }
  if (ct == ScalarType::Bool && op == UnaryOp::neg)
    throw Error("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.");
  const bool rounding = op == UnaryOp::abs || op == UnaryOp::floor || op == UnaryOp::ceil || op == UnaryOp::trunc || op == UnaryOp::round;
  if (is_complex(ct) && op == UnaryOp::abs) out_dtype = to_real_type(ct);  // |z| is real
  if ((ct == ScalarType::Bool && rounding) || (op == UnaryOp::frac && !is_floating(ct) && !is_complex(ct)))
    throw NotImplementedError(str_cat("\"", info.name, "_cpu\" not implemented for '", c10_type_name(ct), "'"));
  Tensor ca = a->dtype == ct ? a : to_dtype(a, ct);
  Tensor result;
  if (out) {
    check_can_cast(out_dtype, out->dtype, info.name);
    resize_out(out, a->sizes, info.name);
    result = out->dtype == out_dtype ? out : empty(a->sizes, out_dtype);
  } else {
    result = empty_like(a, out_dtype);
  }
  check_no_partial_overlap(result, ca);
  if (ct == ScalarType::Float32 && result->dtype == ScalarType::Float32 && has_unary_dense_f32(op)) {
    // operands not laid out alike and dense in memory run it on dense copies: vectorized, and the same bits as
    // a dense input (vec_math.h's Note [explicit FMA])
    Tensor src = dense_in_memory(*ca) ? ca : contiguous(ca);
    Tensor dst = flat_alike(*result, *src) ? result : empty_like(src, ScalarType::Float32);
    ElementwiseIter it({dst.get(), src.get()}, info.name);
    it.for_each([&](char** p, const int64_t* s, int64_t n) {
      FL_CHECK((s[0] == 4 && s[1] == 4) || n == 1, Error, info.name, ": internal error, dense operands with strides ", s[0], ", ",
               s[1]);
      unary_dense_f32(op, reinterpret_cast<float*>(p[0]), reinterpret_cast<const float*>(p[1]), n);
    });
    if (dst != result) copy_into(result, dst);
  } else if (is_complex(ct)) {
    ElementwiseIter it({result.get(), ca.get()}, info.name);
    FL_DISPATCH_COMPLEX(ct, info.name, {
      if (!run_unary_complex<typename scalar_t::value_type>(op, it)) throw_no_complex(info.name, ct);
    });
  } else {
    ElementwiseIter it({result.get(), ca.get()}, info.name);
    FL_DISPATCH_ALL(ct, info.name, run_unary<scalar_t>(op, it));
  }
  if (out) {
    if (result != out) copy_into(out, result);
    out->bump_version();
    return out;
  }
  return result;
}

}  // namespace

const char* unary_op_name(UnaryOp op) { return kUnaryInfo[static_cast<int>(op)].name; }

}  // namespace fl

#define FL_X(name, rule, expr, ...)                                                                        \
  FL_DEFINE_OP(name, #name "(Tensor self, *, Tensor(a!)? out=None) -> Tensor",                         \
               ::fl::Tensor(const ::fl::Tensor&, const ::fl::Tensor&))                                 \
  FL_REGISTER_KERNEL(name, CPU, [](::fl::DispatchKeySet, const ::fl::Tensor& a, const ::fl::Tensor& out) { \
    return ::fl::unary_cpu(::fl::UnaryOp::name, a, out);                                               \
  })
FL_UNARY_OPS(FL_X)
#undef FL_X

namespace fl {
Tensor unary_op(UnaryOp op, const Tensor& a, const Tensor& out) {
  using OpT = Op<Tensor(const Tensor&, const Tensor&)>;
  static const OpT* const table[] = {
#define FL_X(name, rule, expr, ...) &ops::name,
      FL_UNARY_OPS(FL_X)
#undef FL_X
  };
  return (*table[static_cast<int>(op)])(a, out);
}
}  // namespace fl
