// Rendering of expression trees (expr.hpp): sympy-like text, with set elements sorted so that
// equal finite sets render equally.
#include <algorithm>
#include <cctype>

#include "lmeval/tasks/functions/math/expr.hpp"

namespace lmeval::tasks::math {

namespace {

// Concatenation by appends (GCC 12 warns falsely about `"literal" + std::string` temporaries).
template <class... Parts>
std::string cat(const Parts&... parts) {
  std::string out;
  (out.append(parts), ...);
  return out;
}

std::string join(const std::vector<NodePtr>& kids, const char* sep, bool sorted = false) {
  std::vector<std::string> parts;
  for (const auto& k : kids) parts.push_back(to_string(*k));
  if (sorted) {
    std::sort(parts.begin(), parts.end());
    parts.erase(std::unique(parts.begin(), parts.end()), parts.end());
  }
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

}  // namespace

std::string to_string(const Node& n) {
  switch (n.kind) {
    case Kind::Symbol:  // \text{86.4} is a symbol, not the number 86.4
      return std::isalpha(static_cast<unsigned char>(n.text[0])) ? n.text
                                                                 : cat("Symbol(", n.text, ")");
    case Kind::Integer:
    case Kind::Float:
    case Kind::Constant:
    case Kind::SetConst:
      return n.text;
    case Kind::Add:
      return cat("(", join(n.kids, " + "), ")");
    case Kind::Mul:
      return cat("(", join(n.kids, "*"), ")");
    case Kind::Pow:
      return cat("(", to_string(*n.kids[0]), ")**(", to_string(*n.kids[1]), ")");
    case Kind::Neg:
      return cat("-(", to_string(*n.kids[0]), ")");
    case Kind::Func:
      return cat(n.text, "(", join(n.kids, ", "), ")");
    case Kind::Percent:
      return cat("(", to_string(*n.kids[0]), ")%");
    case Kind::Relation:
      return cat(to_string(*n.kids[0]), " ", n.text, " ", to_string(*n.kids[1]));
    case Kind::And:
      return join(n.kids, " & ");
    case Kind::FiniteSet:
      return cat("{", join(n.kids, ", ", true), "}");
    case Kind::Tuple:
      return cat("(", join(n.kids, ", "), ",)");
    case Kind::Interval:
      return std::string(n.left_open ? "(" : "[") + to_string(*n.kids[0]) + ", " +
             to_string(*n.kids[1]) + (n.right_open ? ")" : "]");
    case Kind::Union:
      return join(n.kids, " U ", true);
    case Kind::Matrix:
      return "Matrix" + std::to_string(n.rows) + "x" + std::to_string(n.cols) + "[" +
             join(n.kids, ", ") + "]";
  }
  return "?";
}

}  // namespace lmeval::tasks::math
