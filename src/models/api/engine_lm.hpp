// EngineLM: what the backends over an engine's own server share (vLLM's and SGLang's, which
// lm-eval starts for the run): the servers and their clients, requests spread over the servers in
// turn, TemplateLM's encoding of (context, continuation) pairs, the scoring and rolling loops, and
// the tokenizer's facts. The engine backends differ only in their tokenisation, their requests'
// bodies and windows, and how their answers are read.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lmeval/models/api/http_client.hpp"
#include "lmeval/models/lm.hpp"
#include "lmeval/tokenizer/tokenizer.hpp"
#include "models/api/managed_server.hpp"

namespace lmeval::api {

using TokenIds = std::vector<TokenId>;
using EncodedPair = std::pair<TokenIds, TokenIds>;  // context ids, continuation ids

// Token ids as a JSON list (a token-id prompt).
Json token_list_json(const TokenIds& ids);

// lm_eval.models.utils.truncate_tokens: keep `n` tokens of `t` from `side` (left: the last n).
TokenIds truncate_tokens(const TokenIds& t, int64_t n, const std::string& side);

// lm_eval.models.utils.postprocess_generated_text: after the last think_end_token
// (left-stripped), then cut at every non-empty stop string in turn.
std::string postprocess_generated_text(std::string text, const std::vector<std::string>& until,
                                       const std::optional<std::string>& think_end_token);

class EngineLM : public LM {
 public:
  std::optional<TokenizerInfo> tokenizer_info() const override;
  std::optional<std::string> chat_template(const std::string& name) const override;
  Json chat_template_variables() const override;
  std::optional<size_t> token_count(const std::string& text) const override {
    return tokenizer_->encode(text, false).size();
  }
  int64_t max_length() const { return max_length_; }

  // TemplateLM.loglikelihood over the engine: encode_pairs with the backend's tok_encode, then
  // one scoring request per pair (score_tokens).
  std::vector<LoglikelihoodResult> loglikelihood(
      const std::vector<LoglikelihoodRequest>& requests) override;

  // The backend's tok_encode (VLLM.tok_encode, SGLangLM.tok_encode); `add_special_tokens` unset:
  // the backend's default.
  virtual TokenIds tok_encode(const std::string& text,
                              std::optional<bool> add_special_tokens) const = 0;

 protected:
  struct Pending {
    size_t index;      // into the caller's list
    std::string body;  // JSON
  };
  // How an engine scores a token sequence: the window it truncates to, where the request goes,
  // its body and how its answer is read.
  struct ScoringRoute {
    int64_t max_ctx_len = 0;       // (context + continuation)[-max_ctx_len:]
    bool warn_truncation = false;  // VLLM warns once when it truncates; SGLangLM does not
    std::string path;
    std::function<Json(const TokenIds& input)> body;
    // The answer for `input`, the context taking its first `ctxlen` tokens (negative: Python's
    // slice from the end).
    std::function<LoglikelihoodResult(const Json& answer, const TokenIds& input, int64_t ctxlen)>
        parse;
  };
  virtual ScoringRoute scoring_route() const = 0;

  // _loglikelihood_tokens of VLLM and SGLangLM: each pair's last max_ctx_len tokens and the
  // context's share of them, one request each; `on_answer` as each answer comes.
  std::vector<LoglikelihoodResult> score_tokens(
      const std::vector<EncodedPair>& requests,
      const std::function<void(size_t, const LoglikelihoodResult&)>& on_answer);
  // loglikelihood_rolling of VLLM and SGLangLM: each text's rolling windows of `max_seq_len`
  // tokens scored, their sums per text.
  std::vector<double> rolling_loglikelihoods(const std::vector<std::string>& texts,
                                             int64_t max_seq_len);
  // Posts every generation body to `path` and reads each answer's text with `text_of`; each
  // text after postprocess_generated_text with its request's `untils` and think_end_token.
  std::vector<std::string> send_generations(
      const std::vector<Pending>& work, const std::string& path,
      const std::vector<std::vector<std::string>>& untils,
      const std::optional<std::string>& think_end_token,
      const std::function<std::string(const Json& answer)>& text_of);
  // SGLangLM.prefix_token_id and VLLM's: as given, else BOS, else EOS.
  void set_prefix_token_id(const std::optional<int64_t>& given);
  // VLLM.max_length and SGLangLM's: as given, else the engine's context length, else 2048.
  void set_max_length(const std::optional<int64_t>& given);

  // `name` starts messages ("vllm", "sglang"); `secrets` are masked in them.
  EngineLM(std::string name, std::unique_ptr<Tokenizer> tokenizer,
           std::vector<std::string> secrets);

  // Starts a server per command (`command(port)` for a free port each, one after another) with a
  // client of `num_concurrent` requests in flight, `api_key` as its Bearer token.
  void start_servers(size_t count, const std::function<ServerCommand(int port, size_t i)>& command,
                     int64_t num_concurrent, const std::optional<std::string>& api_key);
  // Posts every body to `path`, spread over the servers in turn (more_itertools.distribute), and
  // hands each answer to `accept` with its index. A MalformedResponse from `accept` retries the
  // request, a RuntimeError fails it. Throws RuntimeError naming the first failure and showing
  // the server's log.
  void send(const std::vector<Pending>& work, const std::string& path, const char* phase,
            const std::function<void(size_t, const Json&)>& accept);
  // TemplateLM.loglikelihood's encoding with tok_encode: an empty context is the prefix token (or
  // the continuation's own first token when it is that token), else _encode_pair (trailing spaces
  // of the context move to the continuation; the continuation is what the whole adds).
  std::vector<EncodedPair> encode_pairs(const std::vector<LoglikelihoodRequest>& requests) const;
  // max_model_len of the first server's GET /v1/models (vLLM's and SGLang's model cards say it).
  std::optional<int64_t> served_max_model_len() const;
  // The EOS token's text as the engine's tokenizer decodes it (eot_token_id).
  std::string eos_text() const;
  // Hands each answer to the caller's cache as it comes with one server (answers come in order of
  // completion), else in order at the end.
  bool streams_answers() const { return servers_.size() == 1; }

  std::string name_;
  std::vector<std::string> secrets_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::vector<std::unique_ptr<ManagedServer>> servers_;
  std::vector<std::unique_ptr<HttpClient>> clients_;
  int64_t max_length_ = 2048;
  TokenId prefix_token_id_ = 0;
};

}  // namespace lmeval::api
