#include "lmeval/stats/power.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "lmeval/stats/distributions.hpp"

namespace lmeval::stats {

double minimum_detectable_difference(double se_diff, double alpha, double power) {
  if (!(se_diff >= 0) || !(alpha > 0 && alpha < 1) || !(power > 0 && power < 1))
    return std::numeric_limits<double>::quiet_NaN();
  const double z = normal_quantile(1 - alpha / 2);
  // Newton on the power curve in units of se_diff, from the usual one-tail answer z + z_power,
  // which is within the neglected tail's size of the root; the curve is increasing there.
  double d = z + normal_quantile(power);
  for (int i = 0; i < 50; ++i) {
    const double f = normal_cdf(d - z) + normal_cdf(-d - z) - power;
    const double slope = std::exp(-0.5 * (d - z) * (d - z)) - std::exp(-0.5 * (d + z) * (d + z));
    const double step = f / (slope * 0.398942280401432677939946059934);
    d -= step;
    if (std::fabs(step) <= 1e-16 * d) break;
  }
  return d * se_diff;
}

double difference_stderr(double sd, size_t n, double rho) {
  return sd * std::sqrt(2 * (1 - rho) / static_cast<double>(n));
}

double power_of_test(double d, double se, double alpha) {
  if (!(se > 0) || !(alpha > 0 && alpha < 1) || std::isnan(d))
    return std::numeric_limits<double>::quiet_NaN();
  const double z = normal_quantile(1 - alpha / 2);
  return normal_cdf(d / se - z) + normal_cdf(-d / se - z);
}

double items_needed(double d, double sd, double alpha, double power) {
  if (!(sd > 0) || !(std::fabs(d) > 0)) return std::numeric_limits<double>::quiet_NaN();
  const double k = minimum_detectable_difference(1.0, alpha, power);
  const double r = k * sd / d;
  return r * r;
}

double conservative_stderr(double plain, double clustered) {
  if (std::isnan(clustered)) return plain;
  if (std::isnan(plain)) return clustered;
  return std::max(plain, clustered);
}

}  // namespace lmeval::stats
