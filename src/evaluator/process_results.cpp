// process_results for one document (spec §7.2): what the document's responses give, by output
// type, handed to the metrics of the registry (metrics/registry.hpp) that the task's list names.
#include "lmeval/evaluator/scoring.hpp"

#include <algorithm>
#include <cmath>

#include "lmeval/core/error.hpp"
#include "lmeval/core/python_format.hpp"
#include "lmeval/core/regex.hpp"
#include "lmeval/core/unicode.hpp"
#include "lmeval/metrics/metrics.hpp"
#include "lmeval/metrics/registry.hpp"
#include "lmeval/tasks/function_registry.hpp"

namespace lmeval {

namespace {

bool has_metric(const std::vector<MetricSpec>& ms, const std::string& n) {
  for (const auto& m : ms)
    if (m.name == n) return true;
  return false;
}

double ll_of(const Json& r) {
  if (r.is_array() && !r.empty()) return r[0].get<double>();
  return r.get<double>();
}
bool greedy_of(const Json& r) { return r.is_array() && r.size() > 1 && r[1].get<bool>(); }

std::string text_of(const Json& v) { return v.is_string() ? v.get<std::string>() : py::str(v); }

// The registry's metrics in its order (the reference's result-dict key order) that the task's list
// names, each given the document's scores when it scores this output type.
template <typename Scores, typename Member>
void emit_in_registry_order(const std::vector<MetricSpec>& specs, Member member,
                            const Scores& scores, Json& out, bool continuous_only = false) {
  for (const metrics::Metric* m : metrics::all()) {
    const auto& fn = m->*member;
    if (!fn || (continuous_only && !m->continuous) || !has_metric(specs, m->name)) continue;
    out[m->name] = fn(scores);
  }
}

bool wants_unconditional(const std::vector<MetricSpec>& specs) {
  for (const auto& s : specs)
    if (const metrics::Metric* m = metrics::find(s.name); m && m->needs_unconditional) return true;
  return false;
}

// A task function's own scores, and beside them the continuous metrics when it names its golds.
Json process_results_by_function(const TaskConfig& cfg, const std::vector<MetricSpec>& specs,
                                 const Doc& doc, const std::vector<Json>& results, Json* written) {
  const auto& fn = resolve_function_ref(cfg.get(TaskField::process_results));
  if (!fn.process_results)
    throw UserError("function is not a process_results function",
                    cfg.where(TaskField::process_results), "process_results(doc, results)");
  Json out = fn.process_results(doc, results);
  if (written && fn.last_results_as_written) *written = fn.last_results_as_written();
  bool wants_continuous = false;
  for (const auto& spec : specs)
    if (const metrics::Metric* m = metrics::find(spec.name); m && m->continuous)
      wants_continuous = true;
  if (fn.gold_choices && wants_continuous) {
    metrics::ChoiceScores s;
    for (const auto& r : results) s.lls.push_back(ll_of(r));
    s.is_gold.assign(s.lls.size(), false);
    for (size_t g : fn.gold_choices(doc))
      if (g < s.is_gold.size()) s.is_gold[g] = true;
    emit_in_registry_order(specs, &metrics::Metric::multiple_choice, s, out,
                           /*continuous_only=*/true);
  }
  return out;
}

// The reference's multiple_choice branch: the choices' log-likelihoods (split from the
// unconditional ones for acc_mutual_info), the three argmaxes, and the gold index or indices.
metrics::ChoiceScores choice_scores(const Task& task, const std::vector<MetricSpec>& specs,
                                    const Doc& doc, const std::vector<Json>& results,
                                    std::string* notice) {
  metrics::ChoiceScores s;
  auto choices = *task.doc_to_choice(doc);
  size_t n = choices.size();
  for (const auto& r : results) {
    s.lls.push_back(ll_of(r));
    s.greedy.push_back(greedy_of(r));
  }
  if (2 * n == s.lls.size() && wants_unconditional(specs)) {
    s.lls_uncond.assign(s.lls.begin() + static_cast<long>(n), s.lls.end());
    s.lls.resize(n);
  }
  std::vector<double> norm(s.lls.size()), byte(s.lls.size());
  for (size_t i = 0; i < s.lls.size() && i < n; ++i) {
    norm[i] = s.lls[i] / static_cast<double>(unicode::length(choices[i]));
    byte[i] = s.lls[i] / static_cast<double>(choices[i].size());
  }
  s.pred = np_argmax(s.lls);
  s.pred_norm = np_argmax(norm);
  s.pred_bytes = np_argmax(byte);
  Json gold = task.multiple_input() ? task.doc_to_text(doc) : task.doc_to_target(doc);
  auto to_index = [&](const Json& g) -> int64_t {
    if (g.is_number_integer()) {
      int64_t i = g.get<int64_t>();
      return i < static_cast<int64_t>(n) ? i : -100;
    }
    if (g.is_boolean()) return g.get<bool>() ? 1 : 0;
    // A float gold stays a float in process_results: -100.0 compares equal to -100 (a missing
    // gold), any other reaches is_greedy[gold] and the reference fails with a TypeError.
    if (g.is_number_float()) {
      if (g.get<double>() == -100.0) return -100;
      throw UserError("task " + task.name() + ": target " + py::repr(g) +
                          " is a float: the reference fails on it (is_greedy[gold]: TypeError: "
                          "list indices must be integers or slices, not float)",
                      task.config().where(TaskField::doc_to_target),
                      "an integer index into doc_to_choice or a choice's text (a CSV label "
                      "column with an empty cell is read as floats: fill the cell or write the "
                      "labels as text)");
    }
    if (g.is_string()) {
      auto it = std::find(choices.begin(), choices.end(), g.get<std::string>());
      return it == choices.end() ? -100 : static_cast<int64_t>(it - choices.begin());
    }
    // The reference indexes is_greedy with the gold whatever its type, so a float (even 1.0),
    // None or a dict raises TypeError there; scoring it as wrong with a note claiming the
    // reference does the same was false.
    throw UserError("task " + task.name() + ": target " + g.dump().substr(0, 80) + " is " +
                        (g.is_null() ? "null" : "not an index"),
                    task.config().where(TaskField::doc_to_target),
                    "an integer index into doc_to_choice or a choice's text (the reference "
                    "raises TypeError: tuple indices must be integers or slices)");
  };
  s.multiple_gold = task.multiple_target() > 0 || gold.is_array();
  bool gold_missing = false;
  if (s.multiple_gold) {
    std::vector<int64_t> golds;
    Json gl = gold.is_array() ? gold : Json::array({gold});
    for (const auto& g : gl) golds.push_back(to_index(g));
    gold_missing = std::find(golds.begin(), golds.end(), -100) != golds.end();
    s.gold = golds;
  } else {
    s.gold_single = to_index(gold);
    gold_missing = s.gold_single == -100;
    s.gold = s.gold_single;
  }
  bool gold_negative = false;
  for (const auto& g : s.multiple_gold ? s.gold : Json::array({s.gold_single}))
    if (g.is_number_integer() && g.get<int64_t>() < 0 && g.get<int64_t>() != -100)
      gold_negative = true;
  if (gold_missing && notice)
    *notice = "target " + gold.dump() + " names none of the " + std::to_string(n) +
              " choices (neither an index below " + std::to_string(n) +
              " nor a choice's text); scored as wrong, as the reference does";
  else if (gold_negative && notice)
    *notice =
        "target " + gold.dump() + " is a negative index into the " + std::to_string(n) +
        " choices: acc and acc_norm score it as wrong, and exact_match reads the choice counted "
        "from the end, as the reference does (check doc_to_target)";
  // The golds for the continuous metrics: the valid distinct gold indices.
  s.is_gold.assign(std::min(s.lls.size(), n), false);
  Json gl = s.multiple_gold ? s.gold : Json::array({s.gold_single});
  for (const auto& g : gl)
    if (g.is_number_integer() && g.get<int64_t>() >= 0 &&
        static_cast<size_t>(g.get<int64_t>()) < s.is_gold.size())
      s.is_gold[static_cast<size_t>(g.get<int64_t>())] = true;
  return s;
}

// The reference's generate_until branch: a choice index target becomes the choice's text; then
// every metric of the list, in list order, scores the response against the gold.
Json process_generation(const Task& task, const std::vector<MetricSpec>& specs, const Doc& doc,
                        const std::vector<Json>& results,
                        std::vector<std::pair<std::string, std::string>>* expanded) {
  const TaskConfig& cfg = task.config();
  Json out = Json::object();
  metrics::GenerationScores s;
  s.gold = task.doc_to_target(doc);
  s.result = results.at(0);
  s.multiple_target = task.multiple_target() > 0;
  if (task.has_choices()) {
    auto choices = *task.doc_to_choice(doc);
    int64_t i = s.gold.is_number_integer() ? s.gold.get<int64_t>() : -1;
    if (i < 0 || i >= static_cast<int64_t>(choices.size()))
      throw UserError(
          "task " + task.name() + ": target " + s.gold.dump() + " is not a valid choice index",
          cfg.where(TaskField::doc_to_target), "an index into doc_to_choice");
    s.gold = choices[static_cast<size_t>(i)];
  } else if (s.multiple_target) {
    // gold stays a list
  } else if (s.result.is_string() && !s.gold.is_string() && !s.result.is_array()) {
    s.gold = text_of(s.gold);
  }
  for (const auto& spec : specs) {
    if (spec.metric_fn) {
      Json v = spec.metric_fn->metric(s.gold, s.result, spec.kwargs, s.multiple_target);
      if (!v.is_object()) {
        out[spec.name] = std::move(v);
        continue;
      }
      // A dict (HF evaluate style): each key is a metric, with this one's aggregation.
      for (auto it = v.begin(); it != v.end(); ++it) {
        out[it.key()] = it.value();
        bool listed = false;
        for (const auto& o : specs) listed = listed || o.name == it.key();
        if (!listed && expanded) expanded->emplace_back(it.key(), spec.name);
      }
      continue;
    }
    const metrics::Metric* m = metrics::find(spec.name);
    if (!m || !m->generate_until) {
      std::string available;
      for (const metrics::Metric* g : metrics::all())
        if (g->generate_until) available += g->name + ", ";
      throw UserError("metric '" + spec.name + "' is not available for generate_until tasks",
                      cfg.where(TaskField::metric_list),
                      available + "or a process_results function");
    }
    out[spec.name] = m->generate_until(s, spec.kwargs);
  }
  return out;
}

}  // namespace

Json process_results(const Task& task, const std::vector<MetricSpec>& specs, const Doc& doc,
                     const std::vector<Json>& results, std::string* notice,
                     std::vector<std::pair<std::string, std::string>>* expanded, Json* written) {
  const TaskConfig& cfg = task.config();
  if (written) *written = nullptr;
  if (is_function_ref(cfg.get(TaskField::process_results)))
    return process_results_by_function(cfg, specs, doc, results, written);
  Json out = Json::object();
  std::string ot = cfg.output_type();
  if (has_metric(specs, "bypass")) {
    // predict_only: the reference's bypass records no value, except None for generations.
    if (ot == "generate_until") out["bypass"] = nullptr;
    return out;
  }
  if (ot == "loglikelihood") {
    const Json& r = results.at(0);
    emit_in_registry_order(specs, &metrics::Metric::loglikelihood,
                           metrics::LoglikelihoodScores{ll_of(r), greedy_of(r)}, out);
    return out;
  }
  if (ot == "loglikelihood_rolling") {
    std::string text = text_of(task.doc_to_target(doc));
    // len(re.split(r"\s+", text)): empty fields at the ends count.
    metrics::RollingScores s{ll_of(results.at(0)),
                             static_cast<int64_t>(pyre::split("\\s+", text).size()),
                             static_cast<int64_t>(text.size())};
    emit_in_registry_order(specs, &metrics::Metric::loglikelihood_rolling, s, out);
    return out;
  }
  if (ot == "multiple_choice") {
    emit_in_registry_order(specs, &metrics::Metric::multiple_choice,
                           choice_scores(task, specs, doc, results, notice), out);
    return out;
  }
  return process_generation(task, specs, doc, results, expanded);
}

}  // namespace lmeval
