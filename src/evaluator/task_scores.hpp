// Stage 4, scoring: filters over each task's responses, then per-document metrics and sample
// records (the reference's evaluate(): apply_filters, process_results per document).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lmeval/config/eval_config.hpp"
#include "plan.hpp"
#include "requests.hpp"

namespace lmeval {

struct TaskScores {
  // (metric, filter) keys in first-insertion order and their per-document values.
  std::vector<std::pair<std::string, std::string>> keys;
  std::map<std::pair<std::string, std::string>, std::vector<Json>> items;
  size_t sample_len = 0;      // documents scored (the largest per-key count, as the reference)
  std::vector<Json> samples;  // sample records, with --log_samples
  // The cluster of each scored document (the task's cluster_key), empty without one.
  std::vector<std::string> clusters;
  std::optional<double> random_baseline;  // multiple_choice: mean of 1/len(choices)
  // Keys of a metric function's dict that the task's list does not name, each with its source
  // metric (whose aggregation and higher_is_better it takes), in first-seen order.
  std::vector<std::pair<std::string, std::string>> expanded;
  // A Python-class task: what its own scoring and aggregation gave ({results, config, version,
  // num_fewshot, higher_is_better, n_samples}); null for every other task.
  Json class_outcome;
};

// Scores every task of one seed pass (its instances have their responses): applies the filters
// (filling the instances' filtered responses) and process_results, from the global random state
// the pass's request building left.
std::vector<TaskScores> score_pass(const RunPlan& plan, SeedPass& pass, const EvalConfig& cfg);

}  // namespace lmeval
