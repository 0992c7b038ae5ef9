// Each sampled answer of a task with `repeats` > 1 scored on its own (lm-eval's addition to the
// samples records, `repeat_scores`), so that analysis can split the score's variance into its
// between-question and within-question parts (docs/statistics.md, "Sampled answers").
#pragma once

#include <vector>

#include "lmeval/evaluator/scoring.hpp"
#include "lmeval/filters/filter.hpp"
#include "plan.hpp"
#include "requests.hpp"

namespace lmeval {

// True when the pipeline scores one answer and every step treats each answer on its own:
// per-answer steps (regex, regex_pos, remove_whitespace, multi_choice_regex, lowercase, uppercase,
// map, format_span) and a take_first. Run on a single answer it then gives exactly what it gives
// for that answer in first place. False for set-level steps (majority_vote, take_first_k, custom,
// a task's own filter), whose output depends on all K answers together: there is no per-answer
// score of `maj@64`.
bool scores_one_answer(const FilterEnsemble& f);

// The pipeline run on each repeat alone: out[k][j] is the filtered response of
// requests.instances[j] given only its k-th response. Empty when the task's instances have fewer
// than 2 responses each or the pipeline does not score one answer.
std::vector<std::vector<Json>> filter_each_repeat(const TaskPlan& plan,
                                                  const TaskRequests& requests,
                                                  const FilterEnsemble& f);

// For one document (its instances `ins`, pointers into requests.instances): {"<metric>": [score of
// answer 1, ..., answer K]}, process_results over the instances' k-th filtered responses, for every
// metric scored with a number or a boolean on each answer. `by_repeat` from filter_each_repeat.
Json score_each_repeat(const Task& task, const std::vector<MetricSpec>& metrics, const Doc& doc,
                       const std::vector<const Instance*>& ins, const TaskRequests& requests,
                       const std::vector<std::vector<Json>>& by_repeat);

}  // namespace lmeval
