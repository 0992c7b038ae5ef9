// Per-document scoring (ConfigurableTask.process_results) and the task's metric list.
#pragma once

#include <string>
#include <vector>

#include "lmeval/tasks/function_registry.hpp"
#include "lmeval/tasks/task.hpp"

namespace lmeval {

struct MetricSpec {
  std::string name;
  std::string aggregation;  // registry name ("" when a function is used)
  const TaskFunction* aggregation_fn = nullptr;
  bool higher_is_better = true;
  Json kwargs = Json::object();
  // `metric: !function module.fn`: the Python callable that scores each generation (`name` is
  // its __name__, as the reference keys its values).
  const TaskFunction* metric_fn = nullptr;
};

// The reference's _metric_fn_list / _aggregation_list / _higher_is_better, in metric_list order.
// Unknown metrics/aggregations throw UserError at the metric_list entry.
std::vector<MetricSpec> metric_specs(const TaskConfig& cfg, bool predict_only);

// --continuous_metrics: appends p_correct and logprob_gold_margin to a multiple_choice task's
// metrics. A task with its own process_results function gets them only when the function also
// names the gold choices (TaskFunction::gold_choices); its own metrics are left as they are.
void add_continuous_metrics(const TaskConfig& cfg, std::vector<MetricSpec>& metrics);

// process_results for one document: `results` = the filtered responses of its instances.
// `notice`, when given, receives a problem with the document that scoring goes past, as the
// reference does with a warning: a multiple-choice target that names no choice (scored wrong).
// `expanded`, when given, receives (key, metric) for each key of a dict a metric function returned
// that is not a metric of the list: the reference gives such a key its source metric's
// aggregation and higher_is_better. `written`, when given, receives the scores of a Python
// process_results as the reference's samples file writes them (TaskFunction::
// last_results_as_written), null otherwise.
Json process_results(const Task& task, const std::vector<MetricSpec>& metrics, const Doc& doc,
                     const std::vector<Json>& results, std::string* notice = nullptr,
                     std::vector<std::pair<std::string, std::string>>* expanded = nullptr,
                     Json* written = nullptr);

}  // namespace lmeval
