// Special functions of the pointwise op lists, in double precision (declared in pointwise_special.h).
#include "pointwise_special.h"

#include <cmath>
#include <limits>
#include <vector>
#include <algorithm>

namespace fl::special {
namespace {

constexpr double kEps = 1e-17;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// exp(-x) I_nu(x) for x >= 0, nu in {0, 1}: the power series (all terms positive, so no
// cancellation) up to x = 25, the large-argument asymptotic series above (its smallest term is
// about exp(-2x), far below double precision there).
double bessel_scaled(int nu, double x) {
  if (std::isnan(x)) return x;
  if (std::isinf(x)) return 0.0;
  if (x <= 25.0) {
    const double q = x * x / 4;
    double term = nu == 0 ? 1.0 : x / 2, sum = term;
    for (int k = 1; k < 500 && term > kEps * sum; ++k) {
      term *= q / (k * double(k + nu));
      sum += term;
    }
    return sum * std::exp(-x);
  }
  const double mu = 4.0 * nu * nu;
  double term = 1.0, sum = 1.0;
  for (int k = 1; k < 100; ++k) {
    const double next = term * -(mu - double(2 * k - 1) * (2 * k - 1)) / (8.0 * k * x);
    if (std::fabs(next) >= std::fabs(term) || std::fabs(next) < kEps * std::fabs(sum)) break;
    term = next;
    sum += term;
  }
  return sum / std::sqrt(2 * M_PI * x);
}

// The series of P(a, x) (x < a + 1) and the continued fraction of Q(a, x) (x >= a + 1).
double igamma_prefactor(double a, double x) { return std::exp(a * std::log(x) - x - std::lgamma(a)); }

double igamma_series(double a, double x) {
  double ap = a, term = 1.0 / a, sum = term;
  for (int n = 0; n < 100000 && std::fabs(term) > std::fabs(sum) * kEps; ++n) {
    ap += 1;
    term *= x / ap;
    sum += term;
  }
  return sum * igamma_prefactor(a, x);
}

double igammac_fraction(double a, double x) {  // modified Lentz
  constexpr double tiny = 1e-300;
  double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
  for (int i = 1; i < 100000; ++i) {
    const double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (std::fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1) < kEps) break;
  }
  return h * igamma_prefactor(a, x);
}

}  // namespace

double bessel_i0e(double x) { return bessel_scaled(0, std::fabs(x)); }
double bessel_i1e(double x) { return std::copysign(bessel_scaled(1, std::fabs(x)), x); }

double erfcx(double x) {
  if (std::isnan(x)) return x;
  if (x < 0) return x < -26.7 ? kInf : 2 * std::exp(x * x) - erfcx(-x);
  if (x < 26.0) return std::exp(x * x) * std::erfc(x);
  // asymptotic series 1/(x sqrt(pi)) * sum (-1)^n (2n-1)!! / (2x^2)^n, where erfc underflows
  const double inv2x2 = 1 / (2 * x * x);
  double term = 1.0, sum = 1.0;
  for (int n = 1; n < 12; ++n) {
    term *= -(2 * n - 1) * inv2x2;
    sum += term;
  }
  return sum / (x * std::sqrt(M_PI));
}

// Edge cases follow PyTorch (Cephes): a or x negative or nan -> nan, P(0, x > 0) = 1, P(a, inf) = 1.
double igamma(double a, double x) {
  if (std::isnan(a) || std::isnan(x) || a < 0 || x < 0) return kNaN;
  if (a == 0) return x > 0 ? 1.0 : kNaN;
  if (x == 0) return 0.0;
  if (std::isinf(a)) return std::isinf(x) ? kNaN : 0.0;
  if (std::isinf(x)) return 1.0;
  return x < a + 1 ? igamma_series(a, x) : 1.0 - igammac_fraction(a, x);
}

double igammac(double a, double x) {
  if (std::isnan(a) || std::isnan(x) || a < 0 || x < 0) return kNaN;
  if (a == 0) return x > 0 ? 0.0 : kNaN;
  if (x == 0) return 1.0;
  if (std::isinf(a)) return std::isinf(x) ? kNaN : 1.0;
  if (std::isinf(x)) return 0.0;
  return x < a + 1 ? 1.0 - igamma_series(a, x) : igammac_fraction(a, x);
}

