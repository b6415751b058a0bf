// Special functions of the pointwise op lists, in double precision (declared in pointwise_special.h).
#include "pointwise_special.h"

#include <cmath>
#include <limits>

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

}  // namespace fl::special
