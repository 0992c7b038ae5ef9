// Item and few-shot-seed variance of a seed-averaged score (two-way random-effects ANOVA).
#include "lmeval/stats/seed_variance.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace lmeval::stats {

SeedItemStderr seed_item_stderr(const std::vector<std::vector<double>>& x) {
  SeedItemStderr r;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  r.total = r.items = r.seeds = r.residual_ms = nan;
  r.k = x.size();
  r.n = x.empty() ? 0 : x[0].size();
  if (r.k < 2 || r.n < 2) return r;
  for (const auto& row : x)
    if (row.size() != r.n) return r;
  const double n = static_cast<double>(r.n), k = static_cast<double>(r.k);
  std::vector<double> item(r.n, 0.0), seed(r.k, 0.0);
  double m = 0;
  for (std::size_t s = 0; s < r.k; ++s)
    for (std::size_t i = 0; i < r.n; ++i) {
      item[i] += x[s][i] / k;
      seed[s] += x[s][i] / n;
      m += x[s][i];
    }
  m /= n * k;
  double ss_items = 0, ss_seeds = 0, ss_res = 0;
  for (double v : item) ss_items += (v - m) * (v - m);
  for (double v : seed) ss_seeds += (v - m) * (v - m);
  for (std::size_t s = 0; s < r.k; ++s)
    for (std::size_t i = 0; i < r.n; ++i) {
      const double e = x[s][i] - item[i] - seed[s] + m;
      ss_res += e * e;
    }
  const double ms_items = k * ss_items / (n - 1), ms_seeds = n * ss_seeds / (k - 1);
  r.residual_ms = ss_res / ((n - 1) * (k - 1));
  r.items = std::sqrt(ms_items / (n * k));
  r.seeds = std::sqrt(ms_seeds / (n * k));
  // The unbiased estimate can dip below the fixed-seed one by chance (MS_seeds < MS_res); the
  // seed-averaged items' own stderr is then the floor, so adding seeds never shrinks the SE shown.
  const double var = (ms_items + ms_seeds - r.residual_ms) / (n * k);
  r.total = std::sqrt(std::max(var, r.items * r.items));
  return r;
}

}  // namespace lmeval::stats
