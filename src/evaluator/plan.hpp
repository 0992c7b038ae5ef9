// Stage 1, the plan: which tasks and groups a run evaluates, each task's run settings applied to
// its own copy of the config, its filters and metrics, and the documents it evaluates.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lmeval/config/eval_config.hpp"
#include "lmeval/evaluator/scoring.hpp"
#include "lmeval/filters/filter.hpp"
#include "lmeval/tasks/task.hpp"
#include "lmeval/tasks/task_selection.hpp"

namespace lmeval {

struct TaskPlan {
  Task* task = nullptr;  // owned by RunPlan::loaded
  std::vector<FilterEnsemble> filters;
  std::vector<MetricSpec> metrics;
  // The evaluated documents: positions in task->eval_docs() and the doc_id each is reported under.
  std::vector<size_t> doc_positions;
  std::vector<int64_t> doc_ids;
  // The documents the requests are built from (what the reference's Instance.doc holds); they
  // differ from the scored ones only when process_docs draws global random (see Task).
  std::shared_ptr<const std::vector<Doc>> request_docs;
  // Reads of task.eval_docs per pass of the reference's doc_iterator (global_random_replay.hpp).
  int eval_docs_reads_per_pass = 1;
  // Multiple-choice requests include the unconditional ones (a metric needs them).
  bool unconditional_requests = false;
};

struct RunPlan {
  std::vector<GroupNode> groups;  // as select_tasks gives them
  std::vector<std::unique_ptr<Task>> loaded;
  std::vector<TaskPlan> tasks;  // one per loaded task, same order
  std::string model_name;       // the results' model_name (draw_model_name)
};

// The reference's get_task_dict and simple_evaluate's per-task settings (num_fewshot,
// gen_kwargs, predict_only), then evaluate()'s filters, metrics and document selection. Seeds and
// advances the global random as the reference does up to request building.
RunPlan plan_run(const EvalConfig& cfg);

}  // namespace lmeval
