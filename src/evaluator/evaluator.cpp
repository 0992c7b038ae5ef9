// simple_evaluate + evaluate as a sequence of stages: plan -> model -> requests -> dispatch ->
// scoring -> results (docs/architecture.md), each in its own file with its own types.
#include "lmeval/evaluator/evaluator.hpp"
#include "lmeval/tasks/reference_library.hpp"

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <optional>

#include "dispatch.hpp"
#include "lmeval/data/hub_data_source.hpp"
#include "lmeval/data/local_data_source.hpp"
#include "lmeval/filters/filter.hpp"
#include "lmeval/models/api/api_models.hpp"
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
  if (cfg.include_path) roots.emplace_back(*cfg.include_path);
  return roots;
}

TaskIndex task_index_for(const EvalConfig& cfg, const std::vector<std::string>& wanted,
                         bool always_reference) {
  std::vector<fs::path> roots = task_roots(cfg);
  auto missing = [&](const TaskIndex& index) {
    for (const auto& w : wanted)
      if (!(w.size() > 5 && w.compare(w.size() - 5, 5, ".yaml") == 0) && index.match(w).empty())
        return true;
    return false;
  };
  std::optional<TaskIndex> local;
  if (!always_reference) {
    local = TaskIndex::build(roots);
    if (!missing(*local)) return std::move(*local);
  }
  const auto& lib = reference_task_library();
  std::error_code ec;
  if (!lib.dir || (cfg.include_path && fs::equivalent(*lib.dir, *cfg.include_path, ec)))
    return local ? std::move(*local) : TaskIndex::build(roots);
  roots.insert(roots.begin(), *lib.dir);
  return TaskIndex::build(roots);
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

EvalOutput evaluate(const EvalConfig& cfg, std::unique_ptr<LM> given_model) {
  register_builtins();
  auto t_start = std::chrono::steady_clock::now();
  double date =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  EvalOutput out;

  // A model lm-eval does not run is refused before any task or dataset is loaded.
  if (!given_model) check_model_name(cfg.model);
  RunPlan plan = plan_run(cfg);
  RunModel run_model = prepare_model(cfg, std::move(given_model));
  LM& lm = *run_model.model;
  std::vector<SeedPass> passes = build_seed_passes(plan, cfg, run_model.prompt, out.write_out);
  Json perf = dispatch(lm, passes);

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

  ResultsContext rc = results_context(cfg, lm, perf, date, t_start, plan.model_name);
  out.results = build_results(outcomes[0], plan.groups, rc);
  bool log = cfg.log_samples || cfg.predict_only;
  if (log) out.samples = collect_samples(outcomes[0]);
  if (!cfg.fewshot_seeds.empty()) add_seed_results(out, passes, outcomes, plan.groups, rc, log);
  return out;
}

}  // namespace lmeval
