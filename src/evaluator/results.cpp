// Stage 5, the results file (see results.hpp).
#include "results.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "lmeval/config/run_options.hpp"
#include "lmeval/core/python_format.hpp"
#include "lmeval/core/sha256.hpp"
#include "lmeval/metrics/leaderboard.hpp"
#include "run_manifest.hpp"
#include "run_model.hpp"
#include "seed_variance.hpp"

namespace lmeval {

namespace {

std::vector<const TaskOutcome*> sorted_by_name(const std::vector<TaskOutcome>& tasks) {
  std::vector<const TaskOutcome*> sorted;
  for (const auto& r : tasks) sorted.push_back(&r);
  std::sort(sorted.begin(), sorted.end(), [](const TaskOutcome* a, const TaskOutcome* b) {
    return a->task().name() < b->task().name();
  });
  return sorted;
}

Json to_object(const std::map<std::string, Json>& m) {
  Json o = Json::object();
  for (const auto& [k, v] : m) o[k] = v;
  return o;
}

// configs (sorted by task), versions, n-shot, higher_is_better (sorted), n-samples; groups take
// their members' n-shot and higher_is_better where these agree.
void add_task_tables(const std::vector<TaskOutcome>& tasks, const std::vector<GroupNode>& groups,
                     Json& out) {
  // A Python-class task's entries are what its own object gave (TaskScores::class_outcome).
  auto outcome = [](const TaskOutcome& r) -> const Json* {
    return r.scores && !r.scores->class_outcome.is_null() ? &r.scores->class_outcome : nullptr;
  };
  Json configs = Json::object();
  for (const auto* r : sorted_by_name(tasks))
    configs[r->task().name()] =
        outcome(*r) ? outcome(*r)->at("config")
                    : task_config_to_results(r->task().config(), r->task().num_fewshot());
  std::map<std::string, Json> versions;
  std::map<std::string, Json> nshot;
  std::map<std::string, Json> hib;
  for (const auto& r : tasks) {
    if (const Json* o = outcome(r)) {
      versions[r.task().name()] = o->at("version");
      nshot[r.task().name()] = o->at("num_fewshot");
      hib[r.task().name()] = o->at("higher_is_better");
      continue;
    }
    versions[r.task().name()] = r.task().version();
    nshot[r.task().name()] = r.task().num_fewshot();
    Json h = Json::object();
    for (const auto& m : r.plan->metrics) h[m.name] = m.higher_is_better;
    if (r.scores)
      for (const auto& [key, from] : r.scores->expanded)
        if (!h.contains(key) && h.contains(from)) h[key] = h[from];
    hib[r.task().name()] = h;
  }
  for (const auto& g : groups) versions[g.name] = g.version;
  // _propagate_higher_is_better / n-shot, in groups order (parents before their subgroups).
  for (const auto& g : groups) {
    Json merged = Json::object();
    bool any = false;
    for (const auto& c : g.children) {
      if (!hib.count(c)) continue;
      any = true;
      for (auto it = hib[c].begin(); it != hib[c].end(); ++it) {
        if (merged.contains(it.key()) && merged[it.key()] != it.value())
          merged[it.key()] = nullptr;
        else if (!merged.contains(it.key()))
          merged[it.key()] = it.value();
      }
    }
    if (any) hib[g.name] = merged;
    // _propagate_num_fewshot: the one value the children that have one share; children without
    // one (a subgroup with mixed shots) do not count.
    std::set<std::string> values;
    const Json* shared = nullptr;
    for (const auto& c : g.children) {
      if (!nshot.count(c)) continue;
      values.insert(nshot[c].dump());
      shared = &nshot[c];
    }
    if (values.size() == 1) {
      Json v = *shared;
      nshot[g.name] = v;
    }
  }
  Json nsamples = Json::object();
  for (const auto& r : tasks)
    nsamples[r.task().name()] = outcome(r) ? outcome(r)->at("n_samples")
                                           : Json{{"original", r.task().eval_docs().size()},
                                                  {"effective", r.scores->sample_len}};
  out["configs"] = configs;
  out["versions"] = to_object(versions);
  out["n-shot"] = to_object(nshot);
  out["higher_is_better"] = to_object(hib);
  out["n-samples"] = nsamples;
}

// The results' `config` block: the run's settings and the model's facts.
Json config_block(const EvalConfig& cfg, LM& lm) {
  return results_config(cfg, lm.model_info(), lm.batch_sizes());
}

std::optional<std::string> read_git_head(const std::filesystem::path& git_dir) {
  std::ifstream head(git_dir / "HEAD");
  if (!head) return std::nullopt;
  std::string line;
  std::getline(head, line);
  if (line.rfind("ref: ", 0) == 0) {
    std::ifstream ref(git_dir / line.substr(5));
    std::string h;
    if (ref && std::getline(ref, h)) return h.substr(0, 7);
    return std::nullopt;
  }
  return line.substr(0, 7);
}

// git hashes, date, versions and the tokenizer's special tokens (EvaluationTracker's general
// config).
void add_environment(const ResultsContext& ctx, Json& out) {
  auto git = read_git_head(std::filesystem::current_path() / ".git");
  out["git_hash"] = git ? Json(*git) : Json();
  out["date"] = ctx.date;
  out["pretty_env_info"] = "N/A (lm-eval C++: no torch environment dump)";
  out["transformers_version"] = "N/A";
  out["lm_eval_version"] = std::string("lm-eval-cpp ") + LMEVAL_VERSION_STRING;
  auto upper = read_git_head(std::filesystem::current_path().parent_path() / ".git");
  out["upper_git_hash"] = upper ? Json(*upper) : Json();
  if (auto ti = ctx.lm->tokenizer_info()) {
    auto pair = [](const std::optional<std::string>& t, const std::optional<int64_t>& id) {
      return Json::array({t ? Json(*t) : Json(), id ? std::to_string(*id) : std::string("None")});
    };
    out["tokenizer_pad_token"] = pair(ti->pad_token, ti->pad_token_id);
    out["tokenizer_eos_token"] = pair(ti->eos_token, ti->eos_token_id);
    out["tokenizer_bos_token"] = pair(ti->bos_token, ti->bos_token_id);
    out["eot_token_id"] = ti->eot_token_id ? Json(*ti->eot_token_id) : Json();
    out["max_length"] = ti->max_length;
  }
}

// task_hashes: sha256 over each task's samples' doc, prompt and target hashes (with log_samples).
Json task_hashes(const EvalConfig& cfg, const std::vector<TaskOutcome>& tasks) {
  std::vector<const TaskOutcome*> sorted = sorted_by_name(tasks);
  Json hashes = Json::object();
  if (cfg.log_samples || cfg.predict_only) {
    for (const auto* r : sorted) {
      std::string cat;
      for (const auto& s : r->scores->samples)
        cat += s["doc_hash"].get<std::string>() + s["prompt_hash"].get<std::string>() +
               s["target_hash"].get<std::string>();
      hashes[r->task().name()] = sha256_hex(cat);
    }
    Json ordered = Json::object();
    for (const auto& r : tasks) ordered[r.task().name()] = hashes[r.task().name()];
    hashes = ordered;
  }
  return hashes;
}

}  // namespace

ResultsContext results_context(const EvalConfig& cfg, LM& lm, const Json& perf, double date,
                               std::chrono::steady_clock::time_point start,
                               std::string model_name) {
  ResultsContext rc;
  rc.cfg = &cfg;
  rc.lm = &lm;
  rc.date = date;
  rc.model_name = std::move(model_name);
  rc.performance = lm.performance_stats().empty() ? perf : lm.performance_stats();
  // A backend's own figures count what it was sent; the de-duplication count is ours to add.
  for (auto it = perf.begin(); it != perf.end(); ++it)
    if (it.value().contains("requests_before_dedup") && rc.performance.contains(it.key()) &&
        rc.performance[it.key()].is_object())
      rc.performance[it.key()]["requests_before_dedup"] = it.value()["requests_before_dedup"];
  rc.start = start;
  return rc;
}

Json build_results(const std::vector<TaskOutcome>& tasks, const std::vector<GroupNode>& groups,
                   const ResultsContext& ctx) {
  const EvalConfig& cfg = *ctx.cfg;
  Json results = Json::object();
  Json statistics = Json::object();
  for (const auto& r : tasks) {
    results[r.task().name()] = r.result.entry;
    statistics[r.task().name()] = r.result.statistics;
  }
  Json groups_section = Json::object();
  add_group_results(tasks, groups, results, groups_section, statistics);
  Json group_subtasks = Json::object();
  for (const auto& g : groups) group_subtasks[g.name] = g.children;

  Json out = Json::object();
  out["results"] = results;
  if (!groups_section.empty()) out["groups"] = groups_section;
  out["group_subtasks"] = group_subtasks;
  add_task_tables(tasks, groups, out);
  out["config"] = config_block(cfg, *ctx.lm);
  add_environment(ctx, out);
  out["task_hashes"] = task_hashes(cfg, tasks);
  out["model_source"] = cfg.model;
  out["model_name"] = ctx.model_name;
  out["model_name_sanitized"] = sanitize_model_name(ctx.model_name);
  out["system_instruction"] = cfg.system_instruction ? Json(*cfg.system_instruction) : Json();
  out["system_instruction_sha"] =
      cfg.system_instruction ? Json(sha256_hex(*cfg.system_instruction)) : Json();
  out["fewshot_as_multiturn"] = cfg.fewshot_as_multiturn ? Json(*cfg.fewshot_as_multiturn) : Json();
  std::optional<std::string> tmpl = run_chat_template(cfg, *ctx.lm);
  out["chat_template"] = tmpl ? Json(*tmpl) : Json();
  // EvaluationTracker: hash_string(chat_template) if chat_template else None ("" for API models).
  out["chat_template_sha"] = tmpl && !tmpl->empty() ? Json(sha256_hex(*tmpl)) : Json();
  double total =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - ctx.start).count();
  out["total_evaluation_time_seconds"] = py::float_repr(total);
  // lm-eval's additions, after the reference's keys.
  std::map<std::string, double> baselines;
  for (const auto& r : tasks)
    if (r.scores->random_baseline) baselines[r.task().name()] = *r.scores->random_baseline;
  out["leaderboard_normalized"] = leaderboard_normalized(out, baselines);
  out["performance"] = ctx.performance;
  out["statistics"] = statistics;
  out["manifest"] = run_manifest(tasks, out, cfg);
  return out;
}

