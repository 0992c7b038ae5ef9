// math-verify's answer extraction (parse()) re-expressed: the pattern families and priorities of
// math_verify/parser.py 0.9.0; see answer_extraction.hpp.
#include "lmeval/tasks/functions/math/answer_extraction.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "lmeval/core/regex.hpp"
#include "lmeval/core/unicode.hpp"
#include "lmeval/tasks/functions/math/equivalence.hpp"
#include "lmeval/tasks/functions/math/latex_normalize.hpp"
#include "lmeval/tasks/functions/math/latex_parser.hpp"

namespace lmeval::tasks::math {

namespace {

enum class Family { Latex, Expr };

struct Pattern {
  std::shared_ptr<const PyRegex> re;
  Family family;
  int priority;
};

const char* const kLatexGroups[] = {
    "latexDisplayDollar", "latexDisplayBracket", "latexInlineDollar", "latexInlineParenthesis",
    "latexInlineBracket", "latexFraction",       "latexBoxed"};

// One LaTeX span ($$..$$, \[..\], $..$, \(..\), " [..] ", a bare \frac of numbers), named by
// prefix, optionally followed by a percent sign; `boxed` spans must contain a \boxed{}.
std::string latex_span(const std::string& prefix, bool boxed) {
  std::string dd = R"((?:[^$]|\$(?!\$)))", db = R"((?:[^\\]|\\(?!\])))", id = R"((?:\\[$]|[^\n$]))",
              ip = R"((?:[^\\\n]|\\(?!\))))", ib = R"([^\n\]\[])";
  auto body = [&](const std::string& c) {
    return boxed ? c + "*?\\\\boxed{" + c + "+?}" + c + "*?" : c + "+?";
  };
  std::vector<std::string> alts = {
      R"((?<!\\)\$\$(?P<)" + prefix + "latexDisplayDollar>" + body(dd) + R"()(?<!\\)\$\$)",
      R"((?<!\\)\\\[(?P<)" + prefix + "latexDisplayBracket>" + body(db) + R"()(?<!\\)\\\])",
      R"((?<!\\|\d)\$(?P<)" + prefix + "latexInlineDollar>" + body(id) + R"()(?<!\\)\$)",
      R"((?<!\\)\\\((?P<)" + prefix + "latexInlineParenthesis>" + body(ip) + R"()(?<!\\)\\\))",
      R"(\s\[(?P<)" + prefix + "latexInlineBracket>" + body(ib) + R"()\]\s)",
  };
  if (!boxed)
    alts.push_back("(?P<" + prefix +
                   R"(latexFraction>-?\\frac{-?\d+(?:[.,]\d+)?}{-?\d+(?:[.,]\d+)?}))");
  std::string joined;
  for (const auto& a : alts) joined += (joined.empty() ? "" : "|") + a;
  return "(?:(?:" + joined + R"()\s*(?P<)" + prefix +
         R"(percent>(?:\\?%|[Pp]ercent|[Pp]ercentage|[Pp]ct))?))";
}

// Up to six spans joined by "and", "or" or commas.
std::string latex_spans(bool boxed) {
  std::string out = latex_span("first_", boxed);
  for (int i = 1; i <= 5; ++i)
    out += std::string(boxed ? R"(\s*)" : "") + R"((?:\s*(?:,?and|,?or|,)\s*)" +
           latex_span("next" + std::to_string(i) + "_", boxed) + ")?";
  return boxed ? out : "(?:" + out + ")";
}

std::vector<Pattern> latex_patterns() {
  std::string l = latex_spans(false);
  auto c = [](const std::string& p) { return PyRegex::compile(p, PyRegex::DOTALL); };
  return {
      {c(R"((?i:final answer is)\:?\s*)" + l + R"(\.?\s?I hope)"), Family::Latex, 0},
      {c(R"((?i:final answer.{0,100}?)\s+is\:?\s*)" + l), Family::Latex, 50},
      {c(R"((?i:answer)\:.{0,50}?)" + l), Family::Latex, 100},
      {c(R"((?i:answer).{0,50}?)" + l), Family::Latex, 200},
      {c(l), Family::Latex, 300},
      {c(latex_spans(true)), Family::Latex, 50},
      {c(R"((?P<first_latexBoxed>\\boxed{.+}))"), Family::Latex, 50},
  };
}

std::vector<Pattern> expr_patterns() {
  std::string number =
      R"((?<!\d)(?:(?P<integer1>-?[1-9]\d{0,2}(?:[ ,]\d{3})+)(?P<decimal1>\.\d+)?|(?P<integer2>-?\d+)(?P<decimal2>[.,]\d+)|(?P<decimal3>\.\d+)|(?P<integer3>-?\d+))(?P<percent>\s*(?:%|[Pp]ercent|\s*[Pp]ercentage|\s*[Pp]ct))?)";
  std::string ops = R"(\+\-\*\×\/\^\(\)\÷)";
  std::string chars = R"([\d\.\s)" + ops + "]";
  std::string expr = R"((?P<expr>-?\(?-?\d)" + chars + "*[" + ops + "]" + chars + R"(+\)?))";
  std::string prefix = R"((?:^|\s|\=)(?:\*\*)?)";
  std::string suffix = R"((?:\*\*)?(?:\.|,|:|\s|\)|\$|$))";
  std::string currency =
      "[\\$"
      "\xE2\x82\xAC\xC2\xA3\xC2\xA5\xE2\x82\xB9\xE2\x82\xBD\xE2\x82\xAA\xE2\x82\xA9\xE2\x82\xAB\xE0"
      "\xB8\xBF"
      "\xE2\x82\xA1\xE2\x82\xA2\xE2\x82\xA3\xE2\x82\xA4\xE2\x82\xA5\xE2\x82\xA6\xE2\x82\xA7\xE2\x82"
      "\xA8"
      "\xE2\x82\xA9\xE2\x82\xAA\xE2\x82\xAB\xE2\x82\xAD\xE2\x82\xAE\xE2\x82\xAF\xE2\x82\xB0\xE2\x82"
      "\xB1"
      "\xE2\x82\xB2\xE2\x82\xB3\xE2\x82\xB4\xE2\x82\xB5\xE2\x82\xB6\xE2\x82\xB7\xE2\x82\xB8\xE2\x82"
      "\xB9"
      "\xE2\x82\xBA\xE2\x82\xBB\xE2\x82\xBC\xE2\x82\xBD\xE2\x82\xBE\xE2\x82\xBF]";
  std::string with_expr = "(?:" + prefix + expr + suffix + ")";
  std::string with_number = "(?:" + prefix + currency + "?" + number + ")";
  std::string either = "(?:" + with_expr + "|" + with_number + ")";
  auto c = [](const std::string& p) { return PyRegex::compile(p); };
  return {
      {c(R"((?i:final answer is)\:?\s*)" + either + R"(\.?\s?I hope)"), Family::Expr, 0},
      {c(R"((?i:final answer.{0,100}?)\s+is\:?)" + either), Family::Expr, 50},
      {c(R"((?i:answer)\:(?:.{0,100}=\s*|.{0,50}?))" + either + R"((?!\s*=))"), Family::Expr, 100},
      {c(R"((?i:answer)(?:.{0,100}=\s*|.{0,50}?))" + either + R"((?!\s*=))"), Family::Expr, 200},
      {c(with_expr), Family::Expr, 300},
      {c(with_number), Family::Expr, 300},
  };
}

// The last `=`-separated part of a chain a = b = c without commas or semicolons.
std::string last_equation_part(const std::string& latex) {
  if (latex.find(',') != std::string::npos || latex.find(';') != std::string::npos) return latex;
  static const auto eq = PyRegex::compile(R"((?<!\\|\<|\!|\>)=)");
  auto parts = eq->split(latex);
  if (parts.size() > 2 && parts.back()) return *parts.back();
  return latex;
}

NodePtr parse_normalized(const std::string& latex) {
  if (NodePtr v = parse_latex(latex)) return v;
  std::string last = last_equation_part(latex);
  return last != latex ? parse_latex(last) : nullptr;
}

ExtractedAnswer extract_latex(const PyMatch& m) {
  std::vector<NodePtr> values;
  std::vector<std::string> texts;
  std::vector<std::string> prefixes = {"first_"};
  for (int i = 1; i <= 5; ++i) prefixes.push_back("next" + std::to_string(i) + "_");
  for (const auto& prefix : prefixes) {
    for (const char* g : kLatexGroups) {
      std::string name = prefix + g;
      std::optional<std::string_view> v;
      try {
        v = m.group(name);
      } catch (...) {
        continue;  // the pattern has no such group
      }
      if (!v || v->empty()) continue;
      std::string text =
          normalize_latex(*v, std::string(g) == "latexBoxed" ? BoxedMode::Last : BoxedMode::All);
      texts.push_back(text);
      NodePtr value = parse_normalized(text);
      std::optional<std::string_view> pct;
      try {
        pct = m.group(prefix + "percent");
      } catch (...) {
      }
      if (value && pct && !pct->empty()) value = make(Kind::Percent, "", {value});
      values.push_back(value);
      break;
    }
  }
  if (values.empty()) return {};
  if (values.size() > 1 &&
      std::all_of(values.begin(), values.end(), [](const NodePtr& v) { return v != nullptr; })) {
    std::vector<NodePtr> elems;
    for (const auto& v : values) {
      if (v->kind == Kind::FiniteSet)
        elems.insert(elems.end(), v->kids.begin(), v->kids.end());
      else
        elems.push_back(v);
    }
    std::string joined;
    for (const auto& t : texts) joined += (joined.empty() ? "" : " and ") + t;
    return {make(Kind::FiniteSet, "", elems), joined};
  }
  return {values[0], texts[0]};
}

std::optional<std::string> named(const PyMatch& m, const std::string& name) {
  try {
    auto v = m.group(name);
    if (v && !v->empty()) return std::string(*v);
  } catch (...) {
  }
  return std::nullopt;
}

ExtractedAnswer extract_expr(const PyMatch& m) {
  std::string integer, decimal;
  for (const char* g : {"integer1", "integer2", "integer3"})
    if (auto v = named(m, g); v && integer.empty()) integer = *v;
  for (const char* g : {"decimal1", "decimal2", "decimal3"})
    if (auto v = named(m, g); v && decimal.empty()) decimal = *v;
  if (!integer.empty() || !decimal.empty()) {
    std::string digits;
    for (char c : integer)
      if (c != ',' && c != ' ') digits += c;
    size_t nz = digits.find_first_not_of('0');
    digits = nz == std::string::npos ? "0" : digits.substr(nz);
    for (auto& c : decimal)
      if (c == ',') c = '.';
    std::string text = digits + decimal;
    bool negative = !text.empty() && text[0] == '-';
    std::string mag = negative ? text.substr(1) : text;
    NodePtr v = make(decimal.empty() ? Kind::Integer : Kind::Float, mag);
    if (decimal.empty()) {
      size_t z = mag.find_first_not_of('0');
      v = make(Kind::Integer, z == std::string::npos ? "0" : mag.substr(z));
    }
    if (negative) v = make(Kind::Neg, "", {v});
    if (named(m, "percent")) v = make(Kind::Percent, "", {v});
    return {v, text};
  }
  auto e = named(m, "expr");
  if (!e) return {};
  std::string flat = *e;
  std::replace(flat.begin(), flat.end(), '\n', ' ');
  return {parse_plain_expr(flat), *e};
}

struct Candidate {
  PyMatch match;
  size_t start, end;
  Family family;
};

}  // namespace

ExtractedAnswer extract_answer(std::string_view text_view, bool with_plain_expressions) {
  static const std::vector<Pattern> latex = latex_patterns();
  static const std::vector<Pattern> exprs = expr_patterns();
  std::string text(text_view);
  std::vector<const Pattern*> all;
  for (const auto& p : latex) all.push_back(&p);
  if (with_plain_expressions)
    for (const auto& p : exprs) all.push_back(&p);
  std::stable_sort(all.begin(), all.end(),
                   [](const Pattern* a, const Pattern* b) { return a->priority < b->priority; });

  ExtractedAnswer out;
  std::optional<std::string> first_fallback;
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    std::vector<Candidate> cands;
    while (j < all.size() && all[j]->priority == all[i]->priority) {
      for (const PyMatch& m : all[j]->re->finditer(text))
        cands.push_back({m, m.start(0), m.end(0), all[j]->family});
      ++j;
    }
    i = j;
    // Rightmost end first, then leftmost start.
    std::stable_sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
      return a.end > b.end || (a.end == b.end && a.start < b.start);
    });
    for (const auto& c : cands) {
      ExtractedAnswer e =
          c.family == Family::Latex ? extract_latex(c.match) : extract_expr(c.match);
      if (!e.fallback.empty() && !first_fallback) first_fallback = e.fallback;
      if (e.value) {
        out.value = e.value;
        break;
      }
    }
    if (out.value) break;
  }
  if (first_fallback) out.fallback = *first_fallback;
  return out;
}

bool extracted_answers_match(const ExtractedAnswer& gold, const ExtractedAnswer& pred) {
  if (gold.value && pred.value && answers_equivalent(gold.value, pred.value)) return true;
  std::string_view g = unicode::py_strip(gold.fallback), p = unicode::py_strip(pred.fallback);
  return !g.empty() && g == p;
}

}  // namespace lmeval::tasks::math
