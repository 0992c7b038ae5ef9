// The spread of each task's and group's scores across few-shot sampler seeds.
#pragma once

#include <cstdint>
#include <vector>

#include "lmeval/core/json.hpp"

namespace lmeval {

// `results_by_seed[i]` is the `results` section of the run with `seeds[i]`. For every entry of
// the first seed's section (tasks and groups, in its order) and each "<metric>,<filter>" whose
// value is a number in every seed: {"mean", "std" (sample standard deviation, ddof=1; null for
// one seed), "min", "max", "values" (in seed order)}, beside "seeds".
Json fewshot_seed_variance(const std::vector<int64_t>& seeds,
                           const std::vector<Json>& results_by_seed);

}  // namespace lmeval
