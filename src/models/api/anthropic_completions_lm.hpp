// AnthropicCompletionsLM: the reference's AnthropicLM (`anthropic-completions`,
// lm_eval/models/anthropic_llms.py): Anthropic's legacy Text Completions API (POST
// /v1/complete) as the anthropic SDK 0.38.0's client.completions.create calls it, generation
// only. The SDK's client reads ANTHROPIC_API_KEY (else ANTHROPIC_AUTH_TOKEN) and
// ANTHROPIC_BASE_URL; so does this.
#pragma once

#include <string>
#include <vector>

#include "lmeval/core/json.hpp"
#include "lmeval/models/lm.hpp"
#include "lmeval/models/model_arg_info.hpp"
#include "models/api/prompt_post_lm.hpp"

namespace lmeval::api {

struct AnthropicCompletionsArgs : RequestLimits {
  std::string model = "claude-2.0";
  Json temperature = 0;  // as given (an int stays an int in the body, as in the reference)
  int64_t max_tokens_to_sample = 256;
  Json extra = Json::object();  // metadata, top_k, top_p: sent in every request
  std::string base_url = "https://api.anthropic.com";
  std::string api_key;     // x-api-key; never printed
  std::string auth_token;  // Authorization: Bearer, when there is no api_key; never printed
};

const std::vector<ModelArgInfo>& anthropic_completions_arg_infos();

// Reads model_args as AnthropicLM.__init__ takes them (its **kwargs go to
// client.completions.create, so only the keys create() takes are accepted) and the SDK
// client's environment. UserError (exit 2) naming the key or variable.
AnthropicCompletionsArgs parse_anthropic_completions_args(const Json& model_args);

class AnthropicCompletionsLM : public PromptPostLM {
 public:
  explicit AnthropicCompletionsLM(AnthropicCompletionsArgs args);
  std::vector<LoglikelihoodResult> loglikelihood(
      const std::vector<LoglikelihoodRequest>& requests) override;
  std::vector<double> loglikelihood_rolling(const std::vector<std::string>& texts) override;
  std::vector<std::string> generate_until(const std::vector<GenerationRequest>& requests) override;

 private:
  AnthropicCompletionsArgs args_;
};

}  // namespace lmeval::api
