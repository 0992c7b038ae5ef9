// Holm and Benjamini-Hochberg adjusted p-values over the defined p-values of a family.
#include "lmeval/stats/multiple_testing.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace lmeval::stats {

namespace {

// Positions of the defined p-values, sorted by p (stable, so ties keep their order).
std::vector<std::size_t> defined_by_p(const std::vector<double>& p) {
  std::vector<std::size_t> idx;
  for (std::size_t i = 0; i < p.size(); ++i)
    if (!std::isnan(p[i])) idx.push_back(i);
  std::stable_sort(idx.begin(), idx.end(),
                   [&](std::size_t a, std::size_t b) { return p[a] < p[b]; });
  return idx;
}

}  // namespace

std::vector<double> holm_adjusted(const std::vector<double>& p) {
  std::vector<double> out(p.size(), std::nan(""));
  const auto idx = defined_by_p(p);
  const double m = static_cast<double>(idx.size());
  double running = 0;  // step-down: adjusted p-values never decrease along the sorted order
  for (std::size_t k = 0; k < idx.size(); ++k) {
    running = std::max(running, std::min(1.0, (m - static_cast<double>(k)) * p[idx[k]]));
    out[idx[k]] = running;
  }
  return out;
}

std::vector<double> bh_adjusted(const std::vector<double>& p) {
  std::vector<double> out(p.size(), std::nan(""));
  const auto idx = defined_by_p(p);
  const double m = static_cast<double>(idx.size());
  double running = 1;  // step-up: from the largest p down, adjusted p-values never increase
  for (std::size_t k = idx.size(); k-- > 0;) {
    running = std::min(running, m / static_cast<double>(k + 1) * p[idx[k]]);
    out[idx[k]] = std::min(1.0, running);
  }
  return out;
}

}  // namespace lmeval::stats
