// The task's metric list (the reference's _metric_fn_list / _aggregation_list / _higher_is_better
// from metric_list, or the output type's defaults), resolved against the metric registry.
#include "lmeval/evaluator/scoring.hpp"

#include <algorithm>

#include "lmeval/core/error.hpp"
#include "lmeval/metrics/registry.hpp"
#include "lmeval/tasks/function_registry.hpp"
#include "lmeval/tasks/python_functions.hpp"

namespace lmeval {

namespace {

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

std::vector<MetricSpec> metric_specs(const TaskConfig& cfg, bool predict_only) {
  std::vector<MetricSpec> out;
  if (predict_only) {
    out.push_back({"bypass", "bypass", nullptr, true, Json::object()});
    return out;
  }
  const Json& list = cfg.get(TaskField::metric_list);
  if (!list.is_array()) {
    for (const auto& n : metrics::default_metric_names(cfg.output_type())) {
      const metrics::Metric* m = metrics::find(n);
      out.push_back({n, m->aggregation, nullptr, m->higher_is_better, Json::object()});
    }
    return out;
  }
  bool custom_results = cfg.has(TaskField::process_results);
  size_t i = 0;
  for (const auto& entry : list) {
    SourceLocation where = cfg.where(TaskField::metric_list);
    where.field = "metric_list[" + std::to_string(i++) + "]";
    MetricSpec s;
    const Json& m = entry["metric"];
    if (is_function_ref(m)) {
      // ConfigurableTask.__init__: a callable metric is keyed by its __name__.
      s.metric_fn = &resolve_function_ref(m);
      if (!s.metric_fn->metric)
        throw UserError("`metric: !function` names a function lm-eval cannot call as a metric",
                        where, "a Python metric function");
      s.name = s.metric_fn->name;
    } else if (!m.is_string()) {
      throw UserError("metric name must be a string", where, "metric: <name> or !function");
    } else {
      s.name = m.get<std::string>();
    }
    const metrics::Metric* info = metrics::find(s.name);
    // get_metric: `hf_evaluate: true`, or a name the registry lacks, is the `evaluate` package's
    // metric. Only generate_until calls it; other output types score by name.
    const bool hf_evaluate = entry.contains("hf_evaluate") && entry["hf_evaluate"] == Json(true);
    if (!custom_results && !s.metric_fn && (hf_evaluate || !info) &&
        cfg.output_type() == "generate_until")
      s.metric_fn = &python_evaluate_metric(s.name, where);
    if (!custom_results && !info && !s.metric_fn) {
      throw UserError(
          "unknown metric '" + s.name + "'", where,
          "one of the metrics listed by `lm-eval ls metrics`, or a process_results function");
    }
    for (auto it = entry.begin(); it != entry.end(); ++it)
      if (it.key() != "metric" && it.key() != "aggregation" && it.key() != "higher_is_better" &&
          it.key() != "hf_evaluate")
        s.kwargs[it.key()] = it.value();
    if (entry.contains("aggregation")) {
      const Json& a = entry["aggregation"];
      if (a.is_string()) {
        if (!metrics::find_aggregation(a.get<std::string>()))
          throw UserError("unknown aggregation '" + a.get<std::string>() + "'", where,
                          "mean, median, perplexity, weighted_perplexity, bits_per_byte, f1, "
                          "matthews_corrcoef, brier_score, nanmean, or !function");
        s.aggregation = a.get<std::string>();
      } else if (is_function_ref(a)) {
        s.aggregation_fn = &resolve_function_ref(a);
        if (!s.aggregation_fn->aggregation)
          throw UserError("function is not an aggregation", where, "an aggregation function");
      }
    } else {
      s.aggregation = info ? info->aggregation : "mean";
    }
    if (entry.contains("higher_is_better") && entry["higher_is_better"].is_boolean())
      s.higher_is_better = entry["higher_is_better"].get<bool>();
    else
      s.higher_is_better = info ? info->higher_is_better : true;
    if (info && info->kwargs && !custom_results && !s.metric_fn) {
      const auto& ok = *info->kwargs;
      for (auto it = s.kwargs.begin(); it != s.kwargs.end(); ++it)
        if (std::find(ok.begin(), ok.end(), it.key()) == ok.end())
          throw UserError("unknown " + s.name + " option '" + it.key() + "'", where,
                          join_names(ok));
    }
    out.push_back(std::move(s));
  }
  return out;
}

void add_continuous_metrics(const TaskConfig& cfg, std::vector<MetricSpec>& specs) {
  if (cfg.output_type() != "multiple_choice") return;
  const Json& pr = cfg.get(TaskField::process_results);
  if (is_function_ref(pr) && !resolve_function_ref(pr).gold_choices) return;
  for (const metrics::Metric* c : metrics::all()) {
    if (!c->continuous) continue;
    bool present = false;
    for (const auto& m : specs) present = present || m.name == c->name;
    if (!present)
      specs.push_back({c->name, c->aggregation, nullptr, c->higher_is_better, Json::object()});
  }
}

}  // namespace lmeval
