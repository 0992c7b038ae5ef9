// ApiLM: the reference's TemplateAPI over OpenAI-compatible servers (local-completions,
// local-chat-completions, openai-completions, openai-chat-completions).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lmeval/models/api/http_client.hpp"
#include "lmeval/models/lm.hpp"
#include "lmeval/models/model_arg_table.hpp"
#include "lmeval/tokenizer/tokenizer.hpp"
#include "models/api/openai_payload.hpp"

namespace lmeval::api {

enum class ApiKind {
  kLocalCompletions,
  kLocalChat,
  kOpenAICompletions,
  kOpenAIChat,
  kAnthropicChat
};

const char* kind_name(ApiKind kind);

// model_args after coercion, with the reference's defaults for the kind.
struct ApiArgs {
  ApiKind kind = ApiKind::kLocalCompletions;
  Json model;  // `model` (or `pretrained`); null when neither is given
  std::string base_url;
  std::string tokenizer;          // tokenizer folder or Hub id; empty = model
  std::string tokenizer_backend;  // "huggingface", "tiktoken", "remote", or "" (none)
  int num_concurrent = 1;
  int max_retries = 3;  // attempts in all, as tenacity's stop_after_attempt
  int64_t max_gen_toks = 256;
  int batch_size = 1;
  int64_t seed = 1234;
  int64_t max_length = 2048;
  bool add_bos_token = false;
  std::optional<int64_t> custom_prefix_token_id;
  bool tokenized_requests = true;
  std::string revision = "main";
  bool verify_certificate = true;
  std::string ca_cert_path;
  std::optional<std::string> eos_string;
  double timeout_s = 300;
  std::optional<Json> header;  // replaces the Authorization header when given
  std::optional<std::string> think_end_token;
  std::string api_key;  // OPENAI_API_KEY (ANTHROPIC_API_KEY) or model_args api_key; never printed
  RetryPolicy retry;    // backoff (tests shorten it)
};

// The model_args every kind accepts (the reference's TemplateAPI arguments), and their keys.
const ModelArgTable<ApiArgs>& api_model_args();
const std::vector<std::string>& api_known_args();

// Parses model_args for `kind`; unknown keys and bad values are UserErrors naming the key.
// Reads OPENAI_API_KEY from the environment (openai-* kinds require a key).
// `notes`: log the reference's warnings (off for the early check, which precedes the real read).
ApiArgs parse_api_args(ApiKind kind, const Json& model_args, const ModelOptions& options,
                       bool notes = true);

using TokenIds = std::vector<TokenId>;
using TokenPair = std::pair<TokenIds, TokenIds>;

class ApiLM : public LM {
 public:
  // `tokenizer` overrides loading one from args (tests); null = load per args.
  explicit ApiLM(ApiArgs args, std::unique_ptr<Tokenizer> tokenizer = nullptr);

  std::vector<LoglikelihoodResult> loglikelihood(
      const std::vector<LoglikelihoodRequest>& requests) override;
  std::vector<double> loglikelihood_rolling(const std::vector<std::string>& texts) override;
  std::vector<std::string> generate_until(const std::vector<GenerationRequest>& requests) override;

  std::optional<TokenizerInfo> tokenizer_info() const override;
  std::optional<std::string> chat_template(const std::string& name) const override;
  std::string chat_template_source() const override {
    return tokenizer_ ? tokenizer_->chat_template_source() : std::string();
  }
  std::string apply_chat_template(const std::vector<ChatMessage>& messages,
                                  bool add_generation_prompt) const override;
  Json chat_template_variables() const override;
  Json performance_stats() const override;
  std::optional<size_t> token_count(const std::string& text) const override {
    if (!tokenizer_) return std::nullopt;
    return tokenizer_->encode(text, false).size();
  }

  // TemplateAPI.tok_encode (huggingface backend): special tokens only with add_bos_token.
  TokenIds tok_encode(const std::string& text, bool add_special_tokens = false) const;
  // TemplateLM.loglikelihood's encoding of one request.
  TokenPair encode_request(const LoglikelihoodRequest& request) const;
  // TemplateAPI._loglikelihood_tokens: Collator order, batches of batch_size, results in order.
  std::vector<LoglikelihoodResult> loglikelihood_tokens(const std::vector<TokenPair>& requests);

  const ApiArgs& args() const { return args_; }
  const Tokenizer* tokenizer() const { return tokenizer_.get(); }
  std::optional<std::string> eos_string() const;
  // The request bodies sent so far (tests read them to compare with the reference's payloads).
  void keep_payloads(bool keep) { keep_payloads_ = keep; }
  const std::vector<Json>& payloads() const { return payloads_; }

 private:
  struct Batch {
    std::vector<size_t> members;   // indices into the caller's request list
    std::string body;              // the request's JSON text
    std::vector<int64_t> ctxlens;  // loglikelihood only
    std::vector<int64_t> lens;     // loglikelihood only: tokens sent per prompt
    std::string what;              // names the request in errors
    size_t tag = 0;                // loglikelihood_rolling: the text the batch belongs to
  };
  // Sends every batch, concurrently up to num_concurrent, with retries; `accept` reads one answer
  // (throwing MalformedResponse to retry). Throws RuntimeError naming the first failed request.
  // `requests` and `tokens` (prompt tokens, 0 when sent as text) are what the phase counts.
  void send(std::vector<Batch>& batches, const char* phase, size_t requests, int64_t tokens,
            const std::function<void(const Batch&, const Json&)>& accept);
  Json prompt_of(const std::vector<TokenIds>& inputs) const;
  void set_body(Batch& b, const Json& payload);
  std::string scrub(std::string text) const;
  void check_loglikelihood_supported() const;

  ApiArgs args_;
  PayloadStyle style_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<HttpClient> client_;
  int64_t max_length_ = 2047;  // TemplateAPI: max_length - 1 (one token for generation)
  std::optional<TokenId> prefix_token_id_;
  mutable bool json_chat_contexts_ = false;  // apply_chat_template handed out message lists
  bool keep_payloads_ = false;
  std::vector<Json> payloads_;
  struct Phase {
    std::string name;
    size_t requests = 0, http_requests = 0, retries = 0;
    int64_t tokens = 0;
    double seconds = 0;
  };
  std::vector<Phase> phases_;
};

}  // namespace lmeval::api
