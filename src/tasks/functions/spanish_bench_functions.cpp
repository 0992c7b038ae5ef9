// Port of the reference's spanish_bench helper (lm_eval/tasks/spanish_bench/utils.py), registered
// by the module file's sha256 (scripts/gen_function_sources.py). rouge1 / rouge1_agg (xlsum_es,
// cocoteros_es) are in iberian_rouge_functions.cpp.
#include <string>
#include <vector>

#include "lmeval/tasks/function_registry.hpp"
#include "tasks/functions/doc_util.hpp"
#include "tasks/functions/iberian_bench_docs.hpp"

namespace lmeval {

void register_task_functions_spanish_bench(FunctionRegistry& r) {
  namespace ib = tasks::iberian;
  const std::string fam = "spanish_bench";
  r.add(fam, "utils.process_doc_nli",
        ib::map_each([](Json& d) { ib::nli_pair(d, "premise", "hypothesis"); }));
  // process_xlsum: runs of spaces collapsed in the text and the summary.
  r.add(fam, "utils.process_xlsum", ib::map_each(ib::collapse_text_and_summary));
  r.add(fam, "utils.process_docs_paraphrases", ib::paraphrases("sentence1", "sentence2"));
  r.add(fam, "utils.process_docs_copa_es", ib::map_each([](Json& d) {
          ib::lower_first_letters(d, {"choice1", "choice2"});
        }));
}

}  // namespace lmeval
