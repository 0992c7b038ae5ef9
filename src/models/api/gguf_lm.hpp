// GgufLM: the reference's GGUFLM (`gguf`, `ggml`): a llama.cpp / llama-cpp-python server's
// /v1/completions with text prompts, loglikelihood through an echoed prompt's logprobs
// (lm_eval/models/gguf.py). No tokenizer: the server's own tokenizes.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lmeval/core/json.hpp"
#include "lmeval/models/api/http_client.hpp"
#include "lmeval/models/lm.hpp"
#include "lmeval/models/model_arg_info.hpp"

namespace lmeval::api {

struct GgufArgs {
  std::string base_url;  // requests go to base_url + "/v1/completions"
  int64_t max_length = 2048;
  // lm-eval's own: requests in flight (the reference sends one at a time), seconds per request.
  int64_t num_concurrent = 1;
  double timeout_s = 300;
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

class GgufLM : public LM {
 public:
  explicit GgufLM(GgufArgs args);
  std::vector<LoglikelihoodResult> loglikelihood(
      const std::vector<LoglikelihoodRequest>& requests) override;
  std::vector<double> loglikelihood_rolling(const std::vector<std::string>& texts) override;
  std::vector<std::string> generate_until(const std::vector<GenerationRequest>& requests) override;

 private:
  // Posts every body; `accept` reads each answer (MalformedResponse retries it).
  void send(const std::vector<std::string>& bodies, const char* phase,
            const std::function<void(size_t, const Json&)>& accept);
  GgufArgs args_;
  std::unique_ptr<HttpClient> client_;
};

}  // namespace lmeval::api
