// The `statistics` section of a results file (docs/statistics.md): 95% intervals, clustered
// standard errors and minimum detectable differences beside each task's and group's scores. Kept
// out of `results` so that section stays identical to the reference's.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lmeval/core/json.hpp"

namespace lmeval {

// One metric of one task under one filter, as score_task aggregated it.
struct MetricSeries {
  std::string metric, filter, aggregation;
  const std::vector<Json>* items = nullptr;  // per-document values
  double value = 0;
  std::optional<double> stderr;  // the reference's <metric>_stderr (nullopt: "N/A")
  // bootstrap_statistics for aggregations with a bootstrap stderr (empty otherwise).
  const std::vector<double>* bootstrap = nullptr;
};

// Below this many items a task's interval is exact (0/1 scores) or bootstrap (other means).
inline constexpr size_t kSmallSample = 100;

// Adds "<metric>_ci95,<filter>", "<metric>_ci95_method,<filter>", "<metric>_mde80,<filter>"
// and, with `clusters` (one id per item), "<metric>_stderr_clustered,<filter>" and
// "<metric>_n_clusters,<filter>" to `out`. `iters` bootstrap iterations for small non-0/1 means.
void add_metric_statistics(Json& out, const MetricSeries& series,
                           const std::vector<std::string>* clusters, int64_t iters);

// A group's entries from its aggregated value and pooled stderr (normal interval, MDE) and, for
// a size-weighted mean, the stderr clustered by subtask from its leaves' per-item values.
void add_group_statistics(Json& out, const std::string& metric, const std::string& filter,
                          double value, std::optional<double> stderr,
                          const std::vector<double>* items,
                          const std::vector<std::string>* subtask_of_item);

}  // namespace lmeval
