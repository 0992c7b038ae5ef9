// Doc functions of the Open LLM Leaderboard v2 tasks: GPQA (answer shuffle with the global
// random), MMLU-Pro (options), MuSR (literal-eval'd choices), MATH-hard (Minerva answers), IFEval.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "lmeval/core/error.hpp"
#include "lmeval/core/py_random.hpp"
#include "lmeval/core/regex.hpp"
#include "lmeval/core/unicode.hpp"
#include "lmeval/tasks/function_registry.hpp"
#include "lmeval/tasks/functions/hendrycks_math.hpp"
#include "lmeval/tasks/functions/ifeval.hpp"
#include "lmeval/tasks/functions/leaderboard.hpp"
#include "lmeval/tasks/functions/math/answer_extraction.hpp"
#include "lmeval/tasks/task_context.hpp"
#include "lmeval/template/template.hpp"
#include "tasks/functions/doc_util.hpp"

namespace lmeval::tasks {

// ---------------------------------------------------------------------------------- GPQA

std::string gpqa_preprocess(const Json& text) {
  if (text.is_null()) return " ";
  std::string t(unicode::py_strip(text.get<std::string>()));
  t = replace_all(std::move(t), " [title]", ". ");
  t = pyre::sub("\\[.*?\\]", "", t);
  return replace_all(std::move(t), "  ", " ");
}

Json gpqa_process_doc(const Json& doc, PyRandom& rng) {
  auto field = [&](const char* k) -> const Json& {
    static const Json null_json;
    auto it = doc.find(k);
    return it == doc.end() ? null_json : *it;
  };
  std::vector<std::string> choices = {
      gpqa_preprocess(field("Incorrect Answer 1")), gpqa_preprocess(field("Incorrect Answer 2")),
      gpqa_preprocess(field("Incorrect Answer 3")), gpqa_preprocess(field("Correct Answer"))};
  rng.shuffle(choices);
  std::string correct = gpqa_preprocess(field("Correct Answer"));
  size_t idx = 0;
  while (idx < choices.size() && choices[idx] != correct) ++idx;
  Json out = doc;
  out["choice1"] = choices[0];
  out["choice2"] = choices[1];
  out["choice3"] = choices[2];
  out["choice4"] = choices[3];
  out["answer"] = std::string("(") + static_cast<char>('A' + idx) + ")";
  return out;
}

// ------------------------------------------------------------------------------- MMLU-Pro

std::string mmlu_pro_doc_to_text(const Json& doc) {
  std::string t = str_field(doc, "question") + "\n";
  const Json& opts = doc.at("options");
  if (opts.size() > 26) throw UserError("mmlu_pro: more than 26 options");
  for (size_t i = 0; i < opts.size(); ++i)
    t += std::string(1, static_cast<char>('A' + i)) + ". " + opts[i].get<std::string>() + "\n";
  return t + "Answer:";
}

Json mmlu_pro_doc_to_choice(const Json& doc) {
  Json out = Json::array();
  size_t n = doc.at("options").size();
  if (n > 26) throw UserError("mmlu_pro: more than 26 options");
  for (size_t i = 0; i < n; ++i) out.push_back(std::string(1, static_cast<char>('A' + i)));
  return out;
}

// ----------------------------------------------------------------------------------- MuSR

Json musr_doc_to_choice(const Json& doc) {
  Json v = tmpl::literal_eval(str_field(doc, "choices"));
  if (!v.is_array()) throw UserError("musr: choices is not the repr of a list");
  return v;
}

std::string musr_doc_to_text(const Json& doc) {
  std::string choices;
  size_t i = 1;
  for (const auto& c : musr_doc_to_choice(doc))
    choices +=
        std::to_string(i++) + " - " + (c.is_string() ? c.get<std::string>() : c.dump()) + "\n";
  return str_field(doc, "narrative") + "\n\n" + str_field(doc, "question") + "\n\n" + choices +
         "\nAnswer:";
}

// ----------------------------------------------------------------------------------- MATH

std::string math_doc_to_text(const Json& doc) {
  return "Problem:\n" + str_field(doc, "problem") + "\n\nSolution:";
}

// The leaderboard's copies of hendrycks_math's helpers return "[invalidanswer]" for None and for a
// failed assert.
std::string math_last_boxed_only_string(std::string_view s) {
  return last_boxed_only_string(s).value_or(kMathInvalidAnswer);
}

std::string math_remove_boxed(std::string_view s) {
  return remove_boxed(s).value_or(kMathInvalidAnswer);
}

std::string math_get_unnormalized_answer(std::string_view text) {
  std::string t = std::string(text) + "I hope it is correct.";
  auto m = pyre::search("Final Answer: The final answer is(.*?). I hope it is correct.", t);
  if (!m) return kMathInvalidAnswer;
  return std::string(unicode::py_strip(*m->group(1)));
}

const std::vector<std::pair<std::string, std::string>>& math_answer_substitutions() {
  static const std::vector<std::pair<std::string, std::string>> kSubstitutions = {
      {"an ", ""},          {"a ", ""},
      {".$", "$"},          {"\\$", ""},
      {"\\ ", ""},          {" ", ""},
      {"mbox", "text"},     {",\\text{and}", ","},
      {"\\text{and}", ","}, {"\\text{m}", "\\text{}"}};
  return kSubstitutions;
}

const std::vector<std::string>& math_removed_expressions() {
  static const std::vector<std::string> kRemoved = {"square",       "ways",
                                                    "integers",     "dollars",
                                                    "mph",          "inches",
                                                    "ft",           "hours",
                                                    "km",           "units",
                                                    "\\ldots",      "sue",
                                                    "points",       "feet",
                                                    "minutes",      "digits",
                                                    "cents",        "degrees",
                                                    "cm",           "gm",
                                                    "pounds",       "meters",
                                                    "meals",        "edges",
                                                    "students",     "childrentickets",
                                                    "multiples",    "\\text{s}",
                                                    "\\text{.}",    "\\text{\ns}",
                                                    "\\text{}^2",   "\\text{}^3",
                                                    "\\text{\n}",   "\\text{}",
                                                    "\\mathrm{th}", "^\\circ",
                                                    "^{\\circ}",    "\\;",
                                                    ",\\!",         "{,}",
                                                    "\"",           "\\dots"};
  return kRemoved;
}

std::string math_unwrap_final_answer(std::string s) {
  s = pyre::sub(R"((.*?)(\$)(.*?)(\$)(.*))", "$\\3$", s);
  s = pyre::sub(R"((\\text\{)(.*?)(\}))", "\\2", s);
  s = pyre::sub(R"((\\textbf\{)(.*?)(\}))", "\\2", s);
  s = pyre::sub(R"((\\overline\{)(.*?)(\}))", "\\2", s);
  s = pyre::sub(R"((\\boxed\{)(.*)(\}))", "\\2", s);
  return pyre::sub(R"((frac)([^{])(.))", "frac{\\2}{\\3}", s);
}

std::string math_normalize_final_answer(std::string_view in) {
  std::string s(in);
  size_t eq = s.rfind('=');
  if (eq != std::string::npos) s = s.substr(eq + 1);
  for (const auto& [b, a] : math_answer_substitutions()) s = replace_all(std::move(s), b, a);
  for (const auto& e : math_removed_expressions()) s = replace_all(std::move(s), e, "");
  s = math_unwrap_final_answer(std::move(s));
  s = pyre::sub(R"((sqrt)([^{]))", "sqrt{\\2}", s);
  s = replace_all(std::move(s), "$", "");
  std::string no_commas = replace_all(s, ",", "");
  if (unicode::py_isdigit(no_commas)) s = no_commas;
  return s;
}

std::vector<Json> math_process_docs(std::vector<Json> docs) {
  std::vector<Json> out;
  for (auto& d : docs) {
    auto lv = d.find("level");
    if (lv == d.end() || !lv->is_string() || lv->get<std::string>() != "Level 5") continue;
    // dataset.map(_process_doc) keeps the row's columns and overwrites the returned ones;
    // getattr(doc, "few_shot") on a dict is always None, so few_shot is never added.
    Json o = d;
    o["problem"] = d.at("problem");
    o["solution"] = d.at("solution");
    o["answer"] = math_remove_boxed(math_last_boxed_only_string(str_field(d, "solution")));
    out.push_back(std::move(o));
  }
  return out;
}

Json math_fewshot_samples() {
  auto sample = [](const char* problem, const char* solution) {
    Json s = Json::object();
    s["problem"] = problem;
    s["solution"] = solution;
    s["few_shot"] = "1";
    s["level"] = "Level 5";
    return s;
  };
  return Json::array(
      {sample("Find the domain of the expression  $\\frac{\\sqrt{x-2}}{\\sqrt{5-x}}$.}",
              "The expressions inside each square root must be non-negative. Therefore, $x-2 "
              "\\ge 0$, so $x\\ge2$, and $5 - x \\ge 0$, so $x \\le 5$. Also, the denominator "
              "cannot be equal to zero, so $5-x>0$, which gives $x<5$. Therefore, the domain of "
              "the expression is $\\boxed{[2,5)}$.\nFinal Answer: The final answer is $[2,5)$. "
              "I hope it is correct."),
       sample("If $\\det \\mathbf{A} = 2$ and $\\det \\mathbf{B} = 12,$ then find $\\det "
              "(\\mathbf{A} \\mathbf{B}).$",
              "We have that $\\det (\\mathbf{A} \\mathbf{B}) = (\\det \\mathbf{A})(\\det "
              "\\mathbf{B}) = (2)(12) = \\boxed{24}.$\nFinal Answer: The final answer is $24$. "
              "I hope it is correct."),
       sample("Terrell usually lifts two 20-pound weights 12 times. If he uses two 15-pound "
              "weights instead, how many times must Terrell lift them in order to lift the same "
              "total weight?",
              "If Terrell lifts two 20-pound weights 12 times, he lifts a total of "
              "$2\\cdot 12\\cdot20=480$ pounds of weight.  If he lifts two 15-pound weights "
              "instead for $n$ times, he will lift a total of $2\\cdot15\\cdot n=30n$ pounds of "
              "weight.  Equating this to 480 pounds, we can solve for $n$:\n\\begin{align*}\n"
              "30n&=480\\\n\\Rightarrow\\qquad n&=480/30=\\boxed{16}\n\\end{align*}\nFinal "
              "Answer: The final answer is $16$. I hope it is correct."),
       sample("If the system of equations\n\n\\begin{align*}\n6x-4y&=a,\\\n6y-9x &=b.\n"
              "\\end{align*}has a solution $(x, y)$ where $x$ and $y$ are both nonzero,\nfind "
              "$\\frac{a}{b},$ assuming $b$ is nonzero.",
              "If we multiply the first equation by $-\\frac{3}{2}$, we obtain\n\n"
              "$$6y-9x=-\\frac{3}{2}a.$$Since we also know that $6y-9x=b$, we have\n\n"
              "$$-\\frac{3}{2}a=b\\Rightarrow\\frac{a}{b}=\\boxed{-\\frac{2}{3}}.$$\nFinal "
              "Answer: The final answer is $-\\frac{2}{3}$. I hope it is correct.")});
}

namespace {

// A small evaluator for the numeric answers MATH uses: integers, decimals, \frac/\dfrac/\tfrac,
// a/b, unary minus, \pi-free products are not attempted. Returns nullopt when not understood.
struct NumParser {
  std::string_view s;
  size_t i = 0;
  void ws() {
    while (i < s.size() && s[i] == ' ') ++i;
  }
  std::optional<long double> group() {
    if (i < s.size() && s[i] == '{') {
      ++i;
      auto v = expr();
      if (!v || i >= s.size() || s[i] != '}') return std::nullopt;
      ++i;
      return v;
    }
    if (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])))
      return static_cast<long double>(s[i++] - '0');
    return std::nullopt;
  }
  std::optional<long double> atom() {
    ws();
    if (i >= s.size()) return std::nullopt;
    if (s[i] == '-') {
      ++i;
      auto v = atom();
      return v ? std::optional<long double>(-*v) : std::nullopt;
    }
    if (s[i] == '+') {
      ++i;
      return atom();
    }
    if (s[i] == '(' || s[i] == '{') {
      char close = s[i] == '(' ? ')' : '}';
      ++i;
      auto v = expr();
      if (!v || i >= s.size() || s[i] != close) return std::nullopt;
      ++i;
      return v;
    }
    for (const char* f : {"\\dfrac", "\\tfrac", "\\frac"}) {
      std::string_view fv(f);
      if (s.substr(i, fv.size()) == fv) {
        i += fv.size();
        auto a = group();
        auto b = group();
        if (!a || !b || *b == 0) return std::nullopt;
        return *a / *b;
      }
    }
    size_t st = i;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
    if (st == i) return std::nullopt;
    // Numbers as sympy's parse_latex takes them: ".6", "30." and "072" are not (is_equiv False).
    std::string_view tok = s.substr(st, i - st);
    if (tok.front() == '.' || tok.back() == '.' ||
        (tok.size() > 1 && tok[0] == '0' && tok[1] != '.') ||
        std::count(tok.begin(), tok.end(), '.') > 1)
      return std::nullopt;
    try {
      return std::stold(std::string(tok));
    } catch (...) {
      return std::nullopt;
    }
  }
  std::optional<long double> term() {
    auto v = atom();
    while (v && i < s.size() && (s[i] == '/' || s[i] == '*')) {
      char op = s[i++];
      auto r = atom();
      if (!r || (op == '/' && *r == 0)) return std::nullopt;
      v = op == '/' ? *v / *r : *v * *r;
    }
    return v;
  }
  std::optional<long double> expr() {
    auto v = term();
    while (v && i < s.size() && (s[i] == '+' || s[i] == '-')) {
      char op = s[i++];
      auto r = term();
      if (!r) return std::nullopt;
      v = op == '+' ? *v + *r : *v - *r;
    }
    return v;
  }
};

