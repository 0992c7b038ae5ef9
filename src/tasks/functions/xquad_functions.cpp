// Port of the reference's xquad helper (lm_eval/tasks/xquad/utils.py), registered by the module
// file's sha256 (scripts/gen_function_sources.py): process_results_qa scores the generation
// against the first reference answer with transformers' squad_metrics.
#include "lmeval/tasks/function_registry.hpp"
#include "tasks/functions/squad_answer_scores.hpp"

namespace lmeval {

void register_task_functions_xquad(FunctionRegistry& r) {
  r.add("xquad", "utils.process_results_qa",
        tasks::squad::answers_text_process_results("xquad process_results_qa"));
}

}  // namespace lmeval
