// normalize_latex as math-verify configures it; see latex_normalize.hpp. The unit words, the
// substitutions and their order are latex2sympy2_extended 1.11's (behaviour, re-expressed).
#include "lmeval/tasks/functions/math/latex_normalize.hpp"

#include <cctype>
#include <optional>
#include <string>
#include <vector>

#include "lmeval/core/regex.hpp"
#include "lmeval/core/unicode.hpp"

namespace lmeval::tasks::math {

namespace {

std::string replace_all(std::string s, std::string_view from, std::string_view to) {
  if (from.empty()) return s;
  size_t pos = 0;
  while ((pos = s.find(from, pos)) != std::string::npos) {
    s.replace(pos, from.size(), to);
    pos += to.size();
  }
  return s;
}

bool py_isspace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

size_t code_points(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

// Units a model writes after a number ("5 cm", "3 hours"): removed from the end, with a plural.
const std::string& units_pattern() {
  static const std::string p = [] {
    const char* units[] = {"integerpoint",
                           "feet",
                           "sue",
                           "digit",
                           "pound",
                           "meal",
                           "edge",
                           "student",
                           "children ticket",
                           "multiple",
                           "east",
                           "degree",
                           "mph",
                           "kmph",
                           "ft",
                           "m square",
                           " m east",
                           "sq m",
                           "deg",
                           "mile",
                           "q .",
                           "monkey",
                           "prime",
                           "ratio",
                           "profit of rs",
                           "rd",
                           "o",
                           "gm",
                           "p . m",
                           "lb",
                           "tile",
                           "per",
                           "dm",
                           "lt",
                           "gain",
                           "ab",
                           "way",
                           "west",
                           "a .",
                           "b .",
                           "c .",
                           "d .",
                           "e .",
                           "f .",
                           "g .",
                           "h .",
                           "t",
                           "h",
                           "no change",
                           "men",
                           "soldier",
                           "pie",
                           "bc",
                           "excess",
                           "st",
                           "inches",
                           "noon",
                           "cent",
                           "by",
                           "gal",
                           "kmh",
                           "c",
                           "acre",
                           "rise",
                           "a . m",
                           "th",
                           "\xCF\x80 r 2",
                           "sq",
                           "mark",
                           "l",
                           "toy",
                           "coin",
                           "sq . m",
                           "gallon",
                           "\xC2\xB0 f",
                           "profit",
                           "minw",
                           "yr",
                           "women",
                           "am",
                           "pm",
                           "hr",
                           "cu cm",
                           "square",
                           "v \xC3\xA2 \xE2\x82\xAC \xE2\x84\xA2",
                           "are",
                           "rupee",
                           "rounds",
                           "cubic",
                           "cc",
                           "mtr",
                           "s",
                           "ohm",
                           "number",
                           "kmph",
                           "day",
                           "hour",
                           "minute",
                           "min",
                           "second",
                           "man",
                           "woman",
                           "sec",
                           "cube",
                           "mt",
                           "sq inch",
                           "mp",
                           "\xE2\x88\x8F cm \xC2\xB3",
                           "hectare",
                           "more",
                           "sec",
                           "unit",
                           "cu . m",
                           "cm 2",
                           "rs .",
                           "rs",
                           "kg",
                           "g",
                           "month",
                           "km",
                           "m",
                           "cm",
                           "mm",
                           "apple",
                           "liter",
                           "loss",
                           "yard",
                           "pure",
                           "year",
                           "increase",
                           "decrease",
                           "d",
                           "less",
                           "Surface",
                           "litre",
                           "pi sq m",
                           "s .",
                           "metre",
                           "meter",
                           "inch"};
    std::string alt;
    for (const char* u : units) {
      if (!alt.empty()) alt += '|';
      alt += u;
    }
    return "(\\d|\\}|\\s)\\s*(?:(?:" + alt + ")(?:s|es)?)\\s*$";
  }();
  return p;
}

// One pass of the named substitutions (first alternative that matches at a position wins).
std::string replace_in_latex(const std::string& text) {
  static const std::vector<std::pair<std::string, std::string>> subs = {
      {R"(\\math(?:rm|it|bf))", "\\text"},
      {R"(\\text(?:normal|bf|it|rm))", "\\text"},
      {R"(\\(?:d|t|c)frac)", "\\frac"},
      {R"(\s\.)", " 0."},
      {R"(\{\.)", "{0."},
      {R"(\~\=)", "\\approx"},
      {R"(\s*\{\s*,\s*\})", ","},
      {R"((?<![a-zA-Z])(,?\s*(?:and|or))(?![a-zA-Z]))", ","},
      {R"((,?\s*\\text{\s*(?:and|or)\s*}))", ","},
      {R"((?<!\\)\\\s)", " "},
      {R"(infinity)", "\\infty"},
      {R"(,?(\\ldots))", " "},
      {R"(\s*\bpercentage\b)", "\\%"},
      {R"(\\text{percentage})", "%"},
      {R"(\s*\bpercent\b)", "\\%"},
      {R"(\\text{percent})", "%"},
      {R"(\s*\bpct\b)", "\\%"},
      {R"(\\text{pct})", "%"},
      {R"(((?<!\\)inf(?!inity)))", "\\infty"},
      {R"( sqrt)", "\\sqrt"},
  };
  static const auto re = [] {
    std::string alt;
    for (size_t i = 0; i < subs.size(); ++i) {
      if (i) alt += '|';
      alt.append("(?P<g").append(std::to_string(i)).append(">").append(subs[i].first).append(")");
    }
    return PyRegex::compile(alt);
  }();
  return re->sub(
      [](const PyMatch& m) -> std::string {
        for (size_t i = 0; i < subs.size(); ++i)
          if (m.group(std::string("g").append(std::to_string(i)))) return subs[i].second;
        return std::string(m.group(0).value_or(""));
      },
      text);
}

std::string fix_malformed_operators(std::string s) {
  static const std::vector<std::pair<std::shared_ptr<const PyRegex>, std::string>> subs = {
      {PyRegex::compile(R"(\^\s?\((.*?)\))"), R"(^{\1})"},
      {PyRegex::compile(R"(sqrt\s?\((.*?)\))"), R"(\\sqrt{\1})"},
      {PyRegex::compile(R"(\\frac\s?(\d)\s?(\d+))"), R"(\\frac{\1}{\2})"},
      {PyRegex::compile(R"(\\log_\s?(\d)\s?(\d+))"), R"(\\log_{\1}{\2})"},
      {PyRegex::compile(R"(\\frac\s?{(.*?)}\s?(\d))"), R"(\\frac{\1}{\2})"},
      {PyRegex::compile(R"(\\frac\s?(\d)\s?{(.*?)})"), R"(\\frac{\1}{\2})"},
      {PyRegex::compile(R"(\\sqrt\s?(\d))"), R"(\\sqrt{\1})"},
  };
  for (const auto& [re, rep] : subs) s = re->sub(rep, s);
  return replace_all(std::move(s), " sqrt", "\\sqrt");
}

std::vector<std::string> split(const std::string& s, const std::string& sep) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (true) {
    size_t n = s.find(sep, pos);
    if (n == std::string::npos) {
      out.push_back(s.substr(pos));
      return out;
    }
    out.push_back(s.substr(pos, n - pos));
    pos = n + sep.size();
  }
}

std::string lstrip(const std::string& s) {
  size_t i = 0;
  while (i < s.size() && py_isspace(s[i])) ++i;
  return s.substr(i);
}

std::string fix_sqrt(const std::string& text) {
  if (text.find("\\sqrt") == std::string::npos) return text;
  auto parts = split(text, "\\sqrt");
  std::string out = parts[0];
  for (size_t i = 1; i < parts.size(); ++i) {
    std::string p = lstrip(parts[i]);
    out += "\\sqrt";
    if (!p.empty() && p[0] != '{' && p[0] != '[')
      out.append("{").append(p, 0, 1).append("}").append(p, 1);
    else
      out += p;
  }
  return out;
}

std::string fix_fracs(const std::string& text) {
  auto parts = split(text, "\\frac");
  std::string out = parts[0];
  for (size_t i = 1; i < parts.size(); ++i) {
    std::string p = lstrip(parts[i]);
    out += "\\frac";
    if (!p.empty() && p[0] == '{') {
      out += p;
    } else if (p.size() < 2) {
      return text;
    } else if (p[1] != '{') {
      out.append("{").append(p, 0, 1).append("}{").append(p, 1, 1).append("}").append(p, 2);
    } else {
      out.append("{").append(p, 0, 1).append("}").append(p, 1);
    }
  }
  return out;
}

std::string fix_a_slash_b(const std::string& text) {
  auto parts = split(text, "/");
  if (parts.size() != 2) return text;
  static const auto int_re = PyRegex::compile(R"(^-?(?:0|[1-9]\d*)$)");
  if (!int_re->search(parts[0]) || !int_re->search(parts[1]) || parts[0] == "-0" ||
      parts[1] == "-0")
    return text;
  return std::string("\\frac{").append(parts[0]).append("}{").append(parts[1]).append("}");
}

}  // namespace

std::string extract_boxed_content(std::string_view text_view, BoxedMode mode) {
  std::string text(text_view);
  static const auto separator = PyRegex::compile(R"(\b(and|or)\b|,|;)");
  std::vector<std::string> results;
  size_t current = text.size(), max_pos = text.size();
  std::optional<size_t> last_boxed_start;
  while (true) {
    size_t bi = current == 0 ? std::string::npos : text.rfind("\\boxed", current - 1);
    size_t fi = current == 0 ? std::string::npos : text.rfind("\\fbox", current - 1);
    // rfind(sub, 0, end) only finds occurrences ending by `end`
    while (bi != std::string::npos && bi + 6 > current)
      bi = bi == 0 ? std::string::npos : text.rfind("\\boxed", bi - 1);
    while (fi != std::string::npos && fi + 5 > current)
      fi = fi == 0 ? std::string::npos : text.rfind("\\fbox", fi - 1);
    if (bi == std::string::npos && fi == std::string::npos) break;
    bool boxed = fi == std::string::npos || (bi != std::string::npos && bi > fi);
    size_t start = boxed ? bi : fi;
    size_t pos = start + (boxed ? 6 : 5);
    while (pos < max_pos && py_isspace(text[pos])) ++pos;
    if (pos >= max_pos) break;
    if (text[pos] != '{') {
      if (results.empty()) results.push_back(text.substr(pos));
      break;
    }
    size_t i = pos, depth = 1;
    std::optional<size_t> close;
    while (i + 1 < max_pos) {
      ++i;
      if (text[i] == '{')
        ++depth;
      else if (text[i] == '}' && --depth == 0) {
        close = i;
        break;
      }
    }
    if (!close) {
      if (results.empty()) results.push_back(text.substr(pos));
      break;
    }
    std::string content(unicode::py_strip(text.substr(pos + 1, *close - pos - 1)));
    if (mode == BoxedMode::Last && last_boxed_start) {
      std::string between = text.substr(*close + 1, *last_boxed_start - (*close + 1));
      std::string prev = results.empty() ? "" : results.back();
      bool ok = code_points(between) < 10 || (prev != content && code_points(between) < 70 &&
                                              separator->search(between).has_value());
      if (!ok) break;
    }
    if (results.empty() || results.back() != content) results.push_back(content);
    last_boxed_start = start;
    max_pos = start;
    current = start;
  }
  if (results.empty()) return text;
  std::string out;
  for (size_t i = results.size(); i-- > 0;) out += results[i] + (i ? "," : "");
  return out;
}

std::string normalize_latex(std::string_view in, BoxedMode mode) {
  std::string text = extract_boxed_content(in, mode);
  // basic LaTeX
  text = replace_all(std::move(text), "\\mathrm{T}", "T");
  text = replace_all(std::move(text), "\\mathrm{d}", "d");
  text = replace_all(std::move(text), "{\\rm d}", "d");
  text = replace_all(std::move(text), "\\left[\\begin{matrix}", "\\begin{bmatrix}");
  text = replace_all(std::move(text), "\\end{matrix}\\right]", "\\end{bmatrix}");
  static const auto left = PyRegex::compile(
      R"(\\m?left(\\\{|\{|\\\||\||\[|\(|\\rbracl|\\lgroup|\\lbrace|\\lbrack|\\vert|\\lvert|\\lceil|\\lfloor|\\vert|\\lvert|\\langle|\\llcorner|\\ulcorner))");
  static const auto right = PyRegex::compile(
      R"(\\m?right(\\\}|\}|\\\||\||\]|\)|\\rbrack|\\rgroup|\\rbrace|\\rbrack|\\vert|\\rvert|\\rceil|\\rfloor|\\vert|\\rvert|\\rangle|\\lrcorner|\\urcorner))");
  text = left->sub(R"(\1)", text);
  text = right->sub(R"(\1)", text);
  static const auto permutation =
      PyRegex::compile(R"(\(([a-zA-Z0-9+\-*/\\ ]+?)\)_{([a-zA-Z0-9+\-*/\\ ]+?)})");
  text = permutation->sub(R"(\\frac{(\1)!}{((\1)-(\2))!})", text);
  static const auto to_remove = PyRegex::compile(
      R"(\\mathrm\{th\}|\\!\s*|\\text\s*\{\s*\}|\\\$|\$|(?<!\\)["']|\\displaystyle)");
  text = to_remove->sub("", text);
  text = replace_in_latex(text);
  text = replace_all(std::move(text), "\n", " ");
  text = replace_all(std::move(text), "\t", " ");
  static const auto double_backslash = PyRegex::compile(R"(\\\\(?=[a-zA-Z]))");
  if (text.find("matrix") == std::string::npos) text = double_backslash->sub(R"(\\)", text);
  // units
  static const auto unit_superscript =
      PyRegex::compile(R"((\\(?:text|mbox){.*?})(\^\d|\{\^\d\})?$)");
  std::string t(unicode::py_strip(unit_superscript->sub("", text)));
  if (!t.empty() && t != text) text = t;
  static const auto units = PyRegex::compile(units_pattern());
  for (int k = 0; k < 2; ++k) {
    t = units->sub(R"(\1)", text);
    if (!t.empty() && t != text) text = t;
  }
  // nits
  if (!text.empty() && text[0] == '.') text.insert(0, "0");
  if (text == "0.5") text = "\\frac{1}{2}";
  // malformed operators
  text = fix_malformed_operators(std::move(text));
  text = fix_sqrt(text);
  text = fix_fracs(text);
  text = fix_a_slash_b(text);
  return std::string(unicode::py_strip(text));
}

}  // namespace lmeval::tasks::math
