// `lm-eval compare`: paired differences between two runs of the same prompts, per task, metric
// and filter, and size-weighted per group.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lmeval/analysis/run.hpp"

namespace lmeval::analysis {

struct CompareOptions {
  std::size_t small_below =
      100;  // below this many items a row says how its exact/t inference holds up
  std::string correction =
      "none";                 // "holm" or "bh": adjusted p-values over the rows of one comparison
  bool common_items = false;  // pair over the documents both runs answered, dropping the rest
};

struct MetricComparison {
  std::string task, metric, filter;
  std::size_t n = 0;
  double score_a = 0, score_b = 0;  // means over the paired items
  double diff = 0;                  // score_b − score_a
  // One inference per row: the interval is the one the test inverts, so it excludes 0 exactly when
  // p < 0.05. NaN marks an undefined statistic; `undefined` says why (keys "se", "ci95",
  // "p_value", "mde80").
  double se = 0, ci_low = 0, ci_high = 0, p = 1;
  std::string test;                    // "mcnemar_exact", "paired_t", "clustered_z", "clustered_t"
  std::string interval;                // "exact_conditional" (McNemar), "t", "normal", "cluster_t"
  std::size_t only_a = 0, only_b = 0;  // discordant items for 0/1 metrics
  std::size_t clusters = 0;            // > 0 when the task has a cluster_key
  double df = 0;                       // degrees of freedom of a t test or interval (+inf for z)
  double correlation = 0;    // per-item Pearson correlation of the runs (NaN if undefined)
  double se_mde = 0;         // the SE the MDE assumes: max(paired, clustered)
  double mde = 0;            // minimum detectable difference at 80% power, 5% level
  double p_adjusted = 0;     // with CompareOptions::correction; NaN otherwise
  bool significant = false;  // p (or p_adjusted) < 0.05
  bool higher_is_better = true;
  std::map<std::string, std::string> undefined;
  std::string score_basis;  // "one few-shot seed" or "mean of K few-shot seeds"
  // Both runs with the same K >= 2 few-shot seeds: the SE of the seed-mean difference counting
  // item and seed variance (stats::seed_item_stderr on the per-seed paired differences); NaN
  // otherwise.
  std::size_t seeds = 0;
  double se_total = 0, se_items = 0, se_seeds = 0;
  // Leaderboard normalisation (spec §8.2) where run A's results give the task and metric a random
  // baseline: both scores and their difference on the leaderboard's 0-100 scale. The test and the
  // interval above are of the raw scores.
  std::optional<double> random_baseline;
  double norm_a = 0, norm_b = 0, norm_diff = 0;
  std::vector<std::string> notes;
};

struct GroupComparison {
  std::string group, metric, filter;
  std::size_t n = 0;
  double diff = 0, se = 0, ci_low = 0, ci_high = 0, p = 1;
  bool significant = false;
  std::vector<std::string> tasks;  // the leaf tasks weighed
};

struct Comparison {
  std::string label_a, label_b, source_a, source_b;
  std::vector<MetricComparison> metrics;
  std::vector<GroupComparison> groups;
  std::vector<std::string> only_a, only_b;  // tasks in one run only
  std::vector<std::string> setting_differences;
  std::vector<std::string> skipped;  // metrics not compared, and why
  std::vector<std::string> dropped;  // --common_items: documents left out per task
  std::string correction = "none";
};

// Throws UserError when the runs share no task or their prompts differ.
Comparison compare_runs(const Run& a, const Run& b, const CompareOptions& options = {});

Json to_json(const Comparison& c);
// The Markdown table, then one verdict line per task and metric, then notes.
std::string render_text(const Comparison& c);

}  // namespace lmeval::analysis
