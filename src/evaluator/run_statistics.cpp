#include "run_statistics.hpp"

#include <cmath>

#include "lmeval/metrics/metrics.hpp"
#include "lmeval/stats/clustered.hpp"
#include "lmeval/stats/distributions.hpp"
#include "lmeval/stats/intervals.hpp"
#include "lmeval/stats/power.hpp"

namespace lmeval {

namespace {

// 0/1 scores (numbers or booleans): the ones a proportion interval applies to.
bool binary(const std::vector<Json>& items, double& successes) {
  successes = 0;
  for (const auto& v : items) {
    double x;
    if (v.is_boolean()) x = v.get<bool>() ? 1 : 0;
    else if (v.is_number()) x = v.get<double>();
    else return false;
    if (x != 0 && x != 1) return false;
    successes += x;
  }
  return true;
}

bool numeric(const std::vector<Json>& items, std::vector<double>& xs) {
  xs.clear();
  for (const auto& v : items) {
    if (v.is_boolean()) xs.push_back(v.get<bool>() ? 1 : 0);
    else if (v.is_number()) xs.push_back(v.get<double>());
    else return false;
  }
  return true;
}

Json interval_json(const stats::Interval& ci) { return Json::array({ci.low, ci.high}); }

// The MDE of a comparison between two independent runs of this size: sqrt(2) times the stderr.
double mde80(double stderr) { return stats::minimum_detectable_difference(std::sqrt(2.0) * stderr, 0.05, 0.8); }

}  // namespace

void add_metric_statistics(Json& out, const MetricSeries& s, const std::vector<std::string>* clusters,
                           int64_t iters) {
  const std::string suffix = "," + s.filter;
  const auto& items = *s.items;
  const size_t n = items.size();
  std::optional<stats::Interval> ci;
  std::string method;
  double successes = 0;
  std::vector<double> xs;
  const bool is_mean = s.aggregation == "mean";
  if (n >= 1 && is_mean && binary(items, successes)) {
    const double nn = static_cast<double>(n);
    ci = n < kSmallSample ? stats::clopper_pearson_interval(successes, nn) : stats::wilson_interval(successes, nn);
    method = n < kSmallSample ? "clopper_pearson" : "wilson";
  } else if (n >= 2 && is_mean && numeric(items, xs)) {
    if (n < kSmallSample && iters > 0) {
      ci = stats::percentile_interval(bootstrap_statistics("mean", items, iters));
      method = "bootstrap_percentile";
    } else if (s.stderr) {
      ci = stats::t_interval(s.value, *s.stderr, static_cast<double>(n - 1));
      method = "t";
    }
  } else if (s.bootstrap && !s.bootstrap->empty()) {
    ci = stats::percentile_interval(*s.bootstrap);
    method = "bootstrap_percentile";
  }
  out[s.metric + "_ci95" + suffix] = ci ? interval_json(*ci) : Json();
  out[s.metric + "_ci95_method" + suffix] = ci ? Json(method) : Json("none");

  std::optional<double> se_for_mde = s.stderr;
  if (clusters && clusters->size() == n && numeric(items, xs)) {
    auto c = stats::clustered_stderr(xs, *clusters);
    out[s.metric + "_stderr_clustered" + suffix] = std::isnan(c.stderr) ? Json("N/A") : Json(c.stderr);
    out[s.metric + "_n_clusters" + suffix] = c.n_clusters;
    if (!std::isnan(c.stderr)) se_for_mde = c.stderr;
  }
  out[s.metric + "_mde80" + suffix] = se_for_mde ? Json(mde80(*se_for_mde)) : Json();
}

void add_group_statistics(Json& out, const std::string& metric, const std::string& filter, double value,
                          std::optional<double> stderr, const std::vector<double>* items,
                          const std::vector<std::string>* subtask_of_item) {
  const std::string suffix = "," + filter;
  if (stderr) {
    const double z = stats::normal_quantile(0.975);
    out[metric + "_ci95" + suffix] = Json::array({value - z * *stderr, value + z * *stderr});
    out[metric + "_ci95_method" + suffix] = "normal";
  } else {
    out[metric + "_ci95" + suffix] = Json();
    out[metric + "_ci95_method" + suffix] = "none";
  }
  std::optional<double> se_for_mde = stderr;
  if (items && subtask_of_item && items->size() == subtask_of_item->size() && !items->empty()) {
    auto c = stats::clustered_stderr(*items, *subtask_of_item);
    out[metric + "_stderr_clustered" + suffix] = std::isnan(c.stderr) ? Json("N/A") : Json(c.stderr);
    out[metric + "_n_clusters" + suffix] = c.n_clusters;
    if (!std::isnan(c.stderr)) se_for_mde = c.stderr;
  }
  out[metric + "_mde80" + suffix] = se_for_mde ? Json(mde80(*se_for_mde)) : Json();
}

}  // namespace lmeval
