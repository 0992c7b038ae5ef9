// The reference's minerva_math helpers (lm_eval/tasks/minerva_math/utils.py, lm-eval 0.4.13):
// doc_to_text and the answer handling shared with the leaderboard MATH port, Minerva's later
// normalise_final_answer, is_equiv, and math-verify's score from tasks/functions/math/.
#include <cmath>
#include <cstdint>
#include <exception>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "lmeval/core/error.hpp"
#include "lmeval/core/regex.hpp"
#include "lmeval/tasks/function_registry.hpp"
#include "lmeval/tasks/functions/hendrycks_math.hpp"
#include "lmeval/tasks/functions/leaderboard.hpp"
#include "lmeval/tasks/functions/math/answer_extraction.hpp"
#include "lmeval/tasks/functions/math/equivalence.hpp"
#include "lmeval/tasks/functions/math/evaluate.hpp"
#include "lmeval/tasks/functions/math/latex_parser.hpp"
#include "lmeval/tasks/functions/minerva_math.hpp"
#include "tasks/functions/doc_util.hpp"

namespace lmeval::tasks {

namespace {

bool is_alpha_word(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) return false;
  return true;
}

}  // namespace

std::string minerva_normalize_final_answer(std::string_view in) {
  std::string s(in);
  if (size_t eq = s.rfind('='); eq != std::string::npos) s = s.substr(eq + 1);
  // Unit words while whitespace still delimits them, never inside a LaTeX command name.
  for (const auto& e : math_removed_expressions())
    if (is_alpha_word(e)) s = pyre::sub("(?<!\\\\)\\b" + e + "\\b", "", s);
  for (const auto& [before, after] : math_answer_substitutions())
    s = replace_all(std::move(s), before, after);
  for (const auto& e : math_removed_expressions()) {
    if (!is_alpha_word(e)) {
      s = replace_all(std::move(s), e, "");
      continue;
    }
    // re.split(r"(\\[a-zA-Z]+)", s): the even items are the text between commands.
    auto parts = pyre::split(R"((\\[a-zA-Z]+))", s);
    std::string joined;
    for (size_t i = 0; i < parts.size(); ++i) {
      std::string p = parts[i].value_or("");
      joined += i % 2 == 0 ? replace_all(std::move(p), e, "") : p;
    }
    s = std::move(joined);
  }
  s = math_unwrap_final_answer(std::move(s));
  s = pyre::sub(R"((sqrt)(\[[^\]]*\])(\w))", "\\1\\2{\\3}", s);
  s = pyre::sub(R"((sqrt)(?!\[)([^{]))", "sqrt{\\2}", s);
  s = replace_all(std::move(s), "$", "");
  if (PyRegex::compile(R"(-?\d{1,3}(,\d{3})+)")->fullmatch(s)) s = replace_all(s, ",", "");
  return s;
}

