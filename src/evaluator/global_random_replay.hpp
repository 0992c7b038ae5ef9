// Every place where the reference draws from its global Python `random` outside task code,
// replayed on task_context().global_random, so that task code drawing from it (GPQA's
// process_docs shuffle) sees the stream where the reference's would be. The reference code each
// replay mirrors is named beside it; the GPQA golden runs (tests/e2e) check the positions.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "lmeval/config/eval_config.hpp"
#include "lmeval/tasks/task.hpp"
#include "lmeval/tasks/task_selection.hpp"

namespace lmeval {

class PyRandom;

// simple_evaluate: `random.seed(seed[0])` before the tasks are built.
void seed_global_random(const EvalConfig& cfg);

// The reference's ConfigurableTask.task_name is `getattr(self.config, "task", random_task_id())`:
// the default is evaluated on every read, so each read draws 8 random() from the global random
// (random.choices(k=8)). The reads that happen before requests are built (lm_eval 0.4.13,
// TaskManager.load): Group.add reads it twice per direct task member right after the group's
// members are built (hasattr + the read), then, after every item is built, `collect` reads it
// once per leaf and `_check_duplicates` once per leaf of a group and twice per standalone task.
// Only the position in the random stream matters, since the drawn ids are discarded: it decides
// which shuffle GPQA's later accesses to its documents see.
struct TaskNameDraws {
  std::vector<size_t> after_task;  // reads right after leaf i of selection.tasks is built
  size_t after_all = 0;            // reads after every task is built
};
TaskNameDraws task_name_draws(const TaskSelection& selection);

// `reads` reads of task_name: 8 random() each.
void draw_task_name_reads(PyRandom& rng, size_t reads);

// The results' model_name. EvaluationTracker.log_experiment_args (simple_evaluate calls it after
// the tasks are loaded and before evaluate(); the reference's CLI always passes a tracker) takes
// the first of model_args' peft, delta, pretrained, model, path, engine, else random_name_id():
// random.choices of 8 from [a-z0-9] on the global random, which advances it by 8 random().
std::string draw_model_name(const EvalConfig& cfg, PyRandom& rng);

// Reads of `task.eval_docs` (a property that re-runs process_docs, see Task::reaccess_eval_docs)
// per pass of the reference's Task.doc_iterator: 2 with --samples for the task (len + enumerate),
// else 1.
int eval_docs_reads_per_pass(const EvalConfig& cfg, const std::string& task_name);

// Task.build_all_requests: get_sample_size reads eval_docs once for a fractional --limit, then
// doc_iterator's reads.
void replay_eval_docs_reads_before_requests(const EvalConfig& cfg, Task& task, int reads_per_pass);

// evaluate(): each filter's scoring pass iterates doc_iterator again, so the documents scored and
// logged are those of that read.
void replay_eval_docs_reads_for_filter(Task& task, int reads_per_pass);

// --fewshot_seeds: each seed's pass sees the global random as a plain run with its seed would: as
// left by task loading and planning when building its requests, and as its own building left it
// when scoring (evaluate() consumes nothing from it in between in the reference).
class SeedPassRandom {
 public:
  // Takes the state the run has reached now (after loading and planning).
  SeedPassRandom();
  // A pass begins building its requests from that state.
  void begin_building() const;
  // The state its building left, for begin_scoring.
  static std::shared_ptr<PyRandom> state_after_building();
  static void begin_scoring(const std::shared_ptr<PyRandom>& after_building);

 private:
  std::shared_ptr<const PyRandom> after_planning_;
};

}  // namespace lmeval
