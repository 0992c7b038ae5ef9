// Scores over a series of checkpoints: monotonicity and signal-to-noise per task and metric.
#include "lmeval/analysis/series.hpp"

#include <fmt/format.h>
#include <cmath>

#include "analysis/number_format.hpp"
#include "analysis/text_table.hpp"
#include "lmeval/analysis/comparability.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/stats/rank_correlation.hpp"

namespace lmeval::analysis {

namespace {

double number_at(const Json& obj, const std::string& key) {
  return obj.is_object() && obj.contains(key) && obj[key].is_number() ? obj[key].get<double>()
                                                                      : std::nan("");
}

// A checkpoint's score as compare pairs it (the seed mean with --fewshot_seeds) and its noise.
struct Point {
  double score = std::nan(""), noise = std::nan("");
  std::string basis = "one few-shot seed", noise_kind = "stderr (item sampling)";
};
Point point_of(const Run& run, const std::string& task, const std::string& key) {
  Point p;
  const Json& fsv =
      run.results.contains("fewshot_seed_variance") ? run.results["fewshot_seed_variance"] : Json();
  if (fsv.is_object() && fsv.contains(task) && fsv[task].contains(key) &&
      fsv[task][key].contains("values") && fsv[task][key]["values"].size() >= 2) {
    p.score = number_at(fsv[task][key], "mean");
    p.noise = number_at(fsv[task][key], "std");
    p.basis = fmt::format("mean of {} few-shot seeds", fsv[task][key]["values"].size());
    p.noise_kind = "few-shot seed std";
    return p;
  }
  const Json& res = run.results["results"].contains(task) ? run.results["results"][task] : Json();
  p.score = number_at(res, key);
  const std::size_t comma = key.find(',');
  p.noise = number_at(res, key.substr(0, comma) + "_stderr" + key.substr(comma));
  return p;
}

}  // namespace

Series series_of(const std::vector<Run>& runs) {
  if (runs.size() < 3)
    throw UserError("--series needs three or more checkpoints; got " + std::to_string(runs.size()),
                    {"", 0, 0, "--series"},
                    "the output folders of one model's checkpoints, in training order");
  Series s;
  for (const auto& r : runs) {
    s.labels.push_back(r.label);
    s.sources.push_back(r.source);
  }
  std::vector<std::string> tasks = common_tasks(runs[0], runs[1]);
  for (std::size_t r = 1; r < runs.size(); ++r) {
    const auto common = common_tasks(runs[0], runs[r]);
    std::erase_if(tasks, [&](const std::string& t) {
      return std::find(common.begin(), common.end(), t) == common.end();
    });
    require_same_prompts(runs[0], runs[r], common);
  }
  for (const auto& task : tasks) {
    const Json& entry = runs[0].results["results"][task];
    for (auto it = entry.begin(); it != entry.end(); ++it) {
      const std::string& key = it.key();
      const std::size_t comma = key.find(',');
      if (comma == std::string::npos || !it.value().is_number()) continue;
      const std::string metric = key.substr(0, comma);
      if (metric.ends_with("_stderr")) continue;
      SeriesRow row;
      row.task = task;
      row.key = key;
      std::vector<double> order;
      Point last;
      for (std::size_t r = 0; r < runs.size(); ++r) {
        last = point_of(runs[r], task, key);
        row.scores.push_back(last.score);
        order.push_back(static_cast<double>(r));
      }
      row.basis = last.basis;
      row.noise_kind = last.noise_kind;
      row.noise = last.noise;
      row.monotonicity = stats::kendall_tau_b(order, row.scores);
      row.signal_to_noise =
          row.noise > 0 ? (row.scores.back() - row.scores.front()) / row.noise : std::nan("");
      s.rows.push_back(std::move(row));
    }
  }
  return s;
}

Json to_json(const Series& s) {
  Json rows = Json::array();
  for (const auto& r : s.rows) {
    Json scores = Json::array();
    for (double v : r.scores) scores.push_back(format::number(v));
    rows.push_back({{"task", r.task},
                    {"metric", r.key},
                    {"scores", scores},
                    {"score_basis", r.basis},
                    {"monotonicity", format::number(r.monotonicity)},
                    {"noise", format::number(r.noise)},
                    {"noise_kind", r.noise_kind},
                    {"signal_to_noise", format::number(r.signal_to_noise)}});
  }
  return {{"checkpoints", s.labels}, {"sources", s.sources}, {"series", rows}};
}

std::string render_text(const Series& s) {
  std::string out = "Checkpoints, in order:\n";
  for (std::size_t i = 0; i < s.labels.size(); ++i)
    out += fmt::format("  {}: {} ({})\n", i + 1, s.labels[i], s.sources[i]);
  out += "\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : s.rows) {
    std::string scores;
    for (double v : r.scores) scores += (scores.empty() ? "" : " → ") + format::fixed(v);
    rows.push_back({r.task, r.key, scores, format::fixed(r.monotonicity, 3), format::fixed(r.noise),
                    r.noise_kind, format::fixed(r.signal_to_noise, 2)});
  }
  out += text_table({"Task", "Metric", "Scores", "Monotonicity (Kendall tau)", "Noise", "Noise is",
                     "Signal/noise"},
                    rows, {false, false, false, true, true, false, true});
  out +=
      "\nNotes:\n"
      "- monotonicity: Kendall's tau-b between checkpoint order and score (1: every later "
      "checkpoint scores higher; "
      "near 0: no trend), as Madaan et al. (2024) measure a benchmark's monotonicity over "
      "training\n"
      "- signal/noise: (last score - first score) / the noise of one checkpoint's score at the "
      "last checkpoint (the "
      "few-shot seed std where the runs have seeds, else the item-sampling stderr); below about 2 "
      "the change over "
      "the series is within what re-running one checkpoint could give\n";
  return out;
}

}  // namespace lmeval::analysis
