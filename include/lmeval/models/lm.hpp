// The language-model interface: plain requests in, numbers and strings out. Models never see tasks.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lmeval/core/json.hpp"
#include "lmeval/models/model_arg_info.hpp"

namespace lmeval {

struct LoglikelihoodRequest {
  std::string context;
  std::string continuation;
};

struct LoglikelihoodResult {
  double loglikelihood = 0.0;
  bool is_greedy = false;
};

struct GenerationRequest {
  std::string context;
  Json gen_kwargs;  // until, max_gen_toks, temperature, do_sample, top_p, ... as the task gave them
};

// A chat message for chat templates.
struct ChatMessage {
  std::string role;
  std::string content;
};

// Results-file facts about a model's tokenizer (spec §6.2 add_tokenizer_info).
struct TokenizerInfo {
  std::optional<std::string> pad_token, eos_token, bos_token;
  std::optional<int64_t> pad_token_id, eos_token_id, bos_token_id;
  std::optional<int64_t> eot_token_id;
  int64_t max_length = 2048;
};

// Called by backends as work completes: done and total counted in requests; tokens processed so
// far in this call, or -1 when the backend does not count them.
using ProgressFn = std::function<void(size_t done, size_t total, int64_t tokens)>;

// Where a backend hands each answer once it is final (index into the call's request list), on the
// thread that made the call. CachingLM stores them as they come, so a stop or a failed request
// keeps every answer received before it, not only those of calls that returned. Backends need not
// use it: answers they do not hand out are stored when the call returns.
struct AnswerSink {
  std::function<void(size_t, const LoglikelihoodResult&)> loglikelihood;
  std::function<void(size_t, double)> loglikelihood_rolling;
  std::function<void(size_t, const std::string&)> generate_until;
};

class LM {
 public:
  virtual ~LM() = default;

  // Results are in request order.
  virtual std::vector<LoglikelihoodResult> loglikelihood(
      const std::vector<LoglikelihoodRequest>& requests) = 0;
  virtual std::vector<double> loglikelihood_rolling(const std::vector<std::string>& texts) = 0;
  virtual std::vector<std::string> generate_until(
      const std::vector<GenerationRequest>& requests) = 0;

  // Extra keys for the results' `config` (e.g. model_num_parameters, model_dtype).
  virtual Json model_info() const { return Json::object(); }
  virtual std::optional<TokenizerInfo> tokenizer_info() const { return std::nullopt; }
  // Batch sizes chosen by auto detection, recorded as config.batch_sizes.
  virtual std::vector<int> batch_sizes() const { return {}; }
  // Throughput facts for the results file: per phase (loglikelihood, loglikelihood_rolling,
  // generate_until) requests, tokens, seconds and tokens/s. Empty when the backend keeps none.
  virtual Json performance_stats() const { return Json::object(); }

  // Tokens of `text` with the model's tokenizer (no special tokens); nullopt without one.
  // Used to balance --shard parts.
  virtual std::optional<size_t> token_count(const std::string& text) const { return std::nullopt; }

  // Chat templates: the text of the template (name may select a named one), and rendering.
  virtual std::optional<std::string> chat_template(const std::string& name) const {
    return std::nullopt;
  }
  // The file (and field) the chat template came from, named in its errors; empty when unknown.
  virtual std::string chat_template_source() const { return {}; }
  // Renders with chat_template("") in transformers' environment (spec Appendix B.2):
  // add_generation_prompt, continue_final_message = !add_generation_prompt, one retry without
  // system messages when the template raises. Backends supply the special-token variables.
  virtual std::string apply_chat_template(const std::vector<ChatMessage>& messages,
                                          bool add_generation_prompt) const;
  // bos_token, eos_token, ... as strings, plus chat_template_args (enable_thinking, ...).
  virtual Json chat_template_variables() const { return Json::object(); }

  // Several adapters over one base in one command (hf's peft=a,b): true when this model can run
  // each of `adapters` in turn without being built again, after checking that every one fits it
  // (a UserError naming the file and the module, before any of them runs); false (the default):
  // the caller builds a model per adapter. The model runs adapters[0] until use_adapter says.
  virtual bool prepare_adapters(const std::vector<std::string>& adapters) {
    (void)adapters;
    return false;
  }
  // Makes adapters[i] of prepare_adapters the one the model runs with: its answers are then those
  // of a model built with that adapter alone.
  virtual void use_adapter(size_t i) { (void)i; }

  void set_progress(ProgressFn fn) { progress_ = std::move(fn); }
  void set_answer_sink(AnswerSink sink) { sink_ = std::move(sink); }

 protected:
  void answered(size_t i, const LoglikelihoodResult& r) const {
    if (sink_.loglikelihood) sink_.loglikelihood(i, r);
  }
  void answered_rolling(size_t i, double v) const {
    if (sink_.loglikelihood_rolling) sink_.loglikelihood_rolling(i, v);
  }
  void answered(size_t i, const std::string& text) const {
    if (sink_.generate_until) sink_.generate_until(i, text);
  }

  ProgressFn progress_;
  AnswerSink sink_;
};

// Options the CLI passes to every model besides model_args (spec §2.2).
struct ModelOptions {
  std::optional<std::string> batch_size;  // "8", "auto", "auto:4"
  std::optional<int> max_batch_size;
  std::optional<std::string> device;
  std::optional<int64_t> seed;  // torch seed (3rd --seed value)
};

using ModelFactory =
    std::function<std::unique_ptr<LM>(const Json& model_args, const ModelOptions&)>;
// Reads model_args as the factory will, starting and loading nothing: UserError (exit 2) for a
// bad value. The run calls it before any task or dataset is loaded.
using ModelArgCheck = std::function<void(const Json& model_args, const ModelOptions&)>;

struct ModelInfoEntry {
  std::string name;
  std::string description;
  // How lm-eval runs it, for `ls models`: in-process, as a client of a server the user starts, or
  // by starting the engine's own server.
  std::string status = "runs natively";
  // The backend's model_args table as described to users (docs/models.md, `ls models`).
  std::vector<ModelArgInfo> args;
  // Their keys (validate checks these); filled from `args` by ModelRegistry::add.
  std::vector<std::string> known_args;
  // Keys outside `args` pass through to the engine (vllm), so validate does not refuse them.
  bool passes_other_args = false;
  ModelFactory factory;
  ModelArgCheck check;  // optional: backends whose factory starts servers or loads files first
};

// The model registry, filled at start-up by register_builtin_models().
class ModelRegistry {
 public:
  static ModelRegistry& instance();
  void add(ModelInfoEntry entry, const std::vector<std::string>& aliases = {});
  const ModelInfoEntry* find(const std::string& name) const;
  std::vector<std::string> names() const;  // sorted, aliases included

 private:
  std::map<std::string, std::shared_ptr<ModelInfoEntry>> entries_;
};

// Registers the models of this module (dummy). The evaluator adds hf when built with torch.
void register_core_models(ModelRegistry& registry);

}  // namespace lmeval