std::vector<TaskSamples> collect_samples(const std::vector<TaskOutcome>& tasks) {
  std::vector<TaskSamples> out;
  for (const auto* r : sorted_by_name(tasks)) out.push_back({r->task().name(), r->scores->samples});
  return out;
}

void add_seed_results(EvalOutput& out, const std::vector<SeedPass>& passes,
                      const std::vector<std::vector<TaskOutcome>>& outcomes,
                      const std::vector<GroupNode>& groups, const ResultsContext& rc,
                      bool log_samples) {
  std::vector<int64_t> seeds;
  std::vector<Json> sections;
  Json by_seed = Json::object();
  for (size_t i = 0; i < passes.size(); ++i) {
    Json section =
        i == 0 ? out.results["results"] : build_results(outcomes[i], groups, rc)["results"];
    seeds.push_back(passes[i].seed);
    by_seed[std::to_string(passes[i].seed)] = section;
    sections.push_back(std::move(section));
  }
  out.results["fewshot_seed_variance"] = fewshot_seed_variance(seeds, sections);
  out.results["results_by_fewshot_seed"] = by_seed;
  if (!log_samples) return;
  for (auto& ts : out.samples) {
    std::vector<Json> lines;
    for (size_t i = 0; i < passes.size(); ++i)
      for (const auto& r : outcomes[i]) {
        if (r.task().name() != ts.task) continue;
        for (Json s : r.scores->samples) {
          s["fewshot_seed"] = passes[i].seed;
          lines.push_back(std::move(s));
        }
      }
    ts.lines = std::move(lines);
  }
}

std::string sanitize_model_name(const std::string& name) {
  static const std::string bad = "\"<>:/|\\?*[]";
  std::string out;
  bool in_run = false;
  for (char c : name) {
    if (bad.find(c) != std::string::npos) {
      if (!in_run) out += "__";
      in_run = true;
    } else {
      out += c;
      in_run = false;
    }
  }
  return out;
}

}  // namespace lmeval
