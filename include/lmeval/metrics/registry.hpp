// The metric and aggregation registry: every metric's per-document computation, its default
// aggregation and direction, and every aggregation's computation and stderr method (spec §7).
// Adding a metric is one register_metric entry; evaluator/scoring only dispatches to it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lmeval/core/json.hpp"

namespace lmeval {

namespace metrics {

// What a document's responses give a metric, per output type. The scoring stage fills these from
// the filtered responses and the task's target (ConfigurableTask.process_results); a metric only
// computes its value from them.

// loglikelihood: the one request's (log-likelihood, is_greedy).
struct LoglikelihoodScores {
  double ll = 0;
  bool greedy = false;
};

// loglikelihood_rolling: the whole-document log-likelihood and the target's word and byte counts.
struct RollingScores {
  double ll = 0;
  int64_t words = 0;
  int64_t bytes = 0;
};

// multiple_choice: one log-likelihood per choice, and what the target named.
struct ChoiceScores {
  std::vector<double> lls;         // conditional log-likelihoods, one per choice
  std::vector<double> lls_uncond;  // unconditional ones (only for a metric that asks for them)
  std::vector<bool> greedy;        // is_greedy per choice
  std::vector<bool> is_gold;       // per choice: named by the target (valid, distinct indices)
  Json gold;                       // the gold as the reference reports it: an index (-100 when the
                                   // target names no choice) or a list of indices
  int64_t gold_single = -100;      // the gold index when the target names one choice
  bool multiple_gold = false;      // the target is a list (multiple_target or a list of golds)
  size_t pred = 0;                 // argmax of lls
  size_t pred_norm = 0;            // argmax of lls / characters of each choice
  size_t pred_bytes = 0;           // argmax of lls / bytes of each choice
  // Whether the choice index p is a gold (against the list of golds, or the single gold).
  bool is_correct(size_t p) const;
};

// generate_until: the filtered response and the gold (a choice's text, a list of targets, or the
// target as doc_to_target gives it).
struct GenerationScores {
  Json result;
  Json gold;
  bool multiple_target = false;
};

// How an aggregation's standard error is computed (the reference's stderr_for_metric).
enum class StderrMethod {
  None,            // "N/A"
  MeanClosedForm,  // sample_stddev / sqrt(n)
  Bootstrap,       // bootstrap_stderr with CPython-exact resampling
};

struct Aggregation {
  std::string name;
  // Over per-document items (numbers, or [a, b] pairs).
  std::function<double(const std::vector<Json>&)> over_items;
  // Set when every item is a number: the same aggregate over the numbers (a fast path for the
  // bootstrap's resamples; it must agree with over_items).
  std::function<double(const std::vector<double>&)> over_numbers;
  StderrMethod stderr_method = StderrMethod::None;
};

struct Metric {
  std::string name;
  std::string aggregation = "mean";  // the default aggregation (a metric_list entry may override)
  bool higher_is_better = true;
  std::string output_types;  // as `lm-eval ls metrics` lists them
  // The per-document value for each output type the metric scores; unset: the metric gives no
  // value for that output type (the reference's process_results leaves it out).
  std::function<Json(const LoglikelihoodScores&)> loglikelihood;
  std::function<Json(const RollingScores&)> loglikelihood_rolling;
  std::function<Json(const ChoiceScores&)> multiple_choice;
  // generate_until takes the metric_list entry's keyword arguments.
  std::function<Json(const GenerationScores&, const Json& kwargs)> generate_until;
  // The metric_list keywords it accepts; nullopt: any.
  std::optional<std::vector<std::string>> kwargs;
  // Multiple-choice requests must include the unconditional ones (acc_mutual_info).
  bool needs_unconditional = false;
  // One of lm-eval's --continuous_metrics (added to multiple_choice tasks by that flag, and scored
  // beside a task function that names its gold choices).
  bool continuous = false;
};

// Lookup; nullptr when unknown. Pointers stay valid for the process's life.
const Metric* find(const std::string& name);
const Aggregation* find_aggregation(const std::string& name);
// Every metric / aggregation in registration order. The order is the reference's key order in
// process_results' result dicts (for the loglikelihood output types), so scoring emits in it.
std::vector<const Metric*> all();
std::vector<const Aggregation*> all_aggregations();
// The metrics of a task without a metric_list, by output type (the reference's
// DEFAULT_METRIC_REGISTRY; an unknown output type gets generate_until's).
std::vector<std::string> default_metric_names(const std::string& output_type);
// Registration; an entry with the same name is replaced. Call at start-up (not thread-safe
// against concurrent lookups). The built-ins are registered on first use.
void register_metric(Metric metric);
void register_aggregation(Aggregation aggregation);

}  // namespace metrics
}  // namespace lmeval
