// `lm-eval power`: how many items a comparison needs to detect a target difference at a given
// power, from a run's per-item variance (one run: two runs assumed alike; two runs: their paired
// differences) or from a guessed accuracy without any run.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lmeval/analysis/run.hpp"

namespace lmeval::analysis {

struct PowerOptions {
  double difference = 0;  // the true difference to detect (score units)
  double power = 0.8;
  double alpha = 0.05;
  double correlation = 0;  // assumed per-item correlation of the two runs (one run or a guess)
  std::optional<double> accuracy;  // a guess without a run: per-item sd sqrt(p(1 - p))
  std::optional<double> sd;        // a guess without a run: per-item sd of the score
};

struct PowerRow {
  std::string task, key;     // key "<metric>,<filter>"; empty task for a guess
  std::size_t n = 0;         // items the run has (0 for a guess)
  double sd_item = 0;        // per-item sd of the score (one run or a guess)
  double sd_difference = 0;  // per-item sd of the difference the test sees
  double correlation = 0;    // measured (two runs) or assumed
  double design_effect = 1;  // (max(plain, clustered SE) / plain SE)²; 1 without clusters
  std::size_t clusters = 0;
  double items_needed = 0;  // rounded up; NaN when undefined
  double power_now = 0;     // power of the test at the run's own n (NaN for a guess)
  std::string undefined;    // why items_needed is undefined
};

struct PowerAnalysis {
  PowerOptions options;
  std::vector<std::string> sources;
  std::vector<PowerRow> rows;
};

// From zero runs (a guess: options.accuracy or options.sd), one run or two runs of the same
// prompts.
PowerAnalysis power_analysis(const std::vector<Run>& runs, const PowerOptions& options);

Json to_json(const PowerAnalysis& p);
std::string render_text(const PowerAnalysis& p);

}  // namespace lmeval::analysis
