// The reference's hendrycks_math helpers (lm_eval/tasks/hendrycks_math/utils.py): the MATH
// solution's \boxed{} answer and Hendrycks' string normalisation, compared as strings. Python
// indexes strings by code point: the single-character steps below take whole UTF-8 sequences.
#include <string>
#include <string_view>
#include <vector>

#include "lmeval/core/error.hpp"
#include "lmeval/core/unicode.hpp"
#include "lmeval/tasks/function_registry.hpp"
#include "lmeval/tasks/functions/hendrycks_math.hpp"
#include "tasks/functions/doc_util.hpp"
#include "tasks/functions/py_text.hpp"

namespace lmeval::tasks {

namespace {

bool contains(std::string_view s, std::string_view p) {
  return s.find(p) != std::string_view::npos;
}

// Bytes of the UTF-8 sequence starting s (Python's s[0] of a non-empty str).
size_t first_char_len(std::string_view s) {
  const auto b = static_cast<unsigned char>(s[0]);
  size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 1;
  return n <= s.size() ? n : s.size();
}

std::string remove_right_units(std::string s) {
  // "\text{ " marks units in MATH; more than one is the reference's failed assert.
  if (!contains(s, "\\text{ ")) return s;
  auto parts = pytext::split_sep(s, "\\text{ ");
  if (parts.size() != 2) throw StripStringError("remove_right_units: assert len(splits) == 2");
  return parts[0];
}

std::string fix_sqrt(std::string s) {
  if (!contains(s, "\\sqrt")) return s;
  auto parts = pytext::split_sep(s, "\\sqrt");
  std::string out = parts[0];
  for (size_t i = 1; i < parts.size(); ++i) {
    const std::string& p = parts[i];
    if (p.empty()) throw StripStringError("fix_sqrt: string index out of range");
    if (p[0] != '{') {
      size_t n = first_char_len(p);
      out += "\\sqrt{" + p.substr(0, n) + "}" + p.substr(n);
    } else {
      out += "\\sqrt" + p;
    }
  }
  return out;
}

std::string fix_fracs(const std::string& s) {
  auto parts = pytext::split_sep(s, "\\frac");
  std::string out = parts[0];
  for (size_t i = 1; i < parts.size(); ++i) {
    const std::string& p = parts[i];
    out += "\\frac";
    if (p.empty()) throw StripStringError("fix_fracs: string index out of range");
    if (p[0] == '{') {
      out += p;
      continue;
    }
    // assert len(substr) >= 2, caught: the whole string unchanged.
    if (unicode::length(p) < 2) return s;
    size_t na = first_char_len(p);
    std::string a = p.substr(0, na);
    size_t nb = first_char_len(std::string_view(p).substr(na));
    std::string b = p.substr(na, nb);
    std::string rest = p.substr(na + nb);
    if (b != "{")
      out += "{" + a + "}{" + b + "}" + rest;
    else
      out += "{" + a + "}" + b + rest;
  }
  return out;
}

// Characters str.isdigit() accepts that int() does not (not Unicode decimal digits), from
// CPython 3.11: [c for c in range(0x110000) if chr(c).isdigit() and not chr(c).isdecimal()].
bool digit_not_decimal(char32_t c) {
  static constexpr char32_t kRanges[][2] = {
      {0xB2, 0xB3},       {0xB9, 0xB9},       {0x1369, 0x1371},   {0x19DA, 0x19DA},
      {0x2070, 0x2070},   {0x2074, 0x2079},   {0x2080, 0x2089},   {0x2460, 0x2468},
      {0x2474, 0x247C},   {0x2488, 0x2490},   {0x24EA, 0x24EA},   {0x24F5, 0x24FD},
      {0x24FF, 0x24FF},   {0x2776, 0x277E},   {0x2780, 0x2788},   {0x278A, 0x2792},
      {0x10A40, 0x10A43}, {0x10E60, 0x10E68}, {0x11052, 0x1105A}, {0x1F100, 0x1F10A}};
  for (const auto& r : kRanges)
    if (c >= r[0] && c <= r[1]) return true;
  return false;
}

// Python int(s) in base 10: whether it succeeds, and str() of the value (ASCII digits, no sign
// for 0, no leading zeros; exact for ASCII digits). Whitespace around, one sign, Unicode decimal
// digits, single underscores between digits; more than 4,300 digits is a ValueError
// (sys.int_max_str_digits).
std::optional<std::string> py_int_str(std::string_view text) {
  std::u32string s = unicode::decode(unicode::py_strip(text));
  size_t i = 0;
  bool neg = false;
  if (i < s.size() && (s[i] == U'+' || s[i] == U'-')) neg = s[i++] == U'-';
  std::string digits;
  bool after_digit = false;
  size_t count = 0;
  for (; i < s.size(); ++i) {
    char32_t c = s[i];
    if (c == U'_') {
      if (!after_digit) return std::nullopt;
      after_digit = false;
      continue;
    }
    if (c < 0x80) {
      if (c < U'0' || c > U'9') return std::nullopt;
      digits += static_cast<char>(c);
    } else {
      if (!unicode::py_isdigit(c) || digit_not_decimal(c)) return std::nullopt;
      // Its value does not matter: str() of the number is ASCII, so it never equals a string
      // holding this character (fix_a_slash_b's assert).
      digits += '1';
    }
    after_digit = true;
    ++count;
  }
  if (!after_digit || count > 4300) return std::nullopt;
  size_t nz = digits.find_first_not_of('0');
  if (nz == std::string::npos) return std::string("0");
  return (neg ? "-" : "") + digits.substr(nz);
}

std::string fix_a_slash_b(const std::string& s, bool int_errors_raise) {
  auto parts = pytext::split_sep(s, "/");
  if (parts.size() != 2) return s;
  auto a = py_int_str(parts[0]);
  auto b = a ? py_int_str(parts[1]) : std::nullopt;
  if (!a || !b) {
    if (int_errors_raise) throw StripStringError("fix_a_slash_b: int() ValueError");
    return s;
  }
  // assert string == "{}/{}".format(a, b), caught: unchanged.
  if (s != *a + "/" + *b) return s;
  return "\\frac{" + *a + "}{" + *b + "}";
}

}  // namespace

std::optional<std::string> last_boxed_braced(std::string_view s) {
  size_t idx = s.rfind("\\boxed");
  if (idx == std::string_view::npos) {
    idx = s.rfind("\\fbox");
    if (idx == std::string_view::npos) return std::nullopt;
  }
  int open = 0;
  for (size_t i = idx; i < s.size(); ++i) {
    if (s[i] == '{') ++open;
    if (s[i] == '}') {
      --open;
      if (open == 0) return std::string(s.substr(idx, i + 1 - idx));
    }
  }
  return std::nullopt;
}

std::optional<std::string> last_boxed_only_string(std::string_view s) {
  if (contains(s, "\\boxed ")) {
    // "\boxed " + string.split("\boxed ")[-1].split("$")[0]
    std::string_view tail = s.substr(s.rfind("\\boxed ") + 7);
    return "\\boxed " + std::string(tail.substr(0, tail.find('$')));
  }
  return last_boxed_braced(s);
}

std::optional<std::string> remove_boxed(std::string_view s) {
  if (contains(s, "\\boxed ")) {
    if (s.substr(0, 7) != "\\boxed ") return std::nullopt;
    return std::string(s.substr(7));
  }
  if (s.substr(0, 7) != "\\boxed{" || s.back() != '}') return std::nullopt;
  return std::string(s.substr(7, s.size() - 8));
}

std::string hendrycks_strip_string(std::string_view in, bool int_errors_raise) {
  std::string s(in);
  s = replace_all(std::move(s), "\n", "");
  s = replace_all(std::move(s), "\\!", "");
  s = replace_all(std::move(s), "\\\\", "\\");
  s = replace_all(std::move(s), "tfrac", "frac");
  s = replace_all(std::move(s), "dfrac", "frac");
  s = replace_all(std::move(s), "\\left", "");
  s = replace_all(std::move(s), "\\right", "");
  s = replace_all(std::move(s), "^{\\circ}", "");
  s = replace_all(std::move(s), "^\\circ", "");
  s = replace_all(std::move(s), "\\$", "");
  s = remove_right_units(std::move(s));
  s = replace_all(std::move(s), "\\%", "");
  s = replace_all(std::move(s), " .", " 0.");
  s = replace_all(std::move(s), "{.", "{0.");
  if (s.empty()) return s;
  if (s[0] == '.') s = "0" + s;
  // "k = 3" -> "3": a left side of at most two characters.
  if (auto eq = pytext::split_sep(s, "="); eq.size() == 2 && unicode::length(eq[0]) <= 2) s = eq[1];
  s = fix_sqrt(std::move(s));
  s = replace_all(std::move(s), " ", "");
  s = fix_fracs(s);
  if (s == "0.5") s = "\\frac{1}{2}";
  return fix_a_slash_b(s, int_errors_raise);
}

bool hendrycks_is_equiv(std::string_view a, std::string_view b) {
  try {
    return hendrycks_strip_string(a) == hendrycks_strip_string(b);
  } catch (const StripStringError&) {
    return a == b;
  }
}

namespace {

// remove_boxed(last_boxed_only_string(solution)); where the reference raises (a solution with no
// boxed answer: TypeError on None, or a failed assert) the run stops, here with a UserError.
std::string boxed_answer(const Json& doc, const char* fn) {
  const std::string& solution = str_field(doc, "solution");
  auto boxed = last_boxed_only_string(solution);
  if (!boxed)
    throw UserError(std::string("hendrycks_math utils.") + fn +
                    ": the solution has no \\boxed{} or \\fbox{} answer (the reference raises "
                    "TypeError on None)");
  auto answer = remove_boxed(*boxed);
  if (!answer)
    throw UserError(std::string("hendrycks_math utils.") + fn +
                    ": remove_boxed's assert fails on " + *boxed);
  return *answer;
}

}  // namespace

std::vector<Json> hendrycks_math_process_docs(std::vector<Json> docs) {
  for (auto& d : docs) {
    // dataset.map(_process_doc): the row's other columns stay, the returned ones are overwritten
    // in place or added at the end.
    std::string answer = boxed_answer(d, "process_docs");
    d["problem"] = d.at("problem");
    d["solution"] = d.at("solution");
    d["answer"] = std::move(answer);
  }
  return docs;
}

Json hendrycks_math_process_results(const Json& doc, std::string_view response) {
  size_t first = response.find('$'), last = response.rfind('$');
  std::string_view answer = first == last ? response : response.substr(first + 1, last - first - 1);
  Json out = Json::object();
  out["exact_match"] = hendrycks_is_equiv(answer, boxed_answer(doc, "process_results")) ? 1 : 0;
  return out;
}

}  // namespace lmeval::tasks

namespace lmeval {

void register_task_functions_hendrycks_math(FunctionRegistry& r) {
  {
    TaskFunction fn;
    fn.process_docs = [](std::vector<Json> docs) {
      return tasks::hendrycks_math_process_docs(std::move(docs));
    };
    r.add("hendrycks_math", "utils.process_docs", std::move(fn));
  }
  {
    TaskFunction fn;
    fn.process_results = [](const Json& doc, const std::vector<Json>& results) {
      if (results.empty() || !results[0].is_string())
        throw UserError("hendrycks_math process_results expects one generated string");
      return tasks::hendrycks_math_process_results(doc, results[0].get_ref<const std::string&>());
    };
    r.add("hendrycks_math", "utils.process_results", std::move(fn));
  }
}

}  // namespace lmeval
