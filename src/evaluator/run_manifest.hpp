// The `manifest` section of a results file (docs/statistics.md): hashes of everything that shapes
// the scores besides the model's weights, so `compare` can say why two runs differ.
#pragma once

#include <nlohmann/json.hpp>

#include <vector>

#include "results.hpp"

namespace lmeval {

// `results_file` is the results built so far (its configs, versions, n-shot, chat template and
// tokenizer keys are read, never recomputed).
Json run_manifest(const std::vector<TaskOutcome>& outcomes, const Json& results_file,
                  const EvalConfig& cfg);

}  // namespace lmeval
