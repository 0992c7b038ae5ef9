// Doc functions of the Open LLM Leaderboard v2 tasks (leaderboard/{gpqa,mmlu_pro,musr,math}),
// exposed for tests; registered under the reference's `!function` names.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lmeval/core/json.hpp"

namespace lmeval {
class PyRandom;
}

namespace lmeval::tasks {

// gpqa utils.preprocess (None -> " ") and _process_doc (shuffles the four answers with `rng`).
std::string gpqa_preprocess(const Json& text);
Json gpqa_process_doc(const Json& doc, PyRandom& rng);

// mmlu_pro utils.doc_to_text / doc_to_choice (letters A.. for up to 26 options).
std::string mmlu_pro_doc_to_text(const Json& doc);
Json mmlu_pro_doc_to_choice(const Json& doc);

// musr utils.doc_to_text / doc_to_choice (choices is the repr of a Python list).
std::string musr_doc_to_text(const Json& doc);
Json musr_doc_to_choice(const Json& doc);

// leaderboard/math utils (Minerva answer handling).
inline constexpr const char* kMathInvalidAnswer = "[invalidanswer]";
std::string math_doc_to_text(const Json& doc);
std::string math_last_boxed_only_string(std::string_view s);
std::string math_remove_boxed(std::string_view s);
std::string math_get_unnormalized_answer(std::string_view text);
std::string math_normalize_final_answer(std::string_view final_answer);
// The Minerva normalisation's pieces, shared with minerva_math's later version of it: its
// SUBSTITUTIONS and REMOVED_EXPRESSIONS, and the re.sub steps that take the answer out of $...$,
// \text{}, \textbf{}, \overline{}, \boxed{} and brace \fracab.
const std::vector<std::pair<std::string, std::string>>& math_answer_substitutions();
const std::vector<std::string>& math_removed_expressions();
std::string math_unwrap_final_answer(std::string s);
// Level-5 filter and answer extraction of utils.process_docs.
std::vector<Json> math_process_docs(std::vector<Json> docs);
Json math_fewshot_samples();
// process_result_v1 (exact_match_original): Minerva normalisation, string equality, then a
// numeric equivalence check standing in for sympy's parse_latex + simplify.
int math_exact_match_original(const Json& doc, std::string_view candidate);
// exact_match: math-verify's verify(parse(solution, LaTeX only), parse(response)), re-implemented
// in tasks/functions/math/ (docs/tasks.md, math).
int math_exact_match(const Json& doc, std::string_view candidate);
// Numeric/structural equivalence of two normalised LaTeX answers (fractions, sqrt-free numbers,
// percentages, tuples/intervals element-wise); false when either side is not understood.
bool math_is_equiv(std::string_view a, std::string_view b);

}  // namespace lmeval::tasks
