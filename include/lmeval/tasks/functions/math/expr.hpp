// The expression tree math answers are parsed into (tasks/functions/math/latex_parser.hpp) and
// compared on (equivalence.hpp): numbers, symbols, arithmetic, functions, relations, sets,
// tuples, intervals and matrices, enough for the answers of MATH-style problems.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace lmeval::tasks::math {

// latex2sympy's symbols are real unless the answer looks complex (an `i`, `\mathbb{C}`, ...);
// then they are complex symbols, distinct from the real ones of the same name. Their names carry
// this suffix.
inline constexpr const char* kComplexSuffix = "~c";

enum class Kind {
  Integer,    // text: the digits (exact; may exceed 64 bits)
  Float,      // text: the decimal literal as written (a float for math-verify's rounding rule)
  Symbol,     // text: the (lowercased) name, + kComplexSuffix for a complex symbol
  Constant,   // text: "pi", "e", "inf"
  Add,        // kids: terms
  Mul,        // kids: factors
  Pow,        // kids: base, exponent
  Neg,        // kids: operand
  Func,       // text: name (sin, log, f, ...); kids: arguments
  Percent,    // kids: value; means value/100 but compares as a percentage
  Relation,   // text: "=", "<", "<=", ">", ">=", "!="; kids: lhs, rhs
  And,        // kids: relations of a chain, in order
  FiniteSet,  // kids: elements in written order
  Tuple,      // kids: elements
  Interval,   // kids: start, end; left_open/right_open
  Union,      // kids: operands
  Matrix,     // kids: row-major elements; rows x cols
  SetConst,   // text: "empty", "reals", ...
};

struct Node;
using NodePtr = std::shared_ptr<const Node>;

struct Node {
  Kind kind;
  std::string text;
  std::vector<NodePtr> kids;
  bool left_open = false, right_open = false;
  size_t rows = 0, cols = 0;
};

inline NodePtr make(Kind k, std::string text = {}, std::vector<NodePtr> kids = {}) {
  auto n = std::make_shared<Node>();
  n->kind = k;
  n->text = std::move(text);
  n->kids = std::move(kids);
  return n;
}

inline bool is_set_like(const Node& n) {
  return n.kind == Kind::FiniteSet || n.kind == Kind::Tuple || n.kind == Kind::Interval ||
         n.kind == Kind::Union || n.kind == Kind::SetConst;
}
inline bool is_relation(const Node& n) { return n.kind == Kind::Relation || n.kind == Kind::And; }

// A readable, canonical-enough rendering (sympy-like) used for structural comparisons and tests.
std::string to_string(const Node& n);

}  // namespace lmeval::tasks::math
