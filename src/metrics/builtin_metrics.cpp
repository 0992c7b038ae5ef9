// The built-in metrics: per-document computations of the reference's
// ConfigurableTask.process_results (spec §7.2), their default aggregations and directions.
#include <algorithm>
#include <cmath>

#include "builtins.hpp"
#include "lmeval/core/python_format.hpp"
#include "lmeval/metrics/metrics.hpp"

namespace lmeval::metrics {

bool ChoiceScores::is_correct(size_t p) const {
  if (!multiple_gold) return static_cast<int64_t>(p) == gold_single;
  for (const auto& g : gold)
    if (g.is_number_integer() && g.get<int64_t>() == static_cast<int64_t>(p)) return true;
  return false;
}

namespace {

std::string text_or_str(const Json& v) { return v.is_string() ? v.get<std::string>() : py::str(v); }

// exact_match's metric_list keywords (the reference passes them to exact_match_hf_evaluate).
ExactMatchOptions exact_match_options(const Json& kw) {
  ExactMatchOptions o;
  if (kw.contains("regexes_to_ignore") && kw["regexes_to_ignore"].is_array())
    for (const auto& r : kw["regexes_to_ignore"])
      o.regexes_to_ignore.push_back(r.get<std::string>());
  o.ignore_case = kw.value("ignore_case", false);
  o.ignore_punctuation = kw.value("ignore_punctuation", false);
  o.ignore_numbers = kw.value("ignore_numbers", false);
  return o;
}

// generate_until exact_match; with multiple targets the reference scores the prediction against
// every target and reports 1.0 when the mean is above 0 (any target matches).
Json exact_match_generation(const GenerationScores& s, const Json& kwargs) {
  ExactMatchOptions o = exact_match_options(kwargs);
  std::string pred = s.result.is_string() ? s.result.get<std::string>() : text_or_str(s.result);
  if (s.multiple_target) {
    Json golds = s.gold.is_array() ? s.gold : Json::array({s.gold});
    double total = 0;
    for (const auto& g : golds) total += exact_match(pred, text_or_str(g), o);
    return (total / static_cast<double>(golds.size())) > 0.0 ? 1.0 : 0.0;
  }
  return exact_match(pred, text_or_str(s.gold), o);
}

// multiple_choice exact_match: the gold continuation is the model's greedy one. is_greedy[gold]
// with Python's indexing, as in the reference's ConfigurableTask.process_results: a negative index
// counts from the end (one past -n raises IndexError there; here it is scored 0, and
// process_results warns about every negative target).
bool greedy_at(const ChoiceScores& s, int64_t g) {
  if (g == -100) return false;
  int64_t n = static_cast<int64_t>(s.greedy.size());
  int64_t k = g >= 0 ? g : g + n;
  return k >= 0 && k < n && s.greedy[static_cast<size_t>(k)];
}

Json exact_match_choice(const ChoiceScores& s) {
  if (s.multiple_gold) {
    for (const auto& gj : s.gold)
      if (greedy_at(s, gj.get<int64_t>())) return 1;
    return 0;
  }
  return greedy_at(s, s.gold_single) ? 1 : 0;
}

// The choices' softmax probabilities (brier_score's second item).
Json choice_probabilities(const std::vector<double>& lls) {
  double mx = *std::max_element(lls.begin(), lls.end());
  std::vector<double> e;
  double sum = 0;
  for (double l : lls) {
    e.push_back(std::exp(l - mx));
    sum += e.back();
  }
  Json probs = Json::array();
  for (double x : e) probs.push_back(x / sum);
  return probs;
}

// lm-eval's own --continuous_metrics over the choices' raw log-likelihoods (those acc compares):
// p_correct is the golds' share of the softmax; logprob_gold_margin the best gold minus the best
// wrong choice. No gold: 0 for both (the document counts as missed); no wrong choice: a margin of
// 0.
struct GoldMass {
  bool any_gold = false;
  double sum = 0, gold_mass = 0, best_gold = -INFINITY, best_wrong = -INFINITY;
};
GoldMass gold_mass(const ChoiceScores& s) {
  const size_t n = std::min(s.lls.size(), s.is_gold.size());
  GoldMass m;
  double mx = -INFINITY;
  for (size_t i = 0; i < n; ++i) {
    m.any_gold = m.any_gold || s.is_gold[i];
    mx = std::max(mx, s.lls[i]);
    double& best = s.is_gold[i] ? m.best_gold : m.best_wrong;
    best = std::max(best, s.lls[i]);
  }
  for (size_t i = 0; i < n; ++i) {
    const double e = std::exp(s.lls[i] - mx);
    m.sum += e;
    if (s.is_gold[i]) m.gold_mass += e;
  }
  return m;
}

Json acc_mutual_info(const ChoiceScores& s) {
  std::vector<double> mi;
  for (size_t i = 0; i < s.lls.size() && i < s.lls_uncond.size(); ++i)
    mi.push_back(s.lls[i] - s.lls_uncond[i]);
  return !mi.empty() && static_cast<int64_t>(np_argmax(mi)) == s.gold_single ? 1.0 : 0.0;
}

}  // namespace

// Registration order = the key order of the reference's result dicts: loglikelihood
// {perplexity, acc}; multiple_choice {acc, f1, mcc, acc_norm, acc_bytes, exact_match, brier_score,
// likelihood} then lm-eval's continuous metrics and acc_mutual_info; loglikelihood_rolling
// {word_perplexity, byte_perplexity, bits_per_byte}.
std::vector<Metric> builtin_metrics() {
  std::vector<Metric> r;
  auto add = [&r](std::string name, std::string aggregation, bool higher,
                  std::string output_types) -> Metric& {
    Metric m;
    m.name = std::move(name);
    m.aggregation = std::move(aggregation);
    m.higher_is_better = higher;
    m.output_types = std::move(output_types);
    r.push_back(std::move(m));
    return r.back();
  };
  add("perplexity", "perplexity", false, "loglikelihood").loglikelihood =
      [](const LoglikelihoodScores& s) { return Json(s.ll); };
  {
    Metric& acc = add("acc", "mean", true, "multiple_choice, loglikelihood");
    acc.loglikelihood = [](const LoglikelihoodScores& s) { return Json(s.greedy ? 1 : 0); };
    acc.multiple_choice = [](const ChoiceScores& s) {
      return Json(s.is_correct(s.pred) ? 1.0 : 0.0);
    };
  }
  add("f1", "f1", true, "multiple_choice").multiple_choice = [](const ChoiceScores& s) {
    return Json::array({s.gold, s.pred});
  };
  add("mcc", "matthews_corrcoef", true, "multiple_choice").multiple_choice =
      [](const ChoiceScores& s) {
        return Json::array({s.gold, s.pred});
      };
  add("acc_norm", "mean", true, "multiple_choice").multiple_choice = [](const ChoiceScores& s) {
    return Json(s.is_correct(s.pred_norm) ? 1.0 : 0.0);
  };
  add("acc_bytes", "mean", true, "multiple_choice").multiple_choice = [](const ChoiceScores& s) {
    return Json(s.is_correct(s.pred_bytes) ? 1.0 : 0.0);
  };
  {
    Metric& em = add("exact_match", "mean", true, "generate_until, multiple_choice");
    em.multiple_choice = exact_match_choice;
    em.generate_until = exact_match_generation;
    em.kwargs = std::vector<std::string>{"regexes_to_ignore", "ignore_case", "ignore_punctuation",
                                         "ignore_numbers"};
  }
  // bleu_fn / chrf_fn / chrfpp_fn / ter_fn pass [gold, result] through to the corpus aggregation;
  // ter is the one where lower is better.
  for (const char* name : {"bleu", "chrf", "chrf++", "ter"})
    add(name, name, std::string(name) != "ter", "generate_until").generate_until =
        [](const GenerationScores& s, const Json&) {
          return Json::array({s.gold, s.result});
        };
  add("brier_score", "brier_score", false, "multiple_choice").multiple_choice =
      [](const ChoiceScores& s) {
        return Json::array({s.gold, choice_probabilities(s.lls)});
      };
  add("likelihood", "mean", true, "multiple_choice").multiple_choice = [](const ChoiceScores& s) {
    return Json::array({s.gold, s.lls});
  };
  {
    Metric& p = add("p_correct", "mean", true, "multiple_choice");
    p.continuous = true;
    p.multiple_choice = [](const ChoiceScores& s) {
      GoldMass m = gold_mass(s);
      return Json(m.any_gold && m.sum > 0 ? m.gold_mass / m.sum : 0.0);
    };
  }
  {
    Metric& margin = add("logprob_gold_margin", "mean", true, "multiple_choice");
    margin.continuous = true;
    margin.multiple_choice = [](const ChoiceScores& s) {
      GoldMass m = gold_mass(s);
      return Json(!m.any_gold || std::isinf(m.best_wrong) ? 0.0 : m.best_gold - m.best_wrong);
    };
  }
  {
    Metric& mi = add("acc_mutual_info", "mean", true, "multiple_choice");
    mi.multiple_choice = acc_mutual_info;
    mi.needs_unconditional = true;
  }
  add("word_perplexity", "weighted_perplexity", false, "loglikelihood_rolling")
      .loglikelihood_rolling = [](const RollingScores& s) {
    return Json::array({s.ll, s.words});
  };
  add("byte_perplexity", "weighted_perplexity", false, "loglikelihood_rolling")
      .loglikelihood_rolling = [](const RollingScores& s) {
    return Json::array({s.ll, s.bytes});
  };
  add("bits_per_byte", "bits_per_byte", false, "loglikelihood_rolling").loglikelihood_rolling =
      [](const RollingScores& s) {
        return Json::array({s.ll, s.bytes});
      };
  // Scored by task functions (process_results), named here for their aggregation and direction.
  add("acc_all", "mean", true, "multiple_choice");
  add("bypass", "bypass", true, "any (predict_only)");
  return r;
}

}  // namespace lmeval::metrics
