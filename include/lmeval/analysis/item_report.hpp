// `lm-eval analyze`: item analysis and bootstrap rank stability over two or more runs of the same
// tasks (e.g. several models), one metric per task.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lmeval/analysis/repeat_report.hpp"
#include "lmeval/analysis/run.hpp"
#include "lmeval/stats/bootstrap.hpp"
#include "lmeval/stats/item_analysis.hpp"

namespace lmeval::analysis {

struct AnalyzeOptions {
  std::int64_t seed = 1234;
  std::size_t resamples = 1000;
  std::string metric;  // "<metric>" or "<metric>,<filter>"; empty: each task's first metric
  std::size_t listed_items = 10;  // negatively discriminating items listed
  // Inter-item correlations are over all pairs up to this many items, else over a seeded sample of
  // this many (pairs grow with the square: 14,042 MMLU items are 98.6 million pairs).
  std::size_t correlation_items = 2000;
};

struct ListedItem {
  std::string key;
  long long doc_id = 0;
  std::string text;  // the document (and target), shortened
  double difficulty = 0, discrimination = 0;
};

struct TaskAnalysis {
  std::string task, score_key;
  std::size_t items = 0;
  std::vector<double> means;  // per run
  // Where run 1's results give the task's metric a random baseline: the means on the leaderboard's
  // normalised 0-100 scale (spec §8.2), per run.
  std::optional<double> random_baseline;
  std::vector<double> normalized_means;
  std::vector<stats::ItemStatistics> item_stats;
  std::vector<ListedItem> never_correct;  // no run scores above 0 (candidates for label errors)
  std::size_t never_correct_count = 0;
  std::vector<ListedItem> negative_discrimination;  // most negative first
  stats::CorrelationSummary inter_item;
  std::size_t inter_item_items = 0;  // items the correlations were computed over
  stats::RankStability item_ranks;
  stats::RankStability cluster_ranks;  // resamples == 0 without a cluster_key
  std::size_t clusters = 0;
  // Runs with `repeats` > 1: between/within-question variance of each score with per-answer scores.
  std::vector<RepeatSummary> repeats;
};

// Below this many runs the item analysis (items no run gets right, discrimination) is flagged as
// anecdotal: with a handful of examinees an item everyone misses is mostly just a hard item.
inline constexpr std::size_t kItemAnalysisMinRuns = 5;

struct Analysis {
  std::vector<std::string> labels, sources;
  std::int64_t seed = 0;
  std::size_t resamples = 0;
  std::vector<TaskAnalysis> tasks;
};

// Throws UserError for fewer than two runs, runs with no task in common, or runs whose prompts
// differ.
Analysis analyze_runs(const std::vector<Run>& runs, const AnalyzeOptions& options = {});

Json to_json(const Analysis& a);
std::string render_text(const Analysis& a);

}  // namespace lmeval::analysis