std::optional<long double> eval_number(std::string_view s) {
  std::string t(s);
  t = replace_all(std::move(t), "\\left", "");
  t = replace_all(std::move(t), "\\right", "");
  t = replace_all(std::move(t), "\\!", "");
  t = replace_all(std::move(t), " ", "");
  bool percent = false;
  if (!t.empty() && t.back() == '%') t.pop_back(), percent = true;
  t = replace_all(std::move(t), "\\%", "");
  NumParser p{t};
  auto v = p.expr();
  if (!v || p.i != t.size()) return std::nullopt;
  return percent ? *v / 100.0 : *v;
}

// sympy's simplify(a - b) == 0 on parsed numbers is exact: 10^9 and 10^9+1 differ (long double
// holds integers to 2^64 exactly).
bool close_enough(long double a, long double b) {
  return std::fabs(a - b) <= 1e-15L * std::max({1.0L, std::fabs(a), std::fabs(b)});
}

}  // namespace

bool math_is_equiv(std::string_view a, std::string_view b) {
  std::string x(unicode::py_strip(a)), y(unicode::py_strip(b));
  if (x.empty() || y.empty()) return false;
  if (x == y) return true;
  auto va = eval_number(x), vb = eval_number(y);
  if (va && vb) return close_enough(*va, *vb);
  // Tuples and intervals are not compared element-wise: sympy's parse_latex rejects them
  // (LaTeXParsingError), so the reference's is_equiv says False and only equal strings match.
  return false;
}

