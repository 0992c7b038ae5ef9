// Kendall's tau-b by counting pairs (series of checkpoints are short: O(n²) is plenty).
#include "lmeval/stats/rank_correlation.hpp"

#include <cmath>
#include <limits>

namespace lmeval::stats {

double kendall_tau_b(const std::vector<double>& x, const std::vector<double>& y) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (x.size() != y.size() || x.size() < 2) return nan;
  double concordant = 0, discordant = 0, tied_x = 0, tied_y = 0, pairs = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    for (std::size_t j = i + 1; j < x.size(); ++j) {
      const double dx = x[i] - x[j], dy = y[i] - y[j];
      pairs += 1;
      if (dx == 0) tied_x += 1;
      if (dy == 0) tied_y += 1;
      if (dx == 0 || dy == 0) continue;
      (dx * dy > 0 ? concordant : discordant) += 1;
    }
  const double denom = std::sqrt((pairs - tied_x) * (pairs - tied_y));
  return denom > 0 ? (concordant - discordant) / denom : nan;
}

}  // namespace lmeval::stats
