#include "run_statistics.hpp"

#include <cmath>
#include <limits>

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
    if (v.is_boolean())
      x = v.get<bool>() ? 1 : 0;
    else if (v.is_number())
      x = v.get<double>();
    else
      return false;
    if (x != 0 && x != 1) return false;
    successes += x;
  }
  return true;
}

bool numeric(const std::vector<Json>& items, std::vector<double>& xs) {
  xs.clear();
  for (const auto& v : items) {
    if (v.is_boolean())
      xs.push_back(v.get<bool>() ? 1 : 0);
    else if (v.is_number())
      xs.push_back(v.get<double>());
    else
      return false;
  }
  return true;
}

Json interval_json(const stats::Interval& ci) { return Json::array({ci.low, ci.high}); }

// The MDE of a comparison between two independent runs of this size: sqrt(2) times the stderr.
double mde80(double stderr) {
  return stats::minimum_detectable_difference(std::sqrt(2.0) * stderr, 0.05, 0.8);
}

// "<metric>_mde80": null with "<metric>_mde80_undefined" saying why when the SE is 0 or missing
// (an MDE of 0 would claim any difference is detectable).
void add_mde(Json& out, const std::string& metric, const std::string& suffix,
             std::optional<double> se) {
  if (se && *se > 0) {
    out[metric + "_mde80" + suffix] = mde80(*se);
    return;
  }
  out[metric + "_mde80" + suffix] = Json();
  out[metric + "_mde80_undefined" + suffix] =
      !se || std::isnan(*se) ? "no standard error"
                             : "zero standard error: every item scored the same, so the run gives "
                               "no spread to size a difference from";
}

}  // namespace

void add_metric_statistics(Json& out, const MetricSeries& s,
                           const std::vector<std::string>* clusters, int64_t iters) {
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
    ci = n < kSmallSample ? stats::clopper_pearson_interval(successes, nn)
                          : stats::wilson_interval(successes, nn);
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
  std::optional<double> se_for_mde = s.stderr;
  std::optional<stats::ClusteredStderr> clustered;
  if (clusters && clusters->size() == n && is_mean && numeric(items, xs)) {
    clustered = stats::clustered_stderr(xs, *clusters);
    // Items sharing a cluster are not independent: the interval comes from the clustered SE (t with
    // G − 1 df below stats::kFewClusters clusters, as compare's test), and the MDE from the larger
    // of the plain and the clustered SE.
    if (clustered->stderr > 0) {
      const bool few = clustered->n_clusters < stats::kFewClusters;
      ci = stats::t_interval(s.value, clustered->stderr,
                             few ? static_cast<double>(clustered->n_clusters - 1)
                                 : std::numeric_limits<double>::infinity());
      method = few ? "clustered_t" : "clustered_normal";
    }
    if (!std::isnan(clustered->stderr))
      se_for_mde = stats::conservative_stderr(s.stderr.value_or(std::nan("")), clustered->stderr);
  }
  // A t interval with a zero SE would be [x, x]: undefined, with the reason beside it.
  if (ci && method == "t" && s.stderr && *s.stderr == 0) ci.reset();
  out[s.metric + "_ci95" + suffix] = ci ? interval_json(*ci) : Json();
  out[s.metric + "_ci95_method" + suffix] = ci ? Json(method) : Json("none");
  if (!ci && n >= 2 && s.stderr && *s.stderr == 0)
    out[s.metric + "_ci95_undefined" + suffix] = "zero standard error: every item scored the same";
  if (clustered) {
    out[s.metric + "_stderr_clustered" + suffix] =
        std::isnan(clustered->stderr) ? Json("N/A") : Json(clustered->stderr);
    out[s.metric + "_n_clusters" + suffix] = clustered->n_clusters;
  }
  add_mde(out, s.metric, suffix, se_for_mde);
}

void add_group_statistics(Json& out, const std::string& metric, const std::string& filter,
                          double value, std::optional<double> stderr,
                          const std::vector<double>* items,
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
    out[metric + "_stderr_clustered" + suffix] =
        std::isnan(c.stderr) ? Json("N/A") : Json(c.stderr);
    out[metric + "_n_clusters" + suffix] = c.n_clusters;
    if (!std::isnan(c.stderr))
      se_for_mde = stats::conservative_stderr(stderr.value_or(std::nan("")), c.stderr);
  }
  add_mde(out, metric, suffix, se_for_mde);
}

}  // namespace lmeval
