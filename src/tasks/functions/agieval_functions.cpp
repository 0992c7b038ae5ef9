// The reference's agieval helpers (lm_eval/tasks/agieval/utils.py): AGIEval's answer parsing
// (\boxed{}, $...$, "= x" or the last number) and Hendrycks' string normalisation for the cloze
// tasks, and the multiple-answer accuracy of the choice tasks.
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lmeval/core/error.hpp"
#include "lmeval/core/regex.hpp"
#include "lmeval/core/unicode.hpp"
#include "lmeval/tasks/function_registry.hpp"
#include "lmeval/tasks/functions/agieval.hpp"
#include "lmeval/tasks/functions/hendrycks_math.hpp"
#include "tasks/functions/doc_util.hpp"

namespace lmeval::tasks {

namespace {

// str.lstrip(" ")
std::string lstrip_spaces(std::string_view s) {
  size_t i = s.find_first_not_of(' ');
  return i == std::string_view::npos ? std::string() : std::string(s.substr(i));
}

// s.split("=")[-1]
std::string after_last_eq(std::string_view s) {
  size_t eq = s.rfind('=');
  return std::string(eq == std::string_view::npos ? s : s.substr(eq + 1));
}

// parse_math_answer's remove_boxed: None (any exception) unless "\boxed{...}"; the part after the
// last "=" of the content, spaces stripped on its left.
std::optional<std::string> agieval_remove_boxed(const std::optional<std::string>& s) {
  if (!s || s->substr(0, 7) != "\\boxed{" || s->back() != '}') return std::nullopt;
  std::string answer = s->substr(7, s->size() - 8);
  if (answer.find('=') != std::string::npos) answer = lstrip_spaces(after_last_eq(answer));
  return answer;
}

std::optional<std::string> answer_with_dollar_sign(std::string_view s) {
  // re.findall(r"\$(.*)\$", s)[-1]: '.' stops at newlines, so the last line holding two '$'.
  static const auto kDollars = PyRegex::compile(R"(\$(.*)\$)");
  auto matches = kDollars->finditer(s);
  if (matches.empty()) return std::nullopt;
  std::string last(*matches.back().group(1));
  if (last.find('=') != std::string::npos) last = lstrip_spaces(after_last_eq(last));
  return last;
}

std::optional<std::string> answer_without_dollar_sign(std::string_view s) {
  if (s.find('=') != std::string_view::npos) {
    std::string last = lstrip_spaces(after_last_eq(s));
    while (!last.empty() && last.back() == '.') last.pop_back();  // .rstrip(".")
    // The reference looks for a backslash followed by 'n' (two characters), not a newline.
    if (size_t bn = last.find("\\n"); bn != std::string::npos) last = last.substr(0, bn);
    return last;
  }
  static const auto kNumber = PyRegex::compile(R"((?:\$)?\d+(?:\.\d+)?(?![\w\d]))");
  auto matches = kNumber->finditer(s);
  if (matches.empty()) return std::nullopt;
  return std::string(*matches.back().group(0));
}

}  // namespace

std::optional<std::string> agieval_parse_math_answer(std::string_view raw) {
  if (raw.find("\\boxed") != std::string_view::npos)
    return agieval_remove_boxed(last_boxed_braced(raw));
  auto answer = answer_with_dollar_sign(raw);
  if (!answer || answer->empty()) answer = answer_without_dollar_sign(raw);
  return answer;
}

bool agieval_is_equiv(std::string_view candidate, const std::optional<std::string>& gold) {
  if (!gold) return false;  // is_equiv(str, None)
  auto a = agieval_parse_math_answer(candidate), b = agieval_parse_math_answer(*gold);
  // _strip_string(None) raises AttributeError: the parsed values are compared as they are (two
  // Nones are equal).
  if (!a || !b) return !a && !b;
  try {
    return hendrycks_strip_string(*a, /*int_errors_raise=*/false) ==
           hendrycks_strip_string(*b, /*int_errors_raise=*/false);
  } catch (const StripStringError&) {
    return *a == *b;
  }
}

Json agieval_process_results(const Json& doc, std::string_view candidate) {
  std::optional<std::string> gold;
  auto it = doc.find("answer");
  if (it == doc.end())
    throw UserError("agieval utils.process_results: the document has no 'answer' field");
  if (it->is_string())
    gold = it->get<std::string>();
  else if (!it->is_null())
    throw UserError(
        "agieval utils.process_results: 'answer' is not a string (the reference "
        "raises TypeError on it)");
  Json out = Json::object();
  out["acc"] = agieval_is_equiv(candidate, gold) ? 1 : 0;
  return out;
}

Json agieval_process_results_mcqa(const Json& doc, const std::vector<double>& loglikelihoods) {
  const Json& gold = doc.at("gold");
  const Json& choices = doc.at("choices");
  if (!gold.is_array())
    throw UserError(
        "agieval utils.process_results_mcqa: 'gold' is not a list (the reference "
        "raises TypeError on `in`)");
  if (!choices.is_array() || choices.size() != loglikelihoods.size())
    throw UserError("agieval utils.process_results_mcqa: 'choices' does not match the results");
  // int(np.argmax(x)): the first maximum, or the first NaN.
  auto argmax = [](const std::vector<double>& x) {
    size_t best = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      if (std::isnan(x[i])) return i;
      if (x[i] > x[best]) best = i;
    }
    return best;
  };
  auto in_gold = [&](size_t i) {
    for (const auto& g : gold) {
      // Python's `i in gold`: == on numbers (True == 1).
      if (g.is_number() && g.get<double>() == static_cast<double>(i)) return true;
      if (g.is_boolean() && static_cast<size_t>(g.get<bool>()) == i) return true;
    }
    return false;
  };
  std::vector<double> normed;
  for (size_t i = 0; i < choices.size(); ++i) {
    double len = static_cast<double>(unicode::length(choices[i].get<std::string>()));
    normed.push_back(loglikelihoods[i] / len);  // numpy: x / 0.0 is inf or nan
  }
  Json out = Json::object();
  out["acc"] = in_gold(argmax(loglikelihoods)) ? 1.0 : 0.0;
  out["acc_norm"] = in_gold(argmax(normed)) ? 1.0 : 0.0;
  return out;
}

}  // namespace lmeval::tasks

namespace lmeval {

void register_task_functions_agieval(FunctionRegistry& r) {
  {
    TaskFunction fn;
    fn.process_results = [](const Json& doc, const std::vector<Json>& results) {
      if (results.empty() || !results[0].is_string())
        throw UserError("agieval process_results expects one generated string");
      return tasks::agieval_process_results(doc, results[0].get_ref<const std::string&>());
    };
    r.add("agieval", "utils.process_results", std::move(fn));
  }
  {
    TaskFunction fn;
    fn.process_results = [](const Json& doc, const std::vector<Json>& results) {
      // results: one (loglikelihood, is_greedy) per choice; the reference takes result[0].
      std::vector<double> lls;
      for (const auto& r : results)
        lls.push_back(r.is_array() ? r[0].get<double>() : r.get<double>());
      return tasks::agieval_process_results_mcqa(doc, lls);
    };
    fn.gold_choices = [](const Json& doc) {
      std::vector<size_t> out;
      for (const auto& g : doc.at("gold"))
        if (g.is_number_unsigned() || (g.is_number_integer() && g.get<int64_t>() >= 0))
          out.push_back(g.get<size_t>());
      return out;
    };
    r.add("agieval", "utils.process_results_mcqa", std::move(fn));
  }
}

}  // namespace lmeval
