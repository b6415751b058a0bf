// The pointwise ops on complex tensors: the rows of the op lists (pointwise_list.h) that torch defines for
// complex numbers, with c10::complex's arithmetic (core/dtype.h) and std::complex's functions (as c10's).
// The other rows raise torch's "not implemented for 'ComplexFloat'" error.
#pragma once
#include <complex>

#include "../kernels/loops.h"
#include "pointwise.h"

namespace fl {

// Runs op over complex<T> operands; false when the op has no complex form.
template <typename T>
bool run_binary_complex(BinaryOp op, const ElementwiseIter& it, complex<T> alpha) {
  using C = complex<T>;
  switch (op) {
    case BinaryOp::add: binary_loop<C, C>(it, [=](C a, C b) { return a + alpha * b; }); return true;
    case BinaryOp::sub: binary_loop<C, C>(it, [=](C a, C b) { return a - alpha * b; }); return true;
    case BinaryOp::mul: binary_loop<C, C>(it, [](C a, C b) { return a * b; }); return true;
    case BinaryOp::div: binary_loop<C, C>(it, [](C a, C b) { return a / b; }); return true;
    case BinaryOp::eq: binary_loop<bool, C>(it, [](C a, C b) { return a == b; }); return true;
    case BinaryOp::ne: binary_loop<bool, C>(it, [](C a, C b) { return a != b; }); return true;
    case BinaryOp::pow:
      binary_loop<C, C>(it, [](C a, C b) {
        const std::complex<T> r = std::pow(std::complex<T>(a.re, a.im), std::complex<T>(b.re, b.im));
        return C(r.real(), r.imag());
      });
      return true;
    default: return false;
  }
}

template <typename T>
bool run_unary_complex(UnaryOp op, const ElementwiseIter& it) {
  using C = complex<T>;
  using S = std::complex<T>;
  // f over std::complex, the result back as a C
#define FL_STD(expr) unary_loop<C, C>(it, [](C c) { const S x(c.re, c.im); const S r = (expr); return C(r.real(), r.imag()); })
  switch (op) {
    case UnaryOp::neg: unary_loop<C, C>(it, [](C x) { return -x; }); return true;
    case UnaryOp::abs: unary_loop<T, C>(it, [](C x) { return std::abs(S(x.re, x.im)); }); return true;
    case UnaryOp::sgn:  // as c10's sgn_impl: z / |z| by complex division (so inf gives nan), 0 at 0
      unary_loop<C, C>(it, [](C x) { return x == C(0, 0) ? x : x / C(std::abs(S(x.re, x.im))); });
      return true;
    case UnaryOp::square: unary_loop<C, C>(it, [](C x) { return x * x; }); return true;
    case UnaryOp::reciprocal: unary_loop<C, C>(it, [](C x) { return C(1) / x; }); return true;
    case UnaryOp::exp: FL_STD(std::exp(x)); return true;
    case UnaryOp::log: FL_STD(std::log(x)); return true;
    case UnaryOp::log2: FL_STD(std::log(x) / std::log(T(2))); return true;
    case UnaryOp::log10: FL_STD(std::log10(x)); return true;
    case UnaryOp::sqrt: FL_STD(std::sqrt(x)); return true;
    case UnaryOp::rsqrt: unary_loop<C, C>(it, [](C c) { const S r = std::sqrt(S(c.re, c.im)); return C(1) / C(r.real(), r.imag()); }); return true;
    case UnaryOp::sin: FL_STD(std::sin(x)); return true;
    case UnaryOp::cos: FL_STD(std::cos(x)); return true;
    case UnaryOp::tan: FL_STD(std::tan(x)); return true;
    case UnaryOp::asin: FL_STD(std::asin(x)); return true;
    case UnaryOp::acos: FL_STD(std::acos(x)); return true;
    case UnaryOp::atan: FL_STD(std::atan(x)); return true;
    case UnaryOp::sinh: FL_STD(std::sinh(x)); return true;
    case UnaryOp::cosh: FL_STD(std::cosh(x)); return true;
    case UnaryOp::tanh: FL_STD(std::tanh(x)); return true;
    case UnaryOp::asinh: FL_STD(std::asinh(x)); return true;
    case UnaryOp::acosh: FL_STD(std::acosh(x)); return true;
    case UnaryOp::atanh: FL_STD(std::atanh(x)); return true;
    case UnaryOp::sigmoid:
      unary_loop<C, C>(it, [](C c) { const S e = std::exp(S(-c.re, -c.im)); return C(1) / (C(1) + C(e.real(), e.imag())); });
      return true;
    case UnaryOp::isnan: unary_loop<bool, C>(it, [](C x) { return std::isnan(x.re) || std::isnan(x.im); }); return true;
    case UnaryOp::isinf: unary_loop<bool, C>(it, [](C x) { return std::isinf(x.re) || std::isinf(x.im); }); return true;
    case UnaryOp::isfinite: unary_loop<bool, C>(it, [](C x) { return std::isfinite(x.re) && std::isfinite(x.im); }); return true;
    case UnaryOp::logical_not: unary_loop<bool, C>(it, [](C x) { return x.re == 0 && x.im == 0; }); return true;
    default: return false;
  }
#undef FL_STD
}

// torch's message for an op with no complex form.
[[noreturn]] void throw_no_complex(const char* op, ScalarType t);

}  // namespace fl