int math_exact_match_original(const Json& doc, std::string_view candidate) {
  std::string answer = math_normalize_final_answer(math_get_unnormalized_answer(candidate));
  std::string gold = math_normalize_final_answer(str_field(doc, "answer"));
  if (answer == kMathInvalidAnswer) return 0;
  if (unicode::py_strip(answer) == unicode::py_strip(gold) || math_is_equiv(answer, gold)) return 1;
  return 0;
}

// math-verify's verify(parse(solution, [LatexExtractionConfig()]), parse(response)), as the
// reference's process_results calls it (tasks/functions/math/).
int math_exact_match(const Json& doc, std::string_view candidate) {
  std::string solution = str_field(doc, "solution");
  try {
    auto gold = math::extract_answer(solution, /*with_plain_expressions=*/false);
    auto pred = math::extract_answer(candidate, /*with_plain_expressions=*/true);
    return math::extracted_answers_match(gold, pred) ? 1 : 0;
  } catch (const RuntimeError&) {
    return 0;  // a regex over its match limit: math-verify's parse/verify also score errors 0
  }
}

}  // namespace lmeval::tasks

namespace lmeval {

namespace {

TaskFunction doc_fn(std::function<Json(const Json&)> f) {
  TaskFunction fn;
  fn.doc_fn = std::move(f);
  return fn;
}

const std::string& first_response(const std::vector<Json>& results, const char* task) {
  if (results.empty() || !results[0].is_string())
    throw UserError(std::string(task) + " process_results expects one generated string");
  return results[0].get_ref<const std::string&>();
}

}  // namespace

void register_task_functions_leaderboard(FunctionRegistry& r) {
  {
    TaskFunction fn;
    fn.process_docs = [](std::vector<Json> docs) {
      PyRandom& rng = global_random();
      for (auto& d : docs) d = tasks::gpqa_process_doc(d, rng);
      return docs;
    };
    fn.draws_global_random = true;
    r.add("gpqa", "utils.process_docs", std::move(fn));
  }

  r.add("mmlu_pro", "utils.doc_to_text",
        doc_fn([](const Json& d) -> Json { return tasks::mmlu_pro_doc_to_text(d); }));
  r.add("mmlu_pro", "utils.doc_to_choice", doc_fn(tasks::mmlu_pro_doc_to_choice));

  r.add("musr", "utils.doc_to_text",
        doc_fn([](const Json& d) -> Json { return tasks::musr_doc_to_text(d); }));
  r.add("musr", "utils.doc_to_choice", doc_fn(tasks::musr_doc_to_choice));

  r.add("math", "utils.doc_to_text",
        doc_fn([](const Json& d) -> Json { return tasks::math_doc_to_text(d); }));
  {
    TaskFunction fn;
    fn.process_docs = [](std::vector<Json> docs) {
      return tasks::math_process_docs(std::move(docs));
    };
    r.add("math", "utils.process_docs", std::move(fn));
  }
  r.add("math", "utils.list_fewshot_samples",
        doc_fn([](const Json&) -> Json { return tasks::math_fewshot_samples(); }));
  {
    TaskFunction fn;
    fn.process_results = [](const Json& doc, const std::vector<Json>& results) {
      const std::string& cand = first_response(results, "leaderboard_math");
      Json out = Json::object();
      out["exact_match"] = tasks::math_exact_match(doc, cand);
      int original = 0;
      try {
        original = tasks::math_exact_match_original(doc, cand);
      } catch (const std::exception&) {
        original = 0;  // the reference's bare `except: original = 0`
      }
      out["exact_match_original"] = original;
      return out;
    };
    r.add("math", "utils.process_results", std::move(fn));
  }

  {
    TaskFunction fn;
    fn.process_results = [](const Json& doc, const std::vector<Json>& results) {
      // The reference draws missing IFEval arguments from the same global `random` as GPQA.
      return ifeval::process_results(doc, first_response(results, "leaderboard_ifeval"),
                                     global_random());
    };
    r.add("ifeval", "utils.process_results", std::move(fn));
  }
  {
    TaskFunction fn;
    fn.aggregation = [](const std::vector<Json>& items) {
      return ifeval::agg_inst_level_acc(items);
    };
    r.add("ifeval", "utils.agg_inst_level_acc", std::move(fn));
  }
}

}  // namespace lmeval
