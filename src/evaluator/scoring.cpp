// Per-document scoring by output type (spec §7.2).
#include "lmeval/evaluator/scoring.hpp"

#include <algorithm>
#include <cmath>

#include "lmeval/core/error.hpp"
#include "lmeval/core/python_format.hpp"
#include "lmeval/core/regex.hpp"
#include "lmeval/core/unicode.hpp"
#include "lmeval/metrics/metrics.hpp"

namespace lmeval {

std::vector<MetricSpec> metric_specs(const TaskConfig& cfg, bool predict_only) {
  std::vector<MetricSpec> out;
  if (predict_only) {
    out.push_back({"bypass", "bypass", nullptr, true, Json::object()});
    return out;
  }
  const Json& list = cfg.get("metric_list");
  if (!list.is_array()) {
    std::string ot = cfg.output_type();
    std::vector<std::string> names;
    if (ot == "loglikelihood") names = {"perplexity", "acc"};
    else if (ot == "loglikelihood_rolling") names = {"word_perplexity", "byte_perplexity", "bits_per_byte"};
    else if (ot == "multiple_choice") names = {"acc", "acc_norm"};
    else names = {"exact_match"};
    for (const auto& n : names) {
      const MetricInfo* m = find_metric(n);
      out.push_back({n, m->aggregation, nullptr, m->higher_is_better, Json::object()});
    }
    return out;
  }
  bool custom_results = cfg.has("process_results");
  size_t i = 0;
  for (const auto& entry : list) {
    SourceLocation where = cfg.where("metric_list");
    where.field = "metric_list[" + std::to_string(i++) + "]";
    MetricSpec s;
    const Json& m = entry["metric"];
    if (!m.is_string())
      throw UserError("metric name must be a string", where, "metric: <name>");
    s.name = m.get<std::string>();
    const MetricInfo* info = find_metric(s.name);
    if (!custom_results && !info) {
      std::vector<std::string> names;
      for (const auto& r : metric_registry()) names.push_back(r.name);
      throw UserError("unknown metric '" + s.name + "'", where,
                      "one of the metrics listed by `lm-eval ls metrics`, or a process_results function");
    }
    for (auto it = entry.begin(); it != entry.end(); ++it)
      if (it.key() != "metric" && it.key() != "aggregation" && it.key() != "higher_is_better" &&
          it.key() != "hf_evaluate")
        s.kwargs[it.key()] = it.value();
    if (entry.contains("aggregation")) {
      const Json& a = entry["aggregation"];
      if (a.is_string()) {
        if (!is_aggregation(a.get<std::string>()))
          throw UserError("unknown aggregation '" + a.get<std::string>() + "'", where,
                          "mean, median, perplexity, weighted_perplexity, bits_per_byte, f1, "
                          "matthews_corrcoef, brier_score, nanmean, or !function");
        s.aggregation = a.get<std::string>();
      } else if (is_function_ref(a)) {
        s.aggregation_fn = &resolve_function_ref(a);
        if (!s.aggregation_fn->aggregation)
          throw UserError("function is not an aggregation", where, "an aggregation function");
      }
    } else {
      s.aggregation = info ? info->aggregation : "mean";
    }
    if (entry.contains("higher_is_better") && entry["higher_is_better"].is_boolean())
      s.higher_is_better = entry["higher_is_better"].get<bool>();
    else
      s.higher_is_better = info ? info->higher_is_better : true;
    if (s.name == "exact_match" && !custom_results) {
      static const std::vector<std::string> ok = {"regexes_to_ignore", "ignore_case",
                                                  "ignore_punctuation", "ignore_numbers"};
      for (auto it = s.kwargs.begin(); it != s.kwargs.end(); ++it)
        if (std::find(ok.begin(), ok.end(), it.key()) == ok.end())
          throw UserError("unknown exact_match option '" + it.key() + "'", where,
                          "regexes_to_ignore, ignore_case, ignore_punctuation, ignore_numbers");
    }
    out.push_back(std::move(s));
  }
  return out;
}

void add_continuous_metrics(const TaskConfig& cfg, std::vector<MetricSpec>& metrics) {
  if (cfg.output_type() != "multiple_choice") return;
  const Json& pr = cfg.get("process_results");
  if (is_function_ref(pr) && !resolve_function_ref(pr).gold_choices) return;
  for (const char* name : {"p_correct", "logprob_gold_margin"}) {
    bool present = false;
    for (const auto& m : metrics) present = present || m.name == name;
    if (!present) metrics.push_back({name, "mean", nullptr, true, Json::object()});
  }
}

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

ExactMatchOptions em_options(const Json& kw) {
  ExactMatchOptions o;
  if (kw.contains("regexes_to_ignore") && kw["regexes_to_ignore"].is_array())
    for (const auto& r : kw["regexes_to_ignore"]) o.regexes_to_ignore.push_back(r.get<std::string>());
  o.ignore_case = kw.value("ignore_case", false);
  o.ignore_punctuation = kw.value("ignore_punctuation", false);
  o.ignore_numbers = kw.value("ignore_numbers", false);
  return o;
}

std::string text_of(const Json& v) { return v.is_string() ? v.get<std::string>() : py::str(v); }

bool wants_continuous(const std::vector<MetricSpec>& ms) {
  return has_metric(ms, "p_correct") || has_metric(ms, "logprob_gold_margin");
}

// p_correct and logprob_gold_margin over the choices' raw log-likelihoods (those acc compares):
// the golds' share of the softmax, and the best gold minus the best wrong choice. No gold: 0 for
// both (the document counts as missed); no wrong choice: a margin of 0.
void add_continuous_scores(const std::vector<MetricSpec>& metrics, const std::vector<double>& lls,
                           const std::vector<bool>& is_gold, Json& out) {
  const size_t n = std::min(lls.size(), is_gold.size());
  bool any_gold = false;
  double mx = -INFINITY, best_gold = -INFINITY, best_wrong = -INFINITY;
  for (size_t i = 0; i < n; ++i) {
    any_gold = any_gold || is_gold[i];
    mx = std::max(mx, lls[i]);
    double& best = is_gold[i] ? best_gold : best_wrong;
    best = std::max(best, lls[i]);
  }
  double sum = 0, gold_mass = 0;
  for (size_t i = 0; i < n; ++i) {
    const double e = std::exp(lls[i] - mx);
    sum += e;
    if (is_gold[i]) gold_mass += e;
  }
  if (has_metric(metrics, "p_correct")) out["p_correct"] = any_gold && sum > 0 ? gold_mass / sum : 0.0;
  if (has_metric(metrics, "logprob_gold_margin"))
    out["logprob_gold_margin"] = !any_gold || std::isinf(best_wrong) ? 0.0 : best_gold - best_wrong;
}

}  // namespace