// Hurwitz zeta by Euler-Maclaurin summation (Cephes' zeta, as PyTorch computes it).
double zeta(double x, double q) {
  static const double A[] = {12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
                             7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
                             -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18};
  constexpr double machep = 1.11022302462515654042e-16;
  if (x == 1) return kInf;
  if (x < 1) return kNaN;
  if (q <= 0) {
    if (q == std::floor(q)) return kInf;
    if (x != std::floor(x)) return kNaN;  // q^-x is not real
  }
  double s = std::pow(q, -x), a = q, b = 0.0;
  int i = 0;
  while (i < 9 || a <= 9.0) {
    i += 1;
    a += 1.0;
    b = std::pow(a, -x);
    s += b;
    if (-machep * s < b && b < machep * s) return s;
  }
  const double w = a;
  s += b * w / (x - 1);
  s -= 0.5 * b;
  a = 1.0;
  double k = 0.0;
  for (double coeff : A) {
    a *= x + k;
    b /= w;
    const double t = a * b / coeff;
    s += t;
    if (std::fabs(t / s) < machep) return s;
    k += 1.0;
    a *= x + k;
    b /= w;
    k += 1.0;
  }
  return s;
}


// ---- Bessel functions of integer order 0 and 1 ----------------------------------------------------------------------

namespace {

constexpr double kEulerGamma = 0.57721566490153286061;

// Hankel's large-argument expansion (x > 25): J = sqrt(2/(pi x)) (P cos w - Q sin w), Y = sqrt(2/(pi x)) (P sin w
// + Q cos w), w = x - (n/2 + 1/4) pi; the terms fall until k ~ 2x, far below double precision here.
void hankel(int n, double x, double* j, double* y) {
  const double mu = 4.0 * n * n;
  double p = 1.0, q = 0.0, a = 1.0;
  for (int k = 1; k < 200; ++k) {
    const double next = a * (mu - double(2 * k - 1) * (2 * k - 1)) / (8.0 * k * x);
    if (std::fabs(next) >= std::fabs(a) || std::fabs(next) < 1e-18) break;
    a = next;
    const int sign = ((k / 2) % 2 == 0) ? 1 : -1;
    if (k % 2 == 0) p += sign * a; else q += sign * a;
  }
  const double w = x - (n / 2.0 + 0.25) * M_PI, scale = std::sqrt(2.0 / (M_PI * x));
  *j = scale * (p * std::cos(w) - q * std::sin(w));
  *y = scale * (p * std::sin(w) + q * std::cos(w));
}

// J0, J1, Y0, Y1 at 0 < x <= 2 by their power series (terms fall from the first: no cancellation).
void bessel_series(double x, double* j0, double* j1, double* y0, double* y1) {
  const double q = -x * x / 4, lg = std::log(x) - M_LN2;  // (not log(x / 2): x / 2 underflows for tiny x)
  double t0 = 1.0, t1 = x / 2, harmonic = 0.0;  // t0 = q^k / k!^2, t1 = (x/2) q^k / (k! (k+1)!)
  double sj0 = t0, sj1 = t1, sy0 = 0.0, sy1 = t1 * (1.0 - 2 * kEulerGamma);  // k = 0: psi(1) + psi(2) = 1 - 2 gamma
  for (int k = 1; k < 60; ++k) {
    t0 *= q / (double(k) * k);
    t1 *= q / (double(k) * (k + 1));
    harmonic += 1.0 / k;
    sj0 += t0;
    sj1 += t1;
    sy0 += harmonic * t0;
    sy1 += (2 * harmonic + 1.0 / (k + 1) - 2 * kEulerGamma) * t1;  // psi(k+1) + psi(k+2)
  }
  *j0 = sj0;
  *j1 = sj1;
  *y0 = 2 / M_PI * ((lg + kEulerGamma) * sj0 - sy0);
  *y1 = -2 / (M_PI * x) + 2 / M_PI * lg * sj1 - sy1 / M_PI;
}

// J_0 .. J_{m} at 2 < x <= 25 by Miller's backward recurrence, normalized by J0 + 2 sum J_2k = 1.
std::vector<double> bessel_j_all(double x) {
  const int m = 2 * (static_cast<int>(x / 2) + 20);
  std::vector<double> j(m + 2, 0.0);
  j[m] = 1.0;
  for (int k = m; k >= 1; --k) {
    j[k - 1] = 2.0 * k / x * j[k] - j[k + 1];
    if (std::fabs(j[k - 1]) > 1e250)
      for (int i = k - 1; i <= m; ++i) j[i] *= 1e-250;
  }
  double norm = j[0];
  for (int k = 2; k <= m; k += 2) norm += 2 * j[k];
  for (double& v : j) v /= norm;
  return j;
}

// Y0 and Y1 at 2 < x <= 25 from the Neumann series over Miller's J_k (no cancellation: every J_k is at most 1).
void bessel_y_neumann(double x, double* y0, double* y1) {
  const std::vector<double> j = bessel_j_all(x);
  const double lg = std::log(x) - M_LN2 + kEulerGamma;
  double s0 = 0.0, s1 = 0.0;
  for (size_t k = 1; 2 * k + 1 < j.size(); ++k) {
    const double sign = (k % 2 == 0) ? 1.0 : -1.0;
    s0 += sign * j[2 * k] / k;
    s1 += sign * (j[2 * k - 1] - j[2 * k + 1]) / k;
  }
  *y0 = 2 / M_PI * (lg * j[0] - 2 * s0);
  *y1 = 2 / M_PI * (lg * j[1] - j[0] / x + s1);
}

}  // namespace

