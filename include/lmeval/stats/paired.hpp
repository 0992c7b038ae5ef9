// Paired comparison of two runs scored on the same items: McNemar's exact test, the paired t-test
// and the cluster-robust paired difference (the minimum detectable difference is in power.hpp).
#pragma once

#include <cstddef>
#include <string>
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

// The same difference with the cluster-robust (CR1) standard error of clustered.hpp: the intercept
// of statsmodels' OLS of d on a constant with cov_type="cluster"; z-test and normal interval.
struct ClusteredDifference {
  double diff = 0, se = 0, z = 0, p = 1, ci_low = 0, ci_high = 0;
  std::size_t clusters = 0;
};
ClusteredDifference clustered_paired_difference(const std::vector<double>& a, const std::vector<double>& b,
                                                const std::vector<std::string>& cluster);

}  // namespace lmeval::stats
