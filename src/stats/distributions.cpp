// Normal and Student-t functions. Every quantile is a starting guess refined against an accurate
// CDF, because the usual rational approximations stop at 1e-9 and intervals are checked against
// scipy to 1e-12. The t distribution goes through the regularized incomplete beta (continued
// fraction), evaluated in log space so that far tails neither underflow nor lose digits.
#include "lmeval/stats/distributions.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace lmeval::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kLogSqrt2Pi = 0.918938533204672741780329736406;
constexpr double kSqrt1_2 = 0.707106781186547524400844362105;
constexpr double kInvSqrt2Pi = 0.398942280401432677939946059934;
constexpr double kPi = 3.14159265358979323846264338328;

// lgamma(x) minus Stirling's approximation; for x >= 10 by the asymptotic series, whose next
// term is below 1e-17 there. Needed so that differences of lgamma at large arguments (t with
// many degrees of freedom) keep their digits.
double stirling_error(double x) {
  if (x < 10) return std::lgamma(x) - ((x - 0.5) * std::log(x) - x + kLogSqrt2Pi);
  const double r = 1 / x, r2 = r * r;
  return r *
         (1.0 / 12 -
          r2 * (1.0 / 360 -
                r2 * (1.0 / 1260 -
                      r2 * (1.0 / 1680 - r2 * (1.0 / 1188 - r2 * (691.0 / 360360 - r2 / 156))))));
}

// log B(a, b) = lgamma(a) + lgamma(b) - lgamma(a + b), without the cancellation of the naive sum
// when an argument is large.
double log_beta(double a, double b) {
  if (a > b) std::swap(a, b);
  if (b < 10) return std::lgamma(a) + std::lgamma(b) - std::lgamma(a + b);
  const double s = a + b;
  if (a < 10) {
    return std::lgamma(a) - (b - 0.5) * std::log1p(a / b) - a * std::log(s) + a +
           stirling_error(b) - stirling_error(s);
  }
  return kLogSqrt2Pi - (a - 0.5) * std::log1p(b / a) - (b - 0.5) * std::log1p(a / b) -
         0.5 * std::log(s) + stirling_error(a) + stirling_error(b) - stirling_error(s);
}

// An argument of I_x(a, b) with its complement and logs, each computed by the caller without
// cancellation (1 - x is not good enough near x = 1).
struct BetaArg {
  double x, y, log_x, log_y;
  BetaArg swapped() const { return {y, x, log_y, log_x}; }
};

// The continued fraction of I_x(a, b) (DLMF 8.17.22) by the modified Lentz method. It converges
// fast for x < (a + 1) / (a + b + 2); callers use the symmetry I_x(a, b) = 1 - I_{1-x}(b, a) above.
// Near that bound with a large (t with many degrees of freedom) its first terms cancel to about
// 1/a, so it runs in long double, with x rebuilt from the accurate complement y.
double beta_continued_fraction(const BetaArg& z, double a_in, double b_in) {
  using real = long double;
  constexpr real tiny = 1e-300L;
  constexpr real tol = 1e-18L;
  auto guard = [](real v) { return std::fabs(v) < tiny ? tiny : v; };
  const real a = a_in, b = b_in;
  const real x = z.x > 0.5 ? 1 - static_cast<real>(z.y) : static_cast<real>(z.x);
  real c = 1;
  real d = 1 / guard(1 - (a + b) * x / (a + 1));
  real f = d;
  for (int m = 1; m <= 200000; ++m) {
    const real even = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
    d = 1 / guard(1 + even * d);
    c = guard(1 + even / c);
    f *= c * d;
    const real odd = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
    d = 1 / guard(1 + odd * d);
    c = guard(1 + odd / c);
    const real delta = c * d;
    f *= delta;
    if (std::fabs(delta - 1) <= tol) break;
  }
  return static_cast<double>(f);
}