Json process_results(const Task& task, const std::vector<MetricSpec>& metrics, const Doc& doc,
                     const std::vector<Json>& results, std::string* notice) {
  const TaskConfig& cfg = task.config();
  const Json& pr = cfg.get("process_results");
  if (is_function_ref(pr)) {
    const auto& fn = resolve_function_ref(pr);
    if (!fn.process_results)
      throw UserError("function is not a process_results function", cfg.where("process_results"),
                      "process_results(doc, results)");
    Json out = fn.process_results(doc, results);
    if (fn.gold_choices && wants_continuous(metrics)) {
      std::vector<double> lls;
      for (const auto& r : results) lls.push_back(ll_of(r));
      std::vector<bool> is_gold(lls.size(), false);
      for (size_t g : fn.gold_choices(doc))
        if (g < is_gold.size()) is_gold[g] = true;
      add_continuous_scores(metrics, lls, is_gold, out);
    }
    return out;
  }
  Json out = Json::object();
  std::string ot = cfg.output_type();
  if (has_metric(metrics, "bypass")) {
    if (ot == "generate_until") out["bypass"] = nullptr;
    return out;
  }
  if (ot == "loglikelihood") {
    const Json& r = results.at(0);
    if (has_metric(metrics, "perplexity")) out["perplexity"] = ll_of(r);
    if (has_metric(metrics, "acc")) out["acc"] = greedy_of(r) ? 1 : 0;
    return out;
  }
  if (ot == "loglikelihood_rolling") {
    double ll = ll_of(results.at(0));
    std::string text = text_of(task.doc_to_target(doc));
    // len(re.split(r"\s+", text)): empty fields at the ends count.
    int64_t words = static_cast<int64_t>(pyre::split("\\s+", text).size());
    int64_t bytes = static_cast<int64_t>(text.size());
    if (has_metric(metrics, "word_perplexity")) out["word_perplexity"] = Json::array({ll, words});
    if (has_metric(metrics, "byte_perplexity")) out["byte_perplexity"] = Json::array({ll, bytes});
    if (has_metric(metrics, "bits_per_byte")) out["bits_per_byte"] = Json::array({ll, bytes});
    return out;
  }
  if (ot == "multiple_choice") {
    auto choices = *task.doc_to_choice(doc);
    size_t n = choices.size();
    std::vector<double> lls;
    std::vector<bool> greedy;
    for (const auto& r : results) {
      lls.push_back(ll_of(r));
      greedy.push_back(greedy_of(r));
    }
    std::vector<double> lls_uncond;
    if (2 * n == lls.size() && has_metric(metrics, "acc_mutual_info")) {
      lls_uncond.assign(lls.begin() + static_cast<long>(n), lls.end());
      lls.resize(n);
    }
    std::vector<double> norm(lls.size()), byte(lls.size());
    for (size_t i = 0; i < lls.size() && i < n; ++i) {
      norm[i] = lls[i] / static_cast<double>(unicode::length(choices[i]));
      byte[i] = lls[i] / static_cast<double>(choices[i].size());
    }
    size_t pred = np_argmax(lls), pred_norm = np_argmax(norm), pred_byte = np_argmax(byte);
    Json gold = task.multiple_input() ? task.doc_to_text(doc) : task.doc_to_target(doc);
    auto to_index = [&](const Json& g) -> int64_t {
      if (g.is_number_integer()) {
        int64_t i = g.get<int64_t>();
        return i < static_cast<int64_t>(n) ? i : -100;
      }
      if (g.is_boolean()) return g.get<bool>() ? 1 : 0;
      if (g.is_string()) {
        auto it = std::find(choices.begin(), choices.end(), g.get<std::string>());
        return it == choices.end() ? -100 : static_cast<int64_t>(it - choices.begin());
      }
      return -100;
    };
    bool multi = task.multiple_target() > 0 || gold.is_array();
    Json gold_out;
    double acc, acc_norm, acc_bytes;
    int exact;
    int64_t gold_single = -100;
    if (multi) {
      std::vector<int64_t> golds;
      Json gl = gold.is_array() ? gold : Json::array({gold});
      for (const auto& g : gl) golds.push_back(to_index(g));
      auto in = [&](size_t p) { return std::find(golds.begin(), golds.end(), static_cast<int64_t>(p)) != golds.end(); };
      acc = in(pred) ? 1.0 : 0.0;
      acc_norm = in(pred_norm) ? 1.0 : 0.0;
      acc_bytes = in(pred_byte) ? 1.0 : 0.0;
      exact = 0;
      for (auto g : golds)
        if (g != -100 && g >= 0 && static_cast<size_t>(g) < greedy.size() && greedy[static_cast<size_t>(g)]) exact = 1;
      gold_out = golds;
    } else {
      gold_single = to_index(gold);
      acc = static_cast<int64_t>(pred) == gold_single ? 1.0 : 0.0;
      acc_norm = static_cast<int64_t>(pred_norm) == gold_single ? 1.0 : 0.0;
      acc_bytes = static_cast<int64_t>(pred_byte) == gold_single ? 1.0 : 0.0;
      exact = gold_single != -100 && gold_single >= 0 ? (greedy[static_cast<size_t>(gold_single)] ? 1 : 0) : 0;
      gold_out = gold_single;
    }
    bool gold_missing = multi ? std::find(gold_out.begin(), gold_out.end(), Json(-100)) != gold_out.end()
                              : gold_single == -100;
    if (gold_missing && notice)
      *notice = "target " + gold.dump() + " names none of the " + std::to_string(n) +
                " choices (neither an index below " + std::to_string(n) +
                " nor a choice's text); scored as wrong, as the reference does";
    if (has_metric(metrics, "acc")) out["acc"] = acc;
    if (has_metric(metrics, "f1")) out["f1"] = Json::array({gold_out, pred});
    if (has_metric(metrics, "mcc")) out["mcc"] = Json::array({gold_out, pred});
    if (has_metric(metrics, "acc_norm")) out["acc_norm"] = acc_norm;
    if (has_metric(metrics, "acc_bytes")) out["acc_bytes"] = acc_bytes;
    if (has_metric(metrics, "exact_match")) out["exact_match"] = exact;
    if (has_metric(metrics, "brier_score")) {
      double mx = *std::max_element(lls.begin(), lls.end());
      std::vector<double> e;
      double sum = 0;
      for (double l : lls) {
        e.push_back(std::exp(l - mx));
        sum += e.back();
      }
      Json probs = Json::array();
      for (double x : e) probs.push_back(x / sum);
      out["brier_score"] = Json::array({gold_out, probs});
    }
    if (has_metric(metrics, "likelihood")) out["likelihood"] = Json::array({gold_out, lls});
    if (wants_continuous(metrics)) {
      // The golds: the valid distinct gold indices.
      std::vector<bool> is_gold(std::min(lls.size(), n), false);
      Json gl = multi ? gold_out : Json::array({gold_single});
      for (const auto& g : gl)
        if (g.is_number_integer() && g.get<int64_t>() >= 0 && static_cast<size_t>(g.get<int64_t>()) < is_gold.size())
          is_gold[static_cast<size_t>(g.get<int64_t>())] = true;
      add_continuous_scores(metrics, lls, is_gold, out);
    }
    if (has_metric(metrics, "acc_mutual_info")) {
      std::vector<double> mi;
      for (size_t i = 0; i < lls.size() && i < lls_uncond.size(); ++i) mi.push_back(lls[i] - lls_uncond[i]);
      out["acc_mutual_info"] = !mi.empty() && static_cast<int64_t>(np_argmax(mi)) == gold_single ? 1.0 : 0.0;
    }
    return out;
  }
  // generate_until
  Json gold = task.doc_to_target(doc);
  const Json& result = results.at(0);
  if (task.has_choices()) {
    auto choices = *task.doc_to_choice(doc);
    int64_t i = gold.is_number_integer() ? gold.get<int64_t>() : -1;
    if (i < 0 || i >= static_cast<int64_t>(choices.size()))
      throw UserError("task " + task.name() + ": target " + gold.dump() + " is not a valid choice index",
                      cfg.where("doc_to_target"), "an index into doc_to_choice");
    gold = choices[static_cast<size_t>(i)];
  } else if (task.multiple_target() > 0) {
    // gold stays a list
  } else if (result.is_string() && !gold.is_string() && !result.is_array()) {
    gold = text_of(gold);
  }
  for (const auto& m : metrics) {
    if (m.name != "exact_match")
      throw UserError("metric '" + m.name + "' is not available for generate_until tasks",
                      cfg.where("metric_list"), "exact_match, or a process_results function");
    ExactMatchOptions o = em_options(m.kwargs);
    std::string pred = result.is_string() ? result.get<std::string>() : text_of(result);
    if (task.multiple_target() > 0) {
      Json golds = gold.is_array() ? gold : Json::array({gold});
      double total = 0;
      for (const auto& g : golds) total += exact_match(pred, text_of(g), o);
      out["exact_match"] = (total / static_cast<double>(golds.size())) > 0.0 ? 1.0 : 0.0;
    } else {
      out["exact_match"] = exact_match(pred, text_of(gold), o);
    }
  }
  return out;
}

}  // namespace lmeval
