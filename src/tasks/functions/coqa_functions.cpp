// Port of the reference's CoQA helper (lm_eval/tasks/coqa/utils.py), registered by the module
// file's sha256 (scripts/gen_function_sources.py): the conversation so far as the prompt, the
// turn's answer and its distinct alternatives as the target, EM/F1 as compute_scores gives them
// (transformers' squad_metrics, each gold left out in turn).
#include <string>
#include <vector>

#include "lmeval/core/unicode.hpp"
#include "lmeval/tasks/function_registry.hpp"
#include "tasks/functions/doc_util.hpp"
#include "tasks/functions/squad_answer_scores.hpp"

namespace lmeval {

namespace {

// doc[outer]["input_text"] as a list of strings.
std::vector<std::string> input_texts(const Json& parent, const char* outer) {
  auto o = parent.find(outer);
  if (o == parent.end() || !o->is_object())
    throw UserError(std::string("coqa: the document has no '") + outer + "' dict");
  auto t = o->find("input_text");
  if (t == o->end() || !t->is_array())
    throw UserError(std::string("coqa: '") + outer + "' has no input_text list");
  std::vector<std::string> out;
  for (const auto& v : *t) {
    if (!v.is_string())
      throw UserError(std::string("coqa: ") + outer + ".input_text holds a non-string");
    out.push_back(v.get<std::string>());
  }
  return out;
}

// seq[i] with Python's negative indices (turn_id - 1 is -1 for a document without questions).
const std::string& py_index(const std::vector<std::string>& seq, int64_t i, const char* what) {
  int64_t n = static_cast<int64_t>(seq.size());
  if (i < -n || i >= n) throw UserError(std::string("coqa: ") + what + ": list index out of range");
  return seq[static_cast<size_t>(i < 0 ? i + n : i)];
}

// doc_to_text: the story, then each question with the answer before the last (zip_longest: a
// question without an answer ends in "A:", a missing question prints None).
Json coqa_doc_to_text(const Json& doc) {
  auto questions = input_texts(doc, "questions");
  auto answers = input_texts(doc, "answers");
  if (!answers.empty()) answers.pop_back();  // omit the target answer
  std::string text = tasks::str_field(doc, "story") + "\n\n";
  for (size_t i = 0; i < std::max(questions.size(), answers.size()); ++i) {
    text += "Q: " + (i < questions.size() ? questions[i] : std::string("None")) + "\n\n";
    text += i < answers.size() ? "A: " + answers[i] + "\n\n" : std::string("A:");
  }
  return text;
}

// doc_to_target: the answer of the last turn, then each additional answer of that turn whose
// lower-case form is not yet among the answers' lower-case forms, in the dict's key order.
std::vector<std::string> coqa_golds(const Json& doc) {
  const int64_t turn = static_cast<int64_t>(input_texts(doc, "questions").size()) - 1;
  std::vector<std::string> golds{py_index(input_texts(doc, "answers"), turn, "answers")};
  auto extra = doc.find("additional_answers");
  bool truthy = extra != doc.end() && !extra->is_null() &&
                !((extra->is_object() || extra->is_array()) && extra->empty());
  if (!truthy) return golds;
  if (!extra->is_object()) throw UserError("coqa: additional_answers is not a dict");
  for (const auto& [key, value] : extra->items()) {
    (void)key;
    if (!value.is_object()) throw UserError("coqa: an additional_answers entry is not a dict");
    std::string alt = py_index(input_texts(Json{{"a", value}}, "a"), turn, "additional_answers");
    std::string low = unicode::py_lower(alt);
    bool seen = false;
    for (const auto& g : golds) seen = seen || unicode::py_lower(g) == low;
    if (!seen) golds.push_back(alt);
  }
  return golds;
}

Json coqa_process_results(const Json& doc, const std::vector<Json>& results) {
  auto golds = coqa_golds(doc);
  std::string pred =
      tasks::squad::first_line(tasks::squad::generation(results, "coqa process_results"));
  return tasks::squad::leave_one_out_scores(golds, pred);
}

}  // namespace

void register_task_functions_coqa(FunctionRegistry& r) {
  {
    TaskFunction fn;
    fn.doc_fn = coqa_doc_to_text;
    r.add("coqa", "utils.doc_to_text", std::move(fn));
  }
  {
    TaskFunction fn;
    fn.doc_fn = [](const Json& doc) { return Json(coqa_golds(doc)); };
    r.add("coqa", "utils.doc_to_target", std::move(fn));
  }
  {
    TaskFunction fn;
    fn.process_results = coqa_process_results;
    r.add("coqa", "utils.process_results", std::move(fn));
  }
}

}  // namespace lmeval
