// simple_evaluate + evaluate as a sequence of stages: plan -> model -> requests -> dispatch ->
// scoring -> results (docs/architecture.md), each in its own file with its own types.
#include "lmeval/evaluator/evaluator.hpp"
#include "lmeval/tasks/reference_library.hpp"
#include "lmeval/tasks/task_library_download.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <optional>

#include "dispatch.hpp"
#include "lmeval/config/flag_checks.hpp"
#include "lmeval/core/log.hpp"
#include "lmeval/data/hub_data_source.hpp"
#include "lmeval/data/local_data_source.hpp"
#include "lmeval/filters/filter.hpp"
#include "lmeval/models/api/api_models.hpp"
#include "lmeval/models/borrowed_lm.hpp"
#include "lmeval/models/reference_model_names.hpp"
#include "lmeval/tasks/function_registry.hpp"
#include "plan.hpp"
#include "requests.hpp"
#include "results.hpp"
#include "run_model.hpp"
#include "task_scores.hpp"
#ifdef LMEVAL_HAVE_HF
#include "lmeval/models/hf/hf_model.hpp"
#endif

namespace lmeval {

namespace fs = std::filesystem;

void register_builtins() {
  static std::once_flag once;
  std::call_once(once, [] {
    auto& reg = ModelRegistry::instance();
    register_core_models(reg);
    register_api_models(reg);
#ifdef LMEVAL_HAVE_HF
    register_hf_model(reg);
#endif
    register_builtin_filters();
    register_builtin_task_functions();
  });
}

std::vector<fs::path> task_roots(const EvalConfig& cfg) {
  std::vector<fs::path> roots = {builtin_tasks_dir()};
  if (cfg.include_path)
    for (const auto& p : include_path_list(*cfg.include_path)) roots.emplace_back(p);
  return roots;
}

namespace {

// The reference's TaskIndex.build debug lines: the roots, each file skipped and why, the count.
void log_index(const TaskIndex& index) {
  std::string roots;
  for (const auto& r : index.roots()) roots += (roots.empty() ? "" : ", ") + r.string();
  log::debug("Building task index from " + roots);
  for (const auto& [path, msg] : index.skipped()) log::debug("Skip " + path + " (" + msg + ")");
  log::debug("Built task index with " + std::to_string(index.all_names().size()) + " entries");
}

}  // namespace

TaskIndex task_index_for(const EvalConfig& cfg, const std::vector<std::string>& wanted,
                         bool always_reference) {
  std::vector<fs::path> roots = task_roots(cfg);
  auto is_yaml = [](const std::string& w) {
    return w.size() > 5 && w.compare(w.size() - 5, 5, ".yaml") == 0;
  };
  auto missing = [&](const TaskIndex& index) {
    for (const auto& w : wanted)
      if (!is_yaml(w) && index.match(w).empty()) return true;
    return false;
  };
  // A glob matches over every name the reference knows (TaskManager.match_tasks over
  // all_tasks, its library included), so it needs the library even where built-ins match it.
  const bool glob = std::any_of(wanted.begin(), wanted.end(), [&](const std::string& w) {
    return !is_yaml(w) && w.find_first_of("*?[") != std::string::npos;
  });
  std::optional<TaskIndex> local;
  if (!always_reference && !glob) {
    local = TaskIndex::build(roots);
    if (!missing(*local)) {
      log_index(*local);
      return std::move(*local);
    }
  }
  const auto& found = reference_task_library();
  std::optional<fs::path> lib_dir = found.dir;
  if (!lib_dir && local) {
    // A name of the reference's library asked for at a terminal: offered for download.
    std::vector<std::string> of_library;
    for (const auto& w : wanted)
      if (!is_yaml(w) && local->match(w).empty() && is_reference_task_name(w))
        of_library.push_back(w);
    lib_dir = offer_task_library_download(of_library);
  }
  std::error_code ec;
  const bool lib_included =
      lib_dir && std::any_of(roots.begin() + 1, roots.end(),
                             [&](const fs::path& r) { return fs::equivalent(*lib_dir, r, ec); });
  if (lib_dir && !lib_included) roots.insert(roots.begin(), *lib_dir);
  TaskIndex index =
      local && (!lib_dir || lib_included) ? std::move(*local) : TaskIndex::build(roots);
  log_index(index);
  return index;
}

namespace {

// Local files first; a dataset that the data dir holds is answered by it alone (an absent split
// there is absent, as in the goldens); Hub ids that are not local go to the Hub client.
class LocalThenHub : public DataSource {
 public:
  explicit LocalThenHub(fs::path dir) : local_(std::move(dir)) {}
  std::optional<std::vector<Doc>> load_split(const DatasetRef& ref,
                                             const std::string& split) override {
    if (local_.has_dataset(ref) || !HubDataSource::is_hub_id(ref))
      return local_.load_split(ref, split);
    if (!hub_) hub_ = std::make_unique<HubDataSource>();
    return hub_->load_split(ref, split);
  }
  std::string describe() const override {
    return local_.describe() +
           ", then the Hugging Face Hub (cache: HF_HUB_CACHE; HF_HUB_OFFLINE honoured)";
  }

