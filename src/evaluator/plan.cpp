// Stage 1, the plan (see plan.hpp).
#include "plan.hpp"

#include <spdlog/spdlog.h>

#include <cmath>
#include <cstdlib>

#include "global_random_replay.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/evaluator/evaluator.hpp"
#include "lmeval/evaluator/validator.hpp"
#include "lmeval/metrics/registry.hpp"
#include "lmeval/tasks/class_task.hpp"
#include "lmeval/tasks/functions/code_eval.hpp"
#include "lmeval/tasks/python_functions.hpp"

namespace lmeval {

namespace {

// simple_evaluate's settings that change a task's config, applied to the run's own copy:
// --gen_kwargs update a generate_until task's generation_kwargs; --predict_only replaces the
// metrics with `bypass`.
TaskConfig with_run_settings(TaskConfig tc, const EvalConfig& cfg) {
  if (tc.output_type() == "generate_until" && cfg.gen_kwargs.is_object() &&
      !cfg.gen_kwargs.empty()) {
    Json g = tc.get(TaskField::generation_kwargs);
    for (auto it = cfg.gen_kwargs.begin(); it != cfg.gen_kwargs.end(); ++it)
      g[it.key()] = it.value();
    tc.set(TaskField::generation_kwargs, std::move(g));
  }
  if (cfg.predict_only) {
    tc.set(TaskField::metric_list, Json::array({Json{{"metric", "bypass"}}}));
    tc.set(TaskField::process_results, "process_results");
  }
  return tc;
}

// --num_fewshot applies unless the task's config sets 0 shots itself.
void apply_num_fewshot(const EvalConfig& cfg, Task& task) {
  if (!cfg.num_fewshot) return;
  if (task.config().num_fewshot() == 0)
    spdlog::info(
        "num_fewshot has been set to 0 for {} in its config. Manual configuration will be ignored.",
        task.name());
  else
    task.set_num_fewshot(*cfg.num_fewshot);
}

std::vector<FilterEnsemble> filters_of(const TaskConfig& config) {
  std::vector<FilterEnsemble> filters;
  const Json& fl = config.get(TaskField::filter_list);
  if (!fl.is_array()) {
    filters.push_back(FilterEnsemble::default_none());
    return filters;
  }
  size_t i = 0;
  for (const auto& entry : fl) {
    SourceLocation where = config.where(TaskField::filter_list);
    where.field = "filter_list[" + std::to_string(i++) + "]";
    filters.push_back(FilterEnsemble::from_config(entry, where));
  }
  return filters;
}

// Document selection for a task: --limit (float) or --samples (spec §2.3.5, §4).
void select_docs(const EvalConfig& cfg, const Task& task, std::vector<size_t>& pos,
                 std::vector<int64_t>& ids) {
  size_t n = task.eval_docs().size();
  if (cfg.samples.is_object() && cfg.samples.contains(task.name()) &&
      cfg.samples[task.name()].is_array() && !cfg.samples[task.name()].empty()) {
    const Json& list = cfg.samples[task.name()];
    std::vector<bool> chosen(n, false);
    for (const auto& v : list) {
      if (!v.is_number_integer() || v.get<int64_t>() < 0 ||
          static_cast<size_t>(v.get<int64_t>()) >= n)
        throw UserError("Elements of --samples should be in the interval [0," +
                            std::to_string(n - 1) + "] for task " + task.name() + ", got " +
                            v.dump(),
                        {"", 0, 0, "--samples"}, "document indices of the evaluation split");
      chosen[static_cast<size_t>(v.get<int64_t>())] = true;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; ++i)
      if (chosen[i]) {
        pos.push_back(i);
        // The reference reports samples_list[position] (its quirk for unsorted lists).
        ids.push_back(k < list.size() ? list[k].get<int64_t>() : static_cast<int64_t>(i));
        ++k;
      }
    return;
  }
  size_t count = n;
  if (cfg.limit) {
    double l = *cfg.limit;
    count = l < 1.0 ? static_cast<size_t>(std::ceil(static_cast<double>(n) * l))
                    : static_cast<size_t>(l);
    count = std::min(count, n);
  }
  for (size_t i = 0; i < count; ++i) {
    pos.push_back(i);
    ids.push_back(static_cast<int64_t>(i));
  }
}

// The folder of --data_dir (else $LMEVAL_DATA_DIR), as make_data_source reads it.
std::string data_dir_of(const EvalConfig& cfg) {
  if (cfg.data_dir) return *cfg.data_dir;
  if (const char* env = std::getenv("LMEVAL_DATA_DIR"); env && *env) return env;
  return "";
}

// Loads the selected tasks (the reference's TaskManager.load), with its task_name draws.
std::vector<std::unique_ptr<Task>> load_tasks(const EvalConfig& cfg,
                                              const TaskSelection& selection) {
  auto data = make_data_source(cfg);
  // Ports that run the model's programs (humaneval, mbpp) refuse to without the flag.
  code_eval::set_unsafe_code_confirmed(cfg.confirm_run_unsafe_code);
  std::vector<std::unique_ptr<Task>> tasks;
  TaskNameDraws name_draws = task_name_draws(selection);
  for (size_t i = 0; i < selection.tasks.size(); ++i) {
    const TaskConfig& tc = selection.tasks[i];
    if (tc.unsafe_code() && !cfg.confirm_run_unsafe_code)
      throw UserError(
          "Attempted to run task: " + tc.name() +
              " which is marked as unsafe. Set confirm_run_unsafe_code=True to run this task.",
          tc.where(TaskField::unsafe_code), "--confirm_run_unsafe_code");
    if (!tc.python_class.is_null()) {
      // TaskFactory._build_task's PY_TASK route: the reference's class, built where the reference
      // builds it (its module and constructor may draw from the global random).
      tasks.push_back(Task::load(tc, *data));
      tasks.back()->set_python_class(make_class_task(tc, *data, data_dir_of(cfg)));
    } else {
      tasks.push_back(Task::load(with_run_settings(tc, cfg), *data));
    }
    draw_task_name_reads(global_random(), name_draws.after_task[i]);
  }
  draw_task_name_reads(global_random(), name_draws.after_all);
  return tasks;
}

// A Python-class task: simple_evaluate's settings applied by its own methods (set_config,
// override_metric, set_fewshot_seed); its documents, filters and metrics are the class's.
TaskPlan plan_class_task(const EvalConfig& cfg, Task& task) {
  TaskPlan p;
  p.task = &task;
  Json gen = cfg.gen_kwargs.is_object() && !cfg.gen_kwargs.empty() ? cfg.gen_kwargs : Json();
  Json kwargs = {{"num_fewshot", cfg.num_fewshot ? Json(*cfg.num_fewshot) : Json()},
                 {"gen_kwargs", gen},
                 {"predict_only", cfg.predict_only},
                 {"fewshot_seed", cfg.seed[3] ? Json(*cfg.seed[3]) : Json()}};
  Json n = task.python_class()->call("configure", kwargs);
  if (n.is_number_integer()) task.set_num_fewshot(n.get<int>());
  return p;
}

TaskPlan plan_task(const EvalConfig& cfg, Task& task) {
  if (task.python_class()) return plan_class_task(cfg, task);
  TaskPlan p;
  p.task = &task;
  apply_num_fewshot(cfg, task);
  p.metrics = metric_specs(task.config(), cfg.predict_only);
  if (cfg.continuous_metrics && !cfg.predict_only) add_continuous_metrics(task.config(), p.metrics);
  for (const auto& m : p.metrics)
    if (const metrics::Metric* def = metrics::find(m.name))
      p.unconditional_requests |= def->needs_unconditional;
  p.filters = filters_of(task.config());
  p.eval_docs_reads_per_pass = eval_docs_reads_per_pass(cfg, task.name());
  replay_eval_docs_reads_before_requests(cfg, task, p.eval_docs_reads_per_pass);
  require_documents(task);
  p.request_docs = task.eval_docs_snapshot();
  select_docs(cfg, task, p.doc_positions, p.doc_ids);
  if (p.doc_positions.empty())
    throw UserError("task.build_requests() did not find any docs! (task " + task.name() +
                        ": --limit/--samples selected none of its " +
                        std::to_string(task.eval_docs().size()) + " documents)",
                    {"", 0, 0, cfg.samples.is_object() ? "--samples" : "--limit"},
                    "at least one document");
  return p;
}

}  // namespace

RunPlan plan_run(const EvalConfig& cfg) {
  // Before anything can start the embedded interpreter, which seeds numpy's global generator with
  // the seed set here (nothing draws from the global random before the tasks are loaded).
  seed_global_random(cfg);
  TaskIndex index = task_index_for(cfg, cfg.tasks);
  TaskSelection selection = select_tasks(index, cfg.tasks, cfg.metadata);
  if (selection.tasks.empty())
    throw UserError("No tasks specified, or no tasks found. Please verify the task names.",
                    {"", 0, 0, "--tasks"}, "at least one task");
  RunPlan plan;
  plan.loaded = load_tasks(cfg, selection);
  plan.model_name = draw_model_name(cfg, global_random());
  plan.groups = std::move(selection.groups);
  for (auto& task : plan.loaded) plan.tasks.push_back(plan_task(cfg, *task));
  return plan;
}

}  // namespace lmeval
