// Cluster-robust standard error of a mean, for tasks whose items share a passage or source and
// so are not independent (a task's `cluster_key`).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace lmeval::stats {

// Below this many clusters the normal approximation to a cluster-robust statistic is too liberal;
// tests and intervals then use t with G − 1 degrees of freedom (statsmodels' use_t=True), as
// Cameron & Miller (2015) recommend.
inline constexpr std::size_t kFewClusters = 30;

struct ClusteredStderr {
  double stderr = 0;  // NaN when fewer than 2 clusters
  size_t n_clusters = 0;
};

// CR1 standard error of mean(xs), items grouped by clusters[i] (same length as xs):
//   se = sqrt(G / (G - 1) * sum_g (sum_{i in g} (x_i - mean))^2) / N,
// with G clusters and N items. This is statsmodels' OLS(xs, ones).fit(cov_type="cluster",
// cov_kwds={"groups": ...}) with its default use_correction=True, whose factor
// G/(G-1) * (N-1)/(N-K) reduces to G/(G-1) for the intercept-only model (K = 1).
// With every item its own cluster (G = N) it is sqrt(sum (x - mean)^2 / (N - 1)) / sqrt(N): the
// reference's `<metric>_stderr` exactly, so the two are directly comparable.
ClusteredStderr clustered_stderr(const std::vector<double>& xs,
                                 const std::vector<std::string>& clusters);

}  // namespace lmeval::stats
