// Port of the reference's glue helper (lm_eval/tasks/glue/mnli/utils.py), registered by the
// module file's sha256 (scripts/gen_function_sources.py).
#include <string>

#include "lmeval/core/unicode.hpp"
#include "lmeval/tasks/function_registry.hpp"
#include "tasks/functions/doc_util.hpp"

namespace lmeval {

namespace {

// mnli utils.doc_to_text: the stripped hypothesis gets a final "." unless it has one.
Json mnli_doc_to_text(const Json& doc) {
  std::string hyp(unicode::py_strip(tasks::str_field(doc, "hypothesis")));
  if (hyp.empty() || hyp.back() != '.') hyp += ".";
  return tasks::str_field(doc, "premise") + "\nQuestion: " + hyp +
         " True, False or Neither?\nAnswer:";
}

}  // namespace

void register_task_functions_glue(FunctionRegistry& r) {
  TaskFunction fn;
  fn.doc_fn = mnli_doc_to_text;
  r.add("glue_mnli", "utils.doc_to_text", std::move(fn));
}

}  // namespace lmeval
