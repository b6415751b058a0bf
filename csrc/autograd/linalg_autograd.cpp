// The backward formulas of the torch.linalg primitives (linalg.yaml names them), with the formulas of PyTorch's
// derivatives.yaml / FunctionsManual.cpp, for real and complex inputs (torch's convention for complex gradients: the conjugate transpose mH wherever the real formula has a transpose).
// The formulas call ops through the dispatcher (matmul, the linalg ops themselves, tril/triu, ...), so they are
// differentiable again. The factorizations have several differentiable outputs: one MultiOutputBackward node
// receives one gradient per output.
#include <algorithm>
#include <cmath>
#include <limits>

#include "../ops/linalg.h"
#include "../ops/matmul.h"
#include "../ops/reduce.h"
#include "../ops/views.h"
#include "autograd.h"
#include "formulas.h"

namespace fl::formulas {
namespace {

Tensor mT(const Tensor& t) { return ops::transpose(t, -2, -1); }
Tensor mH(const Tensor& t) { return conj_of(mT(t)); }
bool cplx(const Tensor& t) { return is_complex(t->dtype); }
Tensor diag(const Tensor& t) { return ops::diagonal(t, 0, -2, -1); }
// i * x for a real x, in x's complex type.
Tensor times_i(const Tensor& x) { return ops::complex(zeros_like(x), x); }
// torch.allclose(a, b, rtol=1e-2, atol=1e-2) of two real tensors (NaN fails): the lax test by which torch's svd
// and eig backwards reject a loss that depends on the arbitrary phases of complex singular / eigenvectors.
bool lax_allclose(const Tensor& a, const Tensor& b) {
  Tensor d = contiguous(to_dtype(formulas::abs(a - b) - formulas::abs(b) * 1e-2, ScalarType::Float64));
  for (int64_t i = 0; i < d->numel; ++i)
    if (!(d->data<double>()[i] <= 1e-2)) return false;
  return true;
}
Tensor mm(const Tensor& a, const Tensor& b) { return ops::matmul(a, b); }
Tensor col(const Tensor& v) { return ops::unsqueeze(v, -1); }  // v[..., i] -> [..., i, 1]
Tensor row(const Tensor& v) { return ops::unsqueeze(v, -2); }  // v[..., j] -> [..., 1, j]
Tensor eye(int64_t r, int64_t c, ScalarType dt) {
  Tensor e = empty({r, c}, ScalarType::Float64);
  fill(e, Scalar(int64_t(0)));
  fill(ops::diagonal(e, 0, 0, 1), Scalar(int64_t(1)));
  return to_dtype(e, dt);
}
Tensor eye(int64_t n, ScalarType dt) { return eye(n, n, dt); }
Tensor diag_embed(const Tensor& v) { return col(v) * eye(v->sizes.back(), v->dtype); }
Tensor inv(const Tensor& A) { return std::get<0>(ops::linalg_inv_ex(A, false)); }
Tensor solve(const Tensor& A, const Tensor& B) { return std::get<0>(ops::linalg_solve_ex(A, B, false)); }
Tensor solve_tri(const Tensor& A, const Tensor& B, bool upper, bool left, bool unit) {
  return ops::linalg_solve_triangular(A, B, upper, left, unit);
}
Tensor add_opt(const Tensor& a, const Tensor& b) { return a ? (b ? a + b : a) : b; }

// prod_{j != i} s_j along the last dim, without dividing (exact when some s_j are 0).
Tensor prod_of_others(const Tensor& s) {
  const int64_t n = s->sizes.back();
  IntList one = s->sizes;
  one.back() = 1;
  Tensor ones = empty(one, s->dtype);
  fill(ones, Scalar(1.0));
  auto exclusive = [&](const Tensor& t) {
    return ops::cat({ones, ops::narrow(ops::cumprod(t, -1, ScalarType::NumTypes), -1, 0, n - 1)}, -1);
  };
  return exclusive(s) * ops::flip(exclusive(ops::flip(s, {-1})), {-1});
}

}  // namespace

// d det(A) = det(A) tr(A^-1 dA); singular matrices take the SVD form det = det(U) det(Vh) prod(S)
// (as PyTorch), whose product rule needs no inverse.
Tensor det_backward(const Tensor& g, const Tensor& A, const Tensor& det) {
  if (A->numel == 0) return zeros_like(A);
  const double eps = to_real_type(A->dtype) == ScalarType::Float32 ? std::numeric_limits<float>::epsilon()
                                                                    : std::numeric_limits<double>::epsilon();
  Tensor d = contiguous(to_dtype(formulas::abs(det), ScalarType::Float64));
  bool singular = false;
  for (int64_t i = 0; i < d->numel; ++i) singular = singular || !(d->data<double>()[i] >= 100 * eps);
  if (!singular) return col(col(g * conj_of(det))) * mH(inv(A));
  auto [U, S, Vh] = ops::linalg_svd(A, false, true);
  Tensor alpha = conj_of(ops::linalg_det(U) * ops::linalg_det(Vh)) * g;
  Tensor D = col(alpha) * prod_of_others(S);
  return mm(U * row(D), Vh);
}

// torch's formula: gA = L^-H G L^-1 with G = (X + tril(X, -1)^H) / 2, X = tril(L^H gL) (not Hermitian for complex A).
Tensor cholesky_backward(const Tensor& gL0, bool upper, const Tensor& L0) {
  Tensor L = upper ? mH(L0) : L0, gL = upper ? mH(gL0) : gL0;
  Tensor gA = ops::tril(mm(mH(L), gL), 0);
  gA = (gA + mH(ops::tril(gA, -1))) * 0.5;
  gA = solve_tri(mH(L), gA, true, true, false);
  return solve_tri(L, gA, false, false, false);
}

// Gradient of A = P L U through the packed factor (torch's lu_factor_ex_backward / linalg_lu_backward).
Tensor lu_factor_backward(const Tensor& grad, const Tensor& LU, const Tensor& pivots) {
  const int64_t m = LU->sizes[LU->dim() - 2], n = LU->sizes.back(), k = std::min(m, n);
  Tensor P = ops::lu_pivots_to_permutation(pivots, m, LU->dtype);
  Tensor L = ops::tril(ops::narrow(LU, -1, 0, k), -1) + eye(m, k, LU->dtype), U = ops::triu(ops::narrow(LU, -2, 0, k), 0);
  Tensor gL = ops::narrow(grad, -1, 0, k), gU = ops::narrow(grad, -2, 0, k), gA;
  if (m == n) {
    gA = ops::tril(mm(mH(L), gL), -1) + ops::triu(mm(gU, mH(U)), 0);
    gA = solve_tri(mH(U), gA, false, false, false);
    gA = solve_tri(mH(L), gA, true, true, true);
  } else if (m < n) {
    gA = mm(mH(L), gL) - mm(ops::triu(gU, 0), mH(U));
    gA = solve_tri(mH(ops::narrow(U, -1, 0, k)), ops::tril(gA, -1), false, false, false);
    gA = ops::cat({gA + ops::triu(ops::narrow(gU, -1, 0, k), 0), ops::narrow(gU, -1, k, n - k)}, -1);
    gA = solve_tri(mH(L), gA, true, true, true);
  } else {
    gA = mm(gU, mH(U)) - mm(mH(L), ops::tril(gL, -1));
    gA = solve_tri(mH(ops::narrow(L, -2, 0, k)), ops::triu(gA, 0), true, true, true);
    gA = ops::cat({gA + ops::tril(ops::narrow(gL, -2, 0, k), -1), ops::narrow(gL, -2, k, m - k)}, -2);
    gA = solve_tri(mH(U), gA, false, false, false);
  }
  return mm(P, gA);
}

Tensor linalg_inv_backward(const Tensor& g, const Tensor& inverse) {
  Tensor invH = mH(inverse);
  return -mm(invH, mm(g, invH));
}

// gA = g A^-H with g = g_logabsdet - i Im(conj(g_sign) sign) (torch's slogdet_backward); the sign of a real
// determinant is locally constant, so only logabsdet carries a gradient there.
Tensor slogdet_backward(const Tensor& g_sign, const Tensor& g_logabsdet, const Tensor& A, const Tensor& sign) {
  Tensor gl = g_logabsdet;
  if (cplx(A) && g_sign) {
    Tensor phase = -times_i(ops::imag(conj_of(g_sign) * sign));
    gl = gl ? gl + phase : phase;
  }
  if (!gl) return zeros_like(A);
  return col(col(gl)) * mH(inv(A));
}

// A X = B: gB = A^-H g (one solve), gA = -gB X^H.
TensorList linalg_solve_backward(const Tensor& g, const Tensor& A, const Tensor& X, const std::array<bool, 2>& mask) {
  Tensor gB = solve(mH(A), g);
  return {mask[0] ? -mm(gB, mH(X)) : nullptr, mask[1] ? gB : nullptr};
}

// A X = B (left) or X A = B, A triangular: gB solves with A^H; gA = -gB X^H (or -X^H gB) on A's triangle.
TensorList solve_triangular_backward(const Tensor& g, const Tensor& A, const Tensor& X, bool upper, bool left, bool unit,
                                     const std::array<bool, 2>& mask) {
  Tensor gB = solve_tri(mH(A), g, !upper, left, unit), gA;
  if (mask[0]) {
    gA = left ? -mm(gB, mH(X)) : -mm(mH(X), gB);
    gA = upper ? ops::triu(gA, unit ? 1 : 0) : ops::tril(gA, unit ? -1 : 0);
  }
  return {gA, mask[1] ? gB : nullptr};
}

// The factorizations' formulas: a gradient per result (undefined where none arrived), the results (undefined where
// absent: Q for mode "r", the vectors without compute_v / compute_uv).
Tensor linalg_qr_backward(const Tensor& gQ, const Tensor& gR, const Tensor& Q, const Tensor& R,
                          const std::string& mode) {
  FL_CHECK(mode != "r", Error, "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
                               "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.");
  const int64_t m = Q->sizes[Q->dim() - 2], n = R->sizes.back();
  FL_CHECK(mode == "reduced" || m <= n, Error, "The QR decomposition is not differentiable when mode='complete' and nrows > ncols.");
  Tensor gA = gQ ? (gR ? mm(gR, mH(R)) - mm(mH(Q), gQ) : -mm(mH(Q), gQ)) : mm(gR, mH(R));
  if (m >= n) {  // the diagonal of sym is real: halving it halves its real part, as torch
    Tensor sym = ops::triu(gA, 0);
    sym = sym + mH(sym);
    sym = sym - diag_embed(diag(sym) * 0.5);
    gA = add_opt(mm(Q, sym), gQ);
    return solve_tri(mH(R), gA, false, false, false);
  }
  Tensor X = -gA, skew = ops::tril(X - mH(X), 0);
  skew = skew - diag_embed(diag(skew) * 0.5);  // (an imaginary diagonal, 0 for real inputs: its imaginary part halved)
  gA = mm(Q, skew);
  gA = solve_tri(mH(ops::narrow(R, -1, 0, m)), gA, false, false, false);
  IntList rest = R->sizes;
  rest.back() = n - m;
  gA = ops::cat({gA, zeros_like(empty(rest, gA->dtype))}, -1);
  return gR ? gA + mm(Q, gR) : gA;
}

Tensor linalg_eigh_backward(const Tensor& gL, const Tensor& gV, const Tensor& L, const Tensor& V) {
  FL_CHECK(V, Error, "linalg.eigh: the eigenvalues alone are not differentiable here; compute the eigenvectors as well");
  if (!gV) return mm(V * row(gL), mH(V));
  Tensor VhgV = mm(mH(V), gV);
  FL_CHECK(!cplx(V) || lax_allclose(ops::imag(diag(VhgV)), zeros(L->sizes, L->dtype)), Error,
           "linalg_eigh_backward: The eigenvectors in the complex case are specified up to multiplication by e^{i phi}. "
           "The specified loss function depends on this quantity, so it is ill-defined.");
  VhgV = (VhgV - mH(VhgV)) * 0.5;
  Tensor I = eye(L->sizes.back(), L->dtype);
  Tensor gA = VhgV / (row(L) - col(L) + I);  // E_ij = L_j - L_i, 1 on the diagonal
  if (gL) gA = gA - diag_embed(diag(gA)) + diag_embed(gL);  // (the diagonal is gL, as torch's copy_)
  return mm(V, mm(gA, mH(V)));
}

// torch's linalg_eig_backward (not Hermitian): gA = V^-H (diag(gL) + (V^H gV - V^H V Re diag(V^H gV)) / conj(E)) V^H
// with E_ij = L_j - L_i, the diagonal replaced by gL; a real A takes the real part.
Tensor linalg_eig_backward(const Tensor& gL, const Tensor& gV, const Tensor& L, const Tensor& V, bool real_input) {
  FL_CHECK(V, Error, "linalg.eig: the eigenvalues alone are not differentiable here; compute the eigenvectors as well");
  Tensor gA;
  if (!gV) {
    gA = solve(mH(V), col(gL) * mH(V));
  } else {
    Tensor VhgV = mm(mH(V), gV);
    FL_CHECK(lax_allclose(ops::imag(diag(VhgV)), zeros(L->sizes, to_real_type(L->dtype))), Error,
             "linalg_eig_backward: The eigenvectors in the complex case are specified up to multiplication by e^{i phi}. "
             "The specified loss function depends on this quantity, so it is ill-defined.");
    VhgV = VhgV - mm(mH(V), V * row(ops::real(diag(VhgV))));
    Tensor Lc = conj_of(L);
    Tensor E = row(Lc) - col(Lc) + eye(L->sizes.back(), L->dtype);
    gA = VhgV / E;
    gA = gA - diag_embed(diag(gA));
    if (gL) gA = gA + diag_embed(gL);
    gA = solve(mH(V), mm(gA, mH(V)));
  }
  return real_input ? ops::real(gA) : gA;
}

namespace {

Tensor svd_backward(const Tensor& gU, const Tensor& gS, const Tensor& gVh, const Tensor& U, const Tensor& S, const Tensor& Vh) {
  const int64_t m = U->sizes[U->dim() - 2], n = Vh->sizes.back();
  if (!gU && !gVh) return m >= n ? mm(U, col(gS) * Vh) : mm(U * row(gS), Vh);
  auto skew = [](const Tensor& X) { return X - mH(X); };
  Tensor UhgU = gU ? skew(mm(mH(U), gU)) : nullptr;
  Tensor VhgV = gVh ? skew(mm(Vh, mH(gVh))) : nullptr;
  if (cplx(U)) {  // the loss must not depend on the phases: Im diag(U^H gU) + Im diag(V^H gV) = 0
    Tensor zero = zeros(S->sizes, S->dtype);
    FL_CHECK(lax_allclose(gU ? ops::imag(diag(UhgU)) : zero, gVh ? -ops::imag(diag(VhgV)) : zero), Error,
             "svd_backward: The singular vectors in the complex case are specified up to multiplication by e^{i phi}. "
             "The specified loss function depends on this phase term, making it ill-defined.");
  }
  Tensor S2 = S * S;
  Tensor E = row(S2) - col(S2) + eye(S->sizes.back(), S->dtype);  // E_ij = S_j^2 - S_i^2, 1 on the diagonal
  Tensor gA;
  if (gU && gVh) gA = (UhgU * row(S) + col(S) * VhgV) / E;
  else if (gU) gA = (UhgU / E) * row(S);
  else gA = col(S) * (VhgV / E);
  if (gS) gA = gA + diag_embed(gS);
  if (cplx(U) && gU && gVh) gA = gA + diag_embed(diag(UhgU) / (S * 2.0));
  if (m > n && gU) {
    gA = mm(U, gA);
    Tensor gUSinv = gU / row(S);
    gA = gA + gUSinv - mm(U, mm(mH(U), gUSinv));
    return mm(gA, Vh);
  }
  if (m < n && gVh) {
    gA = mm(gA, Vh);
    Tensor SinvgVh = gVh / col(S);
    gA = gA + SinvgVh - mm(mm(SinvgVh, mH(Vh)), Vh);
    return mm(U, gA);
  }
  return m >= n ? mm(U, mm(gA, Vh)) : mm(mm(U, gA), Vh);
}

}  // namespace

Tensor linalg_svd_backward(const Tensor& gU0, const Tensor& gS, const Tensor& gVh0, const Tensor& U0, const Tensor& S,
                           const Tensor& Vh0, bool full_matrices) {
  FL_CHECK(U0, Error, "linalg.svd: the singular values alone are not differentiable here; compute the singular vectors as well");
  Tensor U = U0, Vh = Vh0, gU = gU0, gVh = gVh0;
  if (full_matrices) {  // the extra columns of U and rows of Vh carry nothing about A
    const int64_t k = S->sizes.back();
    U = ops::narrow(U, -1, 0, k);
    Vh = ops::narrow(Vh, -2, 0, k);
    if (gU) gU = ops::narrow(gU, -1, 0, k);
    if (gVh) gVh = ops::narrow(gVh, -2, 0, k);
  }
  return svd_backward(gU, gS, gVh, U, S, Vh);
}

}  // namespace fl::formulas
