// process_docs that keep the rows whose field equals a value: the reference's many
// `partial(process_docs, subject=...)` helpers, each `dataset.filter(lambda x: x[field] == value)`.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "lmeval/core/error.hpp"
#include "lmeval/tasks/function_registry.hpp"

namespace lmeval::tasks {

// Keeps the rows (unchanged, in order) whose `field`, passed through `key` when given, equals
// `value`, as datasets.Dataset.filter does with such a predicate. A row without the field is a
// UserError (the reference's KeyError).
inline TaskFunction keep_rows_where(std::string field, Json value,
                                    std::function<Json(const Json&)> key = {}) {
  TaskFunction fn;
  fn.process_docs = [field = std::move(field), value = std::move(value),
                     key = std::move(key)](std::vector<Json> rows) {
    std::vector<Json> out;
    for (auto& row : rows) {
      auto it = row.find(field);
      if (it == row.end()) throw UserError("process_docs: a document has no field '" + field + "'");
      if ((key ? key(*it) : *it) == value) out.push_back(std::move(row));
    }
    return out;
  };
  return fn;
}

// The 57 subjects of MMLU (hendrycks_test), in the order of the reference's SUBJECTS lists.
inline const std::vector<std::string>& mmlu_subjects() {
  static const std::vector<std::string> kSubjects = {
      "abstract_algebra",
      "anatomy",
      "astronomy",
      "business_ethics",
      "clinical_knowledge",
      "college_biology",
      "college_chemistry",
      "college_computer_science",
      "college_mathematics",
      "college_medicine",
      "college_physics",
      "computer_security",
      "conceptual_physics",
      "econometrics",
      "electrical_engineering",
      "elementary_mathematics",
      "formal_logic",
      "global_facts",
      "high_school_biology",
      "high_school_chemistry",
      "high_school_computer_science",
      "high_school_european_history",
      "high_school_geography",
      "high_school_government_and_politics",
      "high_school_macroeconomics",
      "high_school_mathematics",
      "high_school_microeconomics",
      "high_school_physics",
      "high_school_psychology",
      "high_school_statistics",
      "high_school_us_history",
      "high_school_world_history",
      "human_aging",
      "human_sexuality",
      "international_law",
      "jurisprudence",
      "logical_fallacies",
      "machine_learning",
      "management",
      "marketing",
      "medical_genetics",
      "miscellaneous",
      "moral_disputes",
      "moral_scenarios",
      "nutrition",
      "philosophy",
      "prehistory",
      "professional_accounting",
      "professional_law",
      "professional_medicine",
      "professional_psychology",
      "public_relations",
      "security_studies",
      "sociology",
      "us_foreign_policy",
      "virology",
      "world_religions",
  };
  return kSubjects;
}

// MMLU-Pro's `category` values with the suffix of their reference helper `process_<suffix>`
// (mmlu_pro/utils.py, llama3/instruct/mmlu_pro/utils.py).
inline const std::vector<std::pair<std::string, std::string>>& mmlu_pro_categories() {
  static const std::vector<std::pair<std::string, std::string>> kCategories = {
      {"biology", "biology"},
      {"business", "business"},
      {"chemistry", "chemistry"},
      {"computer_science", "computer science"},
      {"economics", "economics"},
      {"engineering", "engineering"},
      {"health", "health"},
      {"history", "history"},
      {"law", "law"},
      {"math", "math"},
      {"other", "other"},
      {"philosophy", "philosophy"},
      {"physics", "physics"},
      {"psychology", "psychology"},
  };
  return kCategories;
}

}  // namespace lmeval::tasks
