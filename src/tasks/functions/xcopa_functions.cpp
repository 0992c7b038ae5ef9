// Port of the reference's xcopa helper (lm_eval/tasks/xcopa/utils.py), registered by the module
// file's sha256 (scripts/gen_function_sources.py): doc_to_text_<lang> is doc_to_text with that
// language's cause/effect connectors (functools.partial in the reference).
#include <string>

#include "lmeval/core/unicode.hpp"
#include "lmeval/tasks/function_registry.hpp"
#include "tasks/functions/doc_util.hpp"
#include "tasks/functions/py_text.hpp"

namespace lmeval {

namespace {

struct Connectors {
  const char* lang;
  const char* cause;
  const char* effect;
};

// The reference's connector dicts, in its order.
constexpr Connectors kConnectors[] = {
    {"et", "sest", "seetõttu"},   {"ht", "poukisa", "donk sa"}, {"it", "perché", "quindi"},
    {"id", "karena", "maka"},     {"qu", "imataq", "chaymi"},   {"sw", "kwa sababu", "kwa hiyo"},
    {"zh", "因为", "所以"},       {"ta", "காரணமாக", "எனவே"},    {"th", "เพราะ", "ดังนั้น"},
    {"tr", "çünkü", "bu yüzden"}, {"vi", "bởi vì", "vì vậy"},
};

// utils.doc_to_text: the stripped premise without its last character, then the connector
// (connector[doc["question"]]: another question is a KeyError).
Json xcopa_doc_to_text(const Json& doc, const Connectors& c) {
  const std::string& q = tasks::str_field(doc, "question");
  const char* conn = q == "cause" ? c.cause : q == "effect" ? c.effect : nullptr;
  if (!conn)
    throw UserError("xcopa doc_to_text: question must be cause or effect, got '" + q + "'");
  return tasks::pytext::drop_last(unicode::py_strip(tasks::str_field(doc, "premise"))) + " " + conn;
}

// utils.doc_to_choice: each choice with its first character lower-cased, no leading space.
Json xcopa_doc_to_choice(const Json& doc) {
  return Json::array(
      {tasks::pytext::lower_first(tasks::str_field(doc, "choice1"), "xcopa convert_choice"),
       tasks::pytext::lower_first(tasks::str_field(doc, "choice2"), "xcopa convert_choice")});
}

}  // namespace

void register_task_functions_xcopa(FunctionRegistry& r) {
  for (const auto& c : kConnectors) {
    TaskFunction fn;
    fn.doc_fn = [&c](const Json& doc) { return xcopa_doc_to_text(doc, c); };
    r.add("xcopa", std::string("utils.doc_to_text_") + c.lang, std::move(fn));
  }
  TaskFunction fn;
  fn.doc_fn = xcopa_doc_to_choice;
  r.add("xcopa", "utils.doc_to_choice", std::move(fn));
}

}  // namespace lmeval
