// Open LLM Leaderboard score normalisation (spec §8.2), reported beside the raw scores.
#pragma once

#include <map>
#include <string>

#include "lmeval/core/json.hpp"

namespace lmeval {

// (raw - lower) / (1 - lower) * 100, clipped at 0.
double leaderboard_normalize(double raw, double lower);

// From a results JSON (reference layout) and each multiple-choice task's random baseline:
// {"tasks": {task: {"<metric>,<filter>": {"raw", "random_baseline", "normalized"}}},
//  "leaderboard": {benchmark: {"normalized", "metric" (the results key it stands beside, where
//  one), "rule" or "raw" + "random_baseline", "inputs"}}} — the leaderboard rules for
// BBH/MuSR (unweighted mean of normalised subtasks), GPQA (group, 0.25), MMLU-Pro (0.1),
// MATH (x100), IFEval (mean of the strict metrics x100), where those tasks ran.
Json leaderboard_normalized(const Json& results_file,
                            const std::map<std::string, double>& baselines);

}  // namespace lmeval
