// Few-shot samplers, context assembly and requests per output type (spec §5).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lmeval/core/py_random.hpp"
#include "lmeval/prompt/instance.hpp"
#include "lmeval/tasks/task.hpp"

namespace lmeval {

struct Message {
  std::string role;  // system | user | assistant
  std::string content;
  std::string delimiter;  // plain-text rendering is content + delimiter
};

// Renders chat messages with the model's template (supplied by the evaluator, so the prompt
// module never sees models): (messages as {role, content}, add_generation_prompt) -> text.
using ChatRenderer = std::function<std::string(const std::vector<Message>&, bool)>;

struct PromptOptions {
  std::optional<std::string> system_instruction;
  bool apply_chat_template = false;
  bool fewshot_as_multiturn = false;
  ChatRenderer chat;
};

// The reference's ContextSampler (`default`) and FirstNSampler (`first_n`).
class FewshotSampler {
 public:
  FewshotSampler(const Task& task, int64_t seed);
  // n shots for `eval_doc` (nullptr: no self-exclusion). Throws UserError when the pool is
  // absent or too small.
  std::vector<const Doc*> sample(size_t n, const Doc* eval_doc);

 private:
  const Task& task_;
  std::string kind_;
  std::vector<const Doc*> pool_;
  PyRandom rng_;
};

// Context(s) for a document: one string, or one per choice for multiple-input tasks.
std::vector<std::string> fewshot_context(const Task& task, const Doc& doc, int num_fewshot,
                                         FewshotSampler& sampler, const PromptOptions& opts);

// All instances of a task for the selected documents (positions into eval_docs, reported ids).
std::vector<Instance> build_requests(const Task& task, size_t task_index,
                                     const std::vector<size_t>& doc_positions,
                                     const std::vector<int64_t>& doc_ids, FewshotSampler& sampler,
                                     const PromptOptions& opts, bool mutual_info);

// Python str.isspace() of the last / first character.
bool ends_with_space(const std::string& s);
bool starts_with_space(const std::string& s);
// maybe_delimit / requires_delimiter of lm_eval/api/utils.py.
std::string maybe_delimit(const std::string& prefix, const std::string& suffix,
                          const std::string& delim);
bool requires_delimiter(const std::string& prefix, const std::string& suffix);

}  // namespace lmeval