namespace {

// What sympy's parse_latex reads as a scalar expression, through the math-verify reader of
// tasks/functions/math (which expects \left/\right and \dfrac already normalised away); sympy's
// number token takes thousands separators ("1,000"). nullptr where it is not read, or is a
// relation, set, tuple, interval, percentage or matrix (parse_latex raises or the subtraction
// fails there: is_equiv False).
math::NodePtr sympy_like_scalar(std::string_view latex) {
  std::string t(latex);
  for (const char* cmd : {"\\left", "\\right"}) t = replace_all(std::move(t), cmd, "");
  t = replace_all(std::move(t), "\\dfrac", "\\frac");
  t = replace_all(std::move(t), "\\tfrac", "\\frac");
  t = pyre::sub(R"((\d),(?=\d{3}(?!\d)))", "\\1", t);
  // latex2sympy reads a number after an integer as a mixed number ("2\frac{1}{2}" = 5/2, "2(3)" =
  // 5); parse_latex multiplies.
  t = pyre::sub(R"(([\d)}])(?=\\[dt]?frac|\())", "\\1*", t);
  auto n = math::parse_latex(t);
  if (!n) return nullptr;
  switch (n->kind) {
    case math::Kind::Relation:
    case math::Kind::And:
    case math::Kind::FiniteSet:
    case math::Kind::Tuple:
    case math::Kind::Interval:
    case math::Kind::Union:
    case math::Kind::Matrix:
    case math::Kind::SetConst:
    case math::Kind::Percent:
      return nullptr;
    default:
      return n;
  }
}

// A constant as sympy computes it once a Float takes part: integers and their quotients stay exact
// Rationals; an operation with a Float rounds the Rational to a 53-bit float (mpmath at sympy's
// default 15 digits) and is done in binary floating point, as IEEE doubles do.
struct SympyNumber {
  bool is_float = false;
  int64_t num = 0, den = 1;
  double f = 0;
  double as_double() const {
    return is_float ? f : static_cast<double>(num) / static_cast<double>(den);
  }
};

std::optional<SympyNumber> make_rational(int64_t n, int64_t d) {
  if (d == 0) return std::nullopt;
  if (d < 0) {
    if (n == INT64_MIN || d == INT64_MIN) return std::nullopt;
    n = -n, d = -d;
  }
  int64_t g = std::gcd(n, d);
  return SympyNumber{false, n / g, d / g, 0};
}

std::optional<SympyNumber> sympy_number(const math::Node& n) {
  using math::Kind;
  auto combine = [](const SympyNumber& a, const SympyNumber& b,
                    bool add) -> std::optional<SympyNumber> {
    if (a.is_float || b.is_float) {
      double x = a.as_double(), y = b.as_double();
      return SympyNumber{true, 0, 1, add ? x + y : x * y};
    }
    int64_t p = 0, q = 0, r = 0;
    if (add) {
      if (__builtin_mul_overflow(a.num, b.den, &p) || __builtin_mul_overflow(b.num, a.den, &q) ||
          __builtin_add_overflow(p, q, &p) || __builtin_mul_overflow(a.den, b.den, &r))
        return std::nullopt;
      return make_rational(p, r);
    }
    if (__builtin_mul_overflow(a.num, b.num, &p) || __builtin_mul_overflow(a.den, b.den, &r))
      return std::nullopt;
    return make_rational(p, r);
  };
  switch (n.kind) {
    case Kind::Integer: {
      if (n.text.size() > 18) return std::nullopt;
      return SympyNumber{false, std::stoll(n.text), 1, 0};
    }
    case Kind::Float:
      return SympyNumber{true, 0, 1, std::strtod(n.text.c_str(), nullptr)};
    case Kind::Neg: {
      auto v = sympy_number(*n.kids[0]);
      if (!v || v->num == INT64_MIN) return std::nullopt;
      v->num = -v->num, v->f = -v->f;
      return v;
    }
    case Kind::Add:
    case Kind::Mul: {
      std::optional<SympyNumber> acc;
      for (const auto& k : n.kids) {
        auto v = sympy_number(*k);
        if (!v) return std::nullopt;
        acc = acc ? combine(*acc, *v, n.kind == Kind::Add) : v;
        if (!acc) return std::nullopt;
      }
      return acc;
    }
    case Kind::Pow: {
      auto base = sympy_number(*n.kids[0]), e = sympy_number(*n.kids[1]);
      if (!base || !e || e->is_float || e->den != 1 || e->num > 64 || e->num < -64)
        return std::nullopt;
      if (base->is_float) return SympyNumber{true, 0, 1, std::pow(base->f, e->num)};
      std::optional<SympyNumber> r = SympyNumber{false, 1, 1, 0};
      for (int64_t i = 0; i < (e->num < 0 ? -e->num : e->num) && r; ++i)
        r = combine(*r, *base, false);
      if (!r) return std::nullopt;
      return e->num < 0 ? make_rational(r->den, r->num) : r;
    }
    default:
      return std::nullopt;
  }
}

// The symbols of sympy's parse_latex reading that the math-verify reader reads otherwise: "e" and
// "i" (Euler's number and the imaginary unit there), capitals (lowercased there), and every
// command sympy's grammar (sympy/parsing/latex/LaTeX.g4) has no token for, \pi among them, which
// parse_latex makes Symbol(name): "\pi" is not 3.14159 there, "\text{A}" is text*A. Where these
// differ between the two sides, sympy's difference keeps them and is not 0.
std::set<std::string> symbols_read_otherwise(std::string_view latex) {
  static const std::set<std::string> kGrammar = {"Longrightarrow",
                                                 "Rightarrow",
                                                 "arccos",
                                                 "arccot",
                                                 "arccsc",
                                                 "arcosh",
                                                 "arcsec",
                                                 "arcsin",
                                                 "arctan",
                                                 "arsinh",
                                                 "artanh",
                                                 "binom",
                                                 "cdot",
                                                 "cos",
                                                 "cosh",
                                                 "cot",
                                                 "csc",
                                                 "dbinom",
                                                 "dfrac",
                                                 "div",
                                                 "exp",
                                                 "frac",
                                                 "ge",
                                                 "geq",
                                                 "geqq",
                                                 "geqslant",
                                                 "hfil",
                                                 "int",
                                                 "langle",
                                                 "lceil",
                                                 "le",
                                                 "left",
                                                 "leq",
                                                 "leqq",
                                                 "leqslant",
                                                 "lfloor",
                                                 "lg",
                                                 "lim",
                                                 "ln",
                                                 "log",
                                                 "longrightarrow",
                                                 "mathit",
                                                 "medspace",
                                                 "negmedspace",
                                                 "negthickspace",
                                                 "negthinspace",
                                                 "neq",
                                                 "overline",
                                                 "prod",
                                                 "qquad",
                                                 "quad",
                                                 "rangle",
                                                 "rceil",
                                                 "rfloor",
                                                 "right",
                                                 "rightarrow",
                                                 "sec",
                                                 "sin",
                                                 "sinh",
                                                 "sqrt",
                                                 "sum",
                                                 "tan",
                                                 "tanh",
                                                 "tbinom",
                                                 "tfrac",
                                                 "thickspace",
                                                 "thinspace",
                                                 "times",
                                                 "to",
                                                 "vbox",
                                                 "vcenter",
                                                 "vrule",
                                                 "vskip",
                                                 "vspace",
                                                 "infty"};
  static const auto kCommand = PyRegex::compile(R"(\\([a-zA-Z]+))");
  std::set<std::string> out;
  size_t pos = 0;
  for (const auto& m : kCommand->finditer(latex)) {
    for (size_t i = pos; i < m.start(); ++i) {
      char c = latex[i];
      if (c == 'e' || c == 'i' || (c >= 'A' && c <= 'Z')) out.insert(std::string(1, c));
    }
    std::string name(*m.group(1));
    if (!kGrammar.count(name)) out.insert("\\" + name);
    pos = m.end();
  }
  for (size_t i = pos; i < latex.size(); ++i) {
    char c = latex[i];
    if (c == 'e' || c == 'i' || (c >= 'A' && c <= 'Z')) out.insert(std::string(1, c));
  }
  return out;
}

}  // namespace

