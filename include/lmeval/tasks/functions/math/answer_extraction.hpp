// Finding the answer in a solution or a model response the way math-verify's parse() does:
// prioritised patterns ("final answer is ... I hope", "final answer ... is", "answer:", plain
// LaTeX spans, \boxed{}, and for responses also plain numbers and arithmetic), tried from the
// rightmost match, the first that parses winning; the first match's normalised text is kept as
// well for a string comparison.
#pragma once

#include <string>
#include <string_view>

#include "lmeval/tasks/functions/math/expr.hpp"

namespace lmeval::tasks::math {

struct ExtractedAnswer {
  NodePtr value;         // null when nothing parsed
  std::string fallback;  // the first match's text ("" when nothing matched)
};

// with_plain_expressions: also math-verify's ExprExtractionConfig (the reference parses
// responses with it, gold solutions without).
ExtractedAnswer extract_answer(std::string_view text, bool with_plain_expressions);

// verify(gold, pred) over what extract_answer found.
bool extracted_answers_match(const ExtractedAnswer& gold, const ExtractedAnswer& pred);

}  // namespace lmeval::tasks::math
