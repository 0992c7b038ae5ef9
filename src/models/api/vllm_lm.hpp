// VllmLM: the reference's VLLM backend over vLLM's own OpenAI-compatible server(s), which lm-eval
// starts for the run: token-id prompts, prompt_logprobs for loglikelihood, every request in
// flight at once, data_parallel_size servers with requests spread over them in turn.
#pragma once

#include <memory>
#include <vector>

#include "lmeval/models/api/http_client.hpp"
#include "lmeval/models/lm.hpp"
#include "lmeval/tokenizer/tokenizer.hpp"
#include "models/api/managed_server.hpp"
#include "models/api/vllm_args.hpp"

namespace lmeval::api {

using TokenIds = std::vector<TokenId>;

class VllmLM : public LM {
 public:
  // Starts the servers (`python` runs `-m vllm.entrypoints.openai.api_server`) and waits for them.
  VllmLM(VllmArgs args, std::unique_ptr<Tokenizer> tokenizer, const std::string& python);

  std::vector<LoglikelihoodResult> loglikelihood(
      const std::vector<LoglikelihoodRequest>& requests) override;
  std::vector<double> loglikelihood_rolling(const std::vector<std::string>& texts) override;
  std::vector<std::string> generate_until(const std::vector<GenerationRequest>& requests) override;
  std::optional<TokenizerInfo> tokenizer_info() const override;
  std::optional<std::string> chat_template(const std::string& name) const override;
  Json chat_template_variables() const override;
  std::optional<size_t> token_count(const std::string& text) const override {
    return tokenizer_->encode(text, false).size();
  }

  // VLLM.tok_encode: special tokens as add_bos_token says (else the tokenizer's default, on),
  // none for a text that already starts with the prefix token's text.
  TokenIds tok_encode(const std::string& text, std::optional<bool> add_special_tokens = {}) const;
  int64_t max_length() const { return max_length_; }

 private:
  struct Pending {
    size_t index;      // into the caller's list
    std::string body;  // JSON
  };
  // Posts every body, spread over the servers in turn (more_itertools.distribute), and hands
  // each answer to `accept` with its index. Throws RuntimeError naming the first failure.
  void send(const std::vector<Pending>& work, const char* phase,
            const std::function<void(size_t, const Json&)>& accept);
  std::vector<LoglikelihoodResult> loglikelihood_tokens(
      const std::vector<std::pair<TokenIds, TokenIds>>& requests,
      const std::function<void(size_t, const LoglikelihoodResult&)>& on_answer);
  std::string served_model() const;

  VllmArgs args_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::vector<std::unique_ptr<ManagedServer>> servers_;
  std::vector<std::unique_ptr<HttpClient>> clients_;
  int64_t max_length_ = 2048;
  TokenId prefix_token_id_ = 0;
};

// VLLM._parse_logprobs over one /v1/completions answer with prompt_logprobs: the sum of the
// logprobs of tokens[ctxlen:], greedy when each is the best of its position's entries. Throws
// MalformedResponse when the answer lacks them.
LoglikelihoodResult parse_prompt_logprobs(const Json& answer, const TokenIds& tokens,
                                          int64_t ctxlen);

// The server command for replica `replica` of args (python -m vllm.entrypoints.openai.api_server).
ServerCommand vllm_server_command(const VllmArgs& args, const std::string& python, int port,
                                  int64_t replica);

}  // namespace lmeval::api
