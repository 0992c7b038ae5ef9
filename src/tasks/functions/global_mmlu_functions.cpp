// Doc functions of the reference's global_mmlu family
// (lm_eval/tasks/global_mmlu/default/*/utils.py, the Lite tasks by category, and full/*/utils.py,
// by subject) and of openai-mmmlu (openai-mmmlu/default/utils.py): per-subject or per-category row
// filters.
#include <string>
#include <vector>

#include "lmeval/core/unicode.hpp"
#include "lmeval/tasks/function_registry.hpp"
#include "tasks/functions/subject_filters.hpp"

namespace lmeval {

namespace {

// openai-mmmlu _normalize_subject_name: some configs name the CSV file in `Subject`
// ("college_mathematics_test.csv_sw-KE.csv"); everything from "_test.csv" (else "_test-") on is
// dropped. A non-string value is compared as it is.
Json mmmlu_subject(const Json& subject) {
  if (!subject.is_string()) return subject;
  const auto& s = subject.get_ref<const std::string&>();
  for (const char* marker : {"_test.csv", "_test-"})
    if (size_t i = s.find(marker); i != std::string::npos) return s.substr(0, i);
  return s;
}

}  // namespace

void register_task_functions_global_mmlu(FunctionRegistry& r) {
  // default: process_<category lower-cased, spaces as "_"> keeps that subject_category.
  for (const char* category :
       {"Business", "Humanities", "Medical", "Other", "STEM", "Social Sciences"}) {
    std::string name = unicode::py_lower(category);
    for (auto& c : name)
      if (c == ' ') c = '_';
    r.add("global_mmlu_default", "utils.process_" + name,
          tasks::keep_rows_where("subject_category", category));
  }
  for (const auto& subject : tasks::mmlu_subjects()) {
    // full: process_<subject> keeps that subject.
    r.add("global_mmlu_full", "utils.process_" + subject,
          tasks::keep_rows_where("subject", subject));
    // openai-mmmlu: its subjects.json holds the same 57 subjects.
    r.add("mmmlu", "utils.process_" + subject,
          tasks::keep_rows_where("Subject", subject, mmmlu_subject));
  }
}

}  // namespace lmeval
