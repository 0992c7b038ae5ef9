// Stage 2, the requests: every task's Instances, built once per few-shot seed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lmeval/config/eval_config.hpp"
#include "lmeval/prompt/instance.hpp"
#include "lmeval/prompt/prompt_builder.hpp"
#include "plan.hpp"

namespace lmeval {

class PyRandom;

struct TaskRequests {
  // One per request of each evaluated document; dispatch fills their responses (`resps`) and
  // scoring their filtered responses.
  std::vector<Instance> instances;
};

// The requests of one few-shot seed (a plain run has one pass, with the fourth --seed value).
struct SeedPass {
  int64_t seed = 0;
  std::vector<TaskRequests> tasks;  // one per RunPlan::tasks entry, same order
  // The global random as this pass's request building left it (scoring resumes from it).
  std::shared_ptr<PyRandom> random_after_building;
  size_t index = 0;  // position among the passes (a Python-class task keeps each one's Instances)
};

// The reference's build_all_requests for every task, once per --fewshot_seeds seed. `write_out`
// receives --write_out's text for the first document of each task (first pass only).
std::vector<SeedPass> build_seed_passes(const RunPlan& plan, const EvalConfig& cfg,
                                        const PromptOptions& prompt,
                                        std::vector<std::string>& write_out);

}  // namespace lmeval
