// Sampled answers (`repeats` > 1): per run and score, the split of the score's variance into
// between-question and within-question parts (stats/repeat_variance.hpp, Miller 2024) and what
// more answers per question would buy. Shown by `lm-eval analyze` and `lm-eval report`.
#pragma once

#include <string>
#include <vector>

#include "lmeval/analysis/run.hpp"
#include "lmeval/stats/repeat_variance.hpp"

namespace lmeval::analysis {

struct RepeatSummary {
  std::size_t run = 0;  // index among the runs
  std::string key;      // "<metric>,<filter>"
  stats::RepeatVariance v;
};

// Every score of `task` whose samples carry per-answer scores, for each run that has them, over
// the run's items with per-answer scores (in run order, then the samples' key order).
std::vector<RepeatSummary> repeat_summaries(const std::vector<Run>& runs, const std::string& task);

// One sentence: what doubling K would give, the floor no K goes below, and whether more answers or
// more questions is what narrows the SE (or why nothing is defined).
std::string repeat_advice(const stats::RepeatVariance& v);

// The JSON object of one summary (numbers null where undefined).
Json to_json(const RepeatSummary& s, const std::vector<std::string>& labels);

// A text table (one row per summary) with the advice lines under it; empty without summaries.
std::string render_repeat_text(const std::vector<RepeatSummary>& summaries,
                               const std::vector<std::string>& labels);

}  // namespace lmeval::analysis
