// C++ ports of the reference's humaneval/utils.py (humaneval, humaneval_64, humaneval_instruct,
// humaneval_64_instruct, humaneval_plus): the `create_test` filters that prefix each response
// with the prompt, and pass_at_k, evaluate's code_eval over the doc's test. The reference loads
// code_eval from the Hub when the module is imported (so offline it cannot import it at all);
// here the programs run through tasks/functions/code_eval.cpp.
#include <string>
#include <vector>

#include "lmeval/core/error.hpp"
#include "lmeval/filters/filter.hpp"
#include "lmeval/tasks/function_registry.hpp"
#include "lmeval/tasks/functions/code_eval.hpp"
#include "tasks/functions/doc_util.hpp"

namespace lmeval {

namespace {

// The responses of one instance: the list the custom filter hands filter_fn.
const Json& response_list(const Json& resp, const char* fn) {
  if (!resp.is_array())
    throw UserError(std::string("humaneval ") + fn + ": responses of a document are not a list");
  return resp;
}

const std::string& text(const Json& v, const char* fn) {
  if (!v.is_string())
    throw UserError(std::string("humaneval ") + fn + ": a response is not a string");
  return v.get_ref<const std::string&>();
}

// build_predictions / build_predictions_instruct: [[doc["prompt"] + cut(r) for r in resp] ...];
// zip stops at the shorter of the two lists.
std::vector<Json> with_prompt(const std::vector<Json>& resps, const std::vector<const Json*>& docs,
                              bool instruct) {
  const char* fn = instruct ? "build_predictions_instruct" : "build_predictions";
  std::vector<Json> out;
  for (size_t i = 0; i < resps.size() && i < docs.size(); ++i) {
    const std::string& prompt = tasks::str_field(*docs[i], "prompt");
    Json programs = Json::array();
    for (const Json& r : response_list(resps[i], fn)) {
      const std::string& s = text(r, fn);
      // instruct: the response up to its first ``` (str.find, so the whole of it without one)
      programs.push_back(prompt + (instruct ? s.substr(0, s.find("```")) : s));
    }
    out.push_back(std::move(programs));
  }
  return out;
}

// pass_at_k(references=[gold], predictions=[result], k=...) as ConfigurableTask.process_results
// calls it: code_eval's {"pass@k": ...} over the doc's candidates, which the process_results
// loop spreads into one metric per key.
Json pass_at_k(const Json& gold, const Json& result, const Json& kwargs, bool multiple_target) {
  if (multiple_target)
    throw UserError("humaneval utils.pass_at_k: a task with multiple targets is not supported", {},
                    "one test program per document (the reference fails on a list too)");
  const Json* k = kwargs.contains("k") ? &kwargs["k"] : nullptr;
  if (!k || k->is_null())
    throw UserError("humaneval utils.pass_at_k needs `k` (the reference asserts it)",
                    {"", 0, 0, "metric_list.k"}, "k: an integer or a list of integers");
  std::vector<std::int64_t> ks;
  for (const Json& v : k->is_array() ? *k : Json::array({*k})) {
    if (!v.is_number_integer())
      throw UserError("humaneval utils.pass_at_k: k must be integers, got " + v.dump(),
                      {"", 0, 0, "metric_list.k"}, "k: an integer or a list of integers");
    ks.push_back(v.get<std::int64_t>());
  }
  if (!gold.is_string())
    throw UserError("humaneval utils.pass_at_k: the target (test program) is not a string");
  // code_eval's features: predictions are lists of strings (a plain string is a ValueError).
  if (!result.is_array())
    throw UserError(
        "humaneval utils.pass_at_k: expected a list of candidate programs (the "
        "create_test filter's output), got " +
            std::string(result.type_name()),
        {}, "a filter_list whose filter_fn is utils.build_predictions");
  std::vector<std::string> candidates;
  for (const Json& c : result) candidates.push_back(text(c, "pass_at_k"));
  return code_eval::compute(candidates, gold.get<std::string>(), ks);
}

}  // namespace

void register_task_functions_humaneval(FunctionRegistry& r) {
  TaskFunction fn;
  fn.metric = pass_at_k;
  fn.name = "pass_at_k";
  r.add("humaneval", "utils.pass_at_k", std::move(fn));
  auto& filters = FilterRegistry::instance();
  filters.add_function("humaneval/utils.build_predictions",
                       [](const std::vector<Json>& resps, const std::vector<const Json*>& docs) {
                         return with_prompt(resps, docs, false);
                       });
  filters.add_function("humaneval/utils.build_predictions_instruct",
                       [](const std::vector<Json>& resps, const std::vector<const Json*>& docs) {
                         return with_prompt(resps, docs, true);
                       });
}

}  // namespace lmeval
