// `lm-eval compare CKPT1 CKPT2 ... --series`: how a task's score moves over a series of checkpoints
// of one training run: monotonicity (Kendall's tau of score against checkpoint order, as Madaan et
// al. 2024 measure it) and a signal-to-noise ratio (the change over the series against the noise of
// one checkpoint's score).
#pragma once

#include <string>
#include <vector>

#include "lmeval/analysis/run.hpp"

namespace lmeval::analysis {

struct SeriesRow {
  std::string task, key;       // key "<metric>,<filter>"
  std::vector<double> scores;  // one per checkpoint, in the order given
  std::string basis;           // "one few-shot seed" or "mean of K few-shot seeds"
  double monotonicity = 0;     // Kendall's tau-b of (checkpoint index, score); NaN if undefined
  double noise = 0;        // sd of one checkpoint's score (see noise_kind), at the last checkpoint
  std::string noise_kind;  // "few-shot seed std" or "stderr (item sampling)"
  double signal_to_noise = 0;  // (last − first) / noise; NaN when noise is 0 or missing
};

struct Series {
  std::vector<std::string> labels, sources;
  std::vector<SeriesRow> rows;
};

// Runs must share their tasks' prompts with the first (UserError otherwise, as compare).
Series series_of(const std::vector<Run>& runs);

Json to_json(const Series& s);
std::string render_text(const Series& s);

}  // namespace lmeval::analysis
