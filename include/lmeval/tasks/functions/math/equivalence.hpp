// Whether a predicted answer equals the gold one, decided as math-verify's verify() decides it
// (its rules for assignments, relations, sets, tuples, intervals, symbols and its numeric
// tolerance), with sympy's symbolic simplification replaced by identity testing: both sides are
// evaluated at several random points and must agree there.
#pragma once

#include "lmeval/tasks/functions/math/expr.hpp"

namespace lmeval::tasks::math {

// Not symmetric, like math-verify: the gold answer's form decides how an equation is read.
bool answers_equivalent(const NodePtr& gold, const NodePtr& pred);

// The identity test answers_equivalent uses for two expressions: equal constants, or equal values
// at random points of their free symbols (sympy's simplify(a - b) == 0 stood in for).
bool expressions_identical(const Node& a, const Node& b);

// Whether a decimal literal (a Float) occurs in the tree.
bool has_decimal(const Node& n);

}  // namespace lmeval::tasks::math
