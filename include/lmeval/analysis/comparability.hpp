// Whether two runs asked the same questions: task versions, few-shot counts, task configs,
// document and prompt hashes (refuse when they differ), and what else differs between the runs
// (model, tokenizer, BOS, chat template, manifest hashes) to explain differences in their scores.
#pragma once

#include <string>
#include <vector>

#include "lmeval/analysis/run.hpp"

namespace lmeval::analysis {

// What makes the prompts of `task` differ between the runs, one line each; empty when they match.
std::vector<std::string> prompt_differences(const Run& a, const Run& b, const std::string& task);

// Settings that differ between the runs and may explain their scores differing (model, model
// arguments, dtype, tokenizer BOS token, chat template, system instruction, manifest hashes).
std::vector<std::string> setting_differences(const Run& a, const Run& b);

// Tasks of both runs, in a's order; throws UserError (listing both task lists) when none is common.
std::vector<std::string> common_tasks(const Run& a, const Run& b);

// Refuses (UserError listing every difference, per task) unless all common tasks have identical prompts.
void require_same_prompts(const Run& a, const Run& b, const std::vector<std::string>& tasks);

}  // namespace lmeval::analysis
