// simple_evaluate + evaluate: tasks -> requests -> model -> filters -> metrics -> results.
#include "lmeval/evaluator/evaluator.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <random>

#include "lmeval/core/error.hpp"
#include "lmeval/core/py_random.hpp"
#include "lmeval/core/python_format.hpp"
#include "lmeval/core/sha256.hpp"
#include "lmeval/data/hub_data_source.hpp"
#include "lmeval/data/local_data_source.hpp"
#include "lmeval/filters/filter.hpp"
#include "lmeval/metrics/registry.hpp"
#include "lmeval/models/api/api_models.hpp"
#include "lmeval/models/caching_lm.hpp"
#include "lmeval/models/shard.hpp"
#include "lmeval/prompt/prompt_builder.hpp"
#include "lmeval/tasks/function_registry.hpp"
#include "lmeval/tasks/task.hpp"
#include "lmeval/tasks/task_selection.hpp"
#include "request_dispatch.hpp"
#include "results_builder.hpp"
#include "seed_variance.hpp"
#include "task_name_draws.hpp"
#include "lmeval/evaluator/scoring.hpp"
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

namespace {

// Local files first; a dataset that the data dir holds is answered by it alone (an absent split
// there is absent, as in the goldens); Hub ids that are not local go to the Hub client.
class LocalThenHub : public DataSource {
 public:
  explicit LocalThenHub(fs::path dir) : local_(std::move(dir)) {}
  std::optional<std::vector<Doc>> load_split(const DatasetRef& ref, const std::string& split) override {
    if (local_.has_dataset(ref) || !HubDataSource::is_hub_id(ref)) return local_.load_split(ref, split);
    if (!hub_) hub_ = std::make_unique<HubDataSource>();
    return hub_->load_split(ref, split);
  }
  std::string describe() const override {
    return local_.describe() + ", then the Hugging Face Hub (cache: HF_HUB_CACHE; HF_HUB_OFFLINE honoured)";
  }

 private:
  LocalDataSource local_;
  std::unique_ptr<HubDataSource> hub_;
};

}  // namespace

std::shared_ptr<DataSource> make_data_source(const EvalConfig& cfg) {
  fs::path dir;
  if (cfg.data_dir) dir = *cfg.data_dir;
  else if (const char* env = std::getenv("LMEVAL_DATA_DIR"); env && *env) dir = env;
  return std::make_shared<LocalThenHub>(dir);
}

