// The document preprocessing that the reference's catalan_bench, spanish_bench and galician_bench
// helper modules (lm_eval/tasks/{catalan,spanish,galician}_bench/utils.py) each define in their own
// copy, with their field names: NLI and paraphrase pairs detokenised and punctuated, COPA choices
// lower-cased, summaries with runs of spaces collapsed.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "lmeval/core/json.hpp"
#include "lmeval/tasks/function_registry.hpp"

namespace lmeval::tasks::iberian {

// process_doc_nli's process_fn: both sentences through general_detokenize and strip; the first
// loses a final . , ! or ?; the second gets its first letter lower-cased and a final "." if it
// has none.
void nli_pair(Json& doc, const char* first, const char* second);

// process_docs_paraphrases: Dataset.filter keeping rows whose two sentences are neither None nor
// "", then each: both detokenised and stripped, a final . , or ; dropped from the first, the
// second's first letter lower-cased.
std::vector<Json> paraphrase_docs(std::vector<Json> docs, const char* first, const char* second);

// process_docs_paraphrases as a task function over the two named columns.
TaskFunction paraphrases(const char* first, const char* second);

// process_xlsum / process_summarization: runs of spaces collapsed in "text" and "summary".
void collapse_text_and_summary(Json& doc);

// lowercase_first_letter on each named field (process_docs_copa_ca / _es).
void lower_first_letters(Json& doc, const std::vector<const char*>& fields);

// re.sub(r" +", " ", s).
std::string collapse_spaces(std::string_view s);

// A process_docs applying `f` to each row (Dataset.map: columns keep their order).
TaskFunction map_each(std::function<void(Json&)> f);

}  // namespace lmeval::tasks::iberian
