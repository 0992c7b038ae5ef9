// TextSynthLM: the reference's TextSynth backend (lm_eval/models/textsynth.py): the TextSynth
// API's /v1/engines/ENGINE/logprob and /completions with text prompts, the key of
// TEXTSYNTH_API_SECRET_KEY as a Bearer token.
#pragma once

#include <string>
#include <vector>

#include "lmeval/core/json.hpp"
#include "lmeval/models/lm.hpp"
#include "lmeval/models/model_arg_info.hpp"
#include "models/api/prompt_post_lm.hpp"

namespace lmeval::api {

struct TextSynthArgs : RequestLimits {
  std::string engine;
  std::string base_url = "https://api.textsynth.com";  // TextSynthLM.api_url
  std::string api_key;                                 // never printed
};

const std::vector<ModelArgInfo>& textsynth_arg_infos();

// Reads model_args as TextSynthLM.__init__ does (engine required; truncate accepted and unused;
// other keys ignored, `notes` logs that) and the key from TEXTSYNTH_API_SECRET_KEY. UserError (exit
// 2) naming what is missing or bad.
TextSynthArgs parse_textsynth_args(const Json& model_args, bool notes = true);

class TextSynthLM : public PromptPostLM {
 public:
  explicit TextSynthLM(TextSynthArgs args);
  std::vector<LoglikelihoodResult> loglikelihood(
      const std::vector<LoglikelihoodRequest>& requests) override;
  std::vector<double> loglikelihood_rolling(const std::vector<std::string>& texts) override;
  std::vector<std::string> generate_until(const std::vector<GenerationRequest>& requests) override;

 private:
  std::string url(const std::string& what) const;
  TextSynthArgs args_;
};

}  // namespace lmeval::api
