// The reference's minerva_math helpers (lm_eval/tasks/minerva_math/utils.py, 0.4.13): Minerva's
// answer normalisation in its later form (unit words at word boundaries, LaTeX commands kept
// whole, indexed roots, thousands separators only), its is_equiv and math-verify's score.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "lmeval/core/json.hpp"

namespace lmeval::tasks {

std::string minerva_normalize_final_answer(std::string_view final_answer);

// is_equiv(x1, x2): equal non-empty strings, else sympy's parse_latex + simplify(x1 - x2) == 0,
// for which lm-eval substitutes the leaderboard port's numeric comparison (math_is_equiv;
// docs/fidelity.md gives the measured agreement).
bool minerva_is_equiv(std::string_view x1, std::string_view x2);

// process_docs: "answer" = the normalised \boxed{} answer of the solution (other columns kept).
std::vector<Json> minerva_math_process_docs(std::vector<Json> docs);
Json minerva_math_fewshot_samples();
// process_results: {"exact_match": is_equiv of the "Final Answer: ..." line with doc["answer"],
// "math_verify": math-verify's verify(parse(solution), parse(response))}.
Json minerva_math_process_results(const Json& doc, std::string_view response);

}  // namespace lmeval::tasks
