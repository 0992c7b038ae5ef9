#include "lmeval/stats/clustered.hpp"

#include <cmath>
#include <limits>
#include <unordered_map>

namespace lmeval::stats {

ClusteredStderr clustered_stderr(const std::vector<double>& xs,
                                 const std::vector<std::string>& clusters) {
  ClusteredStderr out;
  out.stderr = std::numeric_limits<double>::quiet_NaN();
  if (xs.empty() || xs.size() != clusters.size()) return out;
  double mean = 0;
  for (double x : xs) mean += x;
  mean /= static_cast<double>(xs.size());
  // Residual sums per cluster; clusters need not be contiguous.
  std::unordered_map<std::string, double> sums;
  for (size_t i = 0; i < xs.size(); ++i) sums[clusters[i]] += xs[i] - mean;
  out.n_clusters = sums.size();
  if (out.n_clusters < 2) return out;
  double meat = 0;
  for (const auto& [key, s] : sums) meat += s * s;
  const double g = static_cast<double>(out.n_clusters);
  out.stderr = std::sqrt(g / (g - 1) * meat) / static_cast<double>(xs.size());
  return out;
}

}  // namespace lmeval::stats
