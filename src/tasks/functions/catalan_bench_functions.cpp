// Port of the reference's catalan_bench helper (lm_eval/tasks/catalan_bench/utils.py), registered
// by the module file's sha256 (scripts/gen_function_sources.py). rouge1 / rouge1_agg (cabreu_*,
// cocoteros_va, terretaqa) are in iberian_rouge_functions.cpp.
#include <string>
#include <vector>

#include "lmeval/core/unicode.hpp"
#include "lmeval/tasks/function_registry.hpp"
#include "tasks/functions/doc_util.hpp"
#include "tasks/functions/iberian_bench_docs.hpp"
#include "tasks/functions/squad_answer_scores.hpp"

namespace lmeval {

namespace {

namespace ib = tasks::iberian;

const Json& field(const Json& doc, const char* key, const char* who) {
  auto it = doc.find(key);
  if (it == doc.end()) throw UserError(std::string(who) + ": the document has no '" + key + "'");
  return *it;
}

// seq[i] of a list of strings, Python's negative indices included.
const std::string& str_at(const Json& seq, int64_t i, const char* who) {
  const int64_t n = seq.is_array() ? static_cast<int64_t>(seq.size()) : 0;
  if (!seq.is_array() || i < -n || i >= n)
    throw UserError(std::string(who) + ": list index out of range");
  const Json& v = seq[static_cast<size_t>(i < 0 ? i + n : i)];
  if (!v.is_string()) throw UserError(std::string(who) + ": an answer is not a string");
  return v.get_ref<const std::string&>();
}

// process_results_coqcat: the last turn's answer plus each additional answer of that turn not yet
// there (compared lower-cased), then coqa's leave-one-out EM/F1 of the generation's first line.
Json coqcat_process_results(const Json& doc, const std::vector<Json>& results) {
  const char* who = "catalan_bench process_results_coqcat";
  const Json& questions = field(doc, "questions", who);
  const int64_t turn = static_cast<int64_t>(questions.size()) - 1;
  std::vector<std::string> golds{
      str_at(field(field(doc, "answers", who), "input_text", who), turn, who)};
  auto extra = doc.find("additional_answers");
  const bool truthy = extra != doc.end() && !extra->is_null() &&
                      !((extra->is_object() || extra->is_array()) && extra->empty());
  if (truthy) {
    if (!extra->is_object())
      throw UserError(std::string(who) + ": additional_answers is not a dict");
    for (const auto& item : extra->items()) {
      const std::string& alt = str_at(field(item.value(), "input_text", who), turn, who);
      const std::string low = unicode::py_lower(alt);
      bool seen = false;
      for (const auto& g : golds) seen = seen || unicode::py_lower(g) == low;
      if (!seen) golds.push_back(alt);
    }
  }
  std::string pred = tasks::squad::first_line(tasks::squad::generation(results, who));
  return tasks::squad::leave_one_out_scores(golds, pred);
}

// process_results_qa: SQuAD F1 / EM against doc["answers"][0]["text"].
Json catalan_qa_process_results(const Json& doc, const std::vector<Json>& results) {
  const char* who = "catalan_bench process_results_qa";
  const std::string& pred = tasks::squad::generation(results, who);
  const Json& answers = field(doc, "answers", who);
  if (!answers.is_array() || answers.empty() || !answers[0].is_object())
    throw UserError(std::string(who) + ": answers[0] is not a dict");
  const Json& text = field(answers[0], "text", who);
  if (!text.is_string()) throw UserError(std::string(who) + ": answers[0].text is not a string");
  return tasks::squad::f1_exact_match(text.get<std::string>(), pred);
}

// process_doc_cabreu: runs of spaces collapsed in the content and in each of the nine summaries
// (abstractive / extractive / extreme x a1 / a2 / a3).
void cabreu_doc(Json& doc) {
  const char* who = "catalan_bench process_doc_cabreu";
  doc["content"] = ib::collapse_spaces(tasks::str_field(doc, "content"));
  if (!doc.contains("summaries")) throw UserError(std::string(who) + ": no 'summaries'");
  Json& summaries = doc["summaries"];
  for (const char* type : {"abstractive", "extractive", "extreme"}) {
    if (!summaries.is_object() || !summaries.contains(type) || !summaries[type].is_object())
      throw UserError(std::string(who) + ": summaries has no '" + type + "' dict");
    Json& by_index = summaries[type];
    for (const char* index : {"a1", "a2", "a3"}) {
      const Json& s = field(by_index, index, who);
      if (!s.is_string()) throw UserError(std::string(who) + ": a summary is not a string");
      by_index[index] = ib::collapse_spaces(s.get<std::string>());
    }
  }
}

}  // namespace

void register_task_functions_catalan_bench(FunctionRegistry& r) {
  const std::string fam = "catalan_bench";
  r.add(fam, "utils.process_doc_nli",
        ib::map_each([](Json& d) { ib::nli_pair(d, "premise", "hypothesis"); }));
  r.add(fam, "utils.process_docs_paraphrases", ib::paraphrases("sentence1", "sentence2"));
  r.add(fam, "utils.process_docs_copa_ca", ib::map_each([](Json& d) {
          ib::lower_first_letters(d, {"choice1", "choice2"});
        }));
  r.add(fam, "utils.process_doc_cabreu", ib::map_each(cabreu_doc));
  {
    TaskFunction fn;
    fn.process_results = coqcat_process_results;
    r.add(fam, "utils.process_results_coqcat", std::move(fn));
  }
  {
    TaskFunction fn;
    fn.process_results = catalan_qa_process_results;
    r.add(fam, "utils.process_results_qa", std::move(fn));
  }
}

}  // namespace lmeval
