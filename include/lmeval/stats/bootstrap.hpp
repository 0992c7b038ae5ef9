// Bootstrap resampling with an explicit, reproducible resample set: intervals of a mean and the
// stability of pairwise rankings of runs. The resample set is an input so that an independent
// implementation (scripts/gen_paired_goldens.py) can use the identical indices.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "lmeval/stats/intervals.hpp"

namespace lmeval::stats {

// resamples[k] holds n indices drawn with replacement from [0, n).
using Resamples = std::vector<std::vector<std::size_t>>;

// `count` resamples drawn as CPython's random.Random(seed).choices(range(n), k=n), one after
// another.
Resamples draw_resamples(std::size_t n, std::size_t count, std::int64_t seed);

// Percentile interval (intervals.hpp) of the mean of x over the resamples.
Interval bootstrap_mean_interval(const std::vector<double>& x, const Resamples& resamples,
                                 double level = 0.95);

// Same, resampling whole clusters: x's items grouped by cluster[i] ∈ [0, G), resamples index
// clusters, and each resample's mean is (sum over drawn clusters of their sums)/(their sizes).
Interval clustered_bootstrap_mean_interval(const std::vector<double>& x,
                                           const std::vector<std::size_t>& cluster,
                                           const Resamples& cluster_resamples, double level = 0.95);

// scores[r][i]: run r's score on item i. wins[r][s] counts resamples in which run r's mean is
// strictly above run s's; ties count for neither.
struct RankStability {
  std::size_t resamples = 0;
  std::vector<std::vector<std::size_t>> wins;
};
RankStability rank_stability(const std::vector<std::vector<double>>& scores,
                             const Resamples& resamples);
RankStability clustered_rank_stability(const std::vector<std::vector<double>>& scores,
                                       const std::vector<std::size_t>& cluster,
                                       const Resamples& cluster_resamples);

}  // namespace lmeval::stats
