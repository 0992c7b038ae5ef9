// Paired comparison of two runs scored on the same items: McNemar's exact test, the paired t-test
// and the cluster-robust paired difference (the minimum detectable difference is in power.hpp).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "lmeval/stats/clustered.hpp"

namespace lmeval::stats {

// Two-sided exact McNemar p-value from the discordant counts (b: only A right, c: only B right):
// 2·P[X ≤ min(b, c)] for X ~ Binomial(b + c, 1/2), capped at 1 (statsmodels' mcnemar(exact=True)).
double mcnemar_exact_p(std::size_t b, std::size_t c);

// McNemar's exact test with the interval it inverts, for 0/1 scores of n paired items of which
// only_a are right only in run A and only_b only in run B. Conditional on the m = only_a + only_b
// discordant items, only_b ~ Binomial(m, π) and the difference of the accuracies is
// (m/n)·(2π − 1). The exact p-value is the central test of π = ½, whose inversion is the
// Clopper-Pearson interval for π; mapped to the difference it excludes 0 exactly when p < alpha.
// With no discordant item the interval is undefined (NaN): nothing varies to estimate it from.
struct McNemarDifference {
  double diff = 0, p = 1, ci_low = 0, ci_high = 0;
  std::size_t discordant = 0;
};
McNemarDifference mcnemar_difference(std::size_t only_a, std::size_t only_b, std::size_t n,
                                     double confidence = 0.95);

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

// With every difference equal (se = 0) the t statistic, the interval and the p-value are undefined
// (NaN, as scipy), except that identical runs (every difference 0) get p = 1: nothing differs.

// The same difference with the cluster-robust (CR1) standard error of clustered.hpp: the intercept
// of statsmodels' OLS of d on a constant with cov_type="cluster"; a z-test with a normal interval,
// or with fewer than kFewClusters clusters a t-test with G − 1 df and its t interval (df is then
// G − 1; +inf for the z-test). se = 0 is undefined as for paired_t.
struct ClusteredDifference {
  double diff = 0, se = 0, z = 0, df = 0, p = 1, ci_low = 0, ci_high = 0;
  std::size_t clusters = 0;
};
ClusteredDifference clustered_paired_difference(const std::vector<double>& a,
                                                const std::vector<double>& b,
                                                const std::vector<std::string>& cluster);

}  // namespace lmeval::stats
