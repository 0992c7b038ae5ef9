// WatsonxLM: the reference's WatsonxLLM (`watsonx_llm`, lm_eval/models/ibm_watsonx_ai.py) over
// the watsonx.ai REST API as the ibm-watsonx-ai SDK (1.8.1) calls it: a bearer token from IBM
// Cloud's IAM (a WATSONX_URL with cloud.ibm.com) or from watsonx.ai software's (Cloud Pak for
// Data) /icp4d-api/v1/authorize, then /ml/v1/text/generation, /ml/v1/text/tokenization and
// /ml/v1/text/chat. Credentials from the reference's WATSONX_* variables.
#pragma once

#include <string>
#include <vector>

#include "lmeval/core/json.hpp"
#include "lmeval/models/lm.hpp"
#include "lmeval/models/model_arg_info.hpp"
#include "models/api/prompt_post_lm.hpp"

namespace lmeval::api {

// The API version date the SDK sends with every watsonx.ai request (ibm-watsonx-ai 1.8.1).
inline constexpr const char* kWatsonxApiVersion = "2026-10-14";

struct WatsonxArgs : RequestLimits {
  std::string model_id;                   // one of model_id and deployment_id
  std::string deployment_id;              //
  Json generate_params = Json::object();  // WatsonxLLM.generate_params
  std::string url;                        // WATSONX_URL, no trailing slash
  std::string username;
  std::string api_key;   // never printed
  std::string password;  // never printed
  std::string project_id;
  std::string iam_url;  // IBM Cloud: the IAM token URL; empty: software (/icp4d-api)
};

const std::vector<ModelArgInfo>& watsonx_arg_infos();

// WatsonxLLM.create_from_arg_string's generate_params and get_watsonx_credentials' checks.
// UserError (exit 2) with the reference's messages, naming the key or variable.
WatsonxArgs parse_watsonx_args(const Json& model_args);

// WatsonxLLM._get_log_likelihood: the log-likelihood and greediness of the continuation from
// the generation's input_tokens and the context's tokens. Throws RuntimeError where the
// reference raises (tokens that do not line up; a token without rank; a null logprob).
LoglikelihoodResult watsonx_log_likelihood(const Json& input_tokens,
                                           const std::vector<std::string>& context_tokens);

class WatsonxLM : public PromptPostLM {
 public:
  explicit WatsonxLM(WatsonxArgs args);
  std::vector<LoglikelihoodResult> loglikelihood(
      const std::vector<LoglikelihoodRequest>& requests) override;
  std::vector<double> loglikelihood_rolling(const std::vector<std::string>& texts) override;
  std::vector<std::string> generate_until(const std::vector<GenerationRequest>& requests) override;
  std::optional<std::string> chat_template(const std::string& name) const override;
  std::string apply_chat_template(const std::vector<ChatMessage>& messages,
                                  bool add_generation_prompt) const override;

 private:
  std::string endpoint(const std::string& what) const;
  Json with_project(Json body) const;
  WatsonxArgs args_;
  mutable bool chat_contexts_ = false;  // apply_chat_template handed out message lists
};

}  // namespace lmeval::api
