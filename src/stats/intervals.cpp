#include "lmeval/stats/intervals.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "lmeval/stats/distributions.hpp"

namespace lmeval::stats {

Interval wilson_interval(double successes, double n, double confidence) {
  const double z = normal_quantile(0.5 + confidence / 2);
  const double z2 = z * z;
  const double p = successes / n;
  const double denom = 1 + z2 / n;
  const double center = (p + z2 / (2 * n)) / denom;
  const double half = z * std::sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom;
  return {center - half, center + half};
}

Interval clopper_pearson_interval(double successes, double n, double confidence) {
  const double alpha = 1 - confidence;
  const double low = successes <= 0 ? 0 : beta_quantile(alpha / 2, successes, n - successes + 1);
  const double high =
      successes >= n ? 1 : beta_quantile(1 - alpha / 2, successes + 1, n - successes);
  return {low, high};
}

Interval t_interval(double mean, double stderr, double df, double confidence) {
  const double half = student_t_quantile(0.5 + confidence / 2, df) * stderr;
  return {mean - half, mean + half};
}

double linear_quantile(std::vector<double> xs, double q) {
  if (xs.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(xs.begin(), xs.end());
  const double h = static_cast<double>(xs.size() - 1) * q;
  const size_t lo = static_cast<size_t>(std::floor(h));
  if (lo + 1 >= xs.size()) return xs.back();
  const double frac = h - static_cast<double>(lo);
  // numpy's _lerp: a + (b - a) * t, switched to b - (b - a) * (1 - t) for t >= 0.5.
  const double a = xs[lo], b = xs[lo + 1];
  return frac >= 0.5 ? b - (b - a) * (1 - frac) : a + (b - a) * frac;
}

Interval percentile_interval(std::vector<double> statistics, double confidence) {
  std::sort(statistics.begin(), statistics.end());
  return {linear_quantile(statistics, 0.5 - confidence / 2),
          linear_quantile(statistics, 0.5 + confidence / 2)};
}

}  // namespace lmeval::stats
