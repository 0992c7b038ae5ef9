// Doc functions of the classic task families (hellaswag, winogrande, wsc, logiqa, truthfulqa,
// wikitext), exposed for tests; registered under the reference's `!function` names.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "lmeval/core/json.hpp"

namespace lmeval::tasks {

// Python str.capitalize(): first code point upper-cased, the rest lower-cased.
std::string py_capitalize(std::string_view s);
// Python len(str): number of code points.
size_t py_len(std::string_view s);

// hellaswag utils.preprocess: strip, " [title]" -> ". ", drop "[...]" artifacts, "  " -> " ".
std::string hellaswag_preprocess(std::string_view text);
// hellaswag utils.process_docs for one row: the row plus query / choices / gold.
Json hellaswag_process_doc(const Json& doc);

// winogrande partial scoring: doc_to_text = gold index, doc_to_target = text after "_",
// doc_to_choice = the sentence up to "_" with each option.
Json winogrande_doc_to_text(const Json& doc);
Json winogrande_doc_to_target(const Json& doc);
Json winogrande_doc_to_choice(const Json& doc);

// lm_eval.utils.general_detokenize.
std::string general_detokenize(std::string_view s);
// super_glue/wsc preprocess_wsc.default_doc_to_text.
std::string wsc_doc_to_text(const Json& doc);

// logiqa utils_logiqa.doc_to_text / doc_to_target.
std::string logiqa_doc_to_text(const Json& doc);
int logiqa_doc_to_target(const Json& doc);

// truthfulqa utils.process_results_mc2: normalised probability mass of the true answers.
// `results` holds one [loglikelihood, is_greedy] per choice.
double truthfulqa_mc2(const Json& doc, const std::vector<Json>& results);
// The choices TruthfulQA MC2 counts as true: the indices labelled 1 in mc2_targets.labels.
std::vector<size_t> truthfulqa_mc2_true_answers(const Json& doc);
// numpy's np.sum over a contiguous float64 vector (pairwise summation).
double numpy_sum(const std::vector<double>& a);
// truthfulqa utils.process_docs_gen for one row.
Json truthfulqa_gen_process_doc(const Json& doc);

// truthfulqa_gen metrics: sacrebleu corpus_bleu([hyp], [[ref]], tokenize="intl", smooth "exp")
// .score; rouge-score RougeScorer(["rouge1","rouge2","rougeLsum"]) F-measures x100 after the
// reference's " . " -> ".\n"; and utils.process_results_gen over a doc's true/false answers.
double sacrebleu_sentence_bleu(std::string_view hypothesis, std::string_view reference);
Json rouge_scores(const std::string& target, const std::string& prediction);
Json truthfulqa_gen_process_results(const Json& doc, const std::string& completion);

// wikitext preprocess_wikitext.wikitext_detokenizer and the word count of process_results
// (len(re.split(r"\s+", page))).
std::string wikitext_detokenizer(std::string_view page);
size_t wikitext_word_count(std::string_view page);

}  // namespace lmeval::tasks