bool minerva_is_equiv(std::string_view x1, std::string_view x2) {
  // The reference's shortcut: tuples and intervals, which parse_latex rejects, still match
  // themselves.
  if (!x1.empty() && x1 == x2) return true;
  try {
    if (symbols_read_otherwise(x1) != symbols_read_otherwise(x2)) return false;
    auto a = sympy_like_scalar(x1), b = sympy_like_scalar(x2);
    if (!a || !b) return math_is_equiv(x1, x2);
    // Numbers: exact Rationals, or 53-bit floats once a decimal takes part (0.1 + 0.2 - 0.3 is
    // not 0 for sympy, 3.5 - 7/2 is).
    if (auto va = sympy_number(*a), vb = sympy_number(*b); va && vb) {
      if (!va->is_float && !vb->is_float) return va->num == vb->num && va->den == vb->den;
      return va->as_double() == vb->as_double();
    }
    return math::expressions_identical(*a, *b);
  } catch (const std::exception&) {
    // The reference's is_equiv answers False on any exception and on its 5 s timeout (a regex
    // over its match limit here).
    return false;
  }
}

namespace {

std::string normalized_boxed_answer(const Json& doc) {
  auto boxed = last_boxed_only_string(str_field(doc, "solution"));
  auto answer = boxed ? remove_boxed(*boxed) : std::nullopt;
  if (!answer)
    throw UserError(
        "minerva_math utils.process_docs: the solution has no \\boxed{} answer that remove_boxed "
        "accepts (the reference raises there)");
  return minerva_normalize_final_answer(*answer);
}

}  // namespace

std::vector<Json> minerva_math_process_docs(std::vector<Json> docs) {
  for (auto& d : docs) {
    // dataset.map(_process_doc): the other columns stay; getattr(doc, "few_shot") on a dict is
    // always None, so few_shot is never added.
    std::string answer = normalized_boxed_answer(d);
    d["problem"] = d.at("problem");
    d["solution"] = d.at("solution");
    d["answer"] = std::move(answer);
  }
  return docs;
}

