// Per-task scoring state, aggregation into the results layout of the reference (spec §7, §9.1).
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lmeval/config/eval_config.hpp"
#include "lmeval/evaluator/evaluator.hpp"
#include "lmeval/filters/filter.hpp"
#include "lmeval/prompt/instance.hpp"
#include "lmeval/tasks/task.hpp"
#include "lmeval/tasks/task_selection.hpp"
#include "lmeval/evaluator/scoring.hpp"

namespace lmeval {

struct TaskRun {
  Task* task = nullptr;
  std::vector<size_t> doc_positions;
  std::vector<int64_t> doc_ids;
  std::vector<Instance> instances;
  // The documents the requests were built from (what the reference's Instance.doc holds); they
  // differ from the scored ones only when process_docs draws global random (see Task).
  std::shared_ptr<const std::vector<Doc>> request_docs;
  // Reads of task.eval_docs per pass of the reference's doc_iterator (2 with --samples).
  int eval_docs_reads_per_pass = 1;
  std::vector<FilterEnsemble> filters;
  std::vector<MetricSpec> metrics;
  // (metric, filter) keys in first-insertion order and their per-document values.
  std::vector<std::pair<std::string, std::string>> keys;
  std::map<std::pair<std::string, std::string>, std::vector<Json>> items;
  size_t sample_len = 0;
  std::vector<Json> samples;
  Json entry;  // results[task]
  Json statistics;  // statistics[task] (run_statistics.hpp)
  // The cluster of each scored document (the task's cluster_key), empty without one.
  std::vector<std::string> clusters;
  std::optional<double> random_baseline;  // multiple_choice: mean of 1/len(choices)
};

// Filters must have run. Computes per-document metrics and (optionally) sample records.
void score_task(TaskRun& run, bool log_samples, int64_t bootstrap_iters);

struct ResultsContext {
  const EvalConfig* cfg = nullptr;
  LM* lm = nullptr;
  double date = 0;
  std::string model_name;
  Json performance = Json::object();
  std::chrono::steady_clock::time_point start;
};

Json build_results(std::vector<TaskRun>& runs, const std::vector<GroupNode>& groups,
                   const ResultsContext& ctx);
std::vector<TaskSamples> collect_samples(const std::vector<TaskRun>& runs);

// sanitize_model_name of the reference.
std::string sanitize_model_name(const std::string& name);

}  // namespace lmeval
