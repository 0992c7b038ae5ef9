// Recursive-descent reading of LaTeX answers (see latex_parser.hpp for the conventions).
#include "lmeval/tasks/functions/math/latex_parser.hpp"

#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lmeval/core/regex.hpp"
#include "lmeval/tasks/functions/math/evaluate.hpp"

namespace lmeval::tasks::math {

namespace {

struct ParseFail {};

enum class Tok { Num, Letter, Cmd, Char, End };

struct Token {
  Tok type;
  std::string text;  // digits, the letter, the command name without backslash, or the char
};

// Spacing commands and the like that never change the value.
bool is_spacing_cmd(const std::string& c) {
  static const std::set<std::string> k = {
      ",",         ";",      ":",        "!",      " ",   "quad", "qquad", "displaystyle",
      "textstyle", "limits", "nonumber", "middle", "big", "Big",  "bigg",  "Bigg",
      "bigl",      "bigr",   "Bigl",     "Bigr"};
  return k.count(c) > 0;
}

std::vector<Token> lex(std::string_view s) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (std::isspace(c)) {
      ++i;
      continue;
    }
    if (std::isdigit(c) ||
        (c == '.' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      size_t st = i;
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
      if (i + 1 < s.size() && s[i] == '.' && std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
        ++i;
        while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
      }
      out.push_back({Tok::Num, std::string(s.substr(st, i - st))});
      continue;
    }
    if (std::isalpha(c)) {
      out.push_back({Tok::Letter, std::string(1, static_cast<char>(c))});
      ++i;
      continue;
    }
    if (c == '\\') {
      ++i;
      if (i >= s.size()) throw ParseFail{};
      if (std::isalpha(static_cast<unsigned char>(s[i]))) {
        size_t st = i;
        while (i < s.size() && std::isalpha(static_cast<unsigned char>(s[i]))) ++i;
        std::string name(s.substr(st, i - st));
        // The reference's lexer matches known commands as prefixes: "\quadx" is \quad x.
        for (const char* known : {"qquad", "quad", "cdot", "times", "pi"}) {
          std::string_view k(known);
          if (name.size() > k.size() && name.compare(0, k.size(), k) == 0) {
            i = st + k.size();
            name = std::string(k);
            break;
          }
        }
        if (!is_spacing_cmd(name)) out.push_back({Tok::Cmd, name});
        continue;
      }
      std::string name(1, s[i++]);
      if (name == "(" || name == ")") {  // \( \) read as parentheses
        out.push_back({Tok::Char, name});
      } else if (name == "\\") {
        out.push_back({Tok::Cmd, "\\"});
      } else if (!is_spacing_cmd(name)) {
        out.push_back({Tok::Cmd, name});
      }
      continue;
    }
    if (c >= 0x80) {  // a UTF-8 sequence: the few operators people paste
      size_t len = (c >= 0xF0) ? 4 : (c >= 0xE0) ? 3 : 2;
      std::string u(s.substr(i, len));
      i += len;
      static const std::map<std::string, std::string> kUnicode = {
          {"\xC3\x97", "times"},  {"\xC2\xB7", "cdot"},   {"\xE2\x8B\x85", "cdot"},
          {"\xC3\xB7", "div"},    {"\xE2\x89\xA4", "le"}, {"\xE2\x89\xA5", "ge"},
          {"\xE2\x89\xA0", "ne"}, {"\xCF\x80", "pi"},     {"\xE2\x88\x9E", "infty"}};
      auto it = kUnicode.find(u);
      if (it == kUnicode.end()) throw ParseFail{};
      out.push_back({Tok::Cmd, it->second});
      continue;
    }
    out.push_back({Tok::Char, std::string(1, static_cast<char>(c))});
    ++i;
  }
  out.push_back({Tok::End, ""});
  return out;
}

const std::set<std::string>& trig_functions() {
  static const std::set<std::string> k = {
      "sin",    "cos",    "tan",    "sec",    "csc",    "cot",  "arcsin", "arccos",
      "arctan", "arcsec", "arccsc", "arccot", "sinh",   "cosh", "tanh",   "sech",
      "csch",   "coth",   "arsinh", "arcosh", "artanh", "asin", "acos",   "atan"};
  return k;
}

const std::set<std::string>& greek_letters() {
  static const std::set<std::string> k = {
      "alpha",   "beta",     "gamma",   "delta", "epsilon",  "varepsilon", "zeta",    "eta",
      "theta",   "vartheta", "iota",    "kappa", "lambda",   "mu",         "nu",      "xi",
      "omicron", "rho",      "varrho",  "sigma", "varsigma", "tau",        "upsilon", "phi",
      "varphi",  "chi",      "psi",     "omega", "Gamma",    "Delta",      "Theta",   "Lambda",
      "Xi",      "Sigma",    "Upsilon", "Phi",   "Psi",      "Omega",      "Pi"};
  return k;
}

std::string lower(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

NodePtr neg(NodePtr a) { return make(Kind::Neg, "", {std::move(a)}); }
NodePtr integer(long v) {
  return v < 0 ? neg(make(Kind::Integer, std::to_string(-v)))
               : make(Kind::Integer, std::to_string(v));
}
NodePtr divide(NodePtr a, NodePtr b) {
  return make(Kind::Mul, "", {std::move(a), make(Kind::Pow, "", {std::move(b), integer(-1)})});
}
bool is_integer_literal(const NodePtr& n) { return n && n->kind == Kind::Integer; }

// The sign of what sympy holds as a Rational number: an integer, a \frac of two integers, and
// minus signs on them (0 when it is not one).
int rational_sign(const Node& n) {
  if (n.kind == Kind::Integer) return n.text == "0" ? 0 : 1;
  if (n.kind == Kind::Neg) return -rational_sign(*n.kids[0]);
  if (n.kind == Kind::Mul && n.kids.size() == 2 && n.kids[1]->kind == Kind::Pow) {
    const Node& pw = *n.kids[1];
    bool reciprocal = pw.kids[1]->kind == Kind::Neg && pw.kids[1]->kids[0]->kind == Kind::Integer &&
                      pw.kids[1]->kids[0]->text == "1";
    if (reciprocal && pw.kids[0]->kind == Kind::Integer && pw.kids[0]->text != "0")
      return rational_sign(*n.kids[0]);
  }
  return 0;
}
bool positive_rational(const Node& n) { return rational_sign(n) > 0; }

class Parser {
 public:
  Parser(std::vector<Token> toks, bool complex_mode)
      : t_(std::move(toks)), complex_(complex_mode) {}

  NodePtr top() {
    auto groups = element_groups({});
    if (!at_end()) throw ParseFail{};
    // `x = 1, 2` (names on the left, no other relation) is x = {1, 2}, not {x = 1, 2}.
    const NodePtr& first = groups[0][0];
    size_t count = 0;
    bool others_plain = true;
    for (const auto& g : groups)
      for (const auto& e : g) {
        ++count;
        if (e != first && (e->kind == Kind::Relation || e->kind == Kind::And)) others_plain = false;
      }
    if (count > 1 && others_plain && first->kind == Kind::Relation && first->text == "=" &&
        names(*first->kids[0])) {
      auto rest = groups;
      rest[0][0] = first->kids[1];
      return make(Kind::Relation, "=", {first->kids[0], elements_to_value(rest)});
    }
    NodePtr v = elements_to_value(groups);
    if (!sets_where_allowed(*v, true)) throw ParseFail{};
    return v;
  }

  static bool names(const Node& n) {
    if (n.kind == Kind::Symbol) return true;
    if (n.kind != Kind::Tuple) return false;
    for (const auto& k : n.kids)
      if (k->kind != Kind::Symbol) return false;
    return true;
  }

  // Sets, tuples and intervals are elements (of the answer, of sets, of tuples), sides of `=`
  // and operands of unions, never operands of arithmetic or of inequalities; relations are
  // elements only (2(x = 2) is not read).
  static bool sets_where_allowed(const Node& n, bool sets_ok, bool relations_ok = true) {
    bool set_valued = n.kind == Kind::Tuple || n.kind == Kind::Interval ||
                      n.kind == Kind::FiniteSet || n.kind == Kind::Union ||
                      n.kind == Kind::SetConst;
    bool relation = n.kind == Kind::Relation || n.kind == Kind::And;
    if ((set_valued && !sets_ok) || (relation && !relations_ok)) return false;
    bool container = n.kind == Kind::Tuple || n.kind == Kind::FiniteSet || n.kind == Kind::Union;
    bool kids_sets =
        container || n.kind == Kind::And || (n.kind == Kind::Relation && n.text == "=");
    bool kids_relations = container || n.kind == Kind::And;
    for (const auto& k : n.kids)
      if (!sets_where_allowed(*k, kids_sets, kids_relations)) return false;
    return true;
  }

  NodePtr plain() {  // parse_expr: no implicit multiplication, whole-number exponents
    plain_ = true;
    auto v = additive();
    if (!at_end()) throw ParseFail{};
    return v;
  }

 private:
  std::vector<Token> t_;
  size_t p_ = 0;
  bool complex_;
  bool plain_ = false;
  int abs_depth_ = 0;
  int depth_ = 0;

  const Token& peek(size_t k = 0) const { return t_[std::min(p_ + k, t_.size() - 1)]; }
  bool at_end() const { return peek().type == Tok::End; }
  bool is_char(const char* c, size_t k = 0) const {
    return peek(k).type == Tok::Char && peek(k).text == c;
  }
  bool is_cmd(const char* c, size_t k = 0) const {
    return peek(k).type == Tok::Cmd && peek(k).text == c;
  }
  void expect_char(const char* c) {
    if (!is_char(c)) throw ParseFail{};
    ++p_;
  }

  // `a, b; c` at the current level, stopping before one of `closers` (or the end).
  std::vector<std::vector<NodePtr>> element_groups(const std::set<std::string>& closers) {
    std::vector<std::vector<NodePtr>> groups(1);
    while (true) {
      for (auto& e : element()) groups.back().push_back(std::move(e));
      if (is_char(",")) {
        ++p_;
        continue;
      }
      if (is_char(";")) {
        ++p_;
        groups.emplace_back();
        continue;
      }
      break;
    }
    if (!at_end()) {
      const Token& k = peek();
      if (!closers.count(k.type == Tok::Cmd ? "\\" + k.text : k.text)) throw ParseFail{};
    }
    return groups;
  }

  static NodePtr elements_to_value(const std::vector<std::vector<NodePtr>>& groups) {
    if (groups.size() == 1) {
      if (groups[0].size() == 1) return groups[0][0];
      return make(Kind::FiniteSet, "", groups[0]);
    }
    bool singles = true;
    for (const auto& g : groups) singles = singles && g.size() == 1;
    std::vector<NodePtr> elems;
    for (const auto& g : groups) elems.push_back(singles ? g[0] : make(Kind::Tuple, "", g));
    return make(Kind::FiniteSet, "", elems);
  }

  // One element; `a \pm b` gives two.
  std::vector<NodePtr> element() {
    if (is_cmd("pm") || is_cmd("mp")) {
      ++p_;
      auto v = additive();
      return {neg(v), v};
    }
    auto v = relation();
    if (v->kind == Kind::Func && v->text == "\\pm") {
      return {make(Kind::Add, "", {v->kids[0], v->kids[1]}),
              make(Kind::Add, "", {v->kids[0], neg(v->kids[1])})};
    }
    return {v};
  }

  std::optional<std::string> relop() {
    const Token& k = peek();
    if (k.type == Tok::Char) {
      if (k.text == "=") return "=";
      if (k.text == "<" || k.text == ">") {
        if (is_char("=", 1)) {
          ++p_;
          return k.text + "=";
        }
        return k.text;
      }
      if (k.text == "!" && is_char("=", 1)) {
        ++p_;
        return "!=";
      }
      return std::nullopt;
    }
    if (k.type != Tok::Cmd) return std::nullopt;
    static const std::map<std::string, std::string> ops = {
        {"le", "<="},  {"leq", "<="},      {"leqslant", "<="}, {"ge", ">="},
        {"geq", ">="}, {"geqslant", ">="}, {"lt", "<"},        {"gt", ">"},
        {"ne", "!="},  {"neq", "!="},      {"approx", "~"},    {"in", "in"}};
    auto it = ops.find(k.text);
    if (it == ops.end()) return std::nullopt;
    return it->second;
  }

  NodePtr relation() {
    NodePtr lhs = set_expr();
    std::vector<NodePtr> chain;
    NodePtr left = lhs;
    while (auto op = relop()) {
      ++p_;
      NodePtr rhs = set_expr();
      if (*op != "=" && *op != "in" &&
          (!sets_where_allowed(*left, false, false) || !sets_where_allowed(*rhs, false, false)))
        throw ParseFail{};
      if (*op == "~") {  // x \approx v is v; v \approx w is v (and a chain stays as it is)
        if (chain.empty()) lhs = left = only_symbols(*lhs) ? rhs : lhs;
        continue;
      }
      if (chain.empty() && (*op == "=" || *op == "in") && left->kind == Kind::Interval &&
          left->kids[0]->kind == Kind::Symbol && left->kids[1]->kind == Kind::Symbol)
        left = make(Kind::Tuple, "", left->kids);  // (p, q) = ...: names, not an interval
      chain.push_back(make(Kind::Relation, *op == "in" ? "=" : *op, {left, rhs}));
      left = rhs;
    }
    if (chain.empty()) return lhs;
    if (chain.size() == 1) return chain[0];
    return make(Kind::And, "", chain);
  }

  NodePtr set_expr() {
    NodePtr v = additive();
    while (is_cmd("cup") || is_cmd("cap") || is_cmd("setminus")) {
      std::string op = peek().text;
      ++p_;
      NodePtr r = additive();
      auto as_set = [](const NodePtr& n) {
        return n->kind == Kind::Tuple ? make(Kind::FiniteSet, "", n->kids) : n;
      };
      if (op != "cup") throw ParseFail{};
      v = make(Kind::Union, "", {as_set(v), as_set(r)});
    }
    return v;
  }

  NodePtr additive() {
    std::vector<NodePtr> terms{mul()};
    while (true) {
      if (is_char("+")) {
        ++p_;
        terms.push_back(mul());
      } else if (is_char("-")) {
        ++p_;
        terms.push_back(neg(mul()));
      } else if (is_cmd("pm") || is_cmd("mp")) {
        ++p_;
        NodePtr left = terms.size() == 1 ? terms[0] : make(Kind::Add, "", terms);
        NodePtr right = additive();
        return make(Kind::Func, "\\pm", {left, right});
      } else {
        break;
      }
    }
    return terms.size() == 1 ? terms[0] : make(Kind::Add, "", terms);
  }

  bool starts_implicit_factor() const {
    const Token& k = peek();
    switch (k.type) {
      case Tok::Num:
      case Tok::Letter:
        return true;
      case Tok::Char:
        return k.text == "(" || k.text == "{" || (k.text == "|" && abs_depth_ == 0);
      case Tok::Cmd: {
        static const std::set<std::string> not_atoms = {
            "cdot",   "times",    "div",      "cup",    "cap",   "setminus", "pm", "mp",
            "le",     "leq",      "ge",       "geq",    "lt",    "gt",       "ne", "neq",
            "approx", "in",       "right",    "rfloor", "rceil", "\\",       "}",  "%",
            "end",    "leqslant", "geqslant", "notin",  "to",    "rangle",   "|"};
        return !not_atoms.count(k.text);
      }
      default:
        return false;
    }
  }

  NodePtr mul() {
    std::vector<NodePtr> factors{unary()};
    const Node* integer_run = nullptr;  // the sum that juxtaposed integers are being added into
    while (true) {
      if (is_char("*") || is_cmd("cdot") || is_cmd("times")) {
        ++p_;
        factors.push_back(unary());
      } else if (is_char("/") || is_cmd("div") || is_char(":")) {
        ++p_;
        NodePtr d = unary();
        NodePtr n = factors.size() == 1 ? factors[0] : make(Kind::Mul, "", factors);
        factors = {divide(n, d)};
      } else if (!plain_ && starts_implicit_factor()) {
        NodePtr f = postfix();
        // A positive number right after an integer adds to it, as latex2sympy reads it (mixed
        // numbers): "2\frac{1}{2}" is 5/2, "2 3" is 5, "2(100)" is 102; "2(-3)" multiplies.
        if (positive_rational(*f) &&
            (factors.back()->kind == Kind::Integer || factors.back().get() == integer_run)) {
          std::vector<NodePtr> terms = factors.back().get() == integer_run
                                           ? factors.back()->kids
                                           : std::vector<NodePtr>{factors.back()};
          terms.push_back(f);
          factors.back() = make(Kind::Add, "", terms);
          integer_run = factors.back().get();
          continue;
        }
        factors.push_back(f);
      } else {
        break;
      }
    }
    return factors.size() == 1 ? factors[0] : make(Kind::Mul, "", factors);
  }

  NodePtr unary() {
    if (is_char("-")) {
      ++p_;
      return neg(unary());
    }
    if (is_char("+")) {
      ++p_;
      return unary();
    }
    return postfix();
  }

  NodePtr exponent() {
    if (is_char("{")) {
      ++p_;
      NodePtr v = relation();
      expect_char("}");
      return v;
    }
    if (peek().type == Tok::Num) {  // the reference reads x^23 as x^{23}
      std::string d = peek().text;
      ++p_;
      return number(d);
    }
    if (is_char("-")) {
      ++p_;
      return neg(atom());
    }
    return atom();
  }

  NodePtr postfix() {
    NodePtr v = atom();
    while (true) {
      bool set_valued =
          v->kind == Kind::Tuple || v->kind == Kind::Interval || v->kind == Kind::FiniteSet;
      if (set_valued && (is_char("^") || is_char("!") || is_char("%") || is_cmd("%") ||
                         is_cmd("circ") || is_char("_")))
        throw ParseFail{};  // (1,8)^\circ: a tuple takes no operator
      if (is_char("^")) {
        ++p_;
        if (is_cmd("circ")) {  // degrees are not converted
          ++p_;
          continue;
        }
        if (is_char("{") && peek(1).type == Tok::Cmd && peek(1).text == "circ" && is_char("}", 2)) {
          p_ += 3;
          continue;
        }
        v = make(Kind::Pow, "", {v, exponent()});
      } else if (is_char("!") && !is_char("=", 1)) {
        ++p_;
        v = make(Kind::Func, "factorial", {v});
      } else if (is_char("'")) {
        ++p_;
      } else if (is_char("%") || is_cmd("%")) {
        // With the antlr4 runtime the reference pins (4.11), latex2sympy2_extended fails on any
        // percent sign inside LaTeX (an AttributeError in its atom conversion): the answer is
        // then kept as text only. (Under antlr4 4.13 it would read 38\% as 38/100.)
        throw ParseFail{};
      } else if (is_cmd("circ")) {
        ++p_;
      } else if (is_char("_")) {  // a subscript on a number (a base, 12_5) is dropped
        ++p_;
        raw_group();
      } else {
        break;
      }
    }
    return v;
  }

  std::string raw_group() {  // the text of a {...} group (or one token), braces kept inside
    if (!is_char("{")) {
      const Token& k = peek();
      if (k.type == Tok::End) throw ParseFail{};
      ++p_;
      return k.type == Tok::Cmd ? "\\" + k.text : k.text;
    }
    ++p_;
    std::string out;
    int depth = 1;
    while (true) {
      const Token& k = peek();
      if (k.type == Tok::End) throw ParseFail{};
      ++p_;
      if (k.type == Tok::Char && k.text == "{") ++depth;
      if (k.type == Tok::Char && k.text == "}" && --depth == 0) break;
      out += k.type == Tok::Cmd ? "\\" + k.text : k.text;
    }
    return out;
  }

  NodePtr group() {  // {expr}: the reference's grammar wants braces (\frac12 is normalised away)
    expect_char("{");
    NodePtr v = relation();
    expect_char("}");
    return v;
  }

  NodePtr symbol(std::string name) {
    if (is_char("_")) {
      ++p_;
      std::string sub = raw_group();
      name.append("_");
      if (sub.size() > 1)
        name.append("{").append(sub).append("}");
      else
        name.append(sub);
    }
    return make(Kind::Symbol, complex_ ? name + kComplexSuffix : name);
  }

  NodePtr number(const std::string& text) {
    if (text.find('.') != std::string::npos) return make(Kind::Float, text);
    size_t nz = text.find_first_not_of('0');
    return make(Kind::Integer, nz == std::string::npos ? "0" : text.substr(nz));
  }

  // `( ... )`, `[ ... ]` and `\{ ... \}`: groups, tuples, intervals, sets.
  NodePtr bracketed(const std::string& open) {
    std::set<std::string> closers = open == "\\{" ? std::set<std::string>{"\\}"}
                                    : open == "{" ? std::set<std::string>{"}"}
                                                  : std::set<std::string>{")", "]"};
    int saved_abs = abs_depth_;
    abs_depth_ = 0;
    auto groups = element_groups(closers);
    abs_depth_ = saved_abs;
    std::string close = peek().type == Tok::Cmd ? "\\" + peek().text : peek().text;
    if (at_end()) throw ParseFail{};
    ++p_;
    std::vector<NodePtr> flat;
    for (const auto& g : groups) flat.insert(flat.end(), g.begin(), g.end());
    if (open == "\\{") return make(Kind::FiniteSet, "", flat);
    if (open == "{") return flat.size() == 1 ? flat[0] : make(Kind::FiniteSet, "", flat);
    if (flat.size() == 1) return flat[0];
    if (flat.size() == 2) {
      bool lo = open == "(", ro = close == ")";
      auto a = evaluate_constant(*flat[0]), b = evaluate_constant(*flat[1]);
      if (a && b && std::abs(a->imag()) < 1e-12 && std::abs(b->imag()) < 1e-12 &&
          ((lo && ro && b->real() <= a->real()) || (!lo && !ro && b->real() < a->real())))
        return make(Kind::Tuple, "", flat);
      if (a && b && std::abs(a->imag()) < 1e-12 && std::abs(b->imag()) < 1e-12 &&
          b->real() <= a->real()) {
        // sympy's Interval: empty when reversed or half-open on one point, {a} for [a, a]
        if (b->real() == a->real() && !lo && !ro) return make(Kind::FiniteSet, "", {flat[0]});
        return make(Kind::SetConst, "empty");
      }
      auto iv = make(Kind::Interval, "", flat);
      auto m = std::const_pointer_cast<Node>(iv);
      m->left_open = lo;
      m->right_open = ro;
      return iv;
    }
    if (open != "(" || close != ")") throw ParseFail{};
    return make(Kind::Tuple, "", flat);
  }

  NodePtr matrix(const std::string& env) {
    if (env == "array") raw_group();  // column spec
    std::vector<std::vector<NodePtr>> rows(1);
    while (true) {
      if (is_cmd("end")) {
        ++p_;
        raw_group();
        break;
      }
      rows.back().push_back(relation());
      if (is_char("&")) {
        ++p_;
      } else if (is_cmd("\\")) {
        ++p_;
        if (is_cmd("end")) continue;
        rows.emplace_back();
      } else if (!is_cmd("end")) {
        throw ParseFail{};
      }
    }
    size_t cols = rows[0].size();
    std::vector<NodePtr> elems;
    for (const auto& r : rows) {
      if (r.size() != cols) throw ParseFail{};
      elems.insert(elems.end(), r.begin(), r.end());
    }
    auto m = std::make_shared<Node>();
    m->kind = Kind::Matrix;
    m->kids = elems;
    m->rows = rows.size();
    m->cols = cols;
    return m;
  }

  // The argument of a function written without parentheses: `\sin 2x` is sin(2x), `\sin x \cos
  // x` is sin(x)cos(x).
  NodePtr bare_argument() {
    std::vector<NodePtr> f{postfix()};
    while (starts_implicit_factor() && !(peek().type == Tok::Cmd && is_function(peek().text)))
      f.push_back(postfix());
    return f.size() == 1 ? f[0] : make(Kind::Mul, "", f);
  }

  static bool is_function(const std::string& c) {
    return trig_functions().count(c) || c == "ln" || c == "log" || c == "exp" || c == "max" ||
           c == "min" || c == "gcd" || c == "lcm" || c == "operatorname";
  }

  NodePtr function(std::string name) {
    if (name == "operatorname") name = raw_group();
    NodePtr power, base;
    if (is_char("^")) {
      ++p_;
      power = exponent();
    }
    if (is_char("_")) {
      ++p_;
      if (is_char("{")) {
        base = group();
      } else if (peek().type == Tok::Num || peek().type == Tok::Letter) {
        base = atom();
      } else {
        throw ParseFail{};
      }
    }
    if (!power && is_char("^")) {
      ++p_;
      power = exponent();
    }
    std::vector<NodePtr> args;
    if (is_char("(")) {
      ++p_;
      auto groups = element_groups({")"});
      ++p_;
      for (const auto& g : groups) args.insert(args.end(), g.begin(), g.end());
    } else if (is_char("{")) {
      ++p_;
      args.push_back(relation());
      expect_char("}");
    } else {
      args.push_back(bare_argument());
    }
    if (args.empty()) throw ParseFail{};
    bool inverse = power && power->kind == Kind::Neg && is_integer_literal(power->kids[0]) &&
                   power->kids[0]->text == "1" && trig_functions().count(name);
    if (inverse) {
      name = name.substr(0, 3) == "arc" ? name.substr(3) : "arc" + name;
      power = nullptr;
    }
    if (name == "asin" || name == "acos" || name == "atan") name = "arc" + name.substr(1);
    NodePtr v;
    if (name == "ln") {
      v = make(Kind::Func, "log", {args[0], make(Kind::Constant, "e")});
    } else if (name == "log") {
      v = make(Kind::Func, "log", {args[0], base ? base : integer(10)});
    } else if (name == "exp") {
      v = make(Kind::Pow, "", {make(Kind::Constant, "e"), args[0]});
    } else {
      if (!trig_functions().count(name) && name != "max" && name != "min" && name != "gcd" &&
          name != "lcm")
        throw ParseFail{};
      if (trig_functions().count(name) && args.size() != 1) throw ParseFail{};
      v = make(Kind::Func, name, args);
    }
    return power ? make(Kind::Pow, "", {v, power}) : v;
  }

  NodePtr atom() {
    struct Depth {  // nesting beyond any answer's is refused rather than recursed into
      int& d;
      explicit Depth(int& x) : d(x) {
        if (++d > 200) throw ParseFail{};
      }
      ~Depth() { --d; }
    } depth(depth_);
    const Token k = peek();
    switch (k.type) {
      case Tok::End:
        throw ParseFail{};
      case Tok::Num:
        ++p_;
        return number(k.text);
      case Tok::Letter: {
        ++p_;
        if ((k.text == "f" || k.text == "g" || k.text == "h") && is_char("(")) {
          ++p_;
          auto groups = element_groups({")"});
          ++p_;
          std::vector<NodePtr> args;
          for (const auto& g : groups) args.insert(args.end(), g.begin(), g.end());
          return make(Kind::Func, "@" + k.text, args);
        }
        if (k.text == "e" && !is_char("_")) return make(Kind::Constant, "e");
        return symbol(lower(k.text));
      }
      case Tok::Char: {
        ++p_;
        if (k.text == "(" || k.text == "[" || k.text == "{") return bracketed(k.text);
        if (k.text == "|") {
          ++abs_depth_;
          NodePtr v = relation();
          --abs_depth_;
          expect_char("|");
          return make(Kind::Func, "abs", {v});
        }
        throw ParseFail{};
      }
      case Tok::Cmd:
        break;
    }
    ++p_;
    const std::string& c = k.text;
    if (c == "frac" || c == "dfrac" || c == "tfrac" || c == "cfrac") {
      NodePtr a = group();
      NodePtr b = group();
      return divide(a, b);
    }
    if (c == "binom" || c == "dbinom" || c == "tbinom") {
      NodePtr a = group();
      NodePtr b = group();
      return make(Kind::Func, "binom", {a, b});
    }
    if (c == "sqrt") {
      NodePtr n = integer(2);
      if (is_char("[")) {
        ++p_;
        n = additive();
        expect_char("]");
      }
      NodePtr x = group();
      return make(Kind::Pow, "", {x, divide(integer(1), n)});
    }
    if (c == "pi") return make(Kind::Constant, "pi");
    if (c == "infty" || c == "infinity") return make(Kind::Constant, "inf");
    if (c == "emptyset" || c == "varnothing") return make(Kind::SetConst, "empty");
    if (c == "{") return bracketed("\\{");
    if (c == "left" || c == "right" || c == "mleft" || c == "mright") return atom();
    if (c == "lfloor" || c == "lceil") {
      NodePtr v = relation();
      if (!is_cmd(c == "lfloor" ? "rfloor" : "rceil")) throw ParseFail{};
      ++p_;
      return make(Kind::Func, c == "lfloor" ? "floor" : "ceiling", {v});
    }
    if (c == "boxed" || c == "fbox" || c == "phantom") return group();
    if (c == "text" || c == "mbox" || c == "textrm" || c == "textbf" || c == "textit") {
      std::string content = raw_group();
      std::string name;
      for (char ch : content)  // \text{\alpha + 1} is the symbol alpha+1
        if (!std::isspace(static_cast<unsigned char>(ch)) && ch != '\\')
          name += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (name.size() >= 2 && name.front() == '(' && name.back() == ')')
        name = name.substr(1, name.size() - 2);
      if (name.empty() || content.find('{') != std::string::npos) throw ParseFail{};
      if (name == "pi") return make(Kind::Constant, "pi");
      return make(Kind::Symbol, complex_ ? name + kComplexSuffix : name);
    }
    if (c == "mathbb") {
      std::string s = raw_group();
      static const std::map<std::string, std::string> sets = {{"R", "reals"},
                                                              {"Z", "integers"},
                                                              {"N", "naturals"},
                                                              {"Q", "rationals"},
                                                              {"C", "complexes"}};
      auto it = sets.find(s);
      if (it == sets.end()) throw ParseFail{};
      return make(Kind::SetConst, it->second);
    }
    if (c == "mathbf" || c == "mathrm" || c == "mathit" || c == "boldsymbol" || c == "bm" ||
        c == "vec" || c == "overrightarrow" || c == "overline" || c == "hat" || c == "bar" ||
        c == "tilde" || c == "mathcal" || c == "widehat" || c == "dot") {
      std::string content = raw_group();
      return symbol(lower(c + "{" + content + "}"));
    }
    if (c == "begin") {
      std::string env = raw_group();
      static const std::set<std::string> envs = {"pmatrix", "bmatrix", "Bmatrix", "vmatrix",
                                                 "Vmatrix", "matrix",  "array",   "smallmatrix"};
      if (!envs.count(env)) throw ParseFail{};
      return matrix(env);
    }
    if (is_function(c)) return function(c);
    if (greek_letters().count(c)) return symbol(lower(c));
    if (c == "angle" || c == "triangle" || c == "ell" || c == "circ") return symbol(c);
    throw ParseFail{};
  }

  static bool only_symbols(const Node& n) {
    if (n.kind == Kind::Symbol) return true;
    if (n.kind == Kind::Mul || n.kind == Kind::Add) {
      for (const auto& k : n.kids)
        if (!only_symbols(*k)) return false;
      return !n.kids.empty();
    }
    return false;
  }
};

// latex2sympy reads "1,000" and "12,345.5" (no spaces) as numbers, not sets.
bool is_comma_number(std::string_view s) {
  static const auto re = PyRegex::compile(R"(^\s*-?\d{1,3}(,\d{3})+(\.\d+)?\s*$)");
  return re->search(s).has_value();
}

bool treat_as_complex(std::string_view s) {
  static const auto re = PyRegex::compile(
      R"(\\mathbb\{C\}|\\i\b|\bi\b|\\text\{i\}|\\mathrm\{i\}|\\imath\b|\\det|\\operatorname\{tr\}|\\operatorname\{rank\}|\\text\{rank\}|\\arg\{|\\Re\{|\\Im\{|\\operatorname\{Re\}|\\operatorname\{Im\}|\\text\{Re\}|\\text\{Im\})");
  return re->search(s).has_value();
}

}  // namespace

NodePtr parse_latex(std::string_view latex) {
  if (is_comma_number(latex)) {
    std::string digits;
    bool neg_sign = false;
    for (char c : latex) {
      if (c == '-') neg_sign = true;
      if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') digits += c;
    }
    NodePtr n =
        digits.find('.') != std::string::npos
            ? make(Kind::Float, digits)
            : make(Kind::Integer,
                   digits.substr(std::min(digits.find_first_not_of('0'), digits.size() - 1)));
    return neg_sign ? neg(n) : n;
  }
  try {
    Parser p(lex(latex), treat_as_complex(latex));
    return p.top();
  } catch (const ParseFail&) {
    return nullptr;
  }
}

NodePtr parse_plain_expr(std::string_view expr) {
  for (char c : expr)
    if (!(std::isdigit(static_cast<unsigned char>(c)) ||
          std::string_view(".+-*/^() ").find(c) != std::string_view::npos))
      return nullptr;
  std::string s(expr);
  // "**" is Python's power; a bare space between two numbers is a syntax error there.
  if (pyre::search(R"(\d\s+[\d.])", s)) return nullptr;
  std::string t;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '*' && i + 1 < s.size() && s[i + 1] == '*') {
      t += '^';
      ++i;
    } else {
      t += s[i];
    }
  }
  t = pyre::sub(R"((\d)\.(?!\d))", "\\1.0", t);  // Python's "3." is a float
  if (pyre::search(R"([\d.)]\s*\()", t) || pyre::search(R"(\)\s*[\d.(])", t)) return nullptr;
  try {
    Parser p(lex(t), false);
    return p.plain();
  } catch (const ParseFail&) {
    return nullptr;
  }
}

}  // namespace lmeval::tasks::math
