// GgufLM: the reference's GGUFLM (`gguf`, `ggml`): a llama.cpp / llama-cpp-python server's
// /v1/completions with text prompts, loglikelihood through an echoed prompt's logprobs
// (lm_eval/models/gguf.py). No tokenizer: the server's own tokenizes.
#pragma once

#include <string>
#include <vector>

#include "lmeval/core/json.hpp"
#include "lmeval/models/lm.hpp"
#include "lmeval/models/model_arg_info.hpp"
#include "models/api/prompt_post_lm.hpp"

namespace lmeval::api {

struct GgufArgs : RequestLimits {
  std::string base_url;  // requests go to base_url + "/v1/completions"
  int64_t max_length = 2048;
};

const std::vector<ModelArgInfo>& gguf_arg_infos();

// Reads model_args as GGUFLM.__init__ does (base_url required; other keys ignored, as its
// **kwargs ignores them). UserError (exit 2) naming the key for a bad value.
GgufArgs parse_gguf_args(const Json& model_args, bool notes = true);

// GGUFLM's request bodies: loglikelihood (context + continuation echoed, one token generated;
// no echo when the continuation is empty, as `if continuation:` leaves it) and generate_until
// (the context, `until` as stop).
Json gguf_loglikelihood_body(const std::string& context, const std::string& continuation);
Json gguf_generate_body(const std::string& context, const Json& gen_kwargs);

// gguf.get_result over choices[0].logprobs: the first token whose text_offset reaches the
// context's length (in code points) starts the continuation; the sum of token_logprobs from it
// up to the last (the generated token) left out; greedy when each token from it on, the
// generated one included, is its top_logprobs' best. Throws MalformedResponse when the answer
// lacks them, RuntimeError where the reference fails (no token past the context).
LoglikelihoodResult parse_gguf_logprobs(const Json& answer, const std::string& context);

class GgufLM : public PromptPostLM {
 public:
  explicit GgufLM(GgufArgs args);
  std::vector<LoglikelihoodResult> loglikelihood(
      const std::vector<LoglikelihoodRequest>& requests) override;
  std::vector<double> loglikelihood_rolling(const std::vector<std::string>& texts) override;
  std::vector<std::string> generate_until(const std::vector<GenerationRequest>& requests) override;

 private:
  GgufArgs args_;
};

}  // namespace lmeval::api
