// Whether two runs asked the same questions: task versions, few-shot counts, task configs,
// document and prompt hashes (refuse when they differ), and what else differs between the runs
// (model, tokenizer, BOS, chat template, manifest hashes) to explain differences in their scores.
#pragma once

#include <string>
#include <vector>

#include "lmeval/analysis/run.hpp"

namespace lmeval::analysis {

// What makes the prompts of `task` differ between the runs, one line each; empty when they match.
// With `common_items`, documents that only one run answered are not a difference (compare pairs the
// others); differing prompts of common documents, versions and configs still are.
std::vector<std::string> prompt_differences(const Run& a, const Run& b, const std::string& task,
                                            bool common_items = false);

// For `compare --common_items`: per task whose document sets differ, how many documents each run
// answered alone (left out) and how many are compared.
std::vector<std::string> dropped_documents(const Run& a, const Run& b,
                                           const std::vector<std::string>& tasks);

// Settings that differ between the runs and may explain their scores differing (model, model
// arguments, dtype, tokenizer BOS token, chat template, system instruction, manifest hashes).
std::vector<std::string> setting_differences(const Run& a, const Run& b);

// Tasks of both runs, in a's order; throws UserError (listing both task lists) when none is common.
std::vector<std::string> common_tasks(const Run& a, const Run& b);

// Refuses (UserError listing every difference, per task) unless all common tasks have identical
// prompts.
void require_same_prompts(const Run& a, const Run& b, const std::vector<std::string>& tasks,
                          bool common_items = false);

}  // namespace lmeval::analysis