double bessel_j(int n, double xin) {
  if (std::isnan(xin)) return xin;
  const double x = std::fabs(xin), parity = (n == 1 && xin < 0) ? -1.0 : 1.0;
  if (std::isinf(x)) return kNaN;  // as PyTorch (the limit would be 0)
  if (x == 0) return n == 0 ? 1.0 : 0.0;
  double j, y, j0, j1, y0, y1;
  if (x > 25.0) {
    hankel(n, x, &j, &y);
  } else if (x > 2.0) {
    j = bessel_j_all(x)[n];
  } else {
    bessel_series(x, &j0, &j1, &y0, &y1);
    j = n == 0 ? j0 : j1;
  }
  return parity * j;
}

double bessel_y(int n, double x) {
  if (std::isnan(x) || x < 0) return kNaN;
  if (x == 0) return -kInf;
  if (std::isinf(x)) return kNaN;  // as PyTorch (the limit would be 0)
  double j0, j1, y0, y1;
  if (x > 25.0) {
    hankel(n, x, &j0, n == 0 ? &y0 : &y1);
  } else if (x > 2.0) {
    bessel_y_neumann(x, &y0, &y1);
  } else {
    bessel_series(x, &j0, &j1, &y0, &y1);
  }
  return n == 0 ? y0 : y1;
}

double bessel_k_scaled_order(double nu, double x);

// exp(x) K_n(x) = int_0^inf exp(-x (cosh t - 1)) cosh(n t) dt by the trapezoid rule: the integrand is even and
// analytic in a strip, so the error falls like exp(-pi^2 / h); h shrinks with the peak's width 1/sqrt(x).
double bessel_k_scaled(int n, double x) { return bessel_k_scaled_order(n, x); }

// exp(x) K_nu(x) for real nu >= 0 (the integral below; bessel_k_scaled is its integer case).
double bessel_k_scaled_order(double nu, double x) {
  if (std::isnan(x) || x < 0) return kNaN;
  if (x == 0) return kInf;
  if (std::isinf(x)) return 0.0;
  // tiny x: the leading terms, the rest being below double precision (and the integral reaching past cosh's range)
  if (x < 1e-10 && (nu == 0 || nu == 1)) return nu == 0 ? -(std::log(x) - M_LN2) - kEulerGamma : 1 / x;
  const double h = std::min(0.1, 0.25 / std::sqrt(x));
  const double end = 2 * std::asinh(std::sqrt(22.5 / x));  // x (cosh t - 1) = 45: the integrand is below e^-45
  double sum = 0.5;  // the t = 0 term, halved
  for (double t = h; t <= end; t += h) {
    const double s = std::sinh(t / 2);
    sum += std::exp(-2 * x * s * s) * (nu == 0 ? 1.0 : std::cosh(nu * t));
  }
  return sum * h;
}


