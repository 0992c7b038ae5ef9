// The reference's drop helpers (lm_eval/tasks/drop/utils.py): answers of a DROP row, its answer
// normalisation and the bag-of-words F1 over an optimal alignment of answer spans (scipy's
// linear_sum_assignment, here a Hungarian algorithm), exposed for tests.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lmeval/core/json.hpp"

namespace lmeval::tasks {

// scipy.optimize.linear_sum_assignment(cost): a minimum-cost assignment of the rows of a
// rows x cols matrix (row-major) to distinct columns, min(rows, cols) pairs; returns the column of
// each row (-1 for a row left unassigned when rows > cols). Which optimum is returned among equal
// ones may differ from scipy's.
std::vector<long> linear_sum_assignment(const std::vector<double>& cost, size_t rows, size_t cols);

// Python float(text): nullopt where it raises ValueError (Unicode digits and spaces, underscores
// between digits, inf/infinity/nan in any case).
std::optional<double> py_float(std::string_view text);

// _normalize(answer): per " "/"-" token lower-cased, punctuation dropped from non-numbers,
// numbers as str(float(.)), articles and extra whitespace removed.
std::string drop_normalize(std::string_view answer);

// process_docs: each row with "id" (its query_id) and "answers" (the distinct parsed answers of
// "answer" and "validated_answers", each a list of strings).
std::vector<Json> drop_process_docs(std::vector<Json> docs);

// get_metrics(predicted spans, gold spans) -> (exact match 0/1, F1 rounded as numpy rounds).
std::pair<double, double> drop_get_metrics(const std::vector<std::string>& predicted,
                                           const std::vector<std::string>& gold);

// process_results: {"em", "f1"}, the best over the gold answers whose first span is not blank
// (Python's max from int 0: 0 stays an int unless a larger float comes).
Json drop_process_results(const Json& doc, const std::vector<std::string>& predictions);

}  // namespace lmeval::tasks