 private:
  LocalDataSource local_;
  std::unique_ptr<HubDataSource> hub_;
};

}  // namespace

std::shared_ptr<DataSource> make_data_source(const EvalConfig& cfg) {
  fs::path dir;
  if (cfg.data_dir)
    dir = *cfg.data_dir;
  else if (const char* env = std::getenv("LMEVAL_DATA_DIR"); env && *env)
    dir = env;
  // A file or a missing folder used to be ignored, and the error spoke only of the Hub cache.
  std::error_code ec;
  if (!dir.empty() && !fs::is_directory(dir, ec))
    throw UserError(dir.string() + (fs::exists(dir, ec) ? " is not a folder" : " does not exist"),
                    {"", 0, 0, cfg.data_dir ? "--data_dir" : "LMEVAL_DATA_DIR"},
                    "a folder of local datasets (<org>/<name>/<config>/<split>.jsonl)");
  return std::make_shared<LocalThenHub>(dir);
}

namespace {

// An error about Python in a task of `lm-eval download --task-library`'s copy says that the copy
// brings the task files, not the Python environment its helpers need.
template <class F>
auto noting_downloaded_library(F&& f) {
  try {
    return f();
  } catch (const DataUnavailable&) {
    throw;
  } catch (const UserError& e) {
    const std::string& m = e.message();
    const bool python =
        m.find("Python") != std::string::npos || m.find("!function") != std::string::npos;
    const std::string note = python ? downloaded_library_python_note(e.where().file) : "";
    if (note.empty()) throw;
    throw UserError(m + note, e.where(), e.expected());
  }
}

}  // namespace

EvalOutput evaluate(const EvalConfig& cfg, std::unique_ptr<LM> given_model) {
  register_builtins();
  auto t_start = std::chrono::steady_clock::now();
  double date =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  EvalOutput out;

  // A model lm-eval does not run, or a bad model_args value, is refused before any task or
  // dataset is loaded.
  if (!given_model) check_model_args(cfg);
  // --verbosity DEBUG: each stage and how long it took.
  auto t_stage = t_start;
  auto stage_done = [&t_stage](const std::string& what) {
    auto now = std::chrono::steady_clock::now();
    log::debug(what + " (" + std::to_string(std::chrono::duration<double>(now - t_stage).count()) +
               " s)");
    t_stage = now;
  };
  RunPlan plan = noting_downloaded_library([&] { return plan_run(cfg); });
  stage_done("plan: " + std::to_string(plan.tasks.size()) + " tasks, " +
             std::to_string(plan.groups.size()) + " groups, documents loaded");
  RunModel run_model = prepare_model(cfg, std::move(given_model));
  stage_done("model ready: " + plan.model_name);
  LM& lm = *run_model.model;
  std::vector<SeedPass> passes = noting_downloaded_library(
      [&] { return build_seed_passes(plan, cfg, run_model.prompt, out.write_out); });
  // The reference's evaluate() logs the same line per task.
  for (size_t i = 0; i < plan.tasks.size() && !passes.empty(); ++i)
    log::debug("Task: " + plan.tasks[i].task->name() + "; number of requests on this rank: " +
               std::to_string(passes[0].tasks[i].instances.size()));
  stage_done("requests built for " + std::to_string(passes.size()) + " few-shot seed pass(es)");
  Json perf = dispatch(lm, passes);
  stage_done("model answers: " + perf.dump());

  // A shard is not scored: its answers, config and model facts go to `lm-eval merge`.
  if (run_model.shard) {
    out.partial = run_model.shard->partial();
    out.partial["config"] = eval_config_to_json(cfg);
    if (run_model.chat) {
      auto tmpl = run_chat_template(cfg, lm);
      out.partial["model"]["chat_template"] = tmpl ? Json(*tmpl) : Json();
    }
    return out;
  }

  std::vector<std::vector<TaskScores>> scores;
  for (auto& pass : passes) scores.push_back(score_pass(plan, pass, cfg));
  std::vector<std::vector<TaskOutcome>> outcomes;
  for (size_t i = 0; i < passes.size(); ++i)
    outcomes.push_back(task_outcomes(plan, passes[i], scores[i], cfg.bootstrap_iters));

  stage_done("scored");
  ResultsContext rc = results_context(cfg, lm, perf, date, t_start, plan.model_name);
  out.results = build_results(outcomes[0], plan.groups, rc);
  bool log = cfg.log_samples || cfg.predict_only;
  if (log) out.samples = collect_samples(outcomes[0]);
  if (!cfg.fewshot_seeds.empty()) add_seed_results(out, passes, outcomes, plan.groups, rc, log);
  return out;
}

std::unique_ptr<LM> build_model(const EvalConfig& cfg) {
  register_builtins();
  return build_run_model(cfg);
}

EvalOutput evaluate_on(const EvalConfig& cfg, LM& model) {
  return evaluate(cfg, with_response_cache(cfg, std::make_unique<BorrowedLM>(model)));
}

}  // namespace lmeval
