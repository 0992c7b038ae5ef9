// Stage 4, scoring (see task_scores.hpp).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <set>

#include "global_random_replay.hpp"
#include "lmeval/core/python_format.hpp"
#include "lmeval/core/sha256.hpp"
#include "repeat_scores.hpp"
#include "task_scores.hpp"

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

void apply_filters(const TaskPlan& plan, TaskRequests& requests) {
  std::vector<Json> resps;
  std::vector<const Json*> docs;
  for (auto& in : requests.instances) {
    resps.push_back(in.resps);
    docs.push_back(&(*plan.request_docs)[in.doc_pos]);
  }
  for (const auto& f : plan.filters) {
    auto filtered = f.apply(resps, docs);
    for (size_t i = 0; i < requests.instances.size(); ++i)
      requests.instances[i].filtered_resps[f.name()] = filtered[i];
  }
}

// The sample record of one document under one filter (the reference's evaluate(), log_samples).
Json sample_record(const Task& task, int64_t doc_id, const Doc& doc, const Doc& request_doc,
                   const std::vector<const Instance*>& ins, const std::string& filter,
                   const Json& metrics, const Json& written) {
  Json target = task.doc_to_target(doc);
  Json s = Json::object();
  s["doc_id"] = doc_id;
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
    filtered.push_back(stringify_leaves(in->filtered_resps.at(filter)));
  }
  s["resps"] = resps;
  s["filtered_resps"] = filtered;
  s["filter"] = filter;
  Json names = Json::array();
  for (auto it = metrics.begin(); it != metrics.end(); ++it) names.push_back(it.key());
  s["metrics"] = names;
  s["doc_hash"] = sha256_hex(py::json_dumps(request_doc, {.indent = 2}));
  s["prompt_hash"] = sha256_hex(ins.empty() ? "" : target_text(ins[0]->arguments[0]));
  s["target_hash"] = sha256_hex(target_text(target));
  for (auto it = metrics.begin(); it != metrics.end(); ++it) {
    if (written.is_object() && written.contains(it.key())) {
      s[it.key()] = written[it.key()];
      continue;
    }
    // brier_score's second item is utils.softmax(lls), a numpy array: json.dumps hands it to
    // handle_non_serializable, which writes str(array).
    if (it.key() == "brier_score" && it.value().is_array() && it.value().size() == 2 &&
        it.value()[1].is_array()) {
      std::vector<double> probs;
      for (const auto& p : it.value()[1]) probs.push_back(p.get<double>());
      s[it.key()] = Json::array({it.value()[0], py::numpy_array_str(probs)});
      continue;
    }
    s[it.key()] = it.value();
  }
  return s;
}

// Expected accuracy of uniform random guessing, for the normalised scores. The choice counts are
// those of the documents' requests: calling doc_to_choice again would draw from the run's global
// `random` (or a helper's own generator) where the reference does not, moving every later draw.
std::optional<double> random_baseline(const TaskPlan& plan, const TaskRequests& requests) {
  const Task& task = *plan.task;
  if (task.config().output_type() != "multiple_choice" || plan.doc_positions.empty())
    return std::nullopt;
  bool mutual_info = false;  // each choice also has its unconditional request
  for (const auto& m : plan.metrics) mutual_info = mutual_info || m.name == "acc_mutual_info";
  std::map<size_t, size_t> per_doc;
  for (const auto& in : requests.instances) ++per_doc[in.doc_pos];
  double sum = 0;
  for (size_t pos : plan.doc_positions) {
    size_t n = per_doc[pos];
    if (mutual_info) n /= 2;
    sum += n ? 1.0 / static_cast<double>(n) : 0.0;
  }
  return sum / static_cast<double>(plan.doc_positions.size());
}

