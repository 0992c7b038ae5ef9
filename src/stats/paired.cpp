// Paired tests of two runs on the same items (statsmodels' mcnemar, scipy's ttest_rel, statsmodels'
// OLS with cluster-robust covariance): the numbers scripts/gen_paired_goldens.py checks.
#include "lmeval/stats/paired.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "lmeval/stats/clustered.hpp"
#include "lmeval/stats/distributions.hpp"
#include "lmeval/stats/intervals.hpp"

namespace lmeval::stats {

namespace {
constexpr double kUndefined = std::numeric_limits<double>::quiet_NaN();

// log C(n, k)
double log_choose(double n, double k) {
  return std::lgamma(n + 1) - std::lgamma(k + 1) - std::lgamma(n - k + 1);
}

// Two-sided p-value from a statistic: 2·(1 − Φ(|z|)) computed in the tail for precision.
double normal_two_sided_p(double z) { return 2.0 * normal_cdf(-std::fabs(z)); }
}  // namespace

double mcnemar_exact_p(std::size_t b, std::size_t c) {
  const std::size_t n = b + c;
  if (n == 0) return 1.0;
  const std::size_t m = std::min(b, c);
  // log-sum-exp over the lower tail, so thousands of discordant pairs do not underflow.
  const double log_half_n = static_cast<double>(n) * std::log(0.5);
  double top = -std::numeric_limits<double>::infinity();
  std::vector<double> terms;
  terms.reserve(m + 1);
  for (std::size_t k = 0; k <= m; ++k) {
    terms.push_back(log_choose(static_cast<double>(n), static_cast<double>(k)) + log_half_n);
    top = std::max(top, terms.back());
  }
  double sum = 0;
  for (double t : terms) sum += std::exp(t - top);
  return std::min(1.0, 2.0 * std::exp(top + std::log(sum)));
}

McNemarDifference mcnemar_difference(std::size_t only_a, std::size_t only_b, std::size_t n,
                                     double confidence) {
  McNemarDifference r;
  r.discordant = only_a + only_b;
  r.diff =
      n == 0 ? kUndefined
             : (static_cast<double>(only_b) - static_cast<double>(only_a)) / static_cast<double>(n);
  r.p = mcnemar_exact_p(only_a, only_b);
  if (r.discordant == 0 || n == 0) {
    r.ci_low = r.ci_high = kUndefined;
    return r;
  }
  const double m = static_cast<double>(r.discordant);
  const Interval pi = clopper_pearson_interval(static_cast<double>(only_b), m, confidence);
  const double scale = m / static_cast<double>(n);
  r.ci_low = scale * (2 * pi.low - 1);
  r.ci_high = scale * (2 * pi.high - 1);
  return r;
}

double mean(const std::vector<double>& x) {
  if (x.empty()) return kUndefined;
  double s = 0;
  for (double v : x) s += v;
  return s / static_cast<double>(x.size());
}

double sample_variance(const std::vector<double>& x) {
  if (x.size() < 2) return kUndefined;
  const double m = mean(x);
  double s = 0;
  for (double v : x) s += (v - m) * (v - m);
  return s / static_cast<double>(x.size() - 1);
}

double pearson(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || x.size() < 2) return kUndefined;
  const double mx = mean(x), my = mean(y);
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  if (sxx == 0 || syy == 0) return kUndefined;
  return std::clamp(sxy / std::sqrt(sxx * syy), -1.0, 1.0);
}

static std::vector<double> differences(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) throw std::invalid_argument("paired scores of different lengths");
  std::vector<double> d(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) d[i] = b[i] - a[i];
  return d;
}

PairedT paired_t(const std::vector<double>& a, const std::vector<double>& b) {
  const std::vector<double> d = differences(a, b);
  PairedT r;
  const double n = static_cast<double>(d.size());
  r.diff = mean(d);
  r.df = n - 1;
  if (d.size() < 2) {
    r.se = r.t = r.ci_low = r.ci_high = kUndefined;
    return r;
  }
  r.se = std::sqrt(sample_variance(d) / n);
  if (r.se == 0) {
    // Every item moved by the same amount: no spread to test against, so t, p and the interval
    // are undefined (scipy returns NaN too); an identical pair of runs is "no difference" (p = 1).
    r.t = r.ci_low = r.ci_high = kUndefined;
    r.p = r.diff == 0 ? 1 : kUndefined;
    return r;
  }
  r.t = r.diff / r.se;
  r.p = std::min(1.0, 2.0 * student_t_cdf(-std::fabs(r.t), r.df));
  const Interval ci = t_interval(r.diff, r.se, r.df);
  r.ci_low = ci.low;
  r.ci_high = ci.high;
  return r;
}

ClusteredDifference clustered_paired_difference(const std::vector<double>& a,
                                                const std::vector<double>& b,
                                                const std::vector<std::string>& cluster) {
  const std::vector<double> d = differences(a, b);
  if (cluster.size() != d.size())
    throw std::invalid_argument("cluster ids and scores of different lengths");
  ClusteredDifference r;
  r.diff = mean(d);
  const ClusteredStderr cs = clustered_stderr(d, cluster);
  r.clusters = cs.n_clusters;
  r.df = r.clusters < kFewClusters ? static_cast<double>(r.clusters) - 1
                                   : std::numeric_limits<double>::infinity();
  if (r.clusters < 2) {
    r.se = r.z = r.p = r.ci_low = r.ci_high = kUndefined;
    return r;
  }
  r.se = cs.stderr;
  if (r.se == 0) {
    r.z = r.ci_low = r.ci_high = kUndefined;
    r.p = r.diff == 0 ? 1 : kUndefined;
    return r;
  }
  r.z = r.diff / r.se;
  if (std::isinf(r.df)) {
    r.p = normal_two_sided_p(r.z);
    const double q = normal_quantile(0.975);
    r.ci_low = r.diff - q * r.se;
    r.ci_high = r.diff + q * r.se;
  } else {
    r.p = std::min(1.0, 2.0 * student_t_cdf(-std::fabs(r.z), r.df));
    const Interval ci = t_interval(r.diff, r.se, r.df);
    r.ci_low = ci.low;
    r.ci_high = ci.high;
  }
  return r;
}

}  // namespace lmeval::stats
