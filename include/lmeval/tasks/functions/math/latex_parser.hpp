// LaTeX math (as math-verify's normalisation leaves it) to an expression tree, following the
// reading of latex2sympy2_extended, the parser math-verify uses: single letters are (lowercased)
// symbols and juxtaposition multiplies, `e` is Euler's number, `(a,b)` is an open interval
// unless b <= a, `a, b` is a set, `\pm` gives both values, a relation chain is a conjunction,
// `x \in S` is `x = S`, `x \approx v` is v.
#pragma once

#include <string_view>

#include "lmeval/tasks/functions/math/expr.hpp"

namespace lmeval::tasks::math {

// nullptr when the text is not understood (where latex2sympy would raise).
NodePtr parse_latex(std::string_view latex);

// Plain arithmetic as math-verify's expression extraction reads it with sympy's parse_expr
// (digits, `.`, + - * / ^ and parentheses); nullptr when not understood.
NodePtr parse_plain_expr(std::string_view expr);

}  // namespace lmeval::tasks::math
