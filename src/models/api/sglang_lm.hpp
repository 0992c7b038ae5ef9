// SglangLM: the reference's SGLangLM backend over SGLang's own server, which lm-eval starts for
// the run (python -m sglang.launch_server): its native /generate API takes what sglang.Engine's
// generate takes (input_ids, sampling_params, return_logprob, top_logprobs_num,
// logprob_start_len) and answers with the same dicts (text, meta_info.input_token_logprobs,
// meta_info.input_top_logprobs), so the reference's requests and its parsing carry over as they
// are. Data parallelism is SGLang's own (--dp-size): one server.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/api/engine_lm.hpp"
#include "models/api/managed_server.hpp"
#include "models/api/sglang_args.hpp"

namespace lmeval::api {

class SglangLM : public EngineLM {
 public:
  // Starts the server (`python -m sglang.launch_server ...`) and waits for it.
  SglangLM(SglangArgs args, std::unique_ptr<Tokenizer> tokenizer, const std::string& python);

  std::vector<double> loglikelihood_rolling(const std::vector<std::string>& texts) override;
  std::vector<std::string> generate_until(const std::vector<GenerationRequest>& requests) override;

  // SGLangLM.tok_encode: special tokens when asked, else as add_bos_token says (its
  // `if not add_special_tokens: add_special_tokens = self.add_bos_token`).
  TokenIds tok_encode(const std::string& text,
                      std::optional<bool> add_special_tokens) const override;

 private:
  ScoringRoute scoring_route() const override;

  SglangArgs args_;
};

// SGLangLM._parse_logprobs over one /generate answer: the sum of
// meta_info.input_token_logprobs[ctxlen:]'s logprobs, greedy unless a position's best
// input_top_logprobs entry is another token. Throws MalformedResponse when the answer lacks them.
LoglikelihoodResult parse_input_token_logprobs(const Json& answer, const TokenIds& tokens,
                                               int64_t ctxlen);

// The server command (python -m sglang.launch_server --model-path M --host 127.0.0.1 --port P
// <options>).
ServerCommand sglang_server_command(const SglangArgs& args, const std::string& python, int port);

}  // namespace lmeval::api
