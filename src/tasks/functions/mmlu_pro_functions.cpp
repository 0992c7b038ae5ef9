// Doc functions of the reference's mmlu_pro family (lm_eval/tasks/mmlu_pro/utils.py: the
// chain-of-thought prompt, few-shot targets and the per-category filters). The leaderboard's
// MMLU-Pro (another module) is in leaderboard_functions.cpp.
#include <string>
#include <vector>

#include "lmeval/core/error.hpp"
#include "lmeval/core/unicode.hpp"
#include "lmeval/tasks/function_registry.hpp"
#include "tasks/functions/doc_util.hpp"
#include "tasks/functions/subject_filters.hpp"

namespace lmeval {

namespace {

constexpr const char* kFamily = "mmlu_pro_cot";

// format_cot_example(example, including_answer=False): the question, at most ten options
// (lettered A-J, each stripped) and the step-by-step cue.
std::string format_cot_example(const Json& doc) {
  std::string prompt = "Question:\n" + tasks::str_field(doc, "question") + "\nOptions:\n";
  auto opts = doc.find("options");
  if (opts == doc.end() || !opts->is_array())
    throw UserError("mmlu_pro: document field 'options' is missing or not a list");
  for (size_t i = 0; i < opts->size() && i < 10; ++i) {
    const Json& opt = (*opts)[i];
    if (!opt.is_string()) throw UserError("mmlu_pro: an option is not a string");
    prompt += std::string(1, static_cast<char>('A' + i)) + ". " +
              std::string(unicode::py_strip(opt.get_ref<const std::string&>())) + "\n";
  }
  return prompt + "Answer: Let's think step by step.";
}

TaskFunction doc_fn(std::function<Json(const Json&)> f) {
  TaskFunction fn;
  fn.doc_fn = std::move(f);
  return fn;
}

}  // namespace

void register_task_functions_mmlu_pro_cot(FunctionRegistry& r) {
  // doc_to_text and fewshot_to_text are the same partial of format_cot_example.
  for (const char* name : {"utils.doc_to_text", "utils.fewshot_to_text"})
    r.add(kFamily, name, doc_fn([](const Json& d) -> Json { return format_cot_example(d); }));
  // format_cot_target: the worked answer without its "A: Let's think step by step. " lead-in.
  r.add(kFamily, "utils.fewshot_to_target", doc_fn([](const Json& d) -> Json {
          return tasks::replace_all(tasks::str_field(d, "cot_content"),
                                    "A: Let's think step by step. ", "");
        }));
  for (const auto& [suffix, category] : tasks::mmlu_pro_categories())
    r.add(kFamily, "utils.process_" + suffix, tasks::keep_rows_where("category", category));
}

}  // namespace lmeval
