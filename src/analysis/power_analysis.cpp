// Sample-size planning: items needed = design effect × (k·sd_d/Δ)², k the MDE of a unit SE
// (stats::items_needed), sd_d the per-item sd of the paired difference.
#include "lmeval/analysis/power_analysis.hpp"

#include <fmt/format.h>
#include <cmath>

#include "analysis/number_format.hpp"
#include "analysis/text_table.hpp"
#include "lmeval/analysis/comparability.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/stats/clustered.hpp"
#include "lmeval/stats/paired.hpp"
#include "lmeval/stats/power.hpp"

namespace lmeval::analysis {

namespace {

void finish(PowerRow& r, const PowerOptions& o) {
  const double need = stats::items_needed(o.difference, r.sd_difference, o.alpha, o.power);
  if (std::isnan(need)) {
    r.items_needed = std::nan("");
    if (r.undefined.empty())
      r.undefined = "the per-item spread of the difference is 0: every item would differ alike";
  } else {
    r.items_needed = std::ceil(need * r.design_effect - 1e-9);
  }
  r.power_now =
      r.n > 0 && r.sd_difference > 0
          ? stats::power_of_test(
                o.difference,
                r.sd_difference * std::sqrt(r.design_effect / static_cast<double>(r.n)), o.alpha)
          : std::nan("");
}

// Clustered design effect of per-item values x: (max(plain, clustered SE)/plain SE)².
double design_effect(const std::vector<double>& x, const std::vector<std::string>& cluster,
                     std::size_t& clusters) {
  const auto c = stats::clustered_stderr(x, cluster);
  clusters = c.n_clusters;
  const double plain = std::sqrt(stats::sample_variance(x) / static_cast<double>(x.size()));
  if (!(plain > 0) || std::isnan(c.stderr)) return 1;
  const double se = stats::conservative_stderr(plain, c.stderr);
  return (se / plain) * (se / plain);
}

}  // namespace

PowerAnalysis power_analysis(const std::vector<Run>& runs, const PowerOptions& o) {
  if (!(std::fabs(o.difference) > 0))
    throw UserError("the target difference must be a non-zero number", {"", 0, 0, "--difference"},
                    "e.g. 0.02 (two points of accuracy)");
  if (!(o.power > 0 && o.power < 1))
    throw UserError("power must lie in (0, 1)", {"", 0, 0, "--power"}, "e.g. 0.8");
  if (!(o.alpha > 0 && o.alpha < 1))
    throw UserError("alpha must lie in (0, 1)", {"", 0, 0, "--alpha"}, "e.g. 0.05");
  if (!(o.correlation > -1 && o.correlation < 1))
    throw UserError("the correlation must lie in (-1, 1)", {"", 0, 0, "--correlation"},
                    "e.g. 0.5 for two checkpoints of one model");
  if (runs.size() > 2)
    throw UserError("power takes at most two runs", {"", 0, 0, "RUN..."}, "zero, one or two runs");
  PowerAnalysis p;
  p.options = o;
  const double spread_factor = std::sqrt(2 * (1 - o.correlation));
  if (runs.empty()) {
    if (o.accuracy.has_value() == o.sd.has_value())
      throw UserError("without a run, give exactly one of --accuracy and --sd",
                      {"", 0, 0, "--accuracy"},
                      "a guessed accuracy (0 < p < 1) or per-item standard deviation");
    if (o.accuracy && !(*o.accuracy > 0 && *o.accuracy < 1))
      throw UserError("the accuracy must lie in (0, 1)", {"", 0, 0, "--accuracy"}, "e.g. 0.6");
    PowerRow r;
    r.sd_item = o.accuracy ? std::sqrt(*o.accuracy * (1 - *o.accuracy)) : *o.sd;
    r.sd_difference = r.sd_item * spread_factor;
    r.correlation = o.correlation;
    finish(r, o);
    p.rows.push_back(r);
    return p;
  }
  for (const auto& run : runs) p.sources.push_back(run.source);
  const Run& a = runs[0];
  std::vector<std::string> tasks = runs.size() == 2 ? common_tasks(a, runs[1]) : a.tasks();
  if (runs.size() == 2) require_same_prompts(a, runs[1], tasks, true);
  for (const auto& task : tasks) {
    auto sa = a.samples.find(task);
    if (sa == a.samples.end()) continue;
    const TaskSamples& ta = sa->second;
    for (const auto& key : ta.score_keys) {
      PowerRow r;
      r.task = task;
      r.key = key;
      std::vector<double> x, y;
      std::vector<std::string> cl;
      const auto& xa = ta.scores.at(key);
      const TaskSamples* tb = runs.size() == 2 ? &runs[1].samples.at(task) : nullptr;
      if (tb && !tb->scores.count(key)) continue;
      for (std::size_t i = 0; i < ta.items.size(); ++i) {
        if (std::isnan(xa[i])) continue;
        if (tb) {
          auto it = tb->index.find(ta.items[i].key);
          if (it == tb->index.end() || std::isnan(tb->scores.at(key)[it->second])) continue;
          y.push_back(tb->scores.at(key)[it->second]);
        }
        x.push_back(xa[i]);
        cl.push_back(ta.items[i].cluster);
      }
      r.n = x.size();
      if (r.n < 2) continue;
      r.sd_item = std::sqrt(stats::sample_variance(x));
      std::vector<double> spread_of = x;
      if (tb) {
        for (std::size_t i = 0; i < x.size(); ++i) spread_of[i] = y[i] - x[i];
        r.sd_difference = std::sqrt(stats::sample_variance(spread_of));
        r.correlation = stats::pearson(x, y);
      } else {
        r.sd_difference = r.sd_item * spread_factor;
        r.correlation = o.correlation;
      }
      if (!ta.cluster_key.empty()) r.design_effect = design_effect(spread_of, cl, r.clusters);
      if (r.sd_item == 0 && !tb)
        r.undefined =
            "every item scored the same in this run: no spread to plan from (give a guess with "
            "--accuracy)";
      finish(r, o);
      p.rows.push_back(r);
    }
  }
  return p;
}

Json to_json(const PowerAnalysis& p) {
  Json j = {{"difference", p.options.difference},
            {"power", p.options.power},
            {"alpha", p.options.alpha},
            {"runs", p.sources}};
  Json rows = Json::array();
  for (const auto& r : p.rows) {
    Json row = {{"task", r.task.empty() ? Json() : Json(r.task)},
                {"metric", r.key.empty() ? Json() : Json(r.key)},
                {"n", r.n},
                {"sd_item", format::number(r.sd_item)},
                {"sd_difference", format::number(r.sd_difference)},
                {"correlation", format::number(r.correlation)},
                {"design_effect", format::number(r.design_effect)},
                {"items_needed", format::number(r.items_needed)},
                {"power_at_n", format::number(r.power_now)}};
    if (r.clusters) row["clusters"] = r.clusters;
    if (!r.undefined.empty()) row["undefined"] = r.undefined;
    rows.push_back(row);
  }
  j["rows"] = rows;
  return j;
}

std::string render_text(const PowerAnalysis& p) {
  const auto& o = p.options;
  std::string out = fmt::format(
      "Items needed to detect a true difference of {} with {:.0f}% power at the {}% level "
      "(two-sided)\n\n",
      format::signed_fixed(o.difference), o.power * 100, o.alpha * 100);
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : p.rows)
    rows.push_back(
        {r.task.empty() ? "(guess)" : r.task, r.key, r.n ? std::to_string(r.n) : "",
         format::fixed(r.sd_item), format::fixed(r.sd_difference), format::fixed(r.correlation, 3),
         format::fixed(r.design_effect, 3),
         std::isnan(r.items_needed) ? "undefined" : fmt::format("{:.0f}", r.items_needed),
         r.n ? format::fixed(r.power_now, 3) : ""});
  out += text_table({"Task", "Metric", "n", "SD (item)", "SD (difference)", "Correlation",
                     "Design effect", "Items needed", "Power at n"},
                    rows, {false, false, true, true, true, true, true, true, true});
  out += "\nNotes:\n";
  out += "- items needed = design effect x (k x SD(difference) / difference)^2, k = " +
         format::fixed(stats::minimum_detectable_difference(1.0, o.alpha, o.power)) +
         " (both rejection tails, statsmodels NormalIndPower with ratio=0); SD(difference) = "
         "SD(item) x sqrt(2(1 - correlation)) "
         "unless two runs give the paired differences themselves\n";
  out +=
      "- design effect: (max(plain, clustered SE) / plain SE)^2 for tasks with a cluster_key, else "
      "1\n";
  for (const auto& r : p.rows)
    if (!r.undefined.empty())
      out += "- " + (r.task.empty() ? std::string("guess") : r.task + " " + r.key) +
             ": items needed undefined: " + r.undefined + "\n";
  return out;
}

}  // namespace lmeval::analysis