// log I_x(a, b) by the continued fraction directly (x on its fast side).
double log_ibeta_direct(const BetaArg& z, double a, double b) {
  return a * z.log_x + b * z.log_y - log_beta(a, b) + std::log(beta_continued_fraction(z, a, b)) -
         std::log(a);
}

bool on_direct_side(const BetaArg& z, double a, double b) { return z.x <= (a + 1) / (a + b + 2); }

double log_ibeta(const BetaArg& z, double a, double b) {
  // Tested on the logs: x itself underflows long before a * log x does (t far in the tail).
  if (z.log_x == -kInf) return -kInf;
  if (z.log_y == -kInf) return 0;
  if (on_direct_side(z, a, b)) return log_ibeta_direct(z, a, b);
  return std::log1p(-std::exp(log_ibeta_direct(z.swapped(), b, a)));
}

// The incomplete-beta argument of the t tail P(T > t) = I_x(df/2, 1/2) / 2, x = df / (df + t^2),
// for t >= 0, written so that neither t^2 overflowing nor x near 1 loses digits.
BetaArg t_tail_arg(double t, double df) {
  if (t * t <= df) {
    const double v = t * t / df;
    return {1 / (1 + v), v / (1 + v), -std::log1p(v), std::log(v) - std::log1p(v)};
  }
  const double log_w = std::log(df) - 2 * std::log(t);  // w = df / t^2 < 1
  const double w = std::exp(log_w);
  return {w / (1 + w), 1 / (1 + w), log_w - std::log1p(w), -std::log1p(w)};
}

// log P(T > t) for t >= 0.
double t_log_tail(double t, double df) {
  return std::log(0.5) + log_ibeta(t_tail_arg(t, df), df / 2, 0.5);
}
// log P(0 < T < t) for t >= 0.
double t_log_center(double t, double df) {
  return std::log(0.5) + log_ibeta(t_tail_arg(t, df).swapped(), 0.5, df / 2);
}
// log of the t density at t >= 0.
double t_log_density(double t, double df) {
  return -0.5 * std::log(df) - log_beta(df / 2, 0.5) + (df + 1) / 2 * t_tail_arg(t, df).log_x;
}

// The p-quantile of the standard normal for 0 < p <= 1/2 (a non-positive number).
double normal_quantile_lower(double p) {
  // Abramowitz & Stegun 26.2.23 (absolute error < 4.5e-4) as the starting point ...
  const double s = std::sqrt(-2 * std::log(p));
  double x = -(s - (2.515517 + s * (0.802853 + s * 0.010328)) /
                       (1 + s * (1.432788 + s * (0.189269 + s * 0.001308))));
  // ... then Halley steps on the CDF. Near the centre the residual is taken from erf against
  // p - 1/2 (exact there), so small quantiles keep their relative accuracy.
  const bool central = p >= 0.25;
  for (int i = 0; i < 10; ++i) {
    const double r =
        central ? 0.5 * std::erf(x * kSqrt1_2) - (p - 0.5) : 0.5 * std::erfc(-x * kSqrt1_2) - p;
    const double dx = r / (kInvSqrt2Pi * std::exp(-0.5 * x * x));
    const double step = dx / (1 + 0.5 * x * dx);
    x -= step;
    if (std::fabs(step) <= 1e-17 + 1e-16 * std::fabs(x)) break;
  }
  return x;
}

