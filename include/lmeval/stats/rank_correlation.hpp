// Kendall's rank correlation, for the monotonicity of a score over a series of checkpoints.
#pragma once

#include <vector>

namespace lmeval::stats {

// Kendall's tau-b of x and y (ties in either adjusted for): scipy.stats.kendalltau(x, y).statistic.
// NaN with fewer than two points or when x or y is constant.
double kendall_tau_b(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace lmeval::stats
