// The reference's agieval helpers (lm_eval/tasks/agieval/utils.py), exposed for tests.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lmeval/core/json.hpp"

namespace lmeval::tasks {

// parse_math_answer: the \boxed{} content (after its last "="), else the last $...$ of the last
// line holding two '$', else what follows the last "=", else the last number; nullopt for None.
std::optional<std::string> agieval_parse_math_answer(std::string_view raw);

// is_equiv(candidate, gold) (gold nullopt: None): both parsed, then strip_string'd (agieval's
// copy, whose fix_a_slash_b swallows int()'s ValueError) and compared.
bool agieval_is_equiv(std::string_view candidate, const std::optional<std::string>& gold);

// process_results (gaokao-mathcloze, math): {"acc": 0 or 1}.
Json agieval_process_results(const Json& doc, std::string_view candidate);

// process_results_mcqa: {"acc", "acc_norm"} as 1.0/0.0, right when the argmax of the
// loglikelihoods (divided by the choices' lengths in characters for acc_norm) is in doc["gold"].
Json agieval_process_results_mcqa(const Json& doc, const std::vector<double>& loglikelihoods);

}  // namespace lmeval::tasks
