// Autograd kernels of the pointwise ops: the derivative columns of the op lists in
// ops/pointwise.h become backward nodes here.
#include "../ops/complex.h"
#include "../ops/pointwise.h"
#include "autograd.h"
#include "formulas.h"

namespace fl::autograd {
namespace {

using namespace fl::formulas;

// Whether a formula's text mentions the one-letter variable `v`: only what a formula uses is saved
// (less memory, and no false "modified by an inplace operation" errors).
constexpr bool mentions(const char* f, char v) {
  auto ident = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; };
  for (int i = 0; f[i]; ++i)
    if (f[i] == v && (i == 0 || !ident(f[i - 1])) && !ident(f[i + 1])) return true;
  return false;
}
struct Uses { bool a, b, r; };
// What each of a binary op's two formulas uses: only the gradients that are needed decide what is
// saved (as PyTorch: x * 2 saves only the 2, so a later in-place write into x is fine).
struct BinaryUses {
  Uses ga, gb;
  constexpr Uses needed(bool need_a, bool need_b) const {
    return {(need_a && ga.a) || (need_b && gb.a), (need_a && ga.b) || (need_b && gb.b), (need_a && ga.r) || (need_b && gb.r)};
  }
};
constexpr BinaryUses kBinaryUses[] = {
#define FL_X(name, rule, expr, grad_a, grad_b) \
  {{mentions(#grad_a, 'a'), mentions(#grad_a, 'b'), mentions(#grad_a, 'r')}, {mentions(#grad_b, 'a'), mentions(#grad_b, 'b'), mentions(#grad_b, 'r')}},
    FL_BINARY_OPS(FL_X)
#undef FL_X
};
constexpr Uses kUnaryUses[] = {
#define FL_X(name, rule, expr, grad_x) {mentions(#grad_x, 'x'), false, mentions(#grad_x, 'r')},
    FL_UNARY_OPS(FL_X)
#undef FL_X
};


// Rejects in-place writes that autograd cannot record; returns true when the op is in-place.
bool check_out(const Tensor& out, const Tensor& self, const char* op) {
  if (!out) return false;
  FL_CHECK(out == self, Error, op, "(): functions with out=... arguments don't support automatic differentiation, but one of the arguments requires grad.");
  check_inplace(self, nullptr);
  return true;
}

struct BinaryBackward : Node {
  BinaryOp op;
  SavedVariable a, b, r;
  Scalar alpha;
  IntList a_sizes, b_sizes;
  ScalarType a_dtype, b_dtype;
  std::string name() const override { return backward_node_name(binary_op_name(op)); }
  void release_saved() override { a.reset(); b.reset(); r.reset(); }
  TensorList apply(TensorList&& grads) override {
    Tensor g = grads.empty() ? nullptr : grads[0];
    if (!g) return {nullptr, nullptr};
    auto self = shared_from_this();
    // the formulas name the saved values a, b and r; not every formula uses all three. These ops are
    // holomorphic with real coefficients, so for complex values the formula over the conjugates is the
    // conjugate derivative torch's convention asks for (grad * conj(f'(z))).
    [[maybe_unused]] const Tensor a = conj_of(this->a.unpack(self)), b = conj_of(this->b.unpack(self)),
                                  r = conj_of(this->r.unpack(self));
    const bool need_a = should_compute_output(0), need_b = should_compute_output(1);
    Tensor ga, gb;
#define NONDIFF Tensor()
#define NOTIMPL not_implemented(binary_op_name(op))
    switch (op) {
#define FL_X(name, rule, expr, grad_a, grad_b)     \
  case BinaryOp::name:                             \
    if (need_a) ga = grad_a;                       \
    if (need_b) gb = grad_b;                       \
    break;
      FL_BINARY_OPS(FL_X)
#undef FL_X
    }
#undef NONDIFF
#undef NOTIMPL
    return {cast_grad(sum_to(ga, a_sizes), a_dtype), cast_grad(sum_to(gb, b_sizes), b_dtype)};
  }
};

struct UnaryBackward : Node {
  UnaryOp op;
  SavedVariable x, r;
  ScalarType x_dtype;
  std::string name() const override { return backward_node_name(unary_op_name(op)); }
  void release_saved() override { x.reset(); r.reset(); }
  TensorList apply(TensorList&& grads) override {
    Tensor g = grads.empty() ? nullptr : grads[0];
    if (!g || !next_edges[0].valid()) return {nullptr};
    auto self = shared_from_this();
    // as in BinaryBackward, but abs and sgn are not holomorphic: their formulas take z itself
    const bool holomorphic = op != UnaryOp::abs && op != UnaryOp::sgn;
    [[maybe_unused]] const Tensor x = holomorphic ? conj_of(this->x.unpack(self)) : this->x.unpack(self),
                                  r = holomorphic ? conj_of(this->r.unpack(self)) : this->r.unpack(self);
    Tensor gx;
#define NONDIFF Tensor()
#define NOTIMPL not_implemented(unary_op_name(op))
    switch (op) {
#define FL_X(name, rule, expr, grad_x) case UnaryOp::name: gx = grad_x; break;
      FL_UNARY_OPS(FL_X)
#undef FL_X
    }
#undef NONDIFF
#undef NOTIMPL
    return {cast_grad(gx, x_dtype)};
  }
};

// `a` is the first input's value before the op (a copy when the op wrote into it).
Tensor record_binary(BinaryOp op, const Tensor& result, const Tensor& a, const Tensor& b, Scalar alpha, const Edge& a_edge) {
  auto node = std::make_shared<BinaryBackward>();
  const Uses uses = kBinaryUses[static_cast<int>(op)].needed(a_edge.valid(), requires_grad(b));
  node->op = op;
  if (uses.a) node->a = SavedVariable(a, false);
  if (uses.b) node->b = SavedVariable(b, false);
  if (uses.r) node->r = SavedVariable(result, true);
  node->alpha = alpha;
  node->a_sizes = a->sizes;
  node->b_sizes = b->sizes;
  node->a_dtype = a->dtype;
  node->b_dtype = b->dtype;
  node->next_edges = {a_edge, gradient_edge(b)};
  set_history(result, node);
  return result;
}

Tensor binary_autograd_impl(const Op<Tensor(const Tensor&, const Tensor&, Scalar, const Tensor&)>& opobj, BinaryOp op,
                            DispatchKeySet ks, const Tensor& a, const Tensor& b, Scalar alpha, const Tensor& out) {
  if (check_out(out, a, binary_op_name(op))) {
    Edge a_edge = gradient_edge(a);
    // the formula may need the value `a` had before the write
    Tensor a_before = kBinaryUses[static_cast<int>(op)].needed(a_edge.valid(), requires_grad(b)).a
                          ? copy_before_write(a) : a;
    redispatch_no_grad(opobj, ks, a, b, alpha, out);
    record_binary(op, a, a_before, b, alpha, a_edge);
    rebase_view_history(a);
    return a;
  }
  Tensor r = redispatch_no_grad(opobj, ks, a, b, alpha, out);
  if (!is_differentiable(r->dtype)) return r;
  return record_binary(op, r, a, b, alpha, gradient_edge(a));
}

Tensor unary_autograd_impl(const Op<Tensor(const Tensor&, const Tensor&)>& opobj, UnaryOp op, DispatchKeySet ks,
                           const Tensor& a, const Tensor& out) {
  bool in_place = check_out(out, a, unary_op_name(op));
  Edge edge = gradient_edge(a);
  const Uses& uses = kUnaryUses[static_cast<int>(op)];
  Tensor before = in_place && uses.a ? copy_before_write(a) : a;  // keeps a's history
  Tensor r = redispatch_no_grad(opobj, ks, a, out);
  if (!is_differentiable(r->dtype)) return r;
  auto node = std::make_shared<UnaryBackward>();
  node->op = op;
  if (uses.a) node->x = SavedVariable(before, false);
  if (uses.r) node->r = SavedVariable(r, true);
  node->x_dtype = a->dtype;
  node->next_edges = {edge};
  set_history(r, node);
  if (in_place) rebase_view_history(r);
  return r;
}

// Ops whose derivative column is NONDIFF (comparisons, logical and bitwise ops) get no autograd
// kernel: they produce no graph.
constexpr bool is_nondiff(const char* grad) { return grad[0] == 'N' && grad[1] == 'O' && grad[2] == 'N'; }

}  // namespace
}  // namespace fl::autograd

#define FL_X(name, rule, expr, grad_a, grad_b)                                                                      \
  static ::fl::KernelRegistrar<std::remove_reference_t<decltype(::fl::ops::name)>> fl_ag_##name(                   \
      ::fl::ops::name, ::fl::DispatchKey::Autograd,                                                                 \
      ::fl::autograd::is_nondiff(#grad_a) ? nullptr                                                                 \
          : +[](::fl::DispatchKeySet ks, const ::fl::Tensor& a, const ::fl::Tensor& b, ::fl::Scalar alpha,          \
                const ::fl::Tensor& out) {                                                                          \
              return ::fl::autograd::binary_autograd_impl(::fl::ops::name, ::fl::BinaryOp::name, ks, a, b, alpha, out); \
            });
FL_BINARY_OPS(FL_X)
#undef FL_X
#define FL_X(name, rule, expr, grad_x)                                                                        \
  static ::fl::KernelRegistrar<std::remove_reference_t<decltype(::fl::ops::name)>> fl_ag_##name(             \
      ::fl::ops::name, ::fl::DispatchKey::Autograd,                                                           \
      ::fl::autograd::is_nondiff(#grad_x) ? nullptr                                                           \
          : +[](::fl::DispatchKeySet ks, const ::fl::Tensor& a, const ::fl::Tensor& out) {                    \
              return ::fl::autograd::unary_autograd_impl(::fl::ops::name, ::fl::UnaryOp::name, ks, a, out);   \
            });
FL_UNARY_OPS(FL_X)
#undef FL_X
