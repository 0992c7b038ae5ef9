// Port of the reference's galician_bench helper (lm_eval/tasks/galician_bench/utils.py),
// registered by the module file's sha256 (scripts/gen_function_sources.py). rouge1 / rouge1_agg
// (summarization_gl) are in iberian_rouge_functions.cpp.
#include <cmath>
#include <string>
#include <vector>

#include "lmeval/core/unicode.hpp"
#include "lmeval/tasks/function_registry.hpp"
#include "lmeval/tasks/functions/classic.hpp"
#include "tasks/functions/doc_util.hpp"
#include "tasks/functions/iberian_bench_docs.hpp"

namespace lmeval {

namespace {

namespace ib = tasks::iberian;

// process_doc_nli: the sentence pair as catalan's premise/hypothesis, then gold_label's name
// mapped to its index (any other value is a KeyError in the reference).
void galician_nli(Json& doc) {
  ib::nli_pair(doc, "sentence1", "sentence2");
  const std::string& label = tasks::str_field(doc, "gold_label");
  int64_t index = label == "entailment"      ? 0
                  : label == "neutral"       ? 1
                  : label == "contradiction" ? 2
                                             : -1;
  if (index < 0)
    throw UserError("galician_bench process_doc_nli: unknown gold_label '" + label + "'");
  doc["gold_label"] = index;
}

// preprocess_function_gen's _format_answers: each answer stripped, empty ones dropped, a "." added
// where the last character is not one.
Json format_answers(const Json& answers) {
  if (!answers.is_array())
    throw UserError("galician_bench process_docs_gen: answers is not a list");
  Json out = Json::array();
  for (const auto& a : answers) {
    if (!a.is_string())
      throw UserError("galician_bench process_docs_gen: an answer is not a string");
    std::string s(unicode::py_strip(a.get_ref<const std::string&>()));
    if (s.empty()) continue;
    out.push_back(s.back() != '.' ? s + "." : s);
  }
  return out;
}

// process_docs_gen (Dataset.map of preprocess_function_gen): the question stripped, both answer
// lists formatted, "Non teño ningún comentario." added to the correct ones when absent.
void galician_gen_doc(Json& doc) {
  Json incorrect =
      format_answers(doc.contains("incorrect_answers") ? doc["incorrect_answers"] : Json());
  Json correct = format_answers(doc.contains("correct_answers") ? doc["correct_answers"] : Json());
  const std::string no_comment = "Non teño ningún comentario.";
  bool has = false;
  for (const auto& c : correct) has = has || c == no_comment;
  if (!has) correct.push_back(no_comment);
  doc["question"] = std::string(unicode::py_strip(tasks::str_field(doc, "question")));
  doc["correct_answers"] = std::move(correct);
  doc["incorrect_answers"] = std::move(incorrect);
}

double loglikelihood_of(const Json& r) {
  if (r.is_array() && !r.empty() && r[0].is_number()) return r[0].get<double>();
  throw UserError("galician_bench process_results_mc2 expects (loglikelihood, is_greedy) results");
}

// process_results_mc2: the labels' first 0 splits true from false answers; the true answers'
// probabilities over the total mass, each side summed by Python's sum() (left to right from the
// int 0, which is what an empty side gives).
Json galician_mc2(const Json& doc, const std::vector<Json>& results) {
  const Json* labels = nullptr;
  if (auto t = doc.find("mc2_targets"); t != doc.end() && t->is_object())
    if (auto l = t->find("labels"); l != t->end() && l->is_array()) labels = &*l;
  if (!labels) throw UserError("galician_bench process_results_mc2: no mc2_targets.labels list");
  size_t split = labels->size();
  for (size_t i = 0; i < labels->size(); ++i)
    if (((*labels)[i].is_number() && (*labels)[i].get<double>() == 0) ||
        ((*labels)[i].is_boolean() && !(*labels)[i].get<bool>())) {  // list.index(0): False == 0
      split = i;
      break;
    }
  if (split == labels->size())
    throw UserError("galician_bench process_results_mc2: 0 is not in mc2_targets.labels");
  std::vector<double> p;
  for (const auto& r : results) p.push_back(std::exp(loglikelihood_of(r)));
  split = std::min(split, p.size());
  double sum_true = 0.0, sum_false = 0.0;
  for (size_t i = 0; i < p.size(); ++i) (i < split ? sum_true : sum_false) += p[i];
  Json out = Json::object();
  if (split == 0) {
    out["acc"] = 0;  // sum() of an empty array: the int 0
    return out;
  }
  const double total = sum_true + sum_false;
  double acc = 0.0;
  for (size_t i = 0; i < split; ++i) acc += p[i] / total;
  out["acc"] = acc;
  return out;
}

}  // namespace

void register_task_functions_galician_bench(FunctionRegistry& r) {
  const std::string fam = "galician_bench";
  r.add(fam, "utils.process_summarization", ib::map_each(ib::collapse_text_and_summary));
  r.add(fam, "utils.process_docs_paraphrases", ib::paraphrases("Frase", "Paráfrase"));
  {
    TaskFunction fn;
    fn.process_docs = [](std::vector<Json> docs) {
      return ib::paraphrase_docs(std::move(docs), "sentence1", "sentence2");
    };
    r.add(fam, "utils.process_docs_paws", std::move(fn));
  }
  r.add(fam, "utils.process_doc_nli", ib::map_each(galician_nli));
  r.add(fam, "utils.process_docs_gen", ib::map_each(galician_gen_doc));
  {
    TaskFunction fn;
    fn.process_results = galician_mc2;
    r.add(fam, "utils.process_results_mc2", std::move(fn));
  }
  {
    // truthfulqa_gl_gen: the module's process_results_gen and bleu are truthfulqa/utils.py's
    // statement for statement, and its rouge differs only in building the RougeScorer per call
    // (truthfulqa caches it): the same scores, so truthfulqa's port serves.
    TaskFunction fn;
    fn.process_results = [](const Json& doc, const std::vector<Json>& results) {
      if (results.empty() || !results[0].is_string())
        throw UserError("galician_bench process_results_gen expects one generated string");
      return tasks::truthfulqa_gen_process_results(doc, results[0].get<std::string>());
    };
    r.add(fam, "utils.process_results_gen", std::move(fn));
  }
}

}  // namespace lmeval
