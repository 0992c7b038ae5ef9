// Classical item analysis over several runs of the same items (runs play the part of examinees):
// difficulty, point-biserial discrimination, and the spread of inter-item correlations.
#pragma once

#include <cstddef>
#include <vector>

namespace lmeval::stats {

// scores[r][i]: run r's score on item i (0/1 for accuracy-like metrics; any number works).
struct ItemStatistics {
  double difficulty = 0;  // mean score over runs (share of runs correct for 0/1 scores)
  double discrimination =
      0;  // Pearson (point-biserial) correlation of the item with run totals; NaN if constant
};
std::vector<ItemStatistics> item_statistics(const std::vector<std::vector<double>>& scores);

// Run totals: the sum of each run's item scores.
std::vector<double> run_totals(const std::vector<std::vector<double>>& scores);

// Pearson correlations between every pair of items across runs; pairs where an item is constant
// over the runs are undefined and only counted.
struct CorrelationSummary {
  std::size_t pairs = 0;                                            // defined pairs
  std::size_t undefined = 0;                                        // pairs with a constant item
  double mean = 0, min = 0, q25 = 0, median = 0, q75 = 0, max = 0;  // NaN when no pair is defined
  std::vector<std::size_t> histogram;                               // 10 equal bins over [-1, 1]
};
CorrelationSummary inter_item_correlations(const std::vector<std::vector<double>>& scores);

}  // namespace lmeval::stats
