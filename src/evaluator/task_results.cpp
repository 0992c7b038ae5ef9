// Per-task aggregation of the scoring stage's per-document values (see results.hpp).
#include <algorithm>
#include <optional>

#include "lmeval/metrics/metrics.hpp"
#include "results.hpp"
#include "run_statistics.hpp"

namespace lmeval {

TaskResult aggregate_task(const TaskPlan& plan, const TaskScores& scores, int64_t task_iters) {
  const Task& task = *plan.task;
  // A Python-class task aggregated itself (the reference's _compute_task_aggregations).
  if (!scores.class_outcome.is_null())
    return {scores.class_outcome.at("results"), Json{{"n", scores.sample_len}}};
  Json entry = Json::object();
  entry["name"] = task.name();
  entry["alias"] = task.config().task_alias().value_or(task.name());
  entry["sample_len"] = scores.sample_len;
  std::optional<std::string> cluster_key = task.config().cluster_key();
  Json statistics = Json::object();
  statistics["n"] = scores.sample_len;
  if (cluster_key) statistics["cluster_key"] = *cluster_key;
  for (const auto& key : scores.keys) {
    const auto& items = scores.items.at(key);
    std::string agg = "mean";
    const TaskFunction* agg_fn = nullptr;
    // A key a metric function's dict added takes its source metric's aggregation
    // (ConfigurableTask.process_results copies it into _aggregation_list).
    std::string source = key.first;
    for (const auto& [k, from] : scores.expanded)
      if (k == key.first) source = from;
    for (const auto& m : plan.metrics)
      if (m.name == source) {
        agg = m.aggregation;
        agg_fn = m.aggregation_fn;
      }
    double value =
        agg_fn ? agg_fn->aggregation(items) : aggregate(agg.empty() ? "mean" : agg, items);
    const std::string agg_name = agg.empty() ? "mean" : agg;
    // metrics.bypass_agg returns the int 999, which the results file and simple_evaluate's dict
    // hold as 999 (not 999.0).
    entry[key.first + "," + key.second] =
        agg_name == "bypass" && !agg_fn ? Json(static_cast<int64_t>(value)) : Json(value);
    // evaluator_utils.py: at most 100 bootstrap draws for the corpus translation metrics (by name).
    const bool corpus_mt =
        key.first == "bleu" || key.first == "chrf" || key.first == "chrf++" || key.first == "ter";
    const int64_t iters = corpus_mt ? std::min<int64_t>(task_iters, 100) : task_iters;
    std::optional<double> se;
    std::vector<double> boot;
    // Bootstrap aggregations: the resamples once, for the stderr and the percentile interval.
    if (!agg_fn && iters > 0 && items.size() > 1 && has_bootstrap_stderr(agg_name)) {
      boot = bootstrap_statistics(agg_name, items, iters);
      se = sample_stddev(boot);
    } else if (!agg_fn) {
      se = stderr_for(agg_name, items, iters);
    }
    entry[key.first + "_stderr," + key.second] = se ? Json(*se) : Json("N/A");
    MetricSeries series{
        key.first, key.second, agg_fn ? std::string("custom") : agg_name, &items, value, se, &boot};
    add_metric_statistics(statistics, series, scores.clusters.empty() ? nullptr : &scores.clusters,
                          iters);
  }
  return {entry, statistics};
}

std::vector<TaskOutcome> task_outcomes(const RunPlan& plan, const SeedPass& pass,
                                       const std::vector<TaskScores>& scores,
                                       int64_t bootstrap_iters) {
  std::vector<TaskOutcome> out;
  for (size_t i = 0; i < plan.tasks.size(); ++i)
    out.push_back({&plan.tasks[i], &pass.tasks[i], &scores[i],
                   aggregate_task(plan.tasks[i], scores[i], bootstrap_iters)});
  return out;
}

}  // namespace lmeval
