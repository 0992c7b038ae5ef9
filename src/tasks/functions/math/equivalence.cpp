// math-verify's comparison rules over expression trees; see equivalence.hpp.
#include "lmeval/tasks/functions/math/equivalence.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <set>

#include "lmeval/tasks/functions/math/evaluate.hpp"

namespace lmeval::tasks::math {

namespace {

bool expr_eq(NodePtr gold, NodePtr pred);

// ---------------------------------------------------------------- shapes

bool only_symbols(const Node& n) {
  switch (n.kind) {
    case Kind::Symbol:
      return true;
    case Kind::Pow:  // a/b: b**-1
      return only_symbols(*n.kids[0]) && n.kids[1]->kind == Kind::Neg &&
             n.kids[1]->kids[0]->kind == Kind::Integer && n.kids[1]->kids[0]->text == "1";
    case Kind::Add:
    case Kind::Mul:
    case Kind::Func:
    case Kind::Tuple:
      for (const auto& k : n.kids)
        if (!only_symbols(*k)) return false;
      return !n.kids.empty();
    default:
      return false;
  }
}

const Node& first_relation(const Node& n) { return n.kind == Kind::And ? *n.kids.front() : n; }
const Node& last_relation(const Node& n) {
  return n.kind == Kind::And ? last_relation(*n.kids.back()) : n;
}

bool is_equation(const Node& n) {
  if (n.kind == Kind::Relation) return n.text == "=";
  if (n.kind != Kind::And || n.kids.empty()) return false;
  for (const auto& k : n.kids)
    if (k->kind != Kind::Relation || k->text != "=") return false;
  return true;
}

bool is_assignment(const Node& n) {
  return is_equation(n) && only_symbols(*first_relation(n).kids[0]);
}

bool is_set(const Node& n) {
  return n.kind == Kind::FiniteSet || n.kind == Kind::Interval || n.kind == Kind::Union ||
         n.kind == Kind::SetConst;
}

NodePtr minus(const NodePtr& a, const NodePtr& b) {
  return make(Kind::Add, "", {a, make(Kind::Neg, "", {b})});
}

NodePtr with_open(NodePtr iv, bool lo, bool ro) {
  auto m = std::const_pointer_cast<Node>(iv);
  m->left_open = lo;
  m->right_open = ro;
  return iv;
}

std::optional<double> real_constant(const Node& n) {
  auto v = evaluate_constant(n);
  if (!v || std::fabs(v->imag()) > 1e-12 * std::max(1.0, std::fabs(v->real()))) return std::nullopt;
  return v->real();
}

// A relation in one variable standing alone on one side, as a set (sympy's as_set for the
// shapes answers take: x < 5, 2 <= x, 1 < x < 3, x = 2).
NodePtr relation_as_set(const Node& rel) {
  auto bound_of = [](const Node& r, double& bound, std::string& op,
                     NodePtr& bound_node) -> std::string {
    static const std::map<std::string, std::string> flip = {
        {"<", ">"}, {">", "<"}, {"<=", ">="}, {">=", "<="}, {"=", "="}};
    std::set<std::string> l, rr;
    free_symbols(*r.kids[0], l);
    free_symbols(*r.kids[1], rr);
    const Node* var = nullptr;
    NodePtr other;
    op = r.text;
    if (r.kids[0]->kind == Kind::Symbol ||
        (r.kids[0]->kind == Kind::Func && r.kids[0]->text[0] == '@')) {
      if (!rr.empty()) return "";
      var = r.kids[0].get(), other = r.kids[1];
    } else if (r.kids[1]->kind == Kind::Symbol ||
               (r.kids[1]->kind == Kind::Func && r.kids[1]->text[0] == '@')) {
      if (!l.empty()) return "";
      var = r.kids[1].get(), other = r.kids[0];
      if (!flip.count(op)) return "";
      op = flip.at(op);
    } else {
      return "";
    }
    auto v = real_constant(*other);
    if (!v) return "";
    bound = *v;
    bound_node = other;
    return to_string(*var);
  };
  NodePtr lo = make(Kind::Neg, "", {make(Kind::Constant, "inf")}), hi = make(Kind::Constant, "inf");
  bool lo_open = true, hi_open = true;
  double lov = -INFINITY, hiv = INFINITY;
  std::string var;
  std::vector<const Node*> rels;
  if (rel.kind == Kind::And) {
    for (const auto& k : rel.kids) rels.push_back(k.get());
  } else {
    rels.push_back(&rel);
  }
  for (const Node* r : rels) {
    if (r->kind != Kind::Relation || r->text == "!=") return nullptr;
    double b = 0;
    std::string op;
    NodePtr bn;
    std::string v = bound_of(*r, b, op, bn);
    if (v.empty() || (!var.empty() && v != var)) return nullptr;
    var = v;
    if (op == "=") {
      if (rels.size() != 1) return nullptr;
      return make(Kind::FiniteSet, "", {bn});
    }
    if (op == "<" || op == "<=") {
      if (b < hiv || (b == hiv && op == "<")) hiv = b, hi = bn, hi_open = op == "<";
    } else {
      if (b > lov || (b == lov && op == ">")) lov = b, lo = bn, lo_open = op == ">";
    }
  }
  if (lov > hiv) return make(Kind::SetConst, "empty");
  return with_open(make(Kind::Interval, "", {lo, hi}), lo_open || std::isinf(lov),
                   hi_open || std::isinf(hiv));
}

// ---------------------------------------------------------------- numbers

bool is_number_literal(const Node& n) {
  if (n.kind == Kind::Integer || n.kind == Kind::Float) return true;
  if (n.kind == Kind::Neg)
    return n.kids[0]->kind == Kind::Integer || n.kids[0]->kind == Kind::Float;
  // \frac of two integers is a sympy Rational
  if (n.kind == Kind::Mul && n.kids.size() == 2 && n.kids[1]->kind == Kind::Pow) {
    const Node& num = *n.kids[0];
    const Node& pw = *n.kids[1];
    bool int_num =
        num.kind == Kind::Integer || (num.kind == Kind::Neg && num.kids[0]->kind == Kind::Integer);
    return int_num && pw.kids[0]->kind == Kind::Integer && pw.kids[1]->kind == Kind::Neg &&
           pw.kids[1]->kids[0]->text == "1" && pw.kids[0]->text != "0";
  }
  return false;
}
bool is_float_literal(const Node& n) {
  return n.kind == Kind::Float || (n.kind == Kind::Neg && n.kids[0]->kind == Kind::Float);
}
bool is_integer_literal(const Node& n) {
  return n.kind == Kind::Integer || (n.kind == Kind::Neg && n.kids[0]->kind == Kind::Integer);
}
const Node& strip_neg(const Node& n) { return n.kind == Kind::Neg ? *n.kids[0] : n; }
const Node& strip_pct(const Node& n) { return n.kind == Kind::Percent ? *n.kids[0] : n; }
bool number_or_pct(const Node& n, bool (*pred)(const Node&)) {
  return pred(n) || (n.kind == Kind::Percent && pred(*n.kids[0]));
}

bool close(Complex a, Complex b, double rel) {
  // Overflowed values (3^{2007}) say nothing: equal infinities are equal as written or not at all.
  if (!std::isfinite(std::abs(a)) || !std::isfinite(std::abs(b))) return false;
  if (a == b) return true;
  // Relative to the values themselves (10^{-10} is not 2*10^{-10}), with a floor for the
  // rounding noise of a result that is exactly 0 (sin(pi)).
  double diff = std::abs(a - b);
  return diff <= rel * std::max(std::abs(a), std::abs(b)) || diff <= 1e-13;
}

bool contains_float(const Node& n) {
  if (n.kind == Kind::Float) return true;
  for (const auto& k : n.kids)
    if (contains_float(*k)) return true;
  return false;
}

// The powers with a decimal in the exponent and the functions with one in an argument.
void float_powers_and_functions(const Node& n, std::set<std::string>& out) {
  if ((n.kind == Kind::Pow && contains_float(*n.kids[1])) ||
      (n.kind == Kind::Func && contains_float(n)))
    out.insert(to_string(n));
  for (const auto& k : n.kids) float_powers_and_functions(*k, out);
}

// Identity testing: equal at every random point where both sides evaluate (and at enough of
// them); constants are compared directly.
bool identical(const Node& a, const Node& b) {
  std::set<std::string> syms;
  free_symbols(a, syms);
  free_symbols(b, syms);
  if (syms.empty()) {
    auto va = evaluate(a, 0), vb = evaluate(b, 0);
    if (!va || !vb || va->rows != vb->rows || va->cols != vb->cols) return false;
    for (size_t i = 0; i < va->v.size(); ++i)
      if (!std::isfinite(std::abs(va->v[i])) || !close(va->v[i], vb->v[i], 1e-10)) return false;
    return true;
  }
  // sympy does not always see through a decimal in an exponent or a function's argument
  // (e^{0.5x} vs \sqrt{e^x} stays unequal) unless the same term is on both sides and cancels;
  // elsewhere, evaluation would claim more than sympy does.
  std::set<std::string> fa, fb;
  float_powers_and_functions(a, fa);
  float_powers_and_functions(b, fb);
  if (fa != fb) return false;
  int usable = 0;
  for (int point = 1; point <= 12 && usable < 6; ++point) {
    auto va = evaluate(a, point), vb = evaluate(b, point);
    if (!va && !vb) continue;
    if (!va || !vb) {
      if (point > 6) continue;
      continue;
    }
    if (va->rows != vb->rows || va->cols != vb->cols) return false;
    bool finite_all = true;
    for (size_t i = 0; i < va->v.size(); ++i)
      finite_all =
          finite_all && std::isfinite(std::abs(va->v[i])) && std::isfinite(std::abs(vb->v[i]));
    if (!finite_all) continue;
    for (size_t i = 0; i < va->v.size(); ++i)
      if (!close(va->v[i], vb->v[i], 1e-8)) return false;
    ++usable;
  }
  return usable >= 3;
}

double round6(double x) { return std::nearbyint(x * 1e6); }

bool numeric_eq(const Node& a, const Node& b) {
  if (a.kind == Kind::Matrix && b.kind == Kind::Matrix) {
    if (a.rows != b.rows || a.cols != b.cols) return false;
    for (size_t i = 0; i < a.kids.size(); ++i)
      if (!numeric_eq(*a.kids[i], *b.kids[i]) && !identical(*a.kids[i], *b.kids[i])) return false;
    return true;
  }
  if (number_or_pct(a, is_number_literal) || number_or_pct(b, is_number_literal)) {
    if (number_or_pct(a, is_float_literal) || number_or_pct(b, is_float_literal)) {
      auto va = real_constant(a), vb = real_constant(b);
      return va && vb && round6(*va) == round6(*vb);
    }
    if (number_or_pct(a, is_integer_literal) && number_or_pct(b, is_integer_literal))
      return to_string(strip_pct(a)) == to_string(strip_pct(b));
    std::set<std::string> syms;
    free_symbols(a, syms);
    free_symbols(b, syms);
    if (!syms.empty()) return false;
    return identical(a, b);
  }
  return identical(a, b);
}

// ---------------------------------------------------------------- symbols

// sympy's str() of a symbol or a number (what math-verify compares a symbol with): integers as
// written, floats with 15 significant digits, fractions reduced; nullopt for anything else.
std::optional<std::string> sympy_str(const Node& n) {
  if (n.kind == Kind::Symbol) return n.text;
  if (n.kind == Kind::Neg && n.kids[0]->kind == Kind::Symbol) return "-" + n.kids[0]->text;
  if (n.kind == Kind::Constant && n.text == "pi") return std::string("pi");
  if (n.kind == Kind::Integer) return n.text;
  if (is_number_literal(n) && n.kind == Kind::Mul) {  // a \frac of integers: sympy's reduced p/q
    auto v = real_constant(n);
    const std::string& den = n.kids[1]->kids[0]->text;
    if (!v || den.size() > 15) return std::nullopt;
    long long q = std::stoll(den), p = std::llround(*v * static_cast<double>(q));
    long long g = std::gcd(std::llabs(p), q);
    p /= g, q /= g;
    return q == 1 ? std::to_string(p) : std::to_string(p) + "/" + std::to_string(q);
  }
  if (n.kind == Kind::Neg && n.kids[0]->kind == Kind::Integer)
    return n.kids[0]->text == "0" ? "0" : "-" + n.kids[0]->text;
  if (is_float_literal(n)) {
    double v = std::strtod(strip_neg(n).text.c_str(), nullptr) * (n.kind == Kind::Neg ? -1 : 1);
    double a = std::fabs(v);
    if (a != 0 && (a < 1e-5 || a >= 1e15)) return std::nullopt;
    int int_digits = a < 1 ? 1 : static_cast<int>(std::floor(std::log10(a))) + 1;
    int decimals = a < 1 ? 15 - (a == 0 ? 0 : -static_cast<int>(std::floor(std::log10(a))) - 1)
                         : 15 - int_digits;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", std::max(decimals, 0), v);
    return std::string(buf);
  }
  return std::nullopt;
}

bool symbols_eq(const Node& g, const Node& p) {
  auto is_e = [](const Node& n) { return n.kind == Kind::Constant && n.text == "e"; };
  if ((g.kind == Kind::Symbol && g.text == "e" && is_e(p)) ||
      (p.kind == Kind::Symbol && p.text == "e" && is_e(g)))
    return true;
  // "abc" reads as a*b*c: compare the names concatenated in written order.
  auto concat = [&](const Node& m) -> std::optional<std::string> {
    if (m.kind != Kind::Mul) return std::nullopt;
    std::string out;
    for (const auto& k : m.kids) {
      if (is_e(*k))
        out += "e";
      else if (k->kind == Kind::Symbol)
        out += k->text;
      else
        return std::nullopt;
    }
    return out;
  };
  auto lower = [](std::string s) {  // names compare without case and without their assumptions
    std::string_view suffix(kComplexSuffix);
    size_t at;
    while ((at = s.find(suffix)) != std::string::npos) s.erase(at, suffix.size());
    for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return s;
  };
  if (g.kind == Kind::Symbol) {
    if (auto c = concat(p)) return lower(g.text) == lower(*c);
  }
  if (p.kind == Kind::Symbol) {
    if (auto c = concat(g)) return lower(p.text) == lower(*c);
  }
  if (g.kind == Kind::Symbol && p.kind == Kind::Symbol) return lower(g.text) == lower(p.text);
  auto gs = sympy_str(g), ps = sympy_str(p);
  return gs && ps && lower(*gs) == lower(*ps);
}

// ---------------------------------------------------------------- relations

const std::map<std::string, std::string>& inverse_relations() {
  static const std::map<std::string, std::string> k = {
      {"<", ">"}, {">", "<"}, {"<=", ">="}, {">=", "<="}, {"=", "="}};
  return k;
}

// sympy solves both relations for their variables; for the linear and polynomial forms answers
// take, two relations have the same solutions when their sides' differences are proportional
// (by a positive factor for inequalities of one direction, a negative one for opposite ones).
bool proportional(const Node& g, const Node& p) {
  NodePtr dg = minus(g.kids[0], g.kids[1]), dp = minus(p.kids[0], p.kids[1]);
  std::set<std::string> sg, sp;
  free_symbols(*dg, sg);
  free_symbols(*dp, sp);
  if (sg.empty() || sg != sp) return false;
  std::optional<Complex> ratio;
  int usable = 0;
  for (int point = 1; point <= 12 && usable < 6; ++point) {
    auto a = evaluate(*dg, point), b = evaluate(*dp, point);
    if (!a || !b || !a->is_scalar() || !b->is_scalar()) continue;
    Complex x = a->v[0], y = b->v[0];
    if (!std::isfinite(std::abs(x)) || !std::isfinite(std::abs(y))) continue;
    if (std::abs(y) < 1e-12) {
      if (std::abs(x) < 1e-12) continue;
      return false;
    }
    Complex r = x / y;
    if (ratio && std::abs(*ratio - r) > 1e-8 * std::max(std::abs(*ratio), std::abs(r)))
      return false;
    ratio = r;
    ++usable;
  }
  if (usable < 3 || !ratio || std::fabs(ratio->imag()) > 1e-9) return false;
  if (g.text == "=" && p.text == "=") return true;
  if (g.text == p.text) return ratio->real() > 0;
  auto inv = inverse_relations().find(g.text);
  return inv != inverse_relations().end() && inv->second == p.text && ratio->real() < 0;
}

bool relational_eq(const Node& g, const Node& p) {
  if (g.kind == Kind::And && p.kind == Kind::And) {
    if (g.kids.size() != p.kids.size()) return false;
    for (size_t i = 0; i < g.kids.size(); ++i)
      if (!relational_eq(*g.kids[i], *p.kids[i])) return false;
    return true;
  }
  if (g.kind != Kind::Relation || p.kind != Kind::Relation) return false;
  auto scalar_side = [](const Node& r) {
    return !is_set(*r.kids[0]) && !is_set(*r.kids[1]) && r.kids[0]->kind != Kind::Tuple &&
           r.kids[1]->kind != Kind::Tuple;
  };
  if (!scalar_side(g) || !scalar_side(p)) return false;  // sympy cannot subtract sets
  if (g.text == p.text && expr_eq(minus(g.kids[0], g.kids[1]), minus(p.kids[0], p.kids[1])))
    return true;
  auto inv = inverse_relations().find(g.text);
  if (inv == inverse_relations().end()) return false;  // math-verify raises on !=, scoring 0
  if (inv->second == p.text && expr_eq(minus(g.kids[0], g.kids[1]), minus(p.kids[1], p.kids[0])))
    return true;
  return proportional(g, p);
}

// ---------------------------------------------------------------- sets

NodePtr unwrap_eq(const NodePtr& n) {
  if (is_assignment(*n)) return last_relation(*n).kids[1];
  return n;
}

// Sorting as sympy orders set elements, for the cases where that order is a numeric one.
std::optional<std::vector<NodePtr>> numerically_sorted(const std::vector<NodePtr>& elems) {
  std::vector<std::pair<std::vector<double>, NodePtr>> keyed;
  for (const auto& e : elems) {
    NodePtr u = unwrap_eq(e);
    std::vector<double> key;
    if (u->kind == Kind::Tuple) {
      for (const auto& k : u->kids) {
        auto v = real_constant(*unwrap_eq(k));
        if (!v) return std::nullopt;
        key.push_back(*v);
      }
    } else {
      auto v = real_constant(*u);
      if (!v) return std::nullopt;
      key.push_back(*v);
    }
    keyed.emplace_back(key, e);
  }
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<NodePtr> out;
  for (auto& [k, e] : keyed) out.push_back(e);
  return out;
}

std::vector<NodePtr> dedupe(const std::vector<NodePtr>& elems) {
  std::vector<NodePtr> out;
  std::set<std::string> seen;
  for (const auto& e : elems)
    if (seen.insert(to_string(*e)).second) out.push_back(e);
  return out;
}

bool zip_eq(const std::vector<NodePtr>& g, const std::vector<NodePtr>& p) {
  if (g.size() != p.size()) return false;
  for (size_t i = 0; i < g.size(); ++i)
    if (!expr_eq(g[i], p[i])) return false;
  return true;
}

// Elements matched one to one, in some order (for sets whose elements have no numeric order).
bool matched_eq(const std::vector<NodePtr>& g, std::vector<NodePtr> p) {
  if (g.size() != p.size()) return false;
  for (const auto& e : g) {
    auto it = std::find_if(p.begin(), p.end(), [&](const NodePtr& q) { return expr_eq(e, q); });
    if (it == p.end()) return false;
    p.erase(it);
  }
  return true;
}

bool deep_set_tuple_eq(const Node& g, const Node& p) {
  std::vector<NodePtr> ga = g.kind == Kind::FiniteSet ? dedupe(g.kids) : g.kids;
  std::vector<NodePtr> pa = p.kind == Kind::FiniteSet ? dedupe(p.kids) : p.kids;
  if (ga.size() != pa.size()) return false;
  if (g.kind == Kind::FiniteSet) {
    auto gs = numerically_sorted(ga), ps = numerically_sorted(pa);
    if (gs && ps) return zip_eq(*gs, *ps);
    return matched_eq(ga, pa);
  }
  if (g.kind == Kind::Tuple && p.kind == Kind::FiniteSet) return zip_eq(ga, pa);  // written order
  if (p.kind == Kind::FiniteSet) {
    if (auto ps = numerically_sorted(pa)) return zip_eq(ga, *ps);
    return matched_eq(ga, pa);
  }
  return zip_eq(ga, pa);
}

bool interval_eq(const Node& a, const Node& b) {
  return a.left_open == b.left_open && a.right_open == b.right_open &&
         expr_eq(a.kids[0], b.kids[0]) && expr_eq(a.kids[1], b.kids[1]);
}

// Intervals and unions of them as sorted, merged pieces of the real line (for set equality).
struct Piece {
  double lo, hi;
  bool lo_open, hi_open;
};
std::optional<std::vector<Piece>> pieces(const Node& n) {
  if (n.kind == Kind::Interval) {
    auto lo = real_constant(*n.kids[0]), hi = real_constant(*n.kids[1]);
    if (!lo || !hi) return std::nullopt;
    return std::vector<Piece>{{*lo, *hi, n.left_open, n.right_open}};
  }
  if (n.kind == Kind::FiniteSet) {
    std::vector<Piece> out;
    for (const auto& k : n.kids) {
      auto v = real_constant(*k);
      if (!v) return std::nullopt;
      out.push_back({*v, *v, false, false});
    }
    return out;
  }
  if (n.kind == Kind::Union) {
    std::vector<Piece> out;
    for (const auto& k : n.kids) {
      auto p = pieces(*k);
      if (!p) return std::nullopt;
      out.insert(out.end(), p->begin(), p->end());
    }
    return out;
  }
  if (n.kind == Kind::SetConst && n.text == "reals")
    return std::vector<Piece>{{-INFINITY, INFINITY, true, true}};
  if (n.kind == Kind::SetConst && n.text == "empty") return std::vector<Piece>{};
  return std::nullopt;
}
std::vector<Piece> merged(std::vector<Piece> v) {
  std::sort(v.begin(), v.end(), [](const Piece& a, const Piece& b) {
    return a.lo < b.lo || (a.lo == b.lo && !a.lo_open && b.lo_open);
  });
  std::vector<Piece> out;
  for (const auto& p : v) {
    if (!out.empty() &&
        (p.lo < out.back().hi || (p.lo == out.back().hi && !(p.lo_open && out.back().hi_open)))) {
      if (p.hi > out.back().hi || (p.hi == out.back().hi && !p.hi_open))
        out.back().hi = p.hi, out.back().hi_open = p.hi_open;
    } else {
      out.push_back(p);
    }
  }
  return out;
}
bool same_points(const Node& a, const Node& b) {
  auto pa = pieces(a), pb = pieces(b);
  if (!pa || !pb) return false;
  auto ma = merged(*pa), mb = merged(*pb);
  if (ma.size() != mb.size()) return false;
  for (size_t i = 0; i < ma.size(); ++i) {
    auto eq = [](double x, double y) {
      return x == y || std::fabs(x - y) <= 1e-12 * std::max(1.0, std::fabs(x));
    };
    if (!eq(ma[i].lo, mb[i].lo) || !eq(ma[i].hi, mb[i].hi) || ma[i].lo_open != mb[i].lo_open ||
        ma[i].hi_open != mb[i].hi_open)
      return false;
  }
  return true;
}

bool sets_eq(const NodePtr& gold, const NodePtr& pred) {
  NodePtr a =
      (is_set(*gold) || gold->kind == Kind::Tuple) ? gold : make(Kind::FiniteSet, "", {gold});
  NodePtr b =
      (is_set(*pred) || pred->kind == Kind::Tuple) ? pred : make(Kind::FiniteSet, "", {pred});
  if (a->kind == Kind::Interval && b->kind == Kind::Interval) return interval_eq(*a, *b);
  if (to_string(*a) == to_string(*b)) return true;
  if (is_set(*a) && is_set(*b) && !(a->kind == Kind::FiniteSet && b->kind == Kind::FiniteSet) &&
      same_points(*a, *b))
    return true;
  bool fa = a->kind == Kind::FiniteSet || a->kind == Kind::Tuple,
       fb = b->kind == Kind::FiniteSet || b->kind == Kind::Tuple;
  if (fa && fb) return deep_set_tuple_eq(*a, *b);
  // An open interval (a, b) may have been meant as a pair; sympy's answer for symbolic endpoints
  // depends on its internal ordering, so only numeric ones are compared that way.
  auto numeric_ends = [](const Node& iv) {
    return real_constant(*iv.kids[0]) && real_constant(*iv.kids[1]);
  };
  if (a->kind == Kind::Interval && fb && a->left_open && a->right_open && b->kids.size() == 2 &&
      numeric_ends(*a))
    return deep_set_tuple_eq(*make(Kind::Tuple, "", a->kids), *b);
  if (b->kind == Kind::Interval && fa && b->left_open && b->right_open && a->kids.size() == 2 &&
      numeric_ends(*b))
    return deep_set_tuple_eq(*a, *make(Kind::Tuple, "", b->kids));
  return false;
}

// ---------------------------------------------------------------- the dispatcher

bool expr_eq(NodePtr gold, NodePtr pred) {
  bool ga = is_assignment(*gold), pa = is_assignment(*pred);
  bool ge = is_equation(*gold), pe = is_equation(*pred);
  // An assignment chain x = a = b stands for x = b.
  if (ga)
    gold = make(Kind::Relation, "=", {first_relation(*gold).kids[0], last_relation(*gold).kids[1]});
  if (pa)
    pred = make(Kind::Relation, "=", {first_relation(*pred).kids[0], last_relation(*pred).kids[1]});
  // The gold's form decides: 1 vs 9 = 1 compares 1 with 1; x = 1 vs 1 compares 1 with 1.
  if (pe && !ge) {
    pred = last_relation(*pred).kids[1];
  } else if (ga && !pe) {
    gold = last_relation(*gold).kids[1];
  }
  if (is_relation(*gold) && is_set(*pred)) {
    if (NodePtr s = relation_as_set(*gold)) gold = s;
  }
  if (to_string(*gold) == to_string(*pred)) return true;
  if (is_relation(*gold) && is_relation(*pred)) return relational_eq(*gold, *pred);
  if (is_relation(*gold) || is_relation(*pred)) return false;
  if (is_set(*gold) || is_set(*pred) || gold->kind == Kind::Tuple || pred->kind == Kind::Tuple)
    return sets_eq(gold, pred);
  if (gold->kind == Kind::Symbol || pred->kind == Kind::Symbol) return symbols_eq(*gold, *pred);
  // sympy: numeric comparison (with its float rounding), then simplify(gold - pred) == 0.
  return numeric_eq(*gold, *pred) || identical(*gold, *pred);
}

}  // namespace

bool answers_equivalent(const NodePtr& gold, const NodePtr& pred) {
  if (!gold || !pred) return false;
  return expr_eq(gold, pred);
}

bool expressions_identical(const Node& a, const Node& b) { return identical(a, b); }

bool has_decimal(const Node& n) { return contains_float(n); }

}  // namespace lmeval::tasks::math
