// Stage 5, the results: per-task aggregates and statistics, groups bottom-up, and the results
// file in the reference's key order (spec §7, §9.1), plus lm-eval's additions after its keys.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "lmeval/config/eval_config.hpp"
#include "lmeval/evaluator/evaluator.hpp"
#include "plan.hpp"
#include "requests.hpp"
#include "task_scores.hpp"

namespace lmeval {

// results[task] and statistics[task].
struct TaskResult {
  Json entry;
  Json statistics;
};

// One task's outputs of every stage, as the results read them.
struct TaskOutcome {
  const TaskPlan* plan = nullptr;
  const TaskRequests* requests = nullptr;
  const TaskScores* scores = nullptr;
  TaskResult result;
  const Task& task() const { return *plan->task; }
};

// The reference's aggregation per task (consolidate_results): each (metric, filter)'s aggregate
// and stderr, with lm-eval's statistics beside them.
TaskResult aggregate_task(const TaskPlan& plan, const TaskScores& scores, int64_t bootstrap_iters);

// The outcomes of one seed pass, aggregated.
std::vector<TaskOutcome> task_outcomes(const RunPlan& plan, const SeedPass& pass,
                                       const std::vector<TaskScores>& scores,
                                       int64_t bootstrap_iters);

struct ResultsContext {
  const EvalConfig* cfg = nullptr;
  LM* lm = nullptr;
  double date = 0;
  std::string model_name;
  Json performance = Json::object();
  std::chrono::steady_clock::time_point start;
};

// `perf` is dispatch's performance entry; `date` the run's start (seconds since the epoch);
// `model_name` the plan's.
ResultsContext results_context(const EvalConfig& cfg, LM& lm, const Json& perf, double date,
                               std::chrono::steady_clock::time_point start, std::string model_name);

// Groups bottom-up (consolidate_group_results): adds each group's entry to `results` and, with an
// aggregation, to `groups_section` and `statistics`.
void add_group_results(const std::vector<TaskOutcome>& tasks, const std::vector<GroupNode>& groups,
                       Json& results, Json& groups_section, Json& statistics);

Json build_results(const std::vector<TaskOutcome>& tasks, const std::vector<GroupNode>& groups,
                   const ResultsContext& ctx);
std::vector<TaskSamples> collect_samples(const std::vector<TaskOutcome>& tasks);

// --fewshot_seeds: `results` stays the first seed's; every seed's own results, the spread across
// seeds, and the seed on every sample record (all seeds' records in one file per task, in seed
// order) come beside it. `outcomes[i]` are pass i's.
void add_seed_results(EvalOutput& out, const std::vector<SeedPass>& passes,
                      const std::vector<std::vector<TaskOutcome>>& outcomes,
                      const std::vector<GroupNode>& groups, const ResultsContext& rc,
                      bool log_samples);

// sanitize_model_name of the reference.
std::string sanitize_model_name(const std::string& name);

}  // namespace lmeval