TaskScores score_task(const TaskPlan& plan, const TaskRequests& requests, bool log_samples,
                      bool repeat_scores) {
  Task& task = *plan.task;
  TaskScores scores;
  // Instances of each evaluated document, in idx order.
  std::map<size_t, std::vector<const Instance*>> by_doc;
  for (const auto& in : requests.instances) by_doc[in.doc_pos].push_back(&in);
  for (auto& [k, v] : by_doc)
    std::stable_sort(v.begin(), v.end(),
                     [](const Instance* a, const Instance* b) { return a->idx < b->idx; });
  for (const auto& f : plan.filters) {
    replay_eval_docs_reads_for_filter(task, plan.eval_docs_reads_per_pass);
    // repeats > 1: every sampled answer scored alone, for the samples (empty otherwise).
    const auto by_repeat = log_samples && repeat_scores ? filter_each_repeat(plan, requests, f)
                                                        : std::vector<std::vector<Json>>{};
    for (size_t d = 0; d < plan.doc_positions.size(); ++d) {
      size_t pos = plan.doc_positions[d];
      const Doc& doc = task.eval_docs()[pos];
      const Doc& request_doc = plan.request_docs ? (*plan.request_docs)[pos] : doc;
      const auto& ins = by_doc[pos];
      std::vector<Json> results;
      for (const auto* in : ins) results.push_back(in->filtered_resps.at(f.name()));
      Json metrics, written;
      std::string notice;
      try {
        std::vector<std::pair<std::string, std::string>> expanded;
        metrics = process_results(task, plan.metrics, doc, results, &notice, &expanded,
                                  log_samples ? &written : nullptr);
        for (auto& e : expanded)
          if (std::find(scores.expanded.begin(), scores.expanded.end(), e) == scores.expanded.end())
            scores.expanded.push_back(std::move(e));
      } catch (UserError& e) {
        throw UserError(
            "task " + task.name() + ", doc " + std::to_string(plan.doc_ids[d]) + ": " + e.message(),
            e.where(), e.expected());
      }
      if (!notice.empty() && &f == &plan.filters.front())  // once per document, not per filter
        spdlog::warn("task {}, doc_id {}: {}", task.name(), plan.doc_ids[d], notice);
      for (auto it = metrics.begin(); it != metrics.end(); ++it) {
        auto key = std::make_pair(it.key(), f.name());
        auto found = scores.items.find(key);
        if (found == scores.items.end()) {
          scores.keys.push_back(key);
          found = scores.items.emplace(key, std::vector<Json>{}).first;
        }
        found->second.push_back(it.value());
      }
      if (log_samples) {
        scores.samples.push_back(sample_record(task, plan.doc_ids[d], doc, request_doc, ins,
                                               f.name(), metrics, written));
        if (!by_repeat.empty())
          if (Json r = score_each_repeat(task, plan.metrics, doc, ins, requests, by_repeat);
              !r.empty())
            scores.samples.back()["repeat_scores"] = std::move(r);
      }
    }
  }
  scores.random_baseline = random_baseline(plan, requests);
  // evaluator_utils._compute_task_aggregations (0.4.13): the largest per-metric count, with a
  // warning when metrics were scored on different numbers of documents (a process_results that
  // returns other keys for other documents, as SCORE's robustness tasks do).
  std::set<size_t> lens;
  for (const auto& key : scores.keys)
    scores.sample_len = std::max(scores.sample_len, *lens.insert(scores.items[key].size()).first);
  if (lens.size() > 1) {
    std::string counts;
    for (const auto& [key, v] : scores.items)
      counts += (counts.empty() ? "" : ", ") + key.first + "," + key.second + "=" +
                std::to_string(v.size());
    spdlog::warn(
        "[{}] Metrics were not scored on the same number of documents ({}); reporting {} as the "
        "evaluated sample count, which group aggregation applies to every metric of the task",
        task.name(), counts, scores.sample_len);
  }
  if (std::optional<std::string> cluster_key = task.config().cluster_key())
    for (size_t pos : plan.doc_positions)
      scores.clusters.push_back(cluster_of(task, *cluster_key, task.eval_docs()[pos]));
  return scores;
}

// A Python-class task: the responses go back to its Instances, and the class filters, scores
// and aggregates them as evaluate() and _compute_task_aggregations call it.
TaskScores score_class_task(const TaskPlan& plan, const TaskRequests& requests,
                            const EvalConfig& cfg, size_t pass_index) {
  Json resps = Json::array();
  for (const auto& in : requests.instances) resps.push_back(in.resps);
  Json kwargs = {{"resps", std::move(resps)},
                 {"log_samples", cfg.log_samples || cfg.predict_only},
                 {"bootstrap_iters", cfg.bootstrap_iters},
                 {"pass_index", pass_index}};
  Json out = plan.task->python_class()->call("score", kwargs);
  TaskScores scores;
  scores.sample_len = out.at("n_samples").at("effective").get<size_t>();
  for (auto& s : out.at("samples")) scores.samples.push_back(std::move(s));
  out.erase("samples");
  scores.class_outcome = std::move(out);
  return scores;
}

}  // namespace

std::vector<TaskScores> score_pass(const RunPlan& plan, SeedPass& pass, const EvalConfig& cfg) {
  SeedPassRandom::begin_scoring(pass.random_after_building);
  std::vector<TaskScores> out;
  for (size_t ti = 0; ti < plan.tasks.size(); ++ti) {
    if (plan.tasks[ti].task->python_class()) {
      out.push_back(score_class_task(plan.tasks[ti], pass.tasks[ti], cfg, pass.index));
      continue;
    }
    apply_filters(plan.tasks[ti], pass.tasks[ti]);
    out.push_back(score_task(plan.tasks[ti], pass.tasks[ti], cfg.log_samples || cfg.predict_only,
                             cfg.log_repeat_scores));
  }
  return out;
}

}  // namespace lmeval