// ---- the Airy function Ai -----------------------------------------------------------------------------------------
// |x| <= 1: its Maclaurin series; x > 1: Ai(x) = sqrt(x / 3) K_{1/3}(z) / pi with z = 2/3 x^{3/2}; -15 <= x < -1:
// Taylor-series steps of the Airy equation y'' = x y from x = -1 (its solutions oscillate there, so the steps stay
// accurate); x < -15: the asymptotic expansion in z, whose terms fall far below double precision.

namespace {

constexpr double kAi0 = 0.35502805388781723926, kAiPrime0 = -0.25881940379280679840;

// y(x0 + h), y'(x0 + h) for y'' = x y from y(x0) = y0, y'(x0) = d0, by the Taylor series in h:
// (n + 2)(n + 1) a_{n+2} = x0 a_n + a_{n-1} (every third coefficient vanishes at x0 = 0, so no early exit).
void airy_step(double x0, double h, double* y0, double* d0) {
  double a_prev2 = 0.0, a_prev = *y0, a = *d0;  // a_{n-1}, a_n, a_{n+1} with n = 0
  double y = *y0 + *d0 * h, d = *d0, hp = h;     // sums up to n = 1; hp = h^n
  for (int n = 0; n < 48; ++n) {  // |h| <= 1 and |x0| <= 15: the terms fall like 1/n! well before 48
    const double next = (x0 * a_prev + a_prev2) / ((n + 2.0) * (n + 1.0));  // a_{n+2}
    d += (n + 2) * next * hp;
    hp *= h;
    y += next * hp;
    a_prev2 = a_prev;
    a_prev = a;
    a = next;
  }
  *y0 = y;
  *d0 = d;
}

}  // namespace

double airy_ai(double x) {
  if (std::isnan(x)) return x;
  if (std::isinf(x)) return kNaN;  // both infinities, as PyTorch
  if (std::fabs(x) <= 1.0) {
    double y = kAi0, d = kAiPrime0;
    airy_step(0.0, x, &y, &d);
    return y;
  }
  if (x > 0) {
    const double z = 2.0 / 3.0 * x * std::sqrt(x);
    return std::sqrt(x / 3.0) / M_PI * bessel_k_scaled_order(1.0 / 3.0, z) * std::exp(-z);
  }
  if (x >= -15.0) {
    double y = kAi0, d = kAiPrime0;
    airy_step(0.0, -1.0, &y, &d);
    const int steps = static_cast<int>(std::ceil((-1.0 - x) / 0.25));
    const double h = (x + 1.0) / steps;
    double at = -1.0;
    for (int i = 0; i < steps; ++i, at += h) airy_step(at, h, &y, &d);
    return y;
  }
  // Ai(-t) ~ (sin(z + pi/4) P - cos(z + pi/4) Q) / (sqrt(pi) t^{1/4}),
  // with u_k = u_{k-1} (6k-5)(6k-3)(6k-1) / (216 k (2k-1))
  const double t = -x, z = 2.0 / 3.0 * t * std::sqrt(t);
  double p = 1.0, q = 0.0, u = 1.0, zk = 1.0;
  for (int k = 1; k < 40; ++k) {
    const double next = u * (6.0 * k - 5) * (6.0 * k - 3) * (6.0 * k - 1) / (216.0 * k * (2.0 * k - 1));
    zk *= z;
    if (next / zk < 1e-18) break;
    u = next;
    const double term = u / zk, sign = ((k / 2) % 2 == 0) ? 1.0 : -1.0;
    if (k % 2 == 0) p += sign * term; else q += sign * term;
  }
  const double w = z + M_PI / 4;
  return (std::sin(w) * p - std::cos(w) * q) / (std::sqrt(M_PI) * std::sqrt(std::sqrt(t)));
}

}  // namespace fl::special
