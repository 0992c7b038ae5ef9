// Per-document SQuAD scores in the two shapes the reference's squad_metrics-based helpers return
// (xquad, norquad, coqa, catalan/spanish/galician bench): one reference answer, or CoQA's
// leave-one-out maximum over several.
#pragma once

#include <string>
#include <vector>

#include "lmeval/core/json.hpp"
#include "lmeval/tasks/function_registry.hpp"

namespace lmeval::tasks::squad {

// {"f1": compute_f1(reference, pred), "exact_match": compute_exact(reference, pred)}: the
// process_results_qa of xquad/utils.py (and its copies), Python's int/float types kept.
Json f1_exact_match(const std::string& reference, const std::string& pred);

// coqa/utils.py compute_scores: with several golds, each gold left out in turn and the maximum
// EM/F1 of the prediction against the others summed; with one, that gold's scores; both divided
// by the number of golds. {"em": float, "f1": float}.
Json leave_one_out_scores(const std::vector<std::string>& golds, const std::string& pred);

// results[0].strip().split("\n")[0]: the first line of a generation (coqa, coqcat).
std::string first_line(const std::string& generation);

// results[0] of a generate_until document, which must be a string.
const std::string& generation(const std::vector<Json>& results, const char* who);

// process_results(doc, results) -> f1_exact_match(doc["answers"]["text"][0], results[0]): xquad's
// process_results_qa and norquad's process_results (the same body). `who` names it in errors.
TaskFunction answers_text_process_results(const char* who);

}  // namespace lmeval::tasks::squad
