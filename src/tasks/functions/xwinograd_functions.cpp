// Port of the reference's xwinograd helper (lm_eval/tasks/xwinograd/utils.py), registered by the
// module file's sha256 (scripts/gen_function_sources.py): "multiple input" scoring, the
// sentence up to "_" with each option as the contexts and the rest as the continuation.
#include <string>

#include "lmeval/core/unicode.hpp"
#include "lmeval/tasks/function_registry.hpp"
#include "tasks/functions/doc_util.hpp"

namespace lmeval {

namespace {

size_t blank_of(const std::string& sentence) {
  size_t idx = sentence.find('_');
  if (idx == std::string::npos)
    throw UserError("xwinograd: sentence has no '_' (str.index: substring not found)");
  return idx;  // a byte offset: "_" is ASCII, so the slices are the reference's code-point ones
}

Json xwinograd_doc_to_text(const Json& doc) {
  const std::string& a = tasks::str_field(doc, "answer");
  if (a == "1") return 0;
  if (a == "2") return 1;
  throw UserError("xwinograd doc_to_text: answer must be \"1\" or \"2\", got \"" + a + "\"");
}

Json xwinograd_doc_to_target(const Json& doc) {
  const std::string& s = tasks::str_field(doc, "sentence");
  return std::string(unicode::py_strip(std::string_view(s).substr(blank_of(s) + 1)));
}

Json xwinograd_doc_to_choice(const Json& doc) {
  const std::string& s = tasks::str_field(doc, "sentence");
  std::string head = s.substr(0, blank_of(s));
  return Json::array(
      {head + tasks::str_field(doc, "option1"), head + tasks::str_field(doc, "option2")});
}

TaskFunction xw_doc_fn(Json (*f)(const Json&)) {
  TaskFunction fn;
  fn.doc_fn = f;
  return fn;
}

}  // namespace

void register_task_functions_xwinograd(FunctionRegistry& r) {
  r.add("xwinograd", "utils.doc_to_text", xw_doc_fn(xwinograd_doc_to_text));
  r.add("xwinograd", "utils.doc_to_target", xw_doc_fn(xwinograd_doc_to_target));
  r.add("xwinograd", "utils.doc_to_choice", xw_doc_fn(xwinograd_doc_to_choice));
}

}  // namespace lmeval
