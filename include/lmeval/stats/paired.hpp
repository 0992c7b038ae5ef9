// Paired comparison of two runs scored on the same items: McNemar's exact test, the paired t-test,
// the cluster-robust paired difference, and the minimum detectable difference.
#pragma once

#include <cstddef>
#include <vector>

namespace lmeval::stats {

// Two-sided exact McNemar p-value from the discordant counts (b: only A right, c: only B right):
// 2·P[X ≤ min(b, c)] for X ~ Binomial(b + c, 1/2), capped at 1 (statsmodels' mcnemar(exact=True)).
double mcnemar_exact_p(std::size_t b, std::size_t c);

// Sample mean, variance (ddof 1) and Pearson correlation; NaN where undefined.
double mean(const std::vector<double>& x);
double sample_variance(const std::vector<double>& x);
double pearson(const std::vector<double>& x, const std::vector<double>& y);

// d = b - a per item; se = sd(d)/sqrt(n); t = mean(d)/se with n-1 degrees of freedom
// (scipy.stats.ttest_rel(b, a)); the interval is mean(d) ± t_{0.975, n-1}·se.
struct PairedT {
  double diff = 0, se = 0, t = 0, df = 0, p = 1, ci_low = 0, ci_high = 0;
};
PairedT paired_t(const std::vector<double>& a, const std::vector<double>& b);

// The same difference with a cluster-robust standard error: the intercept of an OLS fit of d on a
// constant with statsmodels' cov_type="cluster" (small-sample factor G/(G-1)); z-test and normal
// interval. cluster[i] is a dense cluster index in [0, G).
struct ClusteredDifference {
  double diff = 0, se = 0, z = 0, p = 1, ci_low = 0, ci_high = 0;
  std::size_t clusters = 0;
};
ClusteredDifference clustered_paired_difference(const std::vector<double>& a, const std::vector<double>& b,
                                                const std::vector<std::size_t>& cluster);

// The smallest true difference a paired test of this size detects with the given power at
// two-sided level alpha: (z_{1-alpha/2} + z_{power})·se, where se already folds in the per-item
// correlation between the runs (se² = (var_a + var_b − 2ρ·sd_a·sd_b)/n).
double min_detectable_difference(double se, double alpha = 0.05, double power = 0.8);

}  // namespace lmeval::stats
