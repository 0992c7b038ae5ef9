// Item difficulty, point-biserial discrimination and inter-item correlations across runs.
#include "lmeval/stats/item_analysis.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "lmeval/stats/intervals.hpp"
#include "lmeval/stats/paired.hpp"

namespace lmeval::stats {

namespace {
std::vector<double> column(const std::vector<std::vector<double>>& scores, std::size_t i) {
  std::vector<double> c;
  c.reserve(scores.size());
  for (const auto& run : scores) c.push_back(run.at(i));
  return c;
}
}  // namespace

std::vector<double> run_totals(const std::vector<std::vector<double>>& scores) {
  std::vector<double> t;
  for (const auto& run : scores) {
    double s = 0;
    for (double v : run) s += v;
    t.push_back(s);
  }
  return t;
}

std::vector<ItemStatistics> item_statistics(const std::vector<std::vector<double>>& scores) {
  std::vector<ItemStatistics> out;
  if (scores.empty()) return out;
  const std::vector<double> totals = run_totals(scores);
  for (std::size_t i = 0; i < scores[0].size(); ++i) {
    const std::vector<double> c = column(scores, i);
    out.push_back({mean(c), pearson(c, totals)});
  }
  return out;
}

CorrelationSummary inter_item_correlations(const std::vector<std::vector<double>>& scores) {
  CorrelationSummary s;
  s.histogram.assign(10, 0);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  s.mean = s.min = s.q25 = s.median = s.q75 = s.max = nan;
  if (scores.empty()) return s;
  const std::size_t items = scores[0].size();
  // Centre and scale each item once; constant items are marked undefined.
  std::vector<std::vector<double>> z;
  std::vector<bool> defined;
  for (std::size_t i = 0; i < items; ++i) {
    std::vector<double> c = column(scores, i);
    const double m = mean(c);
    double ss = 0;
    for (double& v : c) {
      v -= m;
      ss += v * v;
    }
    defined.push_back(ss > 0);
    if (ss > 0)
      for (double& v : c) v /= std::sqrt(ss);
    z.push_back(std::move(c));
  }
  std::vector<double> r;
  for (std::size_t i = 0; i < items; ++i) {
    for (std::size_t j = i + 1; j < items; ++j) {
      if (!defined[i] || !defined[j]) {
        ++s.undefined;
        continue;
      }
      double dot = 0;
      for (std::size_t k = 0; k < z[i].size(); ++k) dot += z[i][k] * z[j][k];
      dot = std::clamp(dot, -1.0, 1.0);
      r.push_back(dot);
      s.histogram[std::min<std::size_t>(9, static_cast<std::size_t>((dot + 1) / 0.2))]++;
    }
  }
  s.pairs = r.size();
  if (r.empty()) return s;
  s.mean = mean(r);
  s.min = *std::min_element(r.begin(), r.end());
  s.max = *std::max_element(r.begin(), r.end());
  s.q25 = linear_quantile(r, 0.25);
  s.median = linear_quantile(r, 0.5);
  s.q75 = linear_quantile(r, 0.75);
  return s;
}

}  // namespace lmeval::stats
