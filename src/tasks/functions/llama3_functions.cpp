// Doc functions of the reference's llama3 family (lm_eval/tasks/llama3/instruct/): the
// multilingual MMLU subtask filters (mmlu_{de,es,fr,hi,it,pt,th}/utils.py), MMLU-Pro's category
// filters and few-shot targets (mmlu_pro/utils.py) and ARC-Challenge's four-choice rows
// (arc_challenge/utils.py).
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lmeval/core/error.hpp"
#include "lmeval/core/regex.hpp"
#include "lmeval/core/unicode.hpp"
#include "lmeval/tasks/function_registry.hpp"
#include "tasks/functions/doc_util.hpp"
#include "tasks/functions/subject_filters.hpp"

namespace lmeval {

namespace {

// mmlu_pro fewshot_to_text: cot_content without its "A: Let's think step by step." prefix
// (str.removeprefix), stripped, its "The answer is (X)." as "The best answer is X.".
std::string mmlu_pro_fewshot_to_text(const Json& doc) {
  std::string_view text = tasks::str_field(doc, "cot_content");
  constexpr std::string_view kPrefix = "A: Let's think step by step.";
  if (text.substr(0, kPrefix.size()) == kPrefix) text.remove_prefix(kPrefix.size());
  return pyre::sub(R"(The answer is \(([A-Z])\)\.)", R"(The best answer is \1.)",
                   unicode::py_strip(text));
}

// arc_challenge process_docs: rows with four choices, their labels made A-D and a numeric
// answerKey ("1".."4") turned into its letter.
std::vector<Json> arc_challenge_process_docs(std::vector<Json> docs) {
  static const Json kLabels = Json::array({"A", "B", "C", "D"});
  std::vector<Json> out;
  for (auto& doc : docs) {
    auto choices = doc.find("choices");
    if (choices == doc.end() || !choices->is_object() || !choices->contains("label"))
      throw UserError("arc_challenge_llama: a document has no choices.label");
    if ((*choices)["label"].size() != 4) continue;
    (*choices)["label"] = kLabels;
    if (!doc.contains("answerKey"))
      throw UserError("arc_challenge_llama: a document has no field 'answerKey'");
    const Json& key = doc["answerKey"];
    if (std::find(kLabels.begin(), kLabels.end(), key) == kLabels.end()) {
      // label[int(answerKey) - 1]: Python's int() of a string, then a list index (-1 and 0
      // wrap around as Python indices do).
      std::optional<long> n;
      if (key.is_number_integer()) n = key.get<long>();
      if (key.is_string()) {
        std::string_view t = unicode::py_strip(key.get_ref<const std::string&>());
        bool neg = !t.empty() && t[0] == '-';
        if (!t.empty() && (t[0] == '-' || t[0] == '+')) t.remove_prefix(1);
        if (!t.empty() && t.size() < 10 &&
            std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; }))
          n = (neg ? -1 : 1) * std::stol(std::string(t));
      }
      if (!n)
        throw UserError("arc_challenge_llama: answerKey " + key.dump() +
                        " is no letter A-D and no number");
      long i = *n - 1;
      if (i < 0) i += 4;
      if (i < 0 || i >= 4)
        throw UserError("arc_challenge_llama: answerKey " + key.dump() + " is out of range");
      doc["answerKey"] = kLabels[static_cast<size_t>(i)];
    }
    out.push_back(std::move(doc));
  }
  return out;
}

}  // namespace

void register_task_functions_llama3(FunctionRegistry& r) {
  // mmlu_<lang>/utils.py: process_docs_<subject> keeps subtask_name "mmlu_<lang>_chat.<subject>".
  for (const char* lang : {"de", "es", "fr", "hi", "it", "pt", "th"}) {
    const std::string family = std::string("llama3_mmlu_") + lang;
    for (const auto& subject : tasks::mmlu_subjects())
      r.add(
          family, "utils.process_docs_" + subject,
          tasks::keep_rows_where("subtask_name", std::string("mmlu_") + lang + "_chat." + subject));
  }
  for (const auto& [suffix, category] : tasks::mmlu_pro_categories())
    r.add("llama3_mmlu_pro", "utils.process_" + suffix,
          tasks::keep_rows_where("category", category));
  {
    TaskFunction fn;
    fn.doc_fn = [](const Json& d) -> Json { return mmlu_pro_fewshot_to_text(d); };
    r.add("llama3_mmlu_pro", "utils.fewshot_to_text", std::move(fn));
  }
  {
    TaskFunction fn;
    fn.process_docs = arc_challenge_process_docs;
    r.add("llama3_arc_challenge", "utils.process_docs", std::move(fn));
  }
}

}  // namespace lmeval
