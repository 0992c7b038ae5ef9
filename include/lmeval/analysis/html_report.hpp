// `lm-eval report`: one self-contained HTML page (inline CSS and SVG, one inline script for the
// sample browser, no network) with each task's scores, paired differences, seed variance,
// normalised scores, item-analysis highlights, every document's answers side by side, and every
// run's exact configuration.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lmeval/analysis/comparison.hpp"
#include "lmeval/analysis/item_report.hpp"
#include "lmeval/analysis/run.hpp"

namespace lmeval::analysis {

struct ReportInput {
  std::vector<Run> runs;
  // Each run after the first against the first: the comparison, or why it was refused.
  std::vector<std::optional<Comparison>> comparisons;
  std::vector<std::string> refusals;
  std::optional<Analysis> analysis;  // two or more runs with common prompts
  std::string analysis_refusal;
  // pairs[i][j] (i < j): run j against run i, for the summary's "best where distinguishable".
  std::vector<std::vector<std::optional<Comparison>>> pairs;
};

// Runs the comparisons and the analysis the report shows (refusals are shown, not thrown).
ReportInput prepare_report(std::vector<Run> runs, const CompareOptions& compare,
                           const AnalyzeOptions& analyze);

std::string render_html_report(const ReportInput& in);

}  // namespace lmeval::analysis
