// Numeric evaluation of expression trees (math/expr.hpp) in complex double precision: the basis
// of equivalence by evaluation (identity testing at random points) in equivalence.hpp.
#pragma once

#include <complex>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lmeval/tasks/functions/math/expr.hpp"

namespace lmeval::tasks::math {

using Complex = std::complex<double>;

// A scalar (rows == cols == 0) or a matrix of complex values.
struct Value {
  size_t rows = 0, cols = 0;
  std::vector<Complex> v;
  bool is_scalar() const { return rows == 0; }
};

// Evaluates with every free symbol bound to a pseudo-random value drawn from (its name, point):
// point 0 leaves no symbol free (nullopt if one occurs). Undefined functions (f(x)) are fixed
// pseudo-random functions of their name and arguments. nullopt for relations and sets, and for
// what cannot be evaluated (division by zero, a matrix shape mismatch).
std::optional<Value> evaluate(const Node& n, int point);

// Evaluates with the symbols bound as given (nullopt if another one occurs).
std::optional<Value> evaluate_at(const Node& n, const std::map<std::string, Complex>& symbols);

// evaluate(n, 0) for scalars.
std::optional<Complex> evaluate_constant(const Node& n);

void free_symbols(const Node& n, std::set<std::string>& out);

}  // namespace lmeval::tasks::math
