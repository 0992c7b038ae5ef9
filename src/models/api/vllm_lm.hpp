// VllmLM: the reference's VLLM backend over vLLM's own OpenAI-compatible server(s), which lm-eval
// starts for the run: token-id prompts, prompt_logprobs for loglikelihood, every request in
// flight at once, data_parallel_size servers with requests spread over them in turn.
#pragma once

#include <memory>
#include <vector>

#include "models/api/engine_lm.hpp"
#include "models/api/managed_server.hpp"
#include "models/api/vllm_args.hpp"

namespace lmeval::api {

class VllmLM : public EngineLM {
 public:
  // Starts the servers (`python` runs `-m vllm.entrypoints.openai.api_server`) and waits for them.
  VllmLM(VllmArgs args, std::unique_ptr<Tokenizer> tokenizer, const std::string& python);

  std::vector<double> loglikelihood_rolling(const std::vector<std::string>& texts) override;
  std::vector<std::string> generate_until(const std::vector<GenerationRequest>& requests) override;

  // VLLM.tok_encode: special tokens as add_bos_token says (else the tokenizer's default, on),
  // none for a text that already starts with the prefix token's text.
  TokenIds tok_encode(const std::string& text,
                      std::optional<bool> add_special_tokens) const override;

 private:
  ScoringRoute scoring_route() const override;
  std::string served_model() const;

  VllmArgs args_;
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
