// Port of the reference's race helper (lm_eval/tasks/race/preprocess_race.py), registered by the
// module file's sha256 (scripts/gen_function_sources.py). RACE's `problems` field is the repr of
// a list of {answer, options, question} dicts, read with ast.literal_eval (tmpl::literal_eval).
#include <string>
#include <vector>

#include "lmeval/tasks/function_registry.hpp"
#include "lmeval/template/template.hpp"
#include "tasks/functions/doc_util.hpp"

namespace lmeval {

namespace {

std::vector<Json> race_problems(const Json& doc) {
  Json parsed = tmpl::literal_eval(tasks::str_field(doc, "problems"));
  if (!parsed.is_array()) throw UserError("race: problems is not a list literal");
  std::vector<Json> out(parsed.begin(), parsed.end());
  for (const auto& p : out)
    if (!p.is_object()) throw UserError("race: a problem is not a dict literal: " + p.dump());
  return out;
}

const Json& key_of(const Json& problem, const char* key) {
  auto it = problem.find(key);
  if (it == problem.end()) throw UserError(std::string("race: a problem has no '") + key + "'");
  return *it;
}

const Json& last_problem(const std::vector<Json>& problems) {
  if (problems.empty()) throw UserError("race: problems is empty (list index out of range)");
  return problems.back();
}

// letter_to_num[problem["answer"]].
size_t answer_index(const Json& problem) {
  const Json& a = key_of(problem, "answer");
  if (a.is_string()) {
    const std::string& s = a.get_ref<const std::string&>();
    if (s.size() == 1 && s[0] >= 'A' && s[0] <= 'D') return static_cast<size_t>(s[0] - 'A');
  }
  throw UserError("race: answer " + a.dump() + " is not A, B, C or D");
}

const Json& option(const Json& problem, size_t i) {
  const Json& options = key_of(problem, "options");
  if (!options.is_array() || i >= options.size())
    throw UserError("race: options has no index " + std::to_string(i));
  return options[i];
}

std::string text_of(const Json& v, const char* what) {
  if (!v.is_string()) throw UserError(std::string("race: ") + what + " is not a string");
  return v.get<std::string>();
}

// preprocess_race.doc_to_text: the article, each earlier problem with its answer (a fill-in
// question ending in "  _  ." gets the answer in place of "_  ."), then the last question.
Json race_doc_to_text(const Json& doc) {
  auto problems = race_problems(doc);
  const Json& last = last_problem(problems);
  std::string text = "Article: " + tasks::str_field(doc, "article") + "\n\n";
  static const std::string blank = "  _  .";
  for (size_t i = 0; i + 1 < problems.size(); ++i) {
    const Json& p = problems[i];
    std::string q = text_of(key_of(p, "question"), "question");
    std::string answer = text_of(option(p, answer_index(p)), "an option");
    // q[-6:] == "  _  .": the suffix is ASCII, so a byte comparison is the code-point one.
    if (q.size() >= blank.size() && q.compare(q.size() - blank.size(), blank.size(), blank) == 0)
      text += q.substr(0, q.size() - 5) + answer + "\n";
    else
      text += "Question: " + q + "\n" + "Answer: " + answer + "\n";
  }
  return text + text_of(key_of(last, "question"), "question");
}

Json race_doc_to_target(const Json& doc) {
  auto problems = race_problems(doc);
  return static_cast<int64_t>(answer_index(last_problem(problems)));
}

Json race_doc_to_choice(const Json& doc) {
  auto problems = race_problems(doc);
  const Json& last = last_problem(problems);
  Json out = Json::array();
  for (size_t i = 0; i < 4; ++i) out.push_back(option(last, i));
  return out;
}

TaskFunction race_doc_fn(Json (*f)(const Json&)) {
  TaskFunction fn;
  fn.doc_fn = f;
  return fn;
}

}  // namespace

void register_task_functions_race(FunctionRegistry& r) {
  r.add("race", "preprocess_race.doc_to_text", race_doc_fn(race_doc_to_text));
  r.add("race", "preprocess_race.doc_to_target", race_doc_fn(race_doc_to_target));
  r.add("race", "preprocess_race.doc_to_choice", race_doc_fn(race_doc_to_choice));
}

}  // namespace lmeval