namespace {

// Document selection for a task: --limit (float) or --samples (spec §2.3.5, §4).
void select_docs(const EvalConfig& cfg, const Task& task, std::vector<size_t>& pos,
                 std::vector<int64_t>& ids) {
  size_t n = task.eval_docs().size();
  if (cfg.samples.is_object() && cfg.samples.contains(task.name()) &&
      cfg.samples[task.name()].is_array() && !cfg.samples[task.name()].empty()) {
    const Json& list = cfg.samples[task.name()];
    std::vector<bool> chosen(n, false);
    for (const auto& v : list) {
      if (!v.is_number_integer() || v.get<int64_t>() < 0 || static_cast<size_t>(v.get<int64_t>()) >= n)
        throw UserError("Elements of --samples should be in the interval [0," + std::to_string(n - 1) +
                            "] for task " + task.name() + ", got " + v.dump(),
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

Json to_json_or_null(const std::optional<std::string>& s) { return s ? Json(*s) : Json(); }

std::string random_model_id() {
  static const char* chars = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::random_device rd;
  std::string s;
  for (int i = 0; i < 8; ++i) s += chars[rd() % 36];
  return s;
}

// The runs of one few-shot seed, and the global random as their request building left it.
struct SeedPass {
  int64_t seed;
  std::vector<TaskRun> runs;
  std::shared_ptr<PyRandom> random_after_building;
};

// --fewshot_seeds: `results` stays the first seed's; every seed's own results, the spread
// across seeds, and the seed on every sample record (all seeds' records in one file per task,
// in seed order) come beside it.
void add_seed_results(EvalOutput& out, std::vector<SeedPass>& passes, const std::vector<GroupNode>& groups,
                      const ResultsContext& rc, bool log_samples) {
  std::vector<int64_t> seeds;
  std::vector<Json> sections;
  Json by_seed = Json::object();
  for (size_t i = 0; i < passes.size(); ++i) {
    Json section = i == 0 ? out.results["results"] : build_results(passes[i].runs, groups, rc)["results"];
    seeds.push_back(passes[i].seed);
    by_seed[std::to_string(passes[i].seed)] = section;
    sections.push_back(std::move(section));
  }
  out.results["fewshot_seed_variance"] = fewshot_seed_variance(seeds, sections);
  out.results["results_by_fewshot_seed"] = by_seed;
  if (!log_samples) return;
  for (auto& ts : out.samples) {
    std::vector<Json> lines;
    for (const auto& pass : passes)
      for (const auto& r : pass.runs) {
        if (r.task->name() != ts.task) continue;
        for (Json s : r.samples) {
          s["fewshot_seed"] = pass.seed;
          lines.push_back(std::move(s));
        }
      }
    ts.lines = std::move(lines);
  }
}

}  // namespace

EvalOutput evaluate(const EvalConfig& cfg, std::unique_ptr<LM> model) {
  register_builtins();
  auto t_start = std::chrono::steady_clock::now();
  double date = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();

  TaskIndex index = TaskIndex::build(task_roots(cfg));
  TaskSelection selection = select_tasks(index, cfg.tasks, cfg.metadata);
  if (selection.tasks.empty())
    throw UserError("No tasks specified, or no tasks found. Please verify the task names.",
                    {"", 0, 0, "--tasks"}, "at least one task");

  // The reference seeds Python's global random with seed[0] before building tasks.
  int64_t seed0 = cfg.seed[0].value_or(0);
  task_context().global_random = std::make_shared<PyRandom>(seed0);

  auto data = make_data_source(cfg);
  std::vector<std::unique_ptr<Task>> tasks;
  TaskNameDraws name_draws = task_name_draws(selection);
  for (size_t i = 0; i < selection.tasks.size(); ++i) {
    const TaskConfig& tc = selection.tasks[i];
    if (tc.get("unsafe_code").is_boolean() && tc.get("unsafe_code").get<bool>() &&
        !cfg.confirm_run_unsafe_code)
      throw UserError("Attempted to run task: " + tc.name() +
                          " which is marked as unsafe. Set confirm_run_unsafe_code=True to run this task.",
                      tc.where("unsafe_code"), "--confirm_run_unsafe_code");
    tasks.push_back(Task::load(tc, *data));
    draw_task_name_reads(*task_context().global_random, name_draws.after_task[i]);
  }
  draw_task_name_reads(*task_context().global_random, name_draws.after_all);

  // Model.
  if (!model) {
    const ModelInfoEntry* entry = ModelRegistry::instance().find(cfg.model);
    if (!entry) {
      auto names = ModelRegistry::instance().names();
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      throw UserError("unknown model '" + cfg.model + "'", {"", 0, 0, "--model"}, "one of: " + list);
    }
    ModelOptions mo;
    // Only a batch size the user gave is passed on: unset, backends choose (hf packs by a token
    // budget), while results still record the reference's default of 1.
    if (cfg.batch_size.is_string()) mo.batch_size = cfg.batch_size.get<std::string>();
    mo.max_batch_size = cfg.max_batch_size;
    mo.device = cfg.device;
    mo.seed = cfg.seed[2];
    Json args = cfg.model_args;
    if (args.is_object())
      for (auto it = cfg.model_secrets.begin(); it != cfg.model_secrets.end(); ++it) args[it.key()] = it.value();
    model = entry->factory(args, mo);
    // A model the caller gives (tests, `merge`'s replay) is used as it is.
    if (cfg.use_cache)
      model = make_caching_lm(std::move(model), *cfg.use_cache, cache_identity(cfg.model, cfg.model_args));
  }
  ShardRecorder* shard = nullptr;
  if (cfg.shard_count > 0) {
    auto recorder = std::make_unique<ShardRecorder>(std::move(model), ShardSpec{cfg.shard_index, cfg.shard_count});
    shard = recorder.get();
    model = std::move(recorder);
  }

  bool chat = cfg.apply_chat_template.is_string() ||
              (cfg.apply_chat_template.is_boolean() && cfg.apply_chat_template.get<bool>());
  PromptOptions popts;
  popts.system_instruction = cfg.system_instruction;
  popts.apply_chat_template = chat;
  popts.fewshot_as_multiturn = cfg.fewshot_as_multiturn.value_or(false);
  LM* lm = model.get();
  popts.chat = [lm](const std::vector<Message>& msgs, bool add_generation_prompt) {
    std::vector<ChatMessage> cm;
    for (const auto& m : msgs) cm.push_back({m.role, m.content});
    return lm->apply_chat_template(cm, add_generation_prompt);
  };

  // Per-task setup (num_fewshot, gen_kwargs, metrics, filters, documents), shared by every seed.
  std::vector<TaskRun> setup;
  setup.reserve(tasks.size());
  EvalOutput out;
  for (size_t ti = 0; ti < tasks.size(); ++ti) {
    Task& task = *tasks[ti];
    TaskRun run;
    run.task = &task;
    const Json& nf = task.config().get("num_fewshot");
    if (cfg.num_fewshot) {
      if (nf.is_number_integer() && nf.get<int>() == 0) {
        spdlog::info("num_fewshot has been set to 0 for {} in its config. Manual configuration will be ignored.", task.name());
      } else {
        task.set_num_fewshot(*cfg.num_fewshot);
      }
    }
    if (task.config().output_type() == "generate_until" && cfg.gen_kwargs.is_object() && !cfg.gen_kwargs.empty()) {
      Json& g = const_cast<TaskConfig&>(task.config()).raw["generation_kwargs"];
      for (auto it = cfg.gen_kwargs.begin(); it != cfg.gen_kwargs.end(); ++it) g[it.key()] = it.value();
    }
    if (cfg.predict_only) {
      auto& raw = const_cast<TaskConfig&>(task.config()).raw;
      raw["metric_list"] = Json::array({Json{{"metric", "bypass"}}});
      raw["process_results"] = "process_results";
    }
    run.metrics = metric_specs(task.config(), false);
    if (cfg.predict_only) run.metrics = metric_specs(task.config(), true);
    if (cfg.continuous_metrics && !cfg.predict_only) add_continuous_metrics(task.config(), run.metrics);
    const Json& fl = task.config().get("filter_list");
    if (fl.is_array()) {
      size_t i = 0;
      for (const auto& entry : fl) {
        SourceLocation where = task.config().where("filter_list");
        where.field = "filter_list[" + std::to_string(i++) + "]";
        run.filters.push_back(FilterEnsemble::from_config(entry, where));
      }
    } else {
      run.filters.push_back(FilterEnsemble::default_none());
    }
    // The reference's accesses to task.eval_docs while it builds the requests: get_sample_size
    // (fractional --limit), then doc_iterator (len + enumerate with --samples).
    bool by_samples = cfg.samples.is_object() && cfg.samples.contains(task.name()) &&
                      cfg.samples[task.name()].is_array() && !cfg.samples[task.name()].empty();
    run.eval_docs_reads_per_pass = by_samples ? 2 : 1;
    if (cfg.limit && *cfg.limit < 1.0) task.reaccess_eval_docs();
    for (int k = 0; k < run.eval_docs_reads_per_pass; ++k) task.reaccess_eval_docs();
    run.request_docs = task.eval_docs_snapshot();
    select_docs(cfg, task, run.doc_positions, run.doc_ids);
    if (run.doc_positions.empty())
      throw UserError("task.build_requests() did not find any docs! (task " + task.name() + ")",
                      {"", 0, 0, "--limit"}, "at least one document");
    setup.push_back(std::move(run));
  }

  // One pass per few-shot seed (a plain run: one, with the fourth --seed value). Each pass sees
  // the global random as a plain run with its seed would: as left by task loading and setup when
  // building requests, and as its own building left it when scoring.
  std::vector<int64_t> seeds = cfg.fewshot_seeds;
  if (seeds.empty()) seeds.push_back(cfg.seed[3].value_or(1234));
  const PyRandom after_loading = *task_context().global_random;
  std::vector<SeedPass> passes;
  for (int64_t seed : seeds) {
    task_context().global_random = std::make_shared<PyRandom>(after_loading);
    SeedPass pass{seed, setup, nullptr};
    for (size_t ti = 0; ti < pass.runs.size(); ++ti) {
      TaskRun& run = pass.runs[ti];
      Task& task = *run.task;
      FewshotSampler sampler(task, seed);
      bool mutual = false;
      for (const auto& m : run.metrics)
        if (const metrics::Metric* def = metrics::find(m.name)) mutual |= def->needs_unconditional;
      run.instances = build_requests(task, ti, run.doc_positions, run.doc_ids, sampler, popts, mutual);
      if (cfg.write_out && passes.empty()) {
        for (const auto& in : run.instances) {
          if (in.doc_id >= 1) continue;
          std::string s = "Task: " + task.name() + "; document " + std::to_string(in.doc_id) +
                          "; context prompt (starting on next line):\n" + py::str(in.arguments[0]) +
                          "\n(end of prompt on previous line)\ntarget string or answer choice index (starting on next line):\n" +
                          py::str(task.doc_to_target(task.eval_docs()[in.doc_pos])) +
                          "\n(end of target on previous line)\nRequest: " + py::json_dumps(in.arguments);
          out.write_out.push_back(s);
          break;
        }
      }
    }
    pass.random_after_building = task_context().global_random;
    passes.push_back(std::move(pass));
  }

  // LMEVAL_RECORD_REQUESTS=<file>: every request as the model receives it, in the goldens'
  // format (../shared/goldens/requests), so prompts can be compared with the reference's.
  std::unique_ptr<std::ofstream> record;
  if (const char* rec = std::getenv("LMEVAL_RECORD_REQUESTS"); rec && *rec)
    record = std::make_unique<std::ofstream>(rec);
  std::vector<RequestPass> requests;
  for (auto& pass : passes) {
    RequestPass rp{pass.seed, {}};
    for (auto& r : pass.runs)
      for (auto& in : r.instances) rp.instances.push_back(&in);
    requests.push_back(std::move(rp));
  }
  Json perf = dispatch_requests(*lm, requests, record.get());

  // A shard is not scored: its answers, config and model facts go to `lm-eval merge`.
  if (shard) {
    out.partial = shard->partial();
    out.partial["config"] = eval_config_to_json(cfg);
    if (chat)
      out.partial["model"]["chat_template"] =
          to_json_or_null(lm->chat_template(cfg.apply_chat_template.is_string() ? cfg.apply_chat_template.get<std::string>() : ""));
    return out;
  }

  // Filters and per-document metrics.
  for (auto& pass : passes) {
    task_context().global_random = pass.random_after_building;
    for (auto& run : pass.runs) {
      std::vector<Json> resps;
      std::vector<const Json*> docs;
      for (auto& in : run.instances) {
        resps.push_back(in.resps);
        docs.push_back(&(*run.request_docs)[in.doc_pos]);
      }
      for (const auto& f : run.filters) {
        auto filtered = f.apply(resps, docs);
        for (size_t i = 0; i < run.instances.size(); ++i) run.instances[i].filtered_resps[f.name()] = filtered[i];
      }
      score_task(run, cfg.log_samples || cfg.predict_only, cfg.bootstrap_iters);
    }
  }

  ResultsContext rc;
  rc.cfg = &cfg;
  rc.lm = lm;
  rc.date = date;
  rc.model_name = "";
  for (const char* k : {"peft", "delta", "pretrained", "model", "path", "engine"})
    if (cfg.model_args.is_object() && cfg.model_args.contains(k)) {
      rc.model_name = py::str(cfg.model_args[k]);
      break;
    }
  if (rc.model_name.empty()) rc.model_name = random_model_id();
  rc.performance = lm->performance_stats().empty() ? perf : lm->performance_stats();
  // A backend's own figures count what it was sent; the de-duplication count is ours to add.
  for (auto it = perf.begin(); it != perf.end(); ++it)
    if (it.value().contains("requests_before_dedup") && rc.performance.contains(it.key()) &&
        rc.performance[it.key()].is_object())
      rc.performance[it.key()]["requests_before_dedup"] = it.value()["requests_before_dedup"];
  rc.start = t_start;
  out.results = build_results(passes[0].runs, selection.groups, rc);
  bool log = cfg.log_samples || cfg.predict_only;
  if (log) out.samples = collect_samples(passes[0].runs);
  if (!cfg.fewshot_seeds.empty()) add_seed_results(out, passes, selection.groups, rc, log);
  return out;
}

}  // namespace lmeval
