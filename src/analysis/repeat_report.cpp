// Between/within-question variance of sampled answers, per run and score, as analyze and report
// show it.
#include "lmeval/analysis/repeat_report.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <limits>

#include "analysis/number_format.hpp"
#include "analysis/text_table.hpp"

namespace lmeval::analysis {

namespace {

// Variances are small numbers: six decimals keep two or three significant digits in view.
std::string var6(double v) { return format::fixed(v, 6); }

std::string percent(double share) {
  return std::isfinite(share) ? fmt::format("{:.0f}%", 100 * share) : "undefined";
}

}  // namespace

std::vector<RepeatSummary> repeat_summaries(const std::vector<Run>& runs, const std::string& task) {
  std::vector<RepeatSummary> out;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    auto ts = runs[r].samples.find(task);
    if (ts == runs[r].samples.end()) continue;
    std::vector<std::string> keys = ts->second.score_keys;  // samples order first, then any others
    for (const auto& [k, unused] : ts->second.repeat_scores)
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    for (const auto& key : keys) {
      auto rs = ts->second.repeat_scores.find(key);
      if (rs == ts->second.repeat_scores.end()) continue;
      std::vector<std::vector<double>> x;
      for (const auto& answers : rs->second)
        if (!answers.empty()) x.push_back(answers);
      out.push_back({r, key, stats::repeat_variance(x)});
    }
  }
  return out;
}

std::string repeat_advice(const stats::RepeatVariance& v) {
  if (!v.defined()) return "undefined: " + v.undefined;
  const std::size_t k2 = 2 * v.k;
  if (v.within == 0)
    return fmt::format(
        "the {} answers score alike on every question (within-question variance 0, as with greedy "
        "decoding): "
        "more answers per question change nothing; only more questions narrow the SE ({})",
        v.k, format::fixed(v.se));
  const double share = v.within_share();
  std::string s = fmt::format(
      "doubling K to {} would take the SE from {} to {} ({:+.0f}%), as much as {:.2f}x the "
      "questions at K = {}; no K goes below {} "
      "(sampling noise is {} of the variance at K = {})",
      k2, format::fixed(v.se), format::fixed(v.se_with(static_cast<double>(k2))),
      100 * (v.se_with(static_cast<double>(k2)) / v.se - 1),
      v.question_factor(static_cast<double>(k2)), v.k,
      format::fixed(v.se_with(std::numeric_limits<double>::infinity())), percent(share), v.k);
  if (v.between < 0)
    s += fmt::format(
        "; the between-question variance estimate is below 0 ({}), taken as 0 for the projections",
        var6(v.between));
  if (share < 0.1)
    s += ": more questions, not more answers, is what narrows it";
  else if (share > 0.5)
    s += ": more answers per question narrow it cheaply";
  return s;
}

Json to_json(const RepeatSummary& s, const std::vector<std::string>& labels) {
  const auto& v = s.v;
  const double k2 = 2.0 * static_cast<double>(v.k);
  Json j = {{"run", labels.at(s.run)},
            {"metric", s.key},
            {"k", v.k},
            {"n", v.n},
            {"mean", format::number(v.mean)},
            {"between_variance", format::number(v.between)},
            {"within_variance", format::number(v.within)},
            {"variance_of_question_means", format::number(v.var_of_means)},
            {"se", format::number(v.se)},
            {"se_doubled_k", format::number(v.se_with(k2))},
            {"se_infinite_k", format::number(v.se_with(std::numeric_limits<double>::infinity()))},
            {"within_share", format::number(v.within_share())},
            {"advice", repeat_advice(v)}};
  if (!v.defined()) j["undefined"] = v.undefined;
  return j;
}

std::string render_repeat_text(const std::vector<RepeatSummary>& summaries,
                               const std::vector<std::string>& labels) {
  if (summaries.empty()) return {};
  std::vector<std::vector<std::string>> rows;
  for (const auto& s : summaries) {
    const auto& v = s.v;
    rows.push_back({labels.at(s.run), s.key, std::to_string(v.k), std::to_string(v.n),
                    format::fixed(v.mean), var6(v.between), var6(v.within), format::fixed(v.se),
                    format::fixed(v.se_with(2.0 * static_cast<double>(v.k))),
                    format::fixed(v.se_with(std::numeric_limits<double>::infinity()))});
  }
  std::string out =
      "Sampled answers (repeats): each answer scored alone, a question's score the mean of its K "
      "answers "
      "(Miller 2024: Var(mean) = (between + within/K) / n)\n";
  out += text_table({"Run", "Metric", "K", "n", "Mean", "Between-question var",
                     "Within-question var", "SE", "SE at 2K", "SE at K=inf"},
                    rows, {false, false, true, true, true, true, true, true, true, true});
  for (const auto& s : summaries)
    out += fmt::format("- {} {}: {}\n", labels.at(s.run), s.key, repeat_advice(s.v));
  return out;
}

}  // namespace lmeval::analysis
