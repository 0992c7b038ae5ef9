// Bootstrap over an explicit resample set: percentile intervals and pairwise rank stability.
#include "lmeval/stats/bootstrap.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "lmeval/core/py_random.hpp"

namespace lmeval::stats {

Resamples draw_resamples(std::size_t n, std::size_t count, std::int64_t seed) {
  PyRandom rng(seed);
  Resamples out;
  out.reserve(count);
  for (std::size_t k = 0; k < count; ++k) out.push_back(rng.choices_indices(n, n));
  return out;
}

Interval bootstrap_mean_interval(const std::vector<double>& x, const Resamples& resamples,
                                 double level) {
  std::vector<double> means;
  means.reserve(resamples.size());
  for (const auto& idx : resamples) {
    double s = 0;
    for (std::size_t i : idx) s += x.at(i);
    means.push_back(s / static_cast<double>(idx.size()));
  }
  return percentile_interval(std::move(means), level);
}

namespace {
// Per-cluster sums of each run's scores and the clusters' sizes.
struct ClusterSums {
  std::vector<std::vector<double>> sums;  // [run][cluster]
  std::vector<double> sizes;              // [cluster]
};
ClusterSums cluster_sums(const std::vector<std::vector<double>>& scores,
                         const std::vector<std::size_t>& cluster) {
  std::size_t g = 0;
  for (std::size_t c : cluster) g = std::max(g, c + 1);
  ClusterSums cs;
  cs.sizes.assign(g, 0.0);
  for (std::size_t c : cluster) cs.sizes[c] += 1;
  for (const auto& run : scores) {
    if (run.size() != cluster.size())
      throw std::invalid_argument("cluster ids and scores of different lengths");
    std::vector<double> s(g, 0.0);
    for (std::size_t i = 0; i < run.size(); ++i) s[cluster[i]] += run[i];
    cs.sums.push_back(std::move(s));
  }
  return cs;
}

// Resample means of each run, with units (items or clusters) of the given sums and sizes.
std::vector<double> resample_means(const std::vector<std::vector<double>>& unit_sums,
                                   const std::vector<double>& sizes,
                                   const std::vector<std::size_t>& idx) {
  std::vector<double> m(unit_sums.size(), 0.0);
  double size = 0;
  for (std::size_t u : idx) size += sizes.at(u);
  for (std::size_t r = 0; r < unit_sums.size(); ++r) {
    double s = 0;
    for (std::size_t u : idx) s += unit_sums[r][u];
    m[r] = s / size;
  }
  return m;
}

RankStability count_wins(const std::vector<std::vector<double>>& unit_sums,
                         const std::vector<double>& sizes, const Resamples& resamples) {
  const std::size_t runs = unit_sums.size();
  RankStability rs;
  rs.resamples = resamples.size();
  rs.wins.assign(runs, std::vector<std::size_t>(runs, 0));
  for (const auto& idx : resamples) {
    const std::vector<double> m = resample_means(unit_sums, sizes, idx);
    for (std::size_t r = 0; r < runs; ++r)
      for (std::size_t s = 0; s < runs; ++s)
        if (m[r] > m[s]) ++rs.wins[r][s];
  }
  return rs;
}
}  // namespace

Interval clustered_bootstrap_mean_interval(const std::vector<double>& x,
                                           const std::vector<std::size_t>& cluster,
                                           const Resamples& cluster_resamples, double level) {
  const ClusterSums cs = cluster_sums({x}, cluster);
  std::vector<double> means;
  means.reserve(cluster_resamples.size());
  for (const auto& idx : cluster_resamples)
    means.push_back(resample_means(cs.sums, cs.sizes, idx)[0]);
  return percentile_interval(std::move(means), level);
}

RankStability rank_stability(const std::vector<std::vector<double>>& scores,
                             const Resamples& resamples) {
  std::vector<double> sizes(scores.empty() ? 0 : scores[0].size(), 1.0);
  return count_wins(scores, sizes, resamples);
}

RankStability clustered_rank_stability(const std::vector<std::vector<double>>& scores,
                                       const std::vector<std::size_t>& cluster,
                                       const Resamples& cluster_resamples) {
  const ClusterSums cs = cluster_sums(scores, cluster);
  return count_wins(cs.sums, cs.sizes, cluster_resamples);
}

}  // namespace lmeval::stats
