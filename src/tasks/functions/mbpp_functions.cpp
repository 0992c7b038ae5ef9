// C++ ports of the reference's mbpp/utils.py (mbpp, mbpp_instruct, mbpp_plus,
// mbpp_plus_instruct): pass_at_1 (evaluate's code_eval over the doc's asserts), the
// `extract_code` filter's build_predictions (the first fenced code block) and the three few-shot
// samples. The reference loads code_eval from the Hub when the module is imported (so offline it
// cannot import it at all); here the programs run through tasks/functions/code_eval.cpp.
#include <string>
#include <vector>

#include "lmeval/core/error.hpp"
#include "lmeval/core/regex.hpp"
#include "lmeval/filters/filter.hpp"
#include "lmeval/tasks/function_registry.hpp"
#include "lmeval/tasks/functions/code_eval.hpp"

namespace lmeval {

namespace {

// extract_code_blocks: the first ```lang\n...\n``` block of "```" + text (the gen_prefix opens
// the first block), else of text with "```python" made "```", else "".
std::string extract_code_blocks(const std::string& text) {
  static const auto block = PyRegex::compile("```(?:\\w+)?\\n?(.*?)\\n?```", PyRegex::DOTALL);
  Json matches = block->findall("```" + text);
  if (matches.empty()) {
    static const auto python_fence = PyRegex::compile("```python");
    matches = block->findall(python_fence->sub("```", text));
  }
  return matches.empty() ? std::string() : matches[0].get<std::string>();
}

// build_predictions: [[extract_code_blocks(r) for r in resp] for resp in resps] (docs unused).
std::vector<Json> build_predictions(const std::vector<Json>& resps) {
  std::vector<Json> out;
  for (const Json& resp : resps) {
    if (!resp.is_array())
      throw UserError("mbpp build_predictions: responses of a document are not a list");
    Json codes = Json::array();
    for (const Json& r : resp) {
      if (!r.is_string()) throw UserError("mbpp build_predictions: a response is not a string");
      codes.push_back(extract_code_blocks(r.get<std::string>()));
    }
    out.push_back(std::move(codes));
  }
  return out;
}

// pass_at_1(references=[gold], predictions=[result]): a string result is one candidate, a list
// (the extract_code filter's) the doc's candidates; code_eval's pass@1.
Json pass_at_1(const Json& gold, const Json& result, const Json& /*kwargs*/, bool multiple_target) {
  if (multiple_target)
    throw UserError("mbpp utils.pass_at_1: a task with multiple targets is not supported", {},
                    "one test program per document");
  if (!gold.is_string())
    throw UserError("mbpp utils.pass_at_1: the target (the tests) is not a string");
  std::vector<std::string> candidates;
  auto add = [&](const Json& c) {
    if (!c.is_string()) throw UserError("mbpp utils.pass_at_1: a prediction is not a string");
    candidates.push_back(c.get<std::string>());
  };
  if (result.is_array()) {
    for (const Json& c : result) add(c);
  } else {
    add(result);
  }
  return code_eval::compute(candidates, gold.get<std::string>(), {1})["pass@1"];
}

// list_fewshot_samples: MBPP's prompt-split rows 2, 3 and 4 with is_fewshot set, as the
// reference lists them.
constexpr const char* kFewshotSamples = R"JSON([
{"task_id": 2, "text": "Write a function to find the similar elements from the given two tuple lists.", "code": "def similar_elements(test_tup1, test_tup2):\r\n  res = tuple(set(test_tup1) & set(test_tup2))\r\n  return (res) ", "test_list": ["assert similar_elements((3, 4, 5, 6),(5, 7, 4, 10)) == (4, 5)", "assert similar_elements((1, 2, 3, 4),(5, 4, 3, 7)) == (3, 4)", "assert similar_elements((11, 12, 14, 13),(17, 15, 14, 13)) == (13, 14)"], "is_fewshot": true},
{"task_id": 3, "text": "Write a python function to identify non-prime numbers.", "code": "import math\r\ndef is_not_prime(n):\r\n    result = False\r\n    for i in range(2,int(math.sqrt(n)) + 1):\r\n        if n % i == 0:\r\n            result = True\r\n    return result", "test_list": ["assert is_not_prime(2) == False", "assert is_not_prime(10) == True", "assert is_not_prime(35) == True"], "is_fewshot": true},
{"task_id": 4, "text": "Write a function to find the largest integers from a given list of numbers using heap queue algorithm.", "code": "import heapq as hq\r\ndef heap_queue_largest(nums,n):\r\n  largest_nums = hq.nlargest(n, nums)\r\n  return largest_nums", "test_list": ["assert heap_queue_largest( [25, 35, 22, 85, 14, 65, 75, 22, 58],3)==[85, 75, 65] ", "assert heap_queue_largest( [25, 35, 22, 85, 14, 65, 75, 22, 58],2)==[85, 75] ", "assert heap_queue_largest( [25, 35, 22, 85, 14, 65, 75, 22, 58],5)==[85, 75, 65, 58, 35]"], "is_fewshot": true}
])JSON";

}  // namespace

void register_task_functions_mbpp(FunctionRegistry& r) {
  {
    TaskFunction fn;
    fn.metric = pass_at_1;
    fn.name = "pass_at_1";
    r.add("mbpp", "utils.pass_at_1", std::move(fn));
  }
  {
    TaskFunction fn;
    fn.doc_fn = [](const Json&) -> Json { return Json::parse(kFewshotSamples); };
    r.add("mbpp", "utils.list_fewshot_samples", std::move(fn));
  }
  FilterRegistry::instance().add_function(
      "mbpp/utils.build_predictions",
      [](const std::vector<Json>& resps, const std::vector<const Json*>&) {
        return build_predictions(resps);
      });
}

}  // namespace lmeval
