// Aggregation per task and per group, and the results JSON in the reference's key order.
#include "results_builder.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include <spdlog/spdlog.h>

#include "lmeval/core/python_format.hpp"
#include "lmeval/core/sha256.hpp"
#include "lmeval/metrics/leaderboard.hpp"
#include "lmeval/metrics/metrics.hpp"
#include "run_manifest.hpp"
#include "run_statistics.hpp"

namespace lmeval {

namespace {

Json stringify_leaves(const Json& v) {
  if (v.is_array()) {
    Json a = Json::array();
    for (const auto& x : v) a.push_back(stringify_leaves(x));
    return a;
  }
  return py::str(v);
}

std::string target_text(const Json& t) { return t.is_string() ? t.get<std::string>() : py::str(t); }

// A document's cluster under the task's cluster_key: a document field (its text), else a template.
std::string cluster_of(const Task& task, const std::string& key, const Doc& doc) {
  if (doc.is_object() && doc.contains(key)) return target_text(doc[key]);
  return task.render(key, doc, "cluster_key");
}

}  // namespace

void score_task(TaskRun& run, bool log_samples, int64_t bootstrap_iters) {
  const Task& task = *run.task;
  // Instances of each evaluated document, in idx order.
  std::map<size_t, std::vector<const Instance*>> by_doc;
  for (const auto& in : run.instances) by_doc[in.doc_pos].push_back(&in);
  for (auto& [k, v] : by_doc)
    std::stable_sort(v.begin(), v.end(), [](const Instance* a, const Instance* b) { return a->idx < b->idx; });
  for (const auto& f : run.filters) {
    // The reference scores each filter's responses in a new pass of doc_iterator, which reads
    // task.eval_docs again: the documents scored and logged are those of that read.
    for (int k = 0; k < run.eval_docs_reads_per_pass; ++k) run.task->reaccess_eval_docs();
    for (size_t d = 0; d < run.doc_positions.size(); ++d) {
      size_t pos = run.doc_positions[d];
      const Doc& doc = task.eval_docs()[pos];
      const Doc& request_doc = run.request_docs ? (*run.request_docs)[pos] : doc;
      const auto& ins = by_doc[pos];
      std::vector<Json> results;
      for (const auto* in : ins) results.push_back(in->filtered_resps.at(f.name()));
      Json metrics;
      std::string notice;
      try {
        metrics = process_results(task, run.metrics, doc, results, &notice);
      } catch (UserError& e) {
        throw UserError("task " + task.name() + ", doc " + std::to_string(run.doc_ids[d]) + ": " + e.message(),
                        e.where(), e.expected());
      }
      if (!notice.empty() && &f == &run.filters.front())  // once per document, not per filter
        spdlog::warn("task {}, doc_id {}: {}", task.name(), run.doc_ids[d], notice);
      for (auto it = metrics.begin(); it != metrics.end(); ++it) {
        auto key = std::make_pair(it.key(), f.name());
        auto found = run.items.find(key);
        if (found == run.items.end()) {
          run.keys.push_back(key);
          found = run.items.emplace(key, std::vector<Json>{}).first;
        }
        found->second.push_back(it.value());
      }
      if (log_samples) {
        Json target = task.doc_to_target(doc);
        Json s = Json::object();
        s["doc_id"] = run.doc_ids[d];
        s["doc"] = doc;
        s["target"] = target_text(target);
        Json args = Json::object();
        for (size_t i = 0; i < ins.size(); ++i) {
          Json a = Json::object();
          for (size_t j = 0; j < ins[i]->arguments.size(); ++j)
            a["arg_" + std::to_string(j)] = ins[i]->arguments[j];
          args["gen_args_" + std::to_string(i)] = a;
        }
        s["arguments"] = args;
        Json resps = Json::array(), filtered = Json::array();
        for (const auto* in : ins) {
          resps.push_back(stringify_leaves(in->resps));
          filtered.push_back(stringify_leaves(in->filtered_resps.at(f.name())));
        }
        s["resps"] = resps;
        s["filtered_resps"] = filtered;
        s["filter"] = f.name();
        Json names = Json::array();
        for (auto it = metrics.begin(); it != metrics.end(); ++it) names.push_back(it.key());
        s["metrics"] = names;
        s["doc_hash"] = sha256_hex(py::json_dumps(request_doc, {.indent = 2}));
        s["prompt_hash"] = sha256_hex(ins.empty() ? "" : target_text(ins[0]->arguments[0]));
        s["target_hash"] = sha256_hex(target_text(target));
        for (auto it = metrics.begin(); it != metrics.end(); ++it) s[it.key()] = it.value();
        run.samples.push_back(std::move(s));
      }
    }
  }
  // Expected accuracy of uniform random guessing, for the normalised scores.
  if (task.config().output_type() == "multiple_choice" && !run.doc_positions.empty()) {
    double sum = 0;
    for (size_t pos : run.doc_positions) {
      auto c = task.doc_to_choice(task.eval_docs()[pos]);
      size_t n = task.multiple_input() || !c ? (c ? c->size() : 1) : c->size();
      sum += n ? 1.0 / static_cast<double>(n) : 0.0;
    }
    run.random_baseline = sum / static_cast<double>(run.doc_positions.size());
  }
  // Aggregate.
  Json entry = Json::object();
  entry["name"] = task.name();
  const Json& alias = task.config().get("task_alias");
  entry["alias"] = alias.is_string() ? alias : Json(task.name());
  run.sample_len = run.keys.empty() ? 0 : run.items[run.keys.back()].size();
  entry["sample_len"] = run.sample_len;
  int64_t iters = bootstrap_iters;
  const Json& cluster_key = task.config().get("cluster_key");
  run.clusters.clear();
  if (cluster_key.is_string())
    for (size_t pos : run.doc_positions)
      run.clusters.push_back(cluster_of(task, cluster_key.get<std::string>(), task.eval_docs()[pos]));
  Json statistics = Json::object();
  statistics["n"] = run.sample_len;
  if (cluster_key.is_string()) statistics["cluster_key"] = cluster_key;
  for (const auto& key : run.keys) {
    const auto& items = run.items[key];
    std::string agg = "mean";
    const TaskFunction* agg_fn = nullptr;
    for (const auto& m : run.metrics)
      if (m.name == key.first) {
        agg = m.aggregation;
        agg_fn = m.aggregation_fn;
      }
    double value = agg_fn ? agg_fn->aggregation(items) : aggregate(agg.empty() ? "mean" : agg, items);
    entry[key.first + "," + key.second] = value;
    const std::string agg_name = agg.empty() ? "mean" : agg;
    std::optional<double> se;
    std::vector<double> boot;
    // Bootstrap aggregations: the resamples once, for the stderr and the percentile interval.
    if (!agg_fn && iters > 0 && items.size() > 1 && has_bootstrap_stderr(agg_name)) {
      boot = bootstrap_statistics(agg_name, items, iters);
      se = sample_stddev(boot);
    } else if (!agg_fn) {
      se = stderr_for(agg_name, items, iters);
    }
    entry[key.first + "_stderr," + key.second] = se ? Json(*se) : Json("N/A");
    MetricSeries series{key.first, key.second, agg_fn ? std::string("custom") : agg_name, &items, value, se,
                        &boot};
    add_metric_statistics(statistics, series, run.clusters.empty() ? nullptr : &run.clusters, iters);
  }
  run.entry = entry;
  run.statistics = statistics;
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

static std::optional<std::string> read_git_head(const std::filesystem::path& git_dir) {
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

Json build_results(std::vector<TaskRun>& runs, const std::vector<GroupNode>& groups,
                   const ResultsContext& ctx) {
  const EvalConfig& cfg = *ctx.cfg;
  std::map<std::string, const TaskRun*> by_name;
  for (const auto& r : runs) by_name[r.task->name()] = &r;

  // Groups bottom-up: children before parents (post-order over the loaded tree).
  std::map<std::string, const GroupNode*> gmap;
  std::set<std::string> child_groups;
  for (const auto& g : groups) gmap[g.name] = &g;
  for (const auto& g : groups)
    for (const auto& c : g.children)
      if (gmap.count(c)) child_groups.insert(c);
  std::vector<const GroupNode*> post;
  std::set<std::string> visited;
  std::function<void(const GroupNode*)> visit = [&](const GroupNode* g) {
    if (visited.count(g->name)) return;
    visited.insert(g->name);
    for (const auto& c : g->children)
      if (gmap.count(c)) visit(gmap[c]);
    post.push_back(g);
  };
  for (const auto& g : groups)
    if (!child_groups.count(g.name)) visit(&g);

  Json results = Json::object();
  Json statistics = Json::object();
  for (const auto& r : runs) {
    results[r.task->name()] = r.entry;
    statistics[r.task->name()] = r.statistics;
  }
  Json groups_section = Json::object();
  for (const GroupNode* g : post) {
    Json e = Json::object();
    Json gstats = Json::object();
    e["alias"] = g->alias();
    e["name"] = g->name;
    if (g->has_aggregation()) {
      size_t sample_len = 0;
      for (const auto& leaf : g->leaves)
        if (by_name.count(leaf)) sample_len += by_name[leaf]->sample_len;
      e["sample_len"] = sample_len;
      Json sample_count = Json::object();
      for (const auto& am : g->config.aggregate_metric_list) {
        std::string metric = am["metric"].get<std::string>();
        bool weight = am["weight_by_size"].is_boolean() ? am["weight_by_size"].get<bool>() : true;
        std::vector<std::string> filters;
        if (am["filter_list"].is_array()) {
          for (const auto& f : am["filter_list"]) filters.push_back(f.get<std::string>());
        } else {
          std::set<std::string> fs;
          for (const auto& leaf : g->leaves) {
            if (!by_name.count(leaf)) continue;
            for (const auto& k : by_name[leaf]->keys)
              if (k.first == metric) fs.insert(k.second);
          }
          filters.assign(fs.begin(), fs.end());
        }
        for (const auto& f : filters) {
          std::vector<double> vals, sizes, ses;
          bool all_se = true;
          for (const auto& leaf : g->leaves) {
            if (!by_name.count(leaf)) continue;
            const Json& le = by_name[leaf]->entry;
            std::string key = metric + "," + f;
            if (!le.contains(key)) continue;
            vals.push_back(le[key].get<double>());
            sizes.push_back(static_cast<double>(by_name[leaf]->sample_len));
            const Json& se = le[metric + "_stderr," + f];
            if (se.is_number()) ses.push_back(se.get<double>());
            else all_se = false;
          }
          if (vals.empty()) continue;
          double num = 0, den = 0, total = 0;
          for (size_t i = 0; i < vals.size(); ++i) {
            double w = weight ? sizes[i] : 1.0;
            num += vals[i] * w;
            den += w;
            total += sizes[i];
          }
          e[metric + "," + f] = num / den;
          e[metric + "_stderr," + f] =
              all_se && ses.size() == vals.size() ? Json(pooled_sample_stderr(ses, sizes)) : Json("N/A");
          sample_count[metric + "," + f] = static_cast<int64_t>(total);
          // A size-weighted mean of per-item means is the mean over all items: its stderr can be
          // clustered by subtask (e.g. MMLU's subjects).
          std::vector<double> pooled;
          std::vector<std::string> subtask_of;
          bool poolable = weight;
          for (const auto& leaf : g->leaves) {
            if (!poolable || !by_name.count(leaf)) continue;
            const TaskRun& lr = *by_name[leaf];
            auto it = lr.items.find({metric, f});
            if (it == lr.items.end()) continue;
            for (const auto& m : lr.metrics)
              if (m.name == metric && (m.aggregation_fn || (!m.aggregation.empty() && m.aggregation != "mean")))
                poolable = false;
            for (const auto& v : it->second) {
              if (!v.is_number() && !v.is_boolean()) {
                poolable = false;
                break;
              }
              pooled.push_back(v.is_boolean() ? (v.get<bool>() ? 1.0 : 0.0) : v.get<double>());
              subtask_of.push_back(leaf);
            }
          }
          const Json& se_json = e[metric + "_stderr," + f];
          add_group_statistics(gstats, metric, f, num / den,
                               se_json.is_number() ? std::optional<double>(se_json.get<double>()) : std::nullopt,
                               poolable ? &pooled : nullptr, poolable ? &subtask_of : nullptr);
        }
      }
      if (!sample_count.empty()) e["sample_count"] = sample_count;
    }
    results[g->name] = e;
    if (g->has_aggregation()) {
      groups_section[g->name] = e;
      gstats["n"] = e.contains("sample_len") ? e["sample_len"] : Json();
      statistics[g->name] = gstats;
    }
  }

  Json group_subtasks = Json::object();
  for (const auto& g : groups) group_subtasks[g.name] = g.children;

  // configs (sorted by task), versions, n-shot, higher_is_better (sorted).
  std::vector<const TaskRun*> sorted_runs;
  for (const auto& r : runs) sorted_runs.push_back(&r);
  std::sort(sorted_runs.begin(), sorted_runs.end(),
            [](const TaskRun* a, const TaskRun* b) { return a->task->name() < b->task->name(); });
  Json configs = Json::object();
  for (const auto* r : sorted_runs) {
    configs[r->task->name()] = task_config_to_results(r->task->config(), r->task->num_fewshot());
  }
  std::map<std::string, Json> versions;
  std::map<std::string, Json> nshot;
  std::map<std::string, Json> hib;
  for (const auto& r : runs) {
    versions[r.task->name()] = r.task->version();
    nshot[r.task->name()] = r.task->num_fewshot();
    Json h = Json::object();
    for (const auto& m : r.metrics) h[m.name] = m.higher_is_better;
    hib[r.task->name()] = h;
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
        if (merged.contains(it.key()) && merged[it.key()] != it.value()) merged[it.key()] = nullptr;
        else if (!merged.contains(it.key())) merged[it.key()] = it.value();
      }
    }
    if (any) hib[g.name] = merged;
    bool all = !g.children.empty();
    std::set<std::string> values;
    for (const auto& c : g.children) {
      if (!nshot.count(c)) {
        all = false;
        break;
      }
      values.insert(nshot[c].dump());
    }
    if (all && values.size() == 1) nshot[g.name] = nshot[g.children[0]];
  }
  auto to_obj = [](const std::map<std::string, Json>& m) {
    Json o = Json::object();
    for (const auto& [k, v] : m) o[k] = v;
    return o;
  };
  Json nsamples = Json::object();
  for (const auto& r : runs)
    nsamples[r.task->name()] = {{"original", r.task->eval_docs().size()}, {"effective", r.sample_len}};

  Json out = Json::object();
  out["results"] = results;
  if (!groups_section.empty()) out["groups"] = groups_section;
  out["group_subtasks"] = group_subtasks;
  out["configs"] = configs;
  out["versions"] = to_obj(versions);
  out["n-shot"] = to_obj(nshot);
  out["higher_is_better"] = to_obj(hib);
  out["n-samples"] = nsamples;

  Json config = Json::object();
  config["model"] = cfg.model;
  config["model_args"] = cfg.model_args;
  Json info = ctx.lm->model_info();
  for (auto it = info.begin(); it != info.end(); ++it) config[it.key()] = it.value();
  config["batch_size"] = cfg.batch_size;
  config["batch_sizes"] = ctx.lm->batch_sizes();
  config["device"] = cfg.device;
  config["use_cache"] = cfg.use_cache ? Json(*cfg.use_cache) : Json();
  config["limit"] = cfg.limit ? Json(*cfg.limit) : Json();
  config["bootstrap_iters"] = cfg.bootstrap_iters;
  config["gen_kwargs"] = cfg.gen_kwargs;
  const char* seed_names[] = {"random_seed", "numpy_seed", "torch_seed", "fewshot_seed"};
  for (int i = 0; i < 4; ++i) config[seed_names[i]] = cfg.seed[i] ? Json(*cfg.seed[i]) : Json();
  out["config"] = config;
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
  Json hashes = Json::object();
  if (cfg.log_samples || cfg.predict_only) {
    for (const auto* r : sorted_runs) {
      std::string cat;
      for (const auto& s : r->samples)
        cat += s["doc_hash"].get<std::string>() + s["prompt_hash"].get<std::string>() +
               s["target_hash"].get<std::string>();
      hashes[r->task->name()] = sha256_hex(cat);
    }
    Json ordered = Json::object();
    for (const auto& r : runs) ordered[r.task->name()] = hashes[r.task->name()];
    hashes = ordered;
  }
  out["task_hashes"] = hashes;
  out["model_source"] = cfg.model;
  out["model_name"] = ctx.model_name;
  out["model_name_sanitized"] = sanitize_model_name(ctx.model_name);
  out["system_instruction"] = cfg.system_instruction ? Json(*cfg.system_instruction) : Json();
  out["system_instruction_sha"] = cfg.system_instruction ? Json(sha256_hex(*cfg.system_instruction)) : Json();
  out["fewshot_as_multiturn"] = cfg.fewshot_as_multiturn ? Json(*cfg.fewshot_as_multiturn) : Json();
  bool chat = cfg.apply_chat_template.is_string() ||
              (cfg.apply_chat_template.is_boolean() && cfg.apply_chat_template.get<bool>());
  std::optional<std::string> tmpl;
  if (chat) tmpl = ctx.lm->chat_template(cfg.apply_chat_template.is_string() ? cfg.apply_chat_template.get<std::string>() : "");
  out["chat_template"] = tmpl ? Json(*tmpl) : Json();
  // EvaluationTracker: hash_string(chat_template) if chat_template else None ("" for API models).
  out["chat_template_sha"] = tmpl && !tmpl->empty() ? Json(sha256_hex(*tmpl)) : Json();
  double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - ctx.start).count();
  out["total_evaluation_time_seconds"] = py::float_repr(total);
  // lm-eval's additions, after the reference's keys.
  std::map<std::string, double> baselines;
  for (const auto& r : runs)
    if (r.random_baseline) baselines[r.task->name()] = *r.random_baseline;
  out["leaderboard_normalized"] = leaderboard_normalized(out, baselines);
  out["performance"] = ctx.performance;
  out["statistics"] = statistics;
  out["manifest"] = run_manifest(runs, out, cfg);
  return out;
}

std::vector<TaskSamples> collect_samples(const std::vector<TaskRun>& runs) {
  std::vector<const TaskRun*> sorted;
  for (const auto& r : runs) sorted.push_back(&r);
  std::sort(sorted.begin(), sorted.end(),
            [](const TaskRun* a, const TaskRun* b) { return a->task->name() < b->task->name(); });
  std::vector<TaskSamples> out;
  for (const auto* r : sorted) out.push_back({r->task->name(), r->samples});
  return out;
}

}  // namespace lmeval