// The p-quantile of Student's t for 0 < p < 1/2 (a negative number), finite df.
double t_quantile_lower(double p, double df) {
  if (df == 1) return p >= 0.25 ? std::tan(kPi * (p - 0.5)) : -1 / std::tan(kPi * p);
  if (df == 2) return (2 * p - 1) / std::sqrt(2 * p * (1 - p));
  if (p >= 0.25) {
    // Solve P(0 < T < t) = 1/2 - p (exact) by Newton from t = 0: that function is concave for
    // t > 0, so the iterates rise monotonically to the root.
    const double q = 0.5 - p;
    double t = 0;
    for (int i = 0; i < 100; ++i) {
      const double h = t > 0 ? std::exp(t_log_center(t, df)) : 0;
      const double dt = (q - h) / std::exp(t_log_density(t, df));
      t += dt;
      if (!(dt > 1e-16 * t)) break;
    }
    return -t;
  }
  // Solve log P(T > t) = log p in s = log t: in the tail that function is nearly linear in s
  // (P(T > t) ~ C t^-df), so Newton converges in a few steps even for heavy tails. Safeguarded by
  // a bracket: the t quantile lies beyond the normal one, and before the root of C t^-df = p
  // (the power law bounds the tail from above).
  const double log_p = std::log(p);
  const double log_c = -0.5 * std::log(df) - log_beta(df / 2, 0.5) + (df - 1) / 2 * std::log(df);
  double lo = std::log(-normal_quantile_lower(p));
  double hi = (log_c - log_p) / df;
  while (t_log_tail(std::exp(lo), df) < log_p) lo -= 1;
  while (t_log_tail(std::exp(hi), df) > log_p) hi += 1;
  double s = hi;
  for (int i = 0; i < 300; ++i) {
    const double t = std::exp(s);
    const double log_tail = t_log_tail(t, df);
    const double r = log_tail - log_p;
    if (r > 0)
      lo = s;
    else
      hi = s;
    const double slope = -std::exp(s + t_log_density(t, df) - log_tail);
    double next = s - r / slope;
    if (!(next >= lo && next <= hi)) next = 0.5 * (lo + hi);
    const double ds = next - s;
    s = next;
    if (std::fabs(ds) <= 1e-15 || hi - lo <= 1e-15) break;
  }
  return -std::exp(s);
}

}  // namespace

double normal_cdf(double x) { return 0.5 * std::erfc(-x * kSqrt1_2); }

double normal_quantile(double p) {
  if (!(p >= 0 && p <= 1)) return kNaN;
  if (p == 0) return -kInf;
  if (p == 1) return kInf;
  if (p > 0.5) return -normal_quantile_lower(1 - p);  // 1 - p is exact for p >= 1/2
  return normal_quantile_lower(p);
}

double student_t_cdf(double x, double df) {
  if (std::isnan(x) || !(df > 0)) return kNaN;
  if (std::isinf(df)) return normal_cdf(x);
  if (std::isinf(x)) return x > 0 ? 1 : 0;
  const double tail = std::exp(t_log_tail(std::fabs(x), df));
  return x < 0 ? tail : 1 - tail;
}

double student_t_quantile(double p, double df) {
  if (!(p >= 0 && p <= 1) || !(df > 0)) return kNaN;
  if (std::isinf(df)) return normal_quantile(p);
  if (p == 0) return -kInf;
  if (p == 1) return kInf;
  if (p == 0.5) return 0;
  if (p > 0.5) return -t_quantile_lower(1 - p, df);
  return t_quantile_lower(p, df);
}

double incomplete_beta(double x, double a, double b) {
  if (!(x >= 0 && x <= 1) || !(a > 0) || !(b > 0)) return kNaN;
  if (x == 0) return 0;
  if (x == 1) return 1;
  const BetaArg z{x, 1 - x, std::log(x), std::log1p(-x)};
  if (on_direct_side(z, a, b)) return std::exp(log_ibeta_direct(z, a, b));
  return 1 - std::exp(log_ibeta_direct(z.swapped(), b, a));
}

double beta_quantile(double p, double a, double b) {
  if (!(p >= 0 && p <= 1) || !(a > 0) || !(b > 0)) return kNaN;
  if (p == 0) return 0;
  if (p == 1) return 1;
  // Bisection: the CDF is monotone and cheap, and 1100 halvings reach every double in (0, 1),
  // subnormal quantiles included; it stops when the bracket can no longer shrink.
  double lo = 0, hi = 1;
  for (int i = 0; i < 1100; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi) break;
    (incomplete_beta(mid, a, b) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace lmeval::stats