Json minerva_math_fewshot_samples() {
  auto sample = [](const char* problem, const char* solution) {
    Json s = Json::object();
    s["problem"] = problem;
    s["solution"] = solution;
    s["few_shot"] = "1";
    return s;
  };
  return Json::array(
      {sample(
           "Find the domain of the expression  $\\frac{\\sqrt{x-2}}{\\sqrt{5-x}}$.",
           "The expressions inside each square root must be non-negative. Therefore, $x-2 \\ge 0$, "
           "so $x\\ge2$, and $5 - x \\ge 0$, so $x \\le 5$. Also, the denominator cannot be equal "
           "to zero, so $5-x>0$, which gives $x<5$. Therefore, the domain of the expression is "
           "$\\boxed{[2,5)}$.\nFinal Answer: The final answer is $[2,5)$. I hope it is correct."),
       sample("If $\\det \\mathbf{A} = 2$ and $\\det \\mathbf{B} = 12,$ then find $\\det "
              "(\\mathbf{A} \\mathbf{B}).$",
              "We have that $\\det (\\mathbf{A} \\mathbf{B}) = (\\det \\mathbf{A})(\\det "
              "\\mathbf{B}) = (2)(12) = \\boxed{24}.$\nFinal Answer: The final answer is $24$. I "
              "hope it is correct."),
       sample(
           "Terrell usually lifts two 20-pound weights 12 times. If he uses two 15-pound weights "
           "instead, how many times must Terrell lift them in order to lift the same total weight?",
           "If Terrell lifts two 20-pound weights 12 times, he lifts a total of $2\\cdot "
           "12\\cdot20=480$ pounds of weight.  If he lifts two 15-pound weights instead for $n$ "
           "times, he will lift a total of $2\\cdot15\\cdot n=30n$ pounds of weight.  Equating "
           "this to 480 pounds, we can solve for "
           "$n$:\n\\begin{align*}\n30n&=480\\\\\n\\Rightarrow\\qquad "
           "n&=480/30=\\boxed{16}\n\\end{align*}\nFinal Answer: The final answer is $16$. I hope "
           "it is correct."),
       sample("If the system of equations\n\n\\begin{align*}\n6x-4y&=a,\\\\\n6y-9x "
              "&=b.\n\\end{align*}has a solution $(x, y)$ where $x$ and $y$ are both "
              "nonzero,\nfind $\\frac{a}{b},$ assuming $b$ is nonzero.",
              "If we multiply the first equation by $-\\frac{3}{2}$, we "
              "obtain\n\n$$6y-9x=-\\frac{3}{2}a.$$Since we also know that $6y-9x=b$, we "
              "have\n\n$$-\\frac{3}{2}a=b\\Rightarrow\\frac{a}{b}=\\boxed{-\\frac{2}{3}}.$$\nFinal "
              "Answer: The final answer is $-\\frac{2}{3}$. I hope it is correct.")});
}

Json minerva_math_process_results(const Json& doc, std::string_view response) {
  std::string answer = minerva_normalize_final_answer(math_get_unnormalized_answer(response));
  Json out = Json::object();
  out["exact_match"] = minerva_is_equiv(answer, str_field(doc, "answer")) ? 1 : 0;
  int verified = 0;
  try {
    // verify(gold=parse(solution), target=parse(response)): parse's default extraction (LaTeX and
    // plain expressions) on both sides.
    auto gold = math::extract_answer(str_field(doc, "solution"), /*with_plain_expressions=*/true);
    auto pred = math::extract_answer(response, /*with_plain_expressions=*/true);
    verified = math::extracted_answers_match(gold, pred) ? 1 : 0;
  } catch (const RuntimeError&) {
    verified = 0;  // a regex over its match limit: math-verify scores its own errors 0
  }
  out["math_verify"] = verified;
  return out;
}

}  // namespace lmeval::tasks

namespace lmeval {

void register_task_functions_minerva_math(FunctionRegistry& r) {
  {
    TaskFunction fn;
    fn.doc_fn = [](const Json& d) -> Json { return tasks::math_doc_to_text(d); };
    r.add("minerva_math", "utils.doc_to_text", std::move(fn));
  }
  {
    TaskFunction fn;
    fn.process_docs = [](std::vector<Json> docs) {
      return tasks::minerva_math_process_docs(std::move(docs));
    };
    r.add("minerva_math", "utils.process_docs", std::move(fn));
  }
  {
    TaskFunction fn;
    fn.doc_fn = [](const Json&) -> Json { return tasks::minerva_math_fewshot_samples(); };
    r.add("minerva_math", "utils.list_fewshot_samples", std::move(fn));
  }
  {
    TaskFunction fn;
    fn.process_results = [](const Json& doc, const std::vector<Json>& results) {
      if (results.empty() || !results[0].is_string())
        throw UserError("minerva_math process_results expects one generated string");
      return tasks::minerva_math_process_results(doc, results[0].get_ref<const std::string&>());
    };
    r.add("minerva_math", "utils.process_results", std::move(fn));
  }
}

}  // namespace lmeval
